"""End to end: ranked daily attempts, resumes, practice rooms, leaderboards and updates."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from klondike_live import keys
from klondike_live.client import ServerError
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.gateway.server import Node, running
from klondike_live.protocol.outgoing import view_wire
from klondike_live.store.connect import RedisClient

from auditor import http_audit
from daily_support import (
    D1,
    D3,
    DAY,
    DayClock,
    create_daily,
    first_foundation,
    get,
    get_ok,
    play,
    record_for,
    start_attempt,
)
from helpers import FAST, close_all
from waits import connect_client, scaled, wait_for

if TYPE_CHECKING:
    from conftest import WaitFor

__all__ = ["http_audit"]  # the fixture, imported for pytest: audits every HTTP answer


async def test_one_ranked_attempt_resumed_while_played_then_practice_rooms(
    daily_node: Node, redis: RedisClient
) -> None:
    """The first `create` opens the ranked attempt; a second one while it is played
    returns the same room; after it ended, each `create` opens a new practice room on
    the same deal (undo allowed), never a second ranked one."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    try:
        created = await create_daily(alice)
        assert created["daily"] == {"date": "2030-01-01", "variant": D1, "ranked": True}
        room = str(created["room"])
        again = await create_daily(alice)
        assert again["room"] == room and again["daily"]["ranked"]
        state = await alice.join(room)
        assert state["kind"] == "daily" and state["state"] in ("countdown", "racing")
        assert state["daily"] == {
            "date": "2030-01-01",
            "variant": D1,
            "ranked": True,
            "closed": False,
        }
        assert state["commitment"] == record.commitment and state["certified"] is True
        assert state["time_limit"] == 1800 and "seed" not in state
        board = await alice.expect(lambda m: m["t"] == "board")
        up = [pile[1] for pile in board["view"]["tableau"]]
        assert [sum(c >= 0 for c in cards) for cards in up] == [1] * 7
        assert board["view"]["stock"] == 24
        await play(alice, room, record.moves[:3])
        with pytest.raises(ServerError) as undo:
            await alice.undo(room)
        assert undo.value.code == "not_allowed"
        with pytest.raises(ServerError) as hint:
            await alice.hint(room)
        assert hint.value.code == "not_allowed"
        await alice.rematch(room)
        refused = await alice.expect(lambda m: m["t"] == "error" and m.get("room") == room)
        assert refused["code"] == "wrong_state"
        assert (
            await redis.hget(keys.daily_attempts("2030-01-01", "draw1-passes1-f2tno"), alice.user)
            == room.encode()
        )
        await alice.resign(room)
        results = await alice.expect(lambda m: m["t"] == "results")
        assert results["kind"] == "daily" and results["ranking"][0]["status"] == "resigned"
        assert "seed" not in results and "deal" not in results
        assert results["daily"] == {
            "date": "2030-01-01",
            "variant": D1,
            "ranked": True,
            "closed": False,
        }
        finished = [m for m in alice.received if m["t"] == "room" and m["state"] == "finished"]
        assert finished and "seed" not in finished[0]
        practice = await create_daily(alice)
        assert practice["room"] != room and practice["daily"]["ranked"] is False
        other = await create_daily(alice)
        assert other["room"] not in (room, practice["room"]) and not other["daily"]["ranked"]
        mine = str(practice["room"])
        state = await alice.join(mine)
        assert state["daily"]["ranked"] is False and state["time_limit"] == 0
        assert state["commitment"] == record.commitment
        await alice.expect(lambda m: m["t"] == "board" and m["room"] == mine)
        await play(alice, mine, record.moves[:2])
        await alice.undo(mine)
        assert alice.own_board(mine, 0).moves == 1
        board_rows = await get_ok(
            daily_node, "api/daily/2030-01-01/draw1-passes1-f2tno/leaderboard"
        )
        assert board_rows["count"] == 1 and board_rows["rows"][0]["room"] == room
        assert board_rows["rows"][0]["gen"] == 1 and board_rows["rows"][0]["won"] is False
    finally:
        await alice.close()


async def test_an_attempt_resumes_after_a_reconnect_with_its_clock_running(
    make_settings: Callable[..., Settings], redis: RedisClient, clock: DayClock, wait_for: WaitFor
) -> None:
    """A dropped player comes back to the same board; away longer than the grace period
    it is not resigned: only the time limit ends a ranked attempt (a timeout)."""
    from daily_support import prepare

    record = await prepare(redis, DAY, DRAW3)
    settings = make_settings(**FAST, grace_seconds=0.2, daily_time_limit_seconds=3)
    async with running(settings, clock=clock) as node:
        alice = await connect_client(node.ws_url, name="Alice")
        room, state = await start_attempt(alice, D3)
        started = state["start_at"]
        steps = first_foundation(record)
        await play(alice, room, record.moves[:steps])
        assert alice.connection.transport is not None
        alice.connection.transport.abort()
        await alice.close()
        await asyncio.sleep(scaled(0.6))  # a pause of three grace periods: not resigned
        back = await connect_client(node.ws_url, token=alice.token, resume_from=alice)
        created = await create_daily(back, D3)
        assert created["room"] == room and created["daily"]["ranked"]
        state = await back.join(room, since=back.since(room))
        assert state["start_at"] == started and state["state"] != "finished"
        await wait_for(lambda: back.own_board(room, 0).moves == steps)
        assert back.own_board(room, 0).status == "playing"
        results = await back.expect(lambda m: m["t"] == "results", timeout=scaled(10))
        (row,) = results["ranking"]
        assert row["status"] == "timeout" and row["found"] >= 1 and row["moves"] == steps
        assert results["ended_at"] - started >= 3000
        entry = await get_ok(node, "api/daily/2030-01-01/draw3-passes3-f2tno/leaderboard")
        (top,) = entry["rows"]
        assert top["won"] is False and top["found"] == row["found"]
        assert top["time_ms"] == row["found_ms"] and top["user"] == alice.user
        await back.close()


async def test_leaderboard_order_through_the_server_with_ties_and_live_updates(
    daily_node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """Winners by time first; then by foundation cards; equal keys share a rank. A
    watcher gets a `daily_update` per entry; stats and attempt state follow."""
    record = record_for(DAY, DRAW1)
    names = ("Ann", "Ben", "Cat", "Dan", "Eve")
    players = [await connect_client(daily_node.ws_url, name=n) for n in names]
    watcher = await connect_client(daily_node.ws_url, name="Watcher")
    try:
        first = await watcher.call(
            {"t": "daily_watch", "rid": 5, "date": "2030-01-01", "variant": D1},
            lambda m: m["t"] == "daily_update" and m.get("rid") == 5,
        )
        assert first == {
            "t": "daily_update",
            "rid": 5,
            "date": "2030-01-01",
            "variant": D1,
            "count": 0,
        }
        ann, ben, cat, dan, eve = players
        rooms = {}
        # Ben starts before Ann and finishes after her: his time is longer whatever
        # the machine's pace.
        for player in (ben, ann, cat, dan, eve):
            rooms[player.name], _ = await start_attempt(player)
        await play(ann, rooms["Ann"], record.moves)
        await asyncio.sleep(0.05)
        await play(ben, rooms["Ben"], record.moves)
        assert ann.own_board(rooms["Ann"], 0).status == "won"
        assert ben.own_board(rooms["Ben"], 0).status == "won"
        await play(eve, rooms["Eve"], record.moves[: first_foundation(record)])
        for player in (eve, cat, dan):
            await player.resign(rooms[player.name])
        for player in players:
            await player.expect(lambda m: m["t"] == "results")
        updates = [
            await watcher.expect(lambda m: m["t"] == "daily_update" and "rid" not in m)
            for _ in players
        ]
        assert sorted(u["count"] for u in updates) == [1, 2, 3, 4, 5]
        board = await get_ok(
            daily_node, "api/daily/2030-01-01/draw1-passes1-f2tno/leaderboard", ann.token
        )
        ranks = [(row["name"], row["rank"]) for row in board["rows"]]
        tied = sorted([("Cat", 4), ("Dan", 4)], key=lambda r: players[names.index(r[0])].user)
        assert ranks == [("Ann", 1), ("Ben", 2), ("Eve", 3), *tied]
        assert board["count"] == 5 and board["closed"] is False
        assert board["rows"][0]["time_ms"] < board["rows"][1]["time_ms"]
        assert board["me"]["rank"] == 1 and [r["name"] for r in board["me"]["rows"]][:2] == [
            "Ann",
            "Ben",
        ]
        page = await get_ok(
            daily_node, "api/daily/2030-01-01/draw1-passes1-f2tno/leaderboard?offset=3&limit=1"
        )
        assert [r["rank"] for r in page["rows"]] == [4] and page["me"] is None
        today = await get_ok(daily_node, "api/daily", ben.token)
        midnight = int(datetime(2030, 1, 1, tzinfo=UTC).timestamp() * 1000)
        assert today["date"] == "2030-01-01" and today["now"] == midnight + 8 * 3600_000
        one, three = today["challenges"]
        assert (one["variant"], three["variant"]) == (D1, D3)
        assert one["players"] == 5 and one["closes_at"] == midnight + 86_400_000
        assert one["commitment"] == record.commitment and one["par"] == record.par
        attempt = one["attempt"]
        assert attempt["room"] == rooms["Ben"] and attempt["state"] == "finished"
        assert attempt["rank"] == 2 and attempt["result"]["won"] is True
        assert three["attempt"] is None and three["players"] == 0
        anonymous = await get_ok(daily_node, "api/daily")
        assert all(c["attempt"] is None for c in anonymous["challenges"])
        stats = await get_ok(daily_node, "api/daily/stats", ann.token)
        assert stats["attempts"] == 1 and stats["wins"] == 1 and stats["streak"] == 1
        assert stats["best_ms"] == {D1: board["rows"][0]["time_ms"]}
        assert stats["last_played"] == "2030-01-01"
        assert (await get(daily_node, "api/daily/stats"))[0] == 401
        assert (await get(daily_node, "api/daily/stats", "forged.token.x"))[0] == 401
    finally:
        await close_all(players, [watcher])


async def test_a_playing_attempt_shows_in_todays_challenges(daily_node: Node) -> None:
    """`/api/daily` names the attempt being played, with no result yet; a watch that was
    taken back gets no more updates."""
    alice = await connect_client(daily_node.ws_url, name="Alice")
    watcher = await connect_client(daily_node.ws_url, name="Watcher")
    try:
        room, _ = await start_attempt(alice, D3)
        today = await get_ok(daily_node, "api/daily", alice.token)
        attempt = today["challenges"][1]["attempt"]
        assert attempt == {
            "room": room,
            "ranked": True,
            "state": "playing",
            "result": None,
            "rank": None,
        }
        watch = {"t": "daily_watch", "rid": 1, "date": "2030-01-01", "variant": D3}
        await watcher.call(watch, lambda m: m["t"] == "daily_update")
        await watcher.send({"t": "daily_unwatch", "date": "2030-01-01", "variant": D3})
        await watcher.call({"t": "ping", "rid": 2}, lambda m: m["t"] == "pong")
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results")
        await asyncio.sleep(scaled(0.2))  # a pause: no update comes after the unwatch
        await watcher.call({"t": "ping", "rid": 3}, lambda m: m["t"] == "pong")
        assert [m["t"] for m in watcher.received].count("daily_update") == 1
    finally:
        await close_all([alice, watcher])


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"seats": 1}, "seats"),
        ({"public": True}, "public"),
        ({"time_limit": 60}, "time_limit"),
        ({"deal": "any"}, "deal"),
        ({"variant": "draw=1 passes=unlimited"}, "variant"),
    ],
)
async def test_bad_daily_requests_are_refused(
    daily_node: Node, extra: dict[str, object], field: str
) -> None:
    """A daily `create` takes no seats, is never public, has the server's time limit and
    the day's deal, and only the two daily variants."""
    alice = await connect_client(daily_node.ws_url, name="Alice")
    try:
        message = {"t": "create", "rid": 3, "kind": "daily", "variant": D1, **extra}
        with pytest.raises(ServerError) as refused:
            await alice.call(message, lambda m: m["t"] == "created")
        assert refused.value.code == "bad_field" and field in refused.value.message["msg"]
        fine = await alice.call(
            {
                "t": "create",
                "rid": 4,
                "kind": "daily",
                "variant": D1,
                "public": False,
                "time_limit": 0,
                "deal": "certified",
            },
            lambda m: m["t"] == "created",
        )
        assert fine["daily"]["ranked"]
        for bad in ({"date": "2030-13-01"}, {"date": "tomorrow"}, {"variant": "draw=2"}):
            watch = {"t": "daily_watch", "rid": 9, "date": "2030-01-01", "variant": D1, **bad}
            with pytest.raises(ServerError) as refused:
                await alice.call(watch, lambda m: m["t"] == "daily_update")
            assert refused.value.code == "bad_field"
    finally:
        await alice.close()


async def test_leaderboard_updates_reach_watchers_on_other_nodes(
    daily_node: Node, make_settings: Callable[..., Settings], clock: DayClock
) -> None:
    """A result recorded through one node reaches a watcher connected to another."""
    async with running(make_settings(**FAST), clock=clock) as other:
        watcher = await connect_client(other.ws_url, name="Watcher")
        alice = await connect_client(daily_node.ws_url, name="Alice")
        try:
            watch = {"t": "daily_watch", "rid": 1, "date": "2030-01-01", "variant": D3}
            await watcher.call(watch, lambda m: m["t"] == "daily_update")
            room, _ = await start_attempt(alice, D3)
            await alice.resign(room)
            update = await watcher.expect(lambda m: m["t"] == "daily_update" and "rid" not in m)
            assert update == {"t": "daily_update", "date": "2030-01-01", "variant": D3, "count": 1}
        finally:
            await close_all([watcher, alice])


async def test_a_finished_attempt_reloads_with_its_board_and_counts_in_statistics(
    daily_node: Node,
) -> None:
    """Back in its finished ranked attempt (the day still open), the player gets its own
    board as it ended, only the cards it saw; the attempt counts in its statistics as
    `daily`; a practice room waits for it among its unfinished games."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    try:
        room = str((await create_daily(alice))["room"])
        await alice.join(room)
        await alice.expect(lambda m: m["t"] == "board")
        await play(alice, room, record.moves[:4])
        seen = alice.own_board(room, 0).view
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results")
        practice = str((await create_daily(alice))["room"])
    finally:
        await alice.close()
    back = await connect_client(daily_node.ws_url, token=alice.token)
    try:
        await back.join(room)
        board = await back.expect(lambda m: m["t"] == "board" and m["room"] == room)
        assert board["audience"] == "own" and board["status"] == "resigned"
        assert board["moves"] == 4 and board["view"] == view_wire(seen)

        async def counted() -> Any:
            # The history database has the game a moment after its results went out.
            stats = await get_ok(daily_node, "api/me/stats", back.token)
            return stats if stats["categories"] else None

        stats = await wait_for(counted)
        assert [(c["kind"], c["played"], c["won"]) for c in stats["categories"]] == [
            ("daily", 1, 0)
        ]
        unfinished = await get_ok(daily_node, "api/me/unfinished", back.token)
        assert [(g["room"], g["kind"], g["daily"]) for g in unfinished] == [
            (practice, "daily", "2030-01-01")
        ]
    finally:
        await back.close()
