"""Per-account daily statistics: days played and won, streaks, best times.

    stats = DailyStats(redis)
    await stats.record_attempt(user, day, DRAW1, won=True, time_ms=184_000)   # True once
    mine = await stats.get(user, today)      # PlayerStats

Definitions (every day is a UTC date, the date of the challenge, not of the finish):

- an attempt counts once per (user, date, variant): `record_attempt` returns False and
  changes nothing for a repeat, so it is safe to retry;
- a day is *played* when the account finished a ranked attempt in any daily variant,
  and *won* when it won at least one;
- the *streak* is the number of consecutive played days ending at the latest played
  day; the *win streak* the same over won days. `longest_*` are the longest such runs
  ever. Attempts may be recorded in any date order: a late result for an earlier date
  can join two runs.
- `PlayerStats.streak` is the current streak: the run ending at the latest played day
  while that day is today or yesterday (today's challenge may still be played), else 0.
  The same holds for `win_streak`.
- `best_ms` is the best winning time per variant (by the variant's text).

Redis, per account (one hash tag, so one script): `keys.user_daily` (hash of counters,
`streak`/`streak_last`/`longest_streak`, the same with `win_`, `best:<slug>`,
`attempts:<slug>`, `wins:<slug>`), `keys.user_daily_days` and `keys.user_daily_won`
(sets of day ordinals) and `keys.user_daily_attempts` (the attempts counted).

This module must never take a user id into a key name unchecked (`check_user`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.daily.variants import slug_variant, variant_slug
from klondike_live.engine import Variant

__all__ = ["DailyStats", "PlayerStats", "check_user"]

USER_ID: Final = re.compile(r"^[A-Za-z0-9_.:@|+-]{1,128}$")
"""The user ids `auth` issues and accepts; nothing else reaches a key name."""

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


def check_user(user: str) -> str:
    """`user` when it is a valid user id; ValueError otherwise."""
    if not isinstance(user, str) or not USER_ID.match(user):
        raise ValueError(f"not a valid user id: {user!r}")
    return user


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """An account's daily statistics as of `today` (see the module docstring)."""

    attempts: int = 0
    wins: int = 0
    days_played: int = 0
    days_won: int = 0
    streak: int = 0
    longest_streak: int = 0
    win_streak: int = 0
    longest_win_streak: int = 0
    last_played: date | None = None
    best_ms: dict[str, int] = field(default_factory=dict)
    attempts_by_variant: dict[str, int] = field(default_factory=dict)
    wins_by_variant: dict[str, int] = field(default_factory=dict)


class DailyStats:
    """Daily statistics of every account, in Redis."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._record: AsyncScript = redis.register_script(_RECORD)

    async def record_attempt(
        self, user: str, day: date, variant: Variant, won: bool, time_ms: int
    ) -> bool:
        """Count a finished ranked attempt; False when it was counted already."""
        check_user(user)
        if isinstance(time_ms, bool) or not isinstance(time_ms, int) or time_ms < 0:
            raise ValueError(f"time_ms must be a non-negative integer, not {time_ms!r}")
        slug = variant_slug(variant)
        added = await self._record(
            keys=[
                keys.user_daily(user),
                keys.user_daily_days(user),
                keys.user_daily_won(user),
                keys.user_daily_attempts(user),
            ],
            args=[day.toordinal(), f"{day.isoformat()}:{slug}", slug, int(won), time_ms],
        )
        return bool(added)

    async def get(self, user: str, today: date) -> PlayerStats:
        """The account's statistics, with current streaks as of `today` (UTC date)."""
        check_user(user)
        raw: dict[Any, Any] = await self.redis.hgetall(keys.user_daily(user))
        data = {_text(k): int(v) for k, v in raw.items()}
        alive = today.toordinal() - 1

        def current(prefix: str) -> int:
            return data.get(prefix, 0) if data.get(f"{prefix}_last", 0) >= alive else 0

        per: dict[str, dict[str, int]] = {"best": {}, "attempts": {}, "wins": {}}
        for name, value in data.items():
            kind, sep, slug = name.partition(":")
            if sep and kind in per:
                per[kind][str(slug_variant(slug))] = value
        last = data.get("streak_last")
        return PlayerStats(
            attempts=data.get("attempts", 0),
            wins=data.get("wins", 0),
            days_played=data.get("days_played", 0),
            days_won=data.get("days_won", 0),
            streak=current("streak"),
            longest_streak=data.get("longest_streak", 0),
            win_streak=current("win_streak"),
            longest_win_streak=data.get("longest_win_streak", 0),
            last_played=None if last is None else date.fromordinal(last),
            best_ms=per["best"],
            attempts_by_variant=per["attempts"],
            wins_by_variant=per["wins"],
        )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
