"""The daily store's own commands: day records written once, the archive index, ranked
attempts claimed once, leaderboard updates published, and errors as `StoreError`."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest
from redis.asyncio import Redis

from klondike_live.bus.messages import DailyUpdate, decode_daily
from klondike_live.daily.variants import DRAW1, DRAW3, variant_slug
from klondike_live.keys import DAILY_UPDATES, daily_attempts
from klondike_live.store import StoreError
from klondike_live.store.connect import open_redis, ping
from klondike_live.store.daily import DailyStore

from waits import scaled

DAY = date(2030, 1, 1)


async def test_a_day_record_is_written_once(redis: Redis) -> None:
    """The first record of a day and variant stays; a second write changes nothing."""
    store = DailyStore(redis)
    assert await store.load_day(DAY, DRAW1) is None
    assert await store.create_day(DAY, DRAW1, {"seed": "first", "n": "0"})
    assert not await store.create_day(DAY, DRAW1, {"seed": "second", "n": "1"})
    assert await store.load_day(DAY, DRAW1) == {"seed": "first", "n": "0"}
    assert await store.load_day(DAY, DRAW3) is None


async def test_the_index_lists_days_newest_first_up_to_a_date(redis: Redis) -> None:
    """`indexed_days` gives (date, slug) pairs dated up to `through`, newest first."""
    store = DailyStore(redis)
    for day, variant in ((date(2030, 1, 2), DRAW1), (DAY, DRAW3), (date(2030, 1, 3), DRAW1)):
        await store.index_day(day, variant)
        await store.index_day(day, variant)  # idempotent
    slug1, slug3 = variant_slug(DRAW1), variant_slug(DRAW3)
    assert await store.indexed_days(date(2030, 1, 2), 10) == [
        ("2030-01-02", slug1),
        ("2030-01-01", slug3),
    ]
    assert await store.indexed_days(date(2030, 1, 9), 1) == [("2030-01-03", slug1)]
    assert await store.indexed_days(date(2029, 12, 31), 10) == []


async def test_a_ranked_attempt_is_claimed_once(redis: Redis) -> None:
    """Concurrent claims: one room wins, and every caller can read which."""
    store = DailyStore(redis)
    claims = await asyncio.gather(
        *(store.claim_attempt(DAY, DRAW1, "amy", f"room-{i}") for i in range(5))
    )
    assert sum(claims) == 1
    assert await store.attempt_room(DAY, DRAW1, "amy") == f"room-{claims.index(True)}"
    assert await store.attempt_room(DAY, DRAW3, "amy") is None
    assert await store.attempt_room(DAY, DRAW1, "bob") is None


async def test_an_update_reaches_the_subscribers_of_the_daily_channel(redis: Redis) -> None:
    """Subscribers of `DAILY_UPDATES` get the note as it was published."""
    pubsub = redis.pubsub()
    await pubsub.subscribe(DAILY_UPDATES)
    try:
        update = DailyUpdate("2030-01-01", str(DRAW3), 7)
        await DailyStore(redis).publish_update(update)
        message = None
        async with asyncio.timeout(scaled(5)):
            while message is None:
                message = await pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=scaled(1)
                )
        assert decode_daily(message["data"]) == update
    finally:
        await pubsub.aclose()


async def test_store_errors_are_caught_without_importing_redis(redis: Redis) -> None:
    """A refused command and an unreachable server both raise `StoreError`."""
    await redis.set(daily_attempts(DAY.isoformat(), variant_slug(DRAW1)), "not a hash")
    with pytest.raises(StoreError):
        await DailyStore(redis).claim_attempt(DAY, DRAW1, "amy", "room")
    await ping(redis)
    with pytest.raises(StoreError):
        await open_redis("redis://127.0.0.1:1/0", socket_timeout=1.0)
