"""Per-player keys: the statistics of finished games and the index of unfinished ones.

    players = PlayerStore(redis, retention)
    await players.record_game(outcome, game_id, ended_ms)     # True once per game
    counters, recent = await players.load_stats(user)
    await players.add_unfinished(user, room_id, at_ms)        # created, or its clock stopped
    await players.remove_unfinished(user, room_id)            # finished
    rooms = await players.unfinished(user, now_ms)            # newest first

Every key of a player shares the hash tag `{u:<user>}` (one Cluster slot), so a game's
count is one script: `keys.user_stats` (hash of counters, `<counter>|<kind>|<variant>`,
applied by the rule of `race.stats.fold`), `keys.user_recent` (sorted set of the
latest `RECENT_GAMES` game ids by end time; it also makes a repeat of the same game a
no-op) and `keys.user_recent_games` (hash: game id -> the game's line, JSON). Statistics
are kept for ever (a few KB per player: docs/operations.md).

`keys.user_unfinished`: sorted set of the player's practice games not finished yet
(room ids, scored by creation or by when their clock last stopped); entries older than
`Retention.unfinished_ms` are dropped when read, as their rooms expire then, and the key
itself expires that long after its last write.

This module must never be handed a user id that `daily.stats.check_user` did not accept
(it spells it into key names), and never decides what a game counts for.
"""

from __future__ import annotations

import json
from typing import Any, Final

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.race.stats import RECENT_GAMES, GameOutcome
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency
from klondike_live.store.records import Retention

__all__ = ["PlayerStore"]

_RECORD: Final = """
-- KEYS: 1 counters hash, 2 recent ids (sorted set), 3 recent lines (hash)
-- ARGV: 1 game id, 2 ended ms, 3 category, 4 won (0/1), 5 time ms ('' for none),
--       6 moves, 7 the game's line (JSON), 8 recent games kept
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local h, c = KEYS[1], ARGV[3]
redis.call('HINCRBY', h, 'played|' .. c, 1)
if ARGV[4] == '1' then
  redis.call('HINCRBY', h, 'won|' .. c, 1)
  local streak = redis.call('HINCRBY', h, 'streak|' .. c, 1)
  local best = tonumber(redis.call('HGET', h, 'best_streak|' .. c) or '0')
  if streak > best then redis.call('HSET', h, 'best_streak|' .. c, streak) end
  if ARGV[5] ~= '' then
    local ms = tonumber(ARGV[5])
    local best_ms = redis.call('HGET', h, 'best_ms|' .. c)
    if not best_ms or ms < tonumber(best_ms) then redis.call('HSET', h, 'best_ms|' .. c, ms) end
  end
  local moves = tonumber(ARGV[6])
  local fewest = redis.call('HGET', h, 'fewest|' .. c)
  if not fewest or moves < tonumber(fewest) then redis.call('HSET', h, 'fewest|' .. c, moves) end
else
  redis.call('HSET', h, 'streak|' .. c, 0)
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[7])
local keep = tonumber(ARGV[8])
local old = redis.call('ZRANGE', KEYS[2], 0, -keep - 1)
if #old > 0 then
  redis.call('ZREM', KEYS[2], unpack(old))
  redis.call('HDEL', KEYS[3], unpack(old))
end
return 1
"""


class PlayerStore:
    """Players' statistics and unfinished games, in Redis (see the module docstring)."""

    def __init__(
        self, redis: RedisClient, retention: Retention, latency: Latency | None = None
    ) -> None:
        self.redis = redis
        self.retention = retention
        self.latency = latency if latency is not None else Latency()
        self._record: AsyncScript = redis.register_script(_RECORD)

    async def record_game(self, outcome: GameOutcome, game_id: str, ended_ms: int) -> bool:
        """Count one finished game for its player (atomic); False when it was counted
        already (then nothing changes)."""
        user = outcome.user
        added = await self.latency.timed(
            self._record(
                keys=[keys.user_stats(user), keys.user_recent(user), keys.user_recent_games(user)],
                args=[
                    game_id,
                    ended_ms,
                    outcome.category,
                    int(outcome.won),
                    "" if outcome.time_ms is None else outcome.time_ms,
                    outcome.moves,
                    json.dumps(outcome.entry, separators=(",", ":")),
                    RECENT_GAMES,
                ],
            )
        )
        return bool(added)

    async def load_stats(self, user: str) -> tuple[dict[str, int], list[dict[str, Any]]]:
        """The player's counters, and its recent games' lines, newest first."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.user_stats(user))
            pipe.zrevrange(keys.user_recent(user), 0, -1)
            pipe.hgetall(keys.user_recent_games(user))
            raw, order, lines = await self.latency.timed(pipe.execute())
        counters = {text(k): int(v) for k, v in raw.items()}
        by_id = {text(k): text(v) for k, v in lines.items()}
        recent = [json.loads(by_id[i]) for i in map(text, order) if i in by_id]
        return counters, recent

    async def add_unfinished(self, user: str, room_id: str, at_ms: int) -> None:
        """List (or list again, newer) a practice game of the player's not finished."""
        key = keys.user_unfinished(user)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {room_id: at_ms})
            pipe.pexpire(key, self.retention.unfinished_ms)
            await self.latency.timed(pipe.execute())

    async def remove_unfinished(self, user: str, room_id: str) -> None:
        await self.latency.timed(self.redis.zrem(keys.user_unfinished(user), room_id))

    async def unfinished(self, user: str, now_ms: int, limit: int = 50) -> list[str]:
        """The player's unfinished games, newest first; those past their retention go."""
        key = keys.user_unfinished(user)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, "-inf", now_ms - self.retention.unfinished_ms)
            pipe.zrevrange(key, 0, limit - 1)
            _, rooms = await self.latency.timed(pipe.execute())
        return [text(r) for r in rooms]
