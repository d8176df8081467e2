"""Per-account daily statistics: streaks over consecutive and gapped days, idempotence."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

import pytest
from redis.asyncio import Redis

from klondike_live.daily.stats import DailyStats, PlayerStats
from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.store.stats import StatsStore

D = date(2030, 1, 1)


def day(offset: int) -> date:
    return D + timedelta(days=offset)


async def test_a_new_account_has_empty_stats(redis: Redis) -> None:
    """No attempts: zeros, no last day, no best times."""
    assert await DailyStats(StatsStore(redis)).get("amy", D) == PlayerStats()


async def test_consecutive_days_build_a_streak(redis: Redis) -> None:
    """Three days in a row: streak 3; both variants on one day count one day."""
    stats = DailyStats(StatsStore(redis))
    await stats.record_attempt("amy", day(0), DRAW1, True, 300_000)
    await stats.record_attempt("amy", day(0), DRAW3, False, 900_000)
    await stats.record_attempt("amy", day(1), DRAW3, True, 400_000)
    await stats.record_attempt("amy", day(2), DRAW1, True, 250_000)
    mine = await stats.get("amy", day(2))
    assert (mine.attempts, mine.wins, mine.days_played, mine.days_won) == (4, 3, 3, 3)
    assert (mine.streak, mine.longest_streak) == (3, 3)
    assert (mine.win_streak, mine.longest_win_streak) == (3, 3)
    assert mine.last_played == day(2)
    assert mine.best_ms == {str(DRAW1): 250_000, str(DRAW3): 400_000}
    assert mine.attempts_by_variant == {str(DRAW1): 2, str(DRAW3): 2}
    assert mine.wins_by_variant == {str(DRAW1): 2, str(DRAW3): 1}


async def test_a_gap_breaks_the_streak_but_not_the_longest(redis: Redis) -> None:
    """Days 0-3, a gap, days 5-6: current streak 2, longest 4."""
    stats = DailyStats(StatsStore(redis))
    for offset in (0, 1, 2, 3, 5, 6):
        await stats.record_attempt("bob", day(offset), DRAW1, offset != 2, 100_000)
    mine = await stats.get("bob", day(6))
    assert (mine.streak, mine.longest_streak, mine.days_played) == (2, 4, 6)
    # Won days: 0, 1, 3, 5, 6 -> current win streak 2, longest 2.
    assert (mine.win_streak, mine.longest_win_streak, mine.days_won) == (2, 2, 5)


async def test_the_current_streak_lives_until_a_day_is_missed(redis: Redis) -> None:
    """A streak ending yesterday is alive (today can still be played); older is 0."""
    stats = DailyStats(StatsStore(redis))
    await stats.record_attempt("cat", day(0), DRAW1, True, 1)
    await stats.record_attempt("cat", day(1), DRAW1, True, 1)
    assert (await stats.get("cat", day(1))).streak == 2
    assert (await stats.get("cat", day(2))).streak == 2
    stale = await stats.get("cat", day(3))
    assert (stale.streak, stale.win_streak, stale.longest_streak) == (0, 0, 2)


async def test_a_late_result_joins_two_runs(redis: Redis) -> None:
    """Recorded out of date order, the filled gap merges the runs on both sides."""
    stats = DailyStats(StatsStore(redis))
    for offset in (0, 1, 3, 4, 5):
        await stats.record_attempt("dan", day(offset), DRAW3, False, 1)
    before = await stats.get("dan", day(5))
    assert (before.streak, before.longest_streak) == (3, 3)
    await stats.record_attempt("dan", day(2), DRAW1, False, 1)
    after = await stats.get("dan", day(5))
    assert (after.streak, after.longest_streak, after.days_played) == (6, 6, 6)
    assert after.win_streak == 0 and after.days_won == 0
    await stats.record_attempt("dan", day(-5), DRAW1, False, 1)  # an old, separate day
    oldest = await stats.get("dan", day(5))
    assert (oldest.streak, oldest.longest_streak, oldest.last_played) == (6, 6, day(5))


async def test_recording_is_idempotent_per_day_and_variant(redis: Redis) -> None:
    """The same (user, date, variant) counts once, even when retried concurrently."""
    stats = DailyStats(StatsStore(redis))
    calls = [stats.record_attempt("eve", D, DRAW1, True, 500) for _ in range(5)]
    assert sum(await asyncio.gather(*calls)) == 1
    assert not await stats.record_attempt("eve", D, DRAW1, True, 100)  # not a new best
    assert await stats.record_attempt("eve", D, DRAW3, True, 700)
    mine = await stats.get("eve", D)
    assert (mine.attempts, mine.wins, mine.days_played, mine.streak) == (2, 2, 1, 1)
    assert mine.best_ms == {str(DRAW1): 500, str(DRAW3): 700}


async def test_best_time_keeps_the_fastest_win(redis: Redis) -> None:
    """A slower win or any loss leaves the best time alone."""
    stats = DailyStats(StatsStore(redis))
    await stats.record_attempt("fay", day(0), DRAW1, True, 400)
    await stats.record_attempt("fay", day(1), DRAW1, True, 300)
    await stats.record_attempt("fay", day(2), DRAW1, True, 350)
    await stats.record_attempt("fay", day(3), DRAW1, False, 10)
    assert (await stats.get("fay", day(3))).best_ms == {str(DRAW1): 300}


async def test_bad_user_ids_never_reach_a_key(redis: Redis) -> None:
    """Only user ids of the auth format are accepted."""
    stats = DailyStats(StatsStore(redis))
    for bad in ("", "a b", "x}{y", "é", "a" * 129):
        with pytest.raises(ValueError):
            await stats.record_attempt(bad, D, DRAW1, True, 1)
        with pytest.raises(ValueError):
            await stats.get(bad, D)
    with pytest.raises(ValueError):
        await stats.record_attempt("amy", D, DRAW1, True, -1)
    assert await redis.dbsize() == 0
