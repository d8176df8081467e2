"""Daily seeds, day records, the open/closed split and the preparing task."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from datetime import UTC, date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.daily.days import (
    DayOpenError,
    DayRecord,
    daily_seed,
    day_of,
    ensure_days,
    is_closed,
    load_day,
    prepare_day,
    run_prepare,
)
from klondike_live.daily.variants import DRAW1, DRAW3, slug_variant, variant_slug
from klondike_live.engine import Board, Deal, Variant
from klondike_live.race.room import commitment
from klondike_live.solver import Budget, solve
from klondike_live.store.daily import DailyStore

from daily_helpers import TEST_SECRET

if TYPE_CHECKING:
    from conftest import WaitFor

BUDGET = Budget(nodes=20_000)  # no time limit: the choice of n is deterministic
DAY = date(2030, 1, 1)  # its draw-3 challenge is candidate 2 under BUDGET


@pytest.fixture
def store(redis: Redis) -> DailyStore:
    """The daily store on the test Valkey."""
    return DailyStore(redis)


def smallest_certified(secret: bytes, day: date, variant: Variant) -> int:
    """The first n whose deal the in-process solver wins within BUDGET."""
    for n in range(100):
        board = Board.from_seed(daily_seed(secret, day, variant, n), variant)
        if solve(board, BUDGET).result == "solvable":
            return n
    raise AssertionError("no certified candidate")


def test_slugs_are_the_canonical_text_without_equals_signs() -> None:
    """The slug is mechanical and round-trips; malformed slugs are refused."""
    assert variant_slug(DRAW1) == "draw1-passes1-f2tno"
    assert variant_slug(DRAW3) == "draw3-passes3-f2tno"
    assert variant_slug(Variant(draw=1, passes=0, f2t=True)) == "draw1-passesunlimited-f2tyes"
    for variant in (DRAW1, DRAW3, Variant(draw=3, passes=0, f2t=True)):
        assert slug_variant(variant_slug(variant)) == variant
    for bad in ("draw1", "draw2-passes1-f2tno", "passes1-draw1-f2tno", "draw1-passes01-f2tno"):
        with pytest.raises(ValueError):
            slug_variant(bad)


def test_daily_seed_is_the_hmac_of_date_variant_and_n() -> None:
    """The seed matches an independent HMAC-SHA256 computation, in lowercase hex."""
    message = b"daily:2030-01-01:draw3-passes3-f2tno:7"
    expected = hmac.new(TEST_SECRET, message, hashlib.sha256).hexdigest()
    assert daily_seed(TEST_SECRET, DAY, DRAW3, 7) == expected
    assert expected == expected.lower() and len(expected) == 64


def test_daily_seed_depends_on_the_secret() -> None:
    """Without the secret the seed cannot be derived from the date alone."""
    seed = daily_seed(TEST_SECRET, DAY, DRAW1, 0)
    assert seed != daily_seed(b"another secret of at least 32 bytes!", DAY, DRAW1, 0)
    unkeyed = b"daily:2030-01-01:draw1-passes1-f2tno:0"
    assert seed != hashlib.sha256(unkeyed).hexdigest()
    assert seed != hmac.new(b"", unkeyed, hashlib.sha256).hexdigest()
    others = {
        daily_seed(TEST_SECRET, DAY + timedelta(days=1), DRAW1, 0),
        daily_seed(TEST_SECRET, DAY, DRAW3, 0),
        daily_seed(TEST_SECRET, DAY, DRAW1, 1),
    }
    assert seed not in others and len(others) == 3
    with pytest.raises(ValueError):
        daily_seed(TEST_SECRET, DAY, DRAW1, -1)


async def test_prepare_day_picks_the_smallest_certified_candidate(
    redis: Redis, store: DailyStore
) -> None:
    """The record holds the first n the solver proves winnable, with its commitment."""
    expected = smallest_certified(TEST_SECRET, DAY, DRAW3)
    assert expected > 0  # the date was chosen so that candidates are rejected first
    record = await prepare_day(store, TEST_SECRET, DAY, DRAW3, BUDGET)
    assert record.n == expected
    assert record.seed == daily_seed(TEST_SECRET, DAY, DRAW3, expected)
    assert record.day == DAY and record.variant == DRAW3
    assert record.commitment == commitment(Deal.from_seed(record.seed))
    assert record.par == len(record.moves)
    board = Board.from_seed(record.seed, DRAW3)
    for token in record.moves:
        board.play(token)
    assert board.is_won()
    assert await load_day(store, DAY, DRAW3) == record
    assert await load_day(redis, DAY, DRAW3) == record  # a bare client will do as well
    stored = await redis.hgetall(keys.daily_day("2030-01-01", "draw3-passes3-f2tno"))
    assert stored[b"seed"] == record.seed.encode() and stored[b"n"] == str(expected).encode()


async def test_prepare_day_is_idempotent(store: DailyStore) -> None:
    """An existing record is kept, whatever the secret or budget of later calls."""
    first, second = await asyncio.gather(
        prepare_day(store, TEST_SECRET, DAY, DRAW3, BUDGET),
        prepare_day(store, TEST_SECRET, DAY, DRAW3, BUDGET),
    )
    assert first == second
    again = await prepare_day(store, b"a different secret, also 32 bytes+", DAY, DRAW3, BUDGET)
    assert again == first
    assert await load_day(store, DAY, DRAW1) is None


async def test_commitment_is_the_sha256_of_the_revealed_deal(store: DailyStore) -> None:
    """Anyone can check the published commitment against the deal revealed at the end."""
    record = await prepare_day(store, TEST_SECRET, DAY, DRAW3, BUDGET)
    closed = datetime(2030, 1, 2, tzinfo=UTC)
    revealed = record.reveal(closed)
    assert hashlib.sha256(revealed["deal"].encode()).hexdigest() == record.commitment
    assert revealed["deal"] == str(Deal.from_seed(revealed["seed"]))
    assert revealed["commitment"] == record.public()["commitment"]
    assert revealed["solution"] == list(record.moves) and revealed["n"] == record.n


async def test_open_day_shows_only_public_fields(store: DailyStore) -> None:
    """While the day is open nothing gives the deal away: no seed, deal or line."""
    record = await prepare_day(store, TEST_SECRET, DAY, DRAW3, BUDGET)
    during = datetime(2030, 1, 1, 23, 59, 59, 999_999, tzinfo=UTC)
    public = record.public()
    assert public == {
        "date": "2030-01-01",
        "variant": "draw=3 passes=3 f2t=no",
        "commitment": record.commitment,
        "par": record.par,
    }
    assert record.view(during) == public
    with pytest.raises(DayOpenError):
        record.reveal(during)
    with pytest.raises(DayOpenError):
        record.reveal(datetime(2029, 12, 31, tzinfo=UTC))  # before it even opened
    text = repr(record) + str(public)
    assert record.seed not in text and " ".join(record.moves[:5]) not in text
    after = record.view(datetime(2030, 1, 2, tzinfo=UTC))
    assert after["seed"] == record.seed


def test_a_day_closes_at_the_next_midnight_utc() -> None:
    """Open from 00:00 UTC of its date to 00:00 UTC of the next; time zones respected."""
    assert not is_closed(DAY, datetime(2030, 1, 1, 0, 0, tzinfo=UTC))
    assert not is_closed(DAY, datetime(2030, 1, 1, 23, 59, 59, 999_999, tzinfo=UTC))
    assert is_closed(DAY, datetime(2030, 1, 2, 0, 0, tzinfo=UTC))
    east = datetime(2030, 1, 2, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    assert not is_closed(DAY, east)  # 23:30 UTC on the 1st
    assert day_of(east) == DAY
    with pytest.raises(ValueError, match="naive"):
        is_closed(DAY, datetime(2030, 1, 2))


async def test_ensure_days_prepares_consecutive_days(store: DailyStore) -> None:
    """Each day of the range gets a record per variant, reported as it is ready."""
    seen: list[DayRecord] = []
    start = date(2030, 1, 4)
    records = await ensure_days(
        store, TEST_SECRET, start, 2, variants=[DRAW3], budget=BUDGET, on_ready=seen.append
    )
    assert [r.day for r in records] == [start, start + timedelta(days=1)]
    assert seen == records
    assert [await load_day(store, r.day, DRAW3) for r in records] == records


async def test_run_prepare_follows_the_clock_past_midnight(
    store: DailyStore, wait_for: WaitFor
) -> None:
    """The task keeps today and the next days ready, and moves on when the date does."""
    now = [datetime(2030, 1, 4, 23, 59, 59, tzinfo=UTC)]
    task = asyncio.create_task(
        run_prepare(
            lambda: now[0],
            store,
            TEST_SECRET,
            variants=[DRAW3],
            budget=BUDGET,
            days_ahead=1,
            interval=0.05,
        )
    )

    async def ready(day: date) -> bool:
        return await load_day(store, day, DRAW3) is not None

    try:
        await wait_for(lambda: ready(date(2030, 1, 5)), timeout=30)
        assert await ready(date(2030, 1, 4))
        assert not await ready(date(2030, 1, 6))
        today = await load_day(store, date(2030, 1, 4), DRAW3)
        assert today is not None and not is_closed(today.day, now[0])
        now[0] += timedelta(seconds=2)  # past midnight: the 4th closes
        assert is_closed(today.day, now[0])
        assert today.reveal(now[0])["seed"] == today.seed
        await wait_for(lambda: ready(date(2030, 1, 6)), timeout=30)
        assert not await ready(date(2030, 1, 7))
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await wait_for(task, 5)
