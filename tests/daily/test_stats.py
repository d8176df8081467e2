"""Per-account daily statistics from ranked attempts: streaks over consecutive and gapped
days, attempts in any order, one count per day and variant, best times."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from klondike_live.daily.stats import Attempt, PlayerStats, check_user, stats_of
from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.engine import Variant

D = date(2030, 1, 1)


def day(offset: int) -> date:
    return D + timedelta(days=offset)


def tried(offset: int, variant: Variant, won: bool, time_ms: int) -> Attempt:
    return Attempt(day(offset), variant, won, time_ms)


def test_a_new_account_has_empty_stats() -> None:
    """No attempts: zeros, no last day, no best times."""
    assert stats_of([], D) == PlayerStats()


def test_consecutive_days_build_a_streak() -> None:
    """Three days in a row: streak 3; both variants on one day count one day."""
    attempts = [
        tried(0, DRAW1, True, 300_000),
        tried(0, DRAW3, False, 900_000),
        tried(1, DRAW3, True, 400_000),
        tried(2, DRAW1, True, 250_000),
    ]
    mine = stats_of(attempts, day(2))
    assert (mine.attempts, mine.wins, mine.days_played, mine.days_won) == (4, 3, 3, 3)
    assert (mine.streak, mine.longest_streak) == (3, 3)
    assert (mine.win_streak, mine.longest_win_streak) == (3, 3)
    assert mine.last_played == day(2)
    assert mine.best_ms == {str(DRAW1): 250_000, str(DRAW3): 400_000}
    assert mine.attempts_by_variant == {str(DRAW1): 2, str(DRAW3): 2}
    assert mine.wins_by_variant == {str(DRAW1): 2, str(DRAW3): 1}


def test_a_gap_breaks_the_streak_but_not_the_longest() -> None:
    """Days 0-3, a gap, days 5-6: current streak 2, longest 4."""
    attempts = [tried(o, DRAW1, o != 2, 100_000) for o in (0, 1, 2, 3, 5, 6)]
    mine = stats_of(attempts, day(6))
    assert (mine.streak, mine.longest_streak, mine.days_played) == (2, 4, 6)
    # Won days: 0, 1, 3, 5, 6 -> current win streak 2, longest 2.
    assert (mine.win_streak, mine.longest_win_streak, mine.days_won) == (2, 2, 5)


def test_the_current_streak_lives_until_a_day_is_missed() -> None:
    """A streak ending yesterday is alive (today can still be played); older is 0."""
    attempts = [tried(0, DRAW1, True, 1), tried(1, DRAW1, True, 1)]
    assert stats_of(attempts, day(1)).streak == 2
    assert stats_of(attempts, day(2)).streak == 2
    stale = stats_of(attempts, day(3))
    assert (stale.streak, stale.win_streak, stale.longest_streak) == (0, 0, 2)


def test_a_late_result_joins_two_runs() -> None:
    """In any date order, a filled gap merges the runs on both sides."""
    attempts = [tried(o, DRAW3, False, 1) for o in (0, 1, 3, 4, 5)]
    before = stats_of(attempts, day(5))
    assert (before.streak, before.longest_streak) == (3, 3)
    after = stats_of([*attempts, tried(2, DRAW1, False, 1)], day(5))
    assert (after.streak, after.longest_streak, after.days_played) == (6, 6, 6)
    assert after.win_streak == 0 and after.days_won == 0
    oldest = stats_of([tried(-5, DRAW1, False, 1), *attempts, tried(2, DRAW1, False, 1)], day(5))
    assert (oldest.streak, oldest.longest_streak, oldest.last_played) == (6, 6, day(5))


def test_an_attempt_counts_once_per_day_and_variant() -> None:
    """The same (date, variant) given again counts once (the first given)."""
    attempts = [tried(0, DRAW1, True, 500)] * 5 + [tried(0, DRAW1, True, 100)]
    mine = stats_of([*attempts, tried(0, DRAW3, True, 700)], D)
    assert (mine.attempts, mine.wins, mine.days_played, mine.streak) == (2, 2, 1, 1)
    assert mine.best_ms == {str(DRAW1): 500, str(DRAW3): 700}


def test_best_time_keeps_the_fastest_win() -> None:
    """A slower win or any loss leaves the best time alone."""
    attempts = [
        tried(0, DRAW1, True, 400),
        tried(1, DRAW1, True, 300),
        tried(2, DRAW1, True, 350),
        tried(3, DRAW1, False, 10),
    ]
    assert stats_of(attempts, day(3)).best_ms == {str(DRAW1): 300}


def test_bad_user_ids_are_refused() -> None:
    """Only user ids of the auth format are accepted."""
    for bad in ("", "a b", "x}{y", "é", "a" * 129):
        with pytest.raises(ValueError):
            check_user(bad)
    assert check_user("g_amy") == "g_amy"
