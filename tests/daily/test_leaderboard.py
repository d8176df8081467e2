"""The daily leaderboard: order, ties (1, 1, 3), one entry per account, pages."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from klondike_live.daily.leaderboard import (
    KEY_WIDTH,
    DailyResult,
    Leaderboard,
    LeaderboardRow,
    competition_ranks,
)
from klondike_live.daily.variants import DRAW1, DRAW3, variant_slug
from klondike_live.keys import daily_board, daily_entries
from klondike_live.store.connect import open_redis
from klondike_live.store.daily import DailyStore

DAY = date(2030, 1, 1)
T0 = 1_893_456_000_000  # 2030-01-01 00:00 UTC in ms


def won(user: str, time_ms: int, moves: int, finished_at: int = T0) -> DailyResult:
    return DailyResult(user, user.upper(), True, time_ms, moves, 52, finished_at)


def lost(user: str, found: int, time_ms: int, finished_at: int = T0) -> DailyResult:
    return DailyResult(user, user.upper(), False, time_ms, 200, found, finished_at)


def table(rows: list[LeaderboardRow]) -> list[tuple[int, str]]:
    return [(row.rank, row.entry.user) for row in rows]


async def test_order_and_ties_on_constructed_results(redis: Redis) -> None:
    """Winners by time, moves, finish; then others by cards up, time. Ties: 1, 1, 3."""
    board = Leaderboard(DailyStore(redis), DAY, DRAW1)
    entries = [
        lost("lia", 30, 1_800_000),
        won("bob", 200_000, 120, T0 + 5),
        won("amy", 200_000, 120, T0 + 5),  # the same key as bob: tied
        won("cat", 200_000, 120, T0 + 9),  # finished later: behind, not tied
        won("dan", 200_000, 119, T0 + 99),  # fewer moves beats an earlier finish
        won("eve", 150_000, 300, T0 + 500),  # faster beats everything else
        lost("kim", 30, 1_800_000, T0 + 1),  # same cards and time as lia: tied
        lost("joe", 31, 1_800_000),
        lost("ian", 30, 900_000),
        lost("hal", 0, 0),
    ]
    for entry in entries:
        assert await board.record(entry)
    rows = await board.page(0, 100)
    assert table(rows) == [
        (1, "eve"),
        (2, "dan"),
        (3, "amy"),
        (3, "bob"),
        (5, "cat"),
        (6, "joe"),
        (7, "ian"),
        (8, "kim"),
        (8, "lia"),
        (10, "hal"),
    ]
    assert rows == competition_ranks(entries)
    assert await board.count() == 10
    assert await board.rank_of("bob") == await board.rank_of("amy") == 3
    assert await board.rank_of("lia") == 8
    assert await board.rank_of("nobody") is None


async def test_simple_tie_gives_1_1_3(redis: Redis) -> None:
    """Two equal winners share first place and the next one is third."""
    board = Leaderboard(DailyStore(redis), DAY, DRAW3)
    for entry in (won("b", 1000, 60, T0), won("a", 1000, 60, T0), won("c", 1001, 60, T0)):
        await board.record(entry)
    assert table(await board.page()) == [(1, "a"), (1, "b"), (3, "c")]


async def test_a_second_ranked_entry_is_refused(redis: Redis) -> None:
    """One entry per account: a second record changes nothing and returns False."""
    board = Leaderboard(DailyStore(redis), DAY, DRAW1)
    assert await board.record(lost("amy", 10, 5000))
    assert not await board.record(won("amy", 1000, 60))
    assert await board.entry("amy") == lost("amy", 10, 5000)
    assert await board.count() == 1
    results = await asyncio.gather(*(board.record(won("bob", t, 60)) for t in range(1, 11)))
    assert sum(results) == 1 and await board.count() == 2
    other = Leaderboard(DailyStore(redis), DAY, DRAW3)  # each variant has its own board
    assert await other.record(won("amy", 1000, 60))


async def test_pages_and_neighbours_keep_tied_ranks(redis: Redis) -> None:
    """A page that starts inside a tie still shows the tie's rank; around() centres."""
    board = Leaderboard(DailyStore(redis), DAY, DRAW1)
    users = [f"u{i:02d}" for i in range(12)]
    for i, user in enumerate(users):  # pairs of equal times: 1, 1, 3, 3, 5, 5 ...
        await board.record(won(user, 1000 + i // 2, 60))
    page = await board.page(3, 4)
    assert table(page) == [(3, "u03"), (5, "u04"), (5, "u05"), (7, "u06")]
    assert await board.page(12, 5) == []
    around = await board.around("u05", 2)
    assert around is not None
    assert around.me == LeaderboardRow(5, won("u05", 1002, 60))
    assert table(around.rows) == [(3, "u03"), (5, "u04"), (5, "u05"), (7, "u06"), (7, "u07")]
    top = await board.around("u00", 2)
    assert top is not None and table(top.rows) == [(1, "u00"), (1, "u01"), (3, "u02")]
    assert await board.around("nobody", 2) is None
    for bad in ((-1, 10), (0, 0), (0, 1000)):
        with pytest.raises(ValueError):
            await board.page(*bad)


async def test_an_erased_entry_keeps_its_place_under_the_marker(redis: Redis) -> None:
    """A deleted account's entry and attempt go under its marker, with no name, in one
    step: its rank, the others' and the count stay; the user id is gone from the day."""
    store = DailyStore(redis)
    board = Leaderboard(store, DAY, DRAW1)
    for entry in (won("amy", 100_000, 90), won("bob", 200_000, 90), lost("cat", 20, 5_000)):
        assert await board.record(entry)
    assert await store.claim_attempt(DAY, DRAW1, "bob", "room-bob-1")
    assert await board.erase("bob", "deleted.0b0b", "")
    rows = await board.page(0, 10)
    assert [(r.rank, r.entry.user, r.entry.name) for r in rows] == [
        (1, "amy", "AMY"),
        (2, "deleted.0b0b", ""),
        (3, "cat", "CAT"),
    ]
    assert rows[1].entry.time_ms == 200_000 and await board.count() == 3
    assert await board.entry("bob") is None and await board.rank_of("deleted.0b0b") == 2
    assert await store.attempt_room(DAY, DRAW1, "deleted.0b0b") == "room-bob-1"
    assert await store.attempt_room(DAY, DRAW1, "bob") is None
    day, slug = DAY.isoformat(), variant_slug(DRAW1)
    assert "bob" not in repr(await redis.zrange(daily_board(day, slug), 0, -1))
    assert "bob" not in repr(await redis.hgetall(daily_entries(day, slug)))
    assert not await board.erase("bob", "deleted.0b0b", "")  # again: nothing left


def test_results_are_checked() -> None:
    """Out-of-range values cannot reach the fixed-width key."""
    with pytest.raises(ValueError):
        won("amy", 10**10, 60)
    with pytest.raises(ValueError):
        won("amy", 100, -1)
    with pytest.raises(ValueError):
        DailyResult("amy", "A", True, 100, 60, 51, T0)  # a win has all cards up
    with pytest.raises(ValueError):
        lost("amy", 53, 100)
    with pytest.raises(ValueError):
        lost("", 3, 100)


@st.composite
def results(draw: st.DrawFn) -> list[DailyResult]:
    """Entries of distinct users, with values squeezed to make ties likely."""
    count = draw(st.integers(1, 25))
    out = []
    for i in range(count):
        victory = draw(st.booleans())
        time_ms = draw(st.sampled_from([0, 1, 1_799_999, 1_800_000, 9_999_999_999]))
        finished = T0 + draw(st.integers(0, 2))
        if victory:
            moves = draw(st.sampled_from([0, 52, 53, 9_999_999]))
            out.append(DailyResult(f"p{i}", "n", True, time_ms, moves, 52, finished))
        else:
            found = draw(st.sampled_from([0, 1, 51, 52]))
            out.append(DailyResult(f"p{i}", "n", False, time_ms, 7, found, finished))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=results())
def test_order_is_the_documented_key(valkey_url: str, entries: list[DailyResult]) -> None:
    """Stored order and ranks equal the in-memory ranking by `sort_key`, at any size."""

    async def scenario() -> None:
        redis = await open_redis(valkey_url)
        try:
            day, slug = date(2031, 1, 1), variant_slug(DRAW1)
            board = Leaderboard(DailyStore(redis), day, DRAW1)
            await redis.delete(
                daily_board(day.isoformat(), slug), daily_entries(day.isoformat(), slug)
            )
            for entry in entries:
                assert await board.record(entry)
            rows = await board.page(0, 100)
            assert rows == competition_ranks(entries)
            keys = [row.entry.sort_key() for row in rows]
            assert keys == sorted(keys)
            for row in rows:
                assert await board.rank_of(row.entry.user) == row.rank
                assert len(row.entry.encoded_key()) == KEY_WIDTH
                before = sum(e.sort_key() < row.entry.sort_key() for e in entries)
                assert row.rank == before + 1
        finally:
            await redis.aclose()

    asyncio.run(scenario())
