"""End to end: the day rollover, the commitment and the reveal, the preparing task."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.daily.days import daily_seed, load_day
from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.engine import Deal
from klondike_live.gateway.server import Node, running
from klondike_live.store.connect import RedisClient

from auditor import http_audit
from daily_support import (
    D1,
    D3,
    DAY,
    TEST_SECRET,
    DayClock,
    create_daily,
    get,
    get_ok,
    play,
    prepare,
    record_for,
    start_attempt,
)
from helpers import FAST, close_all
from waits import connect_client

if TYPE_CHECKING:
    from conftest import WaitFor

__all__ = ["http_audit"]  # the fixture, imported for pytest: audits every HTTP answer

NEXT = DAY + timedelta(days=1)
BOARD = "api/daily/{}/draw1-passes1-f2tno/leaderboard"


async def test_an_attempt_begun_before_midnight_counts_for_its_own_day(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """At 23:59:50 the attempt is on day 1; it ends after 00:00 UTC and is ranked under
    day 1. Then today is day 2: a new ranked attempt on a new deal."""
    await prepare(redis, NEXT, DRAW1)
    first, second = record_for(DAY, DRAW1), record_for(NEXT, DRAW1)
    assert first.commitment != second.commitment
    clock.set(datetime(2030, 1, 1, 23, 59, 50, tzinfo=UTC))
    alice = await connect_client(daily_node.ws_url, name="Alice")
    try:
        room, state = await start_attempt(alice)
        assert state["daily"]["date"] == "2030-01-01"
        await play(alice, room, first.moves[:10])
        clock.set(datetime(2030, 1, 2, 0, 0, 5, tzinfo=UTC))
        await play(alice, room, first.moves[10:])
        assert alice.own_board(room, 0).status == "won"
        results = await alice.expect(lambda m: m["t"] == "results")
        assert results["daily"] == {
            "date": "2030-01-01",
            "variant": D1,
            "ranked": True,
            "closed": True,
        }
        assert results["seed"] == first.seed, "the day closed: its seed is revealed"
        old = await get_ok(daily_node, BOARD.format("2030-01-01"), alice.token)
        assert [r["user"] for r in old["rows"]] == [alice.user] and old["closed"] is True
        assert old["rows"][0]["won"] is True and old["me"]["rank"] == 1
        new = await get_ok(daily_node, BOARD.format("2030-01-02"))
        assert new["count"] == 0 and new["closed"] is False
        created = await create_daily(alice)
        assert created["room"] != room
        assert created["daily"] == {"date": "2030-01-02", "variant": D1, "ranked": True}
        state = await alice.join(str(created["room"]))
        assert state["commitment"] == second.commitment != first.commitment
        stats = await get_ok(daily_node, "api/daily/stats", alice.token)
        assert stats["last_played"] == "2030-01-01" and stats["streak"] == 1
        assert stats["wins"] == 1
        today = await get_ok(daily_node, "api/daily", alice.token)
        assert today["date"] == "2030-01-02"
        assert today["challenges"][0]["attempt"]["state"] == "playing"
    finally:
        await alice.close()


async def test_the_morning_commitment_matches_the_deal_revealed_at_close(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """The commitments published in the morning are the SHA-256 of the deals the
    archive reveals once the day has closed; the seed is the secret's HMAC."""
    morning = await get_ok(daily_node, "api/daily")
    commitments = {c["variant"]: c["commitment"] for c in morning["challenges"]}
    assert set(commitments) == {D1, D3} and all(c["ready"] for c in morning["challenges"])
    for variant in (DRAW1, DRAW3):
        assert record_for(DAY, variant).seed not in repr(morning)
    assert await get_ok(daily_node, "api/daily/archive") == []
    alice = await connect_client(daily_node.ws_url, name="Alice")
    try:
        room, _ = await start_attempt(alice, D3)
        await play(alice, room, record_for(DAY, DRAW3).moves)
        await alice.expect(lambda m: m["t"] == "results")
    finally:
        await alice.close()
    await prepare(redis, NEXT, DRAW1)
    clock.set(datetime(2030, 1, 2, 0, 0, 0, tzinfo=UTC))
    archive = await get_ok(daily_node, "api/daily/archive?limit=30")
    assert [(a["date"], a["variant"]) for a in archive] == [("2030-01-01", D1), ("2030-01-01", D3)]
    for entry in archive:
        assert hashlib.sha256(entry["deal"].encode()).hexdigest() == commitments[entry["variant"]]
        assert entry["commitment"] == commitments[entry["variant"]]
        assert str(Deal.from_seed(entry["seed"])) == entry["deal"]
        variant = DRAW1 if entry["variant"] == D1 else DRAW3
        stored = await load_day(redis, DAY, variant)
        assert stored is not None
        assert entry["seed"] == daily_seed(TEST_SECRET, DAY, variant, stored.n)
        assert entry["par"] == stored.par
    one, three = archive
    assert one["players"] == 0 and one["winner"] is None
    assert three["players"] == 1 and three["winner"]["room"] == room
    assert three["winner"]["won"] is True and three["slug"] == "draw3-passes3-f2tno"


async def test_leaderboard_requests_name_real_days_and_variants(daily_node: Node) -> None:
    """Unknown dates, slugs of non-daily variants and days to come are 404; bad paging
    numbers 400."""
    for path in (
        "api/daily/2030-02-30/draw1-passes1-f2tno/leaderboard",
        "api/daily/20300101/draw1-passes1-f2tno/leaderboard",
        "api/daily/2030-01-01/draw1-passesunlimited-f2tno/leaderboard",
        "api/daily/2030-01-01/nonsense/leaderboard",
        "api/daily/2030-01-02/draw1-passes1-f2tno/leaderboard",
        "api/daily/2030-01-01/draw1-passes1-f2tno",
        "api/daily/anything",
    ):
        assert await get(daily_node, path) == (404, {"error": "not_found"}), path
    for query in ("?limit=x", "?offset=-1", "?limit=1e3"):
        status, _ = await get(daily_node, BOARD.format("2030-01-01") + query)
        assert status == 400, query
    big = await get_ok(daily_node, BOARD.format("2030-01-01") + "?limit=5000&offset=0")
    assert big["rows"] == [] and big["count"] == 0
    assert (await get(daily_node, "api/daily/archive?limit=abc"))[0] == 400


async def test_the_background_task_keeps_the_coming_days_ready(
    make_settings: Callable[..., Settings], redis: RedisClient, wait_for: WaitFor
) -> None:
    """`run_prepare` in the node certifies today and the days ahead, and moves on with
    the clock."""
    start = date(2030, 3, 1)
    clock = DayClock(datetime(2030, 3, 1, 12, tzinfo=UTC))
    for variant in (DRAW1, DRAW3):
        await prepare(redis, start, variant)
    settings = make_settings(**FAST, daily_prepare_seconds=0.2, daily_days_ahead=0)
    async with running(settings, clock=clock) as node:
        clock.set(datetime(2030, 3, 2, 0, 0, 1, tzinfo=UTC))

        async def ready() -> bool:
            records = [await load_day(redis, start + timedelta(days=1), v) for v in (DRAW1, DRAW3)]
            return all(records)

        await wait_for(ready, timeout=60)
        today = await get_ok(node, "api/daily")
        assert today["date"] == "2030-03-02" and all(c["ready"] for c in today["challenges"])
        for variant in (DRAW1, DRAW3):
            stored = await load_day(redis, start + timedelta(days=1), variant)
            assert stored == record_for(start + timedelta(days=1), variant)


async def test_a_day_not_prepared_yet_is_prepared_on_the_first_attempt(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With no record for today, `/api/daily` answers at once (not ready yet) and the
    first `create` waits for the preparation."""
    clock = DayClock(datetime(2030, 4, 1, 9, tzinfo=UTC))
    async with running(make_settings(**FAST), clock=clock) as node:
        early = await get_ok(node, "api/daily")
        assert [(c["ready"], c["commitment"], c["par"]) for c in early["challenges"]] == [
            (False, None, None),
            (False, None, None),
        ]
        alice = await connect_client(node.ws_url, name="Alice")
        try:
            created = await create_daily(alice, D3)
            assert created["daily"]["ranked"] is True
            record = record_for(date(2030, 4, 1), DRAW3)
            state = await alice.join(str(created["room"]))
            assert state["commitment"] == record.commitment
            today = await get_ok(node, "api/daily")
            assert today["challenges"][1]["commitment"] == record.commitment
        finally:
            await close_all([alice])


async def test_a_closed_day_is_kept_by_the_history_database(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """Once the day has closed, a node keeps it in the history database (its record and
    final leaderboard) and lets its Valkey keys expire in two days; with those keys gone,
    the day's leaderboard (pages and your rank), the archive and the spoiler-free replay
    answer exactly as before; keeping it again changes nothing."""
    players = []

    def results_of(room: str) -> Callable[[dict[str, Any]], bool]:
        return lambda m: m["t"] == "results" and m["room"] == room

    try:
        for name in ("Alice", "Bob", "Cy"):
            client = await connect_client(daily_node.ws_url, name=name)
            players.append(client)
            room, _ = await start_attempt(client, D1)
            moves = record_for(DAY, DRAW1).moves
            await play(client, room, moves if name != "Bob" else moves[:10])
            if name == "Bob":
                await client.resign(room)
            await client.expect(results_of(room))
        clock.set(datetime(2030, 1, 2, 0, 0, 1, tzinfo=UTC))
        daily = daily_node.service.daily
        assert daily.is_open(DAY) is False
        board = BOARD.format(DAY.isoformat())
        paths = [board, board + "?offset=1&limit=1", "api/daily/archive"]
        before = [await get_ok(daily_node, path, players[1].token) for path in paths]
        assert await daily.keep_closed_days() == 2  # both variants of the day
        assert await daily.keep_closed_days() == 0
        slug = "draw1-passes1-f2tno"
        for key in (keys.daily_day(DAY.isoformat(), slug), keys.daily_board(DAY.isoformat(), slug)):
            assert 0 < await redis.pttl(key) <= 2 * 86_400_000
            await redis.delete(key)  # their expiry, come early
        await redis.delete(keys.daily_entries(DAY.isoformat(), slug))
        after = [await get_ok(daily_node, path, players[1].token) for path in paths]
        assert after == before
        assert [row["name"] for row in after[0]["rows"]][2] == "Bob"  # the one who resigned
        assert after[0]["me"]["rank"] == 3 and after[0]["closed"] is True
    finally:
        await close_all(players)
