"""Per-account daily statistics in Redis: counting an attempt, reading the counters.

    stats = StatsStore(redis)
    await stats.record_attempt(user, day, DRAW1, won=True, time_ms=184_000)  # True once
    fields = await stats.load(user)        # {"attempts": 3, "streak": 2, "best:<slug>": ...}

Per account, under one hash tag (so one script, one Cluster slot): `keys.user_daily`,
a hash of counters; `keys.user_daily_days` and `keys.user_daily_won`, sets of the day
ordinals played and won; `keys.user_daily_attempts`, the set of `<date>:<slug>` already
counted. `record_attempt` is one Lua script that counts an attempt at most once and
keeps, for played days (`streak`, `streak_last`, `longest_streak`) and won days (the
same with `win_`), the run of consecutive days that ends at the latest day and the
longest run ever; days may arrive in any order. What the counters mean, and which
streak is current on a given day, is `daily.stats`'s to say.

This module must never be handed a user id that `daily.stats.check_user` did not
accept (it spells it into key names), and never decide a daily rule.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Final

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.daily.variants import variant_slug
from klondike_live.engine import Variant
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency

__all__ = ["StatsStore"]

_RECORD: Final = """
-- KEYS: 1 stats hash, 2 played days set, 3 won days set, 4 attempts set
-- ARGV: 1 day ordinal, 2 attempt id (date:slug), 3 slug, 4 won (0/1), 5 time ms
if redis.call('SADD', KEYS[4], ARGV[2]) == 0 then return 0 end
local stats, day, slug = KEYS[1], tonumber(ARGV[1]), ARGV[3]
local won, ms = ARGV[4] == '1', tonumber(ARGV[5])
redis.call('HINCRBY', stats, 'attempts', 1)
redis.call('HINCRBY', stats, 'attempts:' .. slug, 1)
if won then
  redis.call('HINCRBY', stats, 'wins', 1)
  redis.call('HINCRBY', stats, 'wins:' .. slug, 1)
  local best = redis.call('HGET', stats, 'best:' .. slug)
  if not best or ms < tonumber(best) then redis.call('HSET', stats, 'best:' .. slug, ms) end
end
-- Add `day` to a set of days and update the runs kept in the hash under `prefix`.
local function add_day(set, prefix, count_field)
  if redis.call('SADD', set, day) == 0 then return end
  redis.call('HSET', stats, count_field, redis.call('SCARD', set))
  local low, high = day, day
  while redis.call('SISMEMBER', set, low - 1) == 1 do low = low - 1 end
  while redis.call('SISMEMBER', set, high + 1) == 1 do high = high + 1 end
  local run = high - low + 1
  local longest = tonumber(redis.call('HGET', stats, 'longest_' .. prefix) or '0')
  if run > longest then redis.call('HSET', stats, 'longest_' .. prefix, run) end
  local last = tonumber(redis.call('HGET', stats, prefix .. '_last') or '0')
  if high >= last then
    redis.call('HSET', stats, prefix, run, prefix .. '_last', high)
  end
end
add_day(KEYS[2], 'streak', 'days_played')
if won then add_day(KEYS[3], 'win_streak', 'days_won') end
return 1
"""


class StatsStore:
    """Every account's daily counters, in Redis (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()
        self._record: AsyncScript = redis.register_script(_RECORD)

    async def record_attempt(
        self, user: str, day: date, variant: Variant, won: bool, time_ms: int
    ) -> bool:
        """Count a finished ranked attempt of `day` (atomic); False when it was counted
        already, and then nothing changes."""
        slug = variant_slug(variant)
        added = await self.latency.timed(
            self._record(
                keys=[
                    keys.user_daily(user),
                    keys.user_daily_days(user),
                    keys.user_daily_won(user),
                    keys.user_daily_attempts(user),
                ],
                args=[day.toordinal(), f"{day.isoformat()}:{slug}", slug, int(won), time_ms],
            )
        )
        return bool(added)

    async def load(self, user: str) -> dict[str, int]:
        """The account's counters by field name ({} for an account with none)."""
        raw: dict[Any, Any] = await self.latency.timed(self.redis.hgetall(keys.user_daily(user)))
        return {text(k): int(v) for k, v in raw.items()}
