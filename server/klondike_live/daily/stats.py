"""Per-account daily statistics: days played and won, streaks, best times.

    mine = stats_of(attempts, today)      # PlayerStats from every counted ranked attempt

An account's statistics are computed from its ranked attempts, its rows of the daily
leaderboards: the kept closed days' (`history.daily`) and the live ones' in Valkey
(`service.daily.DailyService.player_stats` gathers them). Definitions (every day is a
UTC date, the date of the challenge, not of the finish):

- an attempt counts once per (date, variant) (a leaderboard has one entry per account);
- a day is *played* when the account finished a ranked attempt in any daily variant,
  and *won* when it won at least one;
- the *streak* is the number of consecutive played days ending at the latest played
  day; the *win streak* the same over won days. `longest_*` are the longest such runs
  ever. Results may arrive in any date order: a late result for an earlier date joins
  two runs.
- `PlayerStats.streak` is the current streak: the run ending at the latest played day
  while that day is today or yesterday (today's challenge may still be played), else 0.
  The same holds for `win_streak`.
- `best_ms` is the best winning time per variant (by the variant's text).

Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from klondike_live.auth import USER_ID
from klondike_live.engine import Variant

__all__ = ["Attempt", "PlayerStats", "check_user", "stats_of"]


def check_user(user: str) -> str:
    """`user` when it is a valid user id; ValueError otherwise."""
    if not isinstance(user, str) or not USER_ID.fullmatch(user):
        raise ValueError(f"not a valid user id: {user!r}")
    return user


@dataclass(frozen=True, slots=True)
class Attempt:
    """One finished ranked attempt: its day and variant, and how it ended."""

    day: date
    variant: Variant
    won: bool
    time_ms: int


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


def _runs(days: set[int]) -> tuple[int, int, int | None]:
    """Of a set of day ordinals: the run ending at the latest day, the longest run, and
    the latest day (None for no day)."""
    if not days:
        return 0, 0, None
    longest = run = 0
    previous = None
    for ordinal in sorted(days):
        run = run + 1 if previous is not None and ordinal == previous + 1 else 1
        longest = max(longest, run)
        previous = ordinal
    return run, longest, previous


def stats_of(attempts: Iterable[Attempt], today: date) -> PlayerStats:
    """The statistics of an account's attempts as of `today` (UTC date): a streak is
    current while its last day is today or yesterday. A second attempt of the same day
    and variant counts only once (the first given)."""
    seen: dict[tuple[date, str], Attempt] = {}
    for attempt in attempts:
        seen.setdefault((attempt.day, str(attempt.variant)), attempt)
    played: set[int] = set()
    won: set[int] = set()
    best: dict[str, int] = {}
    tries: dict[str, int] = {}
    wins: dict[str, int] = {}
    for (day, variant), attempt in seen.items():
        played.add(day.toordinal())
        tries[variant] = tries.get(variant, 0) + 1
        if attempt.won:
            won.add(day.toordinal())
            wins[variant] = wins.get(variant, 0) + 1
            best[variant] = min(best.get(variant, attempt.time_ms), attempt.time_ms)
    alive = today.toordinal() - 1
    streak, longest, last = _runs(played)
    win_streak, longest_win, last_won = _runs(won)
    return PlayerStats(
        attempts=len(seen),
        wins=sum(wins.values()),
        days_played=len(played),
        days_won=len(won),
        streak=streak if last is not None and last >= alive else 0,
        longest_streak=longest,
        win_streak=win_streak if last_won is not None and last_won >= alive else 0,
        longest_win_streak=longest_win,
        last_played=None if last is None else date.fromordinal(last),
        best_ms=best,
        attempts_by_variant=tries,
        wins_by_variant=wins,
    )
