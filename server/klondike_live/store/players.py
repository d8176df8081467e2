"""Per-player keys: the index of a player's unfinished games.

    players = PlayerStore(redis, retention)
    await players.add_unfinished(user, room_id, at_ms)        # created, or its clock stopped
    await players.remove_unfinished(user, room_id)            # finished
    rooms = await players.unfinished(user, now_ms)            # newest first
    await players.forget(user)                                # a deleted account

`keys.user_unfinished`: sorted set of the player's practice games not finished yet
(room ids, scored by creation or by when their clock last stopped); entries older than
`Retention.unfinished_ms` are dropped when read, as their rooms expire then, and the key
itself expires that long after its last write. (Finished games and statistics are the
history database's: `history.database`.)

This module must never be handed a user id that `daily.stats.check_user` did not accept
(it spells it into key names).
"""

from __future__ import annotations

from klondike_live import keys
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency
from klondike_live.store.records import Retention

__all__ = ["PlayerStore"]


class PlayerStore:
    """Players' unfinished games, in Redis (see the module docstring)."""

    def __init__(
        self, redis: RedisClient, retention: Retention, latency: Latency | None = None
    ) -> None:
        self.redis = redis
        self.retention = retention
        self.latency = latency if latency is not None else Latency()

    async def add_unfinished(self, user: str, room_id: str, at_ms: int) -> None:
        """List (or list again, newer) a practice game of the player's not finished."""
        key = keys.user_unfinished(user)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {room_id: at_ms})
            pipe.pexpire(key, self.retention.unfinished_ms)
            await self.latency.timed(pipe.execute())

    async def remove_unfinished(self, user: str, room_id: str) -> None:
        await self.latency.timed(self.redis.zrem(keys.user_unfinished(user), room_id))

    async def forget(self, user: str) -> None:
        """A deleted account: its index goes (its rooms expire by themselves)."""
        await self.latency.timed(self.redis.delete(keys.user_unfinished(user)))

    async def unfinished(self, user: str, now_ms: int, limit: int = 50) -> list[str]:
        """The player's unfinished games, newest first; those past their retention go."""
        key = keys.user_unfinished(user)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, "-inf", now_ms - self.retention.unfinished_ms)
            pipe.zrevrange(key, 0, limit - 1)
            _, rooms = await self.latency.timed(pipe.execute())
        return [text(r) for r in rooms]
