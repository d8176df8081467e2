"""Friends' live keys in Valkey: presence, pending challenges, notices to a player.

    friends = FriendStore(redis, latency)
    await friends.set_presence({user: (name, doing, room)}, ttl_ms)  # this node's users
    found = await friends.presence([user, ...])      # one pipeline: (name, doing, room)
    made = await friends.offer(one, other, blob, ttl_ms)  # False: one is pending
    blob = await friends.take(one, other)             # the pending challenge, gone
    await friends.notify(user, frame)                 # to its connections, any node

See `keys.presence`, `keys.challenge`, `keys.FRIEND_NOTICES`. A declined or expired
challenge leaves no key behind: `take` deletes it, and it expires by itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgpack

from klondike_live import keys
from klondike_live.store.connect import RedisClient
from klondike_live.store.latency import Latency

__all__ = ["FriendStore", "Presence"]

Presence = tuple[str, str, str]
"""A connected player's name, what it is doing, and the room of it ("" for none)."""


class FriendStore:
    """Friends' keys in Redis (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()

    async def set_presence(self, present: Mapping[str, Presence], ttl_ms: int) -> None:
        """Write (renew) the presence of these users, in one pipeline."""
        if not present:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for user, (name, doing, room) in present.items():
                pipe.set(keys.presence(user), msgpack.packb([name, doing, room]), px=ttl_ms)
            await self.latency.timed(pipe.execute())

    async def clear_presence(self, user: str) -> None:
        await self.latency.timed(self.redis.delete(keys.presence(user)))

    async def presence(self, users: Sequence[str]) -> dict[str, Presence]:
        """The presence of those of `users` who are connected, read in one pipeline."""
        if not users:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for user in users:
                pipe.get(keys.presence(user))
            answers = await self.latency.timed(pipe.execute())
        found: dict[str, Presence] = {}
        for user, raw in zip(users, answers, strict=True):
            if not isinstance(raw, bytes):
                continue
            try:
                name, doing, room = msgpack.unpackb(raw, raw=False)
            except (ValueError, TypeError, msgpack.UnpackException):
                continue
            found[user] = (str(name), str(doing), str(room))
        return found

    async def offer(self, one: str, other: str, blob: bytes, ttl_ms: int) -> bool:
        """Hold a challenge between two players for `ttl_ms`; False when one between
        them is pending already."""
        made = await self.latency.timed(
            self.redis.set(keys.challenge(one, other), blob, px=max(1, ttl_ms), nx=True)
        )
        return bool(made)

    async def pending(self, one: str, other: str) -> bytes | None:
        raw = await self.latency.timed(self.redis.get(keys.challenge(one, other)))
        return raw if isinstance(raw, bytes) else None

    async def take(self, one: str, other: str) -> bytes | None:
        """The pending challenge between two players, deleted in the same step (one
        answer wins), or None."""
        raw = await self.latency.timed(self.redis.getdel(keys.challenge(one, other)))
        return raw if isinstance(raw, bytes) else None

    async def notify(self, user: str, frame: bytes) -> None:
        """Send `frame` to every connection of `user`, on every node."""
        await self.latency.timed(
            self.redis.publish(keys.FRIEND_NOTICES, msgpack.packb([user, frame]))
        )
