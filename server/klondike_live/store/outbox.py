"""The outbox of finished games on their way to the history database, in Redis.

    outbox = OutboxStore(redis, latency)
    await outbox.add(room_id, gen, now_ms)            # before the game's results are written
    due = await outbox.claim(now_ms, lease_ms, 50)    # [(room_id, gen)], this node's for a while
    await outbox.done(room_id, gen, expiries)         # in the database: gone, results cached
    await outbox.length()
    waiting = await outbox.entries()                  # [(room_id, gen)], every one

`keys.OUTBOX` is one sorted set of `room|gen` scored by when a drainer may (next) take
the entry. A game's entry is added before the compare-and-set that finishes it writes
its results, so a node that dies between the two leaves an entry behind, which any node
drains; an entry whose game did not finish is dropped by the drainer. `claim` hands the
due entries to one caller (one script on one key) and pushes them `lease_ms` ahead: if
that caller dies or fails, they fall due again then. `done` first gives the game's keys
their cache expiry (`Retention.results_cache_ms`), then removes the entry; done twice,
or after a crash between the two, it changes nothing more.

This module never decides whether a game is in the database (`service.archive` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency
from klondike_live.store.records import Expiry

__all__ = ["OutboxStore"]

_CLAIM: Final = """
-- KEYS[1] the outbox; ARGV: 1 now (ms), 2 lease (ms), 3 most entries
local due = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, ARGV[3])
local later = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, entry in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', later, entry) end
return due
"""


def _entry(room_id: str, gen: int) -> str:
    return f"{room_id}|{gen}"


class OutboxStore:
    """The finished games waiting for the history database (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()
        self._claim: AsyncScript = redis.register_script(_CLAIM)

    async def add(self, room_id: str, gen: int, due_ms: int) -> None:
        """Put a game in the outbox, to be drained from `due_ms` (kept if it is there)."""
        entry = {_entry(room_id, gen): due_ms}
        await self.latency.timed(self.redis.zadd(keys.OUTBOX, entry, nx=True))

    async def claim(self, now_ms: int, lease_ms: int, limit: int) -> list[tuple[str, int]]:
        """Up to `limit` entries due by `now_ms`, oldest first, taken for `lease_ms`."""
        raw = await self.latency.timed(
            self._claim(keys=[keys.OUTBOX], args=[now_ms, lease_ms, limit])
        )
        out = []
        for item in raw:
            room_id, _, gen = text(item).rpartition("|")
            out.append((room_id, int(gen)))
        return out

    async def done(self, room_id: str, gen: int, expiries: Sequence[Expiry]) -> None:
        """The game is in the database: its keys get `expiries`, then its entry goes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for expiry in expiries:
                for key in expiry.keys:
                    pipe.pexpire(key, expiry.after_ms)
            await self.latency.timed(pipe.execute())
        await self.latency.timed(self.redis.zrem(keys.OUTBOX, _entry(room_id, gen)))

    async def entries(self) -> list[tuple[str, int]]:
        """Every game waiting (or being drained), oldest first."""
        raw: list[Any] = await self.latency.timed(self.redis.zrange(keys.OUTBOX, 0, -1))
        out = []
        for item in raw:
            room_id, _, gen = text(item).rpartition("|")
            out.append((room_id, int(gen)))
        return out

    async def length(self) -> int:
        """How many games wait (or are being drained)."""
        return int(await self.latency.timed(self.redis.zcard(keys.OUTBOX)))
