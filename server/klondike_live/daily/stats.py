"""Per-account daily statistics: days played and won, streaks, best times.

    stats = DailyStats(StatsStore(redis))
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

Redis, per account, through `store.stats.StatsStore` (one hash tag, so one script):
`keys.user_daily` (hash of counters, `streak`/`streak_last`/`longest_streak`, the same
with `win_`, `best:<slug>`, `attempts:<slug>`, `wins:<slug>`), `keys.user_daily_days`
and `keys.user_daily_won` (sets of day ordinals) and `keys.user_daily_attempts` (the
attempts counted). `player_stats` reads those counters as of a day.

This module must never take a user id into a key name unchecked (`check_user`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from klondike_live.auth import USER_ID
from klondike_live.daily.variants import slug_variant
from klondike_live.engine import Variant
from klondike_live.store.stats import StatsStore

__all__ = ["DailyStats", "PlayerStats", "check_user", "player_stats"]


def check_user(user: str) -> str:
    """`user` when it is a valid user id; ValueError otherwise."""
    if not isinstance(user, str) or not USER_ID.fullmatch(user):
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


def player_stats(data: dict[str, int], today: date) -> PlayerStats:
    """The statistics the stored counters `data` give as of `today` (UTC date): a
    streak is current while its last day is today or yesterday."""
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


class DailyStats:
    """Daily statistics of every account, in Redis."""

    def __init__(self, store: StatsStore) -> None:
        self.store = store

    async def record_attempt(
        self, user: str, day: date, variant: Variant, won: bool, time_ms: int
    ) -> bool:
        """Count a finished ranked attempt; False when it was counted already."""
        check_user(user)
        if isinstance(time_ms, bool) or not isinstance(time_ms, int) or time_ms < 0:
            raise ValueError(f"time_ms must be a non-negative integer, not {time_ms!r}")
        return await self.store.record_attempt(user, day, variant, won, time_ms)

    async def get(self, user: str, today: date) -> PlayerStats:
        """The account's statistics, with current streaks as of `today` (UTC date)."""
        check_user(user)
        return player_stats(await self.store.load(user), today)
