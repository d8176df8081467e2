"""The certified deal pool's Redis commands: push a deal, take one, count them.

    pool = PoolStore(redis)
    size = await pool.push(DRAW1, seed, moves)         # new size; 0: waiting or issued
    taken = await pool.take(DRAW1, retention_ms)       # Taken(size, seed | None, moves)
    await pool.size(DRAW1); await pool.sizes([DRAW1, DRAW3])

Per variant (keys in `keys.py`, by the variant's slug): `pool_seeds`, a list of seeds
waiting, oldest first; `pool_deals`, a hash seed -> `{"moves": "<winning line>"}` (the
certificate); `pool_issued`, a sorted set of the seeds handed out, scored by the time
(ms, Redis's clock) they were. `push` and `take` are one Lua script each, so a seed is
handed out at most once on any number of nodes: `take` pops a seed, removes its
certificate and adds it to the issued set (`ZADD NX`), dropping a seed issued already;
`push` refuses a seed that is waiting or was issued, so a retried push is a no-op. Seeds
issued longer ago than `retention_ms` leave the issued set at each take.

This module must never check or decide which deals are certified (`daily.pool` does),
never hand out a seed twice, and never log a seed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.daily.variants import variant_slug
from klondike_live.engine import Variant
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency

__all__ = ["PoolStore", "Taken"]

_PUSH: Final = """
-- KEYS: 1 seeds list, 2 certificates hash, 3 issued zset; ARGV: 1 seed, 2 certificate
-- Returns the new pool size, or 0 when the seed is waiting already or was issued.
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return redis.call('RPUSH', KEYS[1], ARGV[1])
"""

_TAKE: Final = """
-- KEYS: 1 seeds list, 2 certificates hash, 3 issued zset; ARGV: 1 retention (ms)
-- Returns {size} when the pool is empty, else {size, seed, certificate}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. (now - tonumber(ARGV[1])))
while true do
  local seed = redis.call('LPOP', KEYS[1])
  if not seed then return {0} end
  local cert = redis.call('HGET', KEYS[2], seed)
  redis.call('HDEL', KEYS[2], seed)
  if cert and redis.call('ZADD', KEYS[3], 'NX', now, seed) == 1 then
    return {redis.call('LLEN', KEYS[1]), seed, cert}
  end
end
"""


class Taken(NamedTuple):
    """What `take` got: the deals still waiting, and the deal (None: the pool was empty)."""

    size: int
    seed: str | None
    moves: tuple[str, ...]


def _keys(variant: Variant) -> list[str]:
    slug = variant_slug(variant)
    return [keys.pool_seeds(slug), keys.pool_deals(slug), keys.pool_issued(slug)]


class PoolStore:
    """The certified deals waiting per variant, in Redis (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()
        self._push: AsyncScript = redis.register_script(_PUSH)
        self._take: AsyncScript = redis.register_script(_TAKE)

    async def push(self, variant: Variant, seed: str, moves: Sequence[str]) -> int:
        """Queue a deal with its winning line: the new pool size, or 0 (nothing added)
        when the seed is waiting already or was handed out."""
        certificate = json.dumps({"moves": " ".join(moves)})
        return int(
            await self.latency.timed(self._push(keys=_keys(variant), args=[seed, certificate]))
        )

    async def take(self, variant: Variant, retention_ms: int) -> Taken:
        """Hand out the oldest waiting deal (atomic): no seed ever comes out twice."""
        reply: list[Any] = await self.latency.timed(
            self._take(keys=_keys(variant), args=[retention_ms])
        )
        if len(reply) == 1:
            return Taken(int(reply[0]), None, ())
        data = json.loads(reply[2])
        return Taken(int(reply[0]), text(reply[1]), tuple(str(data["moves"]).split()))

    async def size(self, variant: Variant) -> int:
        """How many deals of `variant` are waiting."""
        seeds = keys.pool_seeds(variant_slug(variant))
        return int(await self.latency.timed(self.redis.llen(seeds)))

    async def sizes(self, variants: Sequence[Variant]) -> list[int]:
        """`size` of each variant, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for variant in variants:
                pipe.llen(keys.pool_seeds(variant_slug(variant)))
            return [int(n) for n in await self.latency.timed(pipe.execute())]
