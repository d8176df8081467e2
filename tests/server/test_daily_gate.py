"""End to end: the spoiler gate of today's daily games, over websockets and HTTP."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from klondike_live.client import Client, ServerError
from klondike_live.daily.variants import DRAW1
from klondike_live.gateway.server import Node
from klondike_live.store.connect import RedisClient

from auditor import audit_clients, http_audit
from daily_support import (
    DAY,
    DayClock,
    get,
    get_ok,
    play,
    record_for,
    start_attempt,
)
from helpers import close_all
from waits import connect_client

__all__ = ["http_audit"]  # the fixture, imported for pytest: audits every HTTP answer


async def refused(client: Client, room: str, role: str) -> str:
    with pytest.raises(ServerError) as refusal:
        await client.join(room, role)
    return refusal.value.code


async def test_only_accounts_that_finished_may_watch_todays_games(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """Nobody who has not finished their ranked attempt sees a daily game of the day:
    not as a spectator, not as a racer, not over HTTP; a finished account may; once the
    day closes, anyone may, seed included."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    bob = await connect_client(daily_node.ws_url, name="Bob")
    carol = await connect_client(daily_node.ws_url, name="Carol")
    late = await connect_client(daily_node.ws_url, name="Late")
    try:
        room, _ = await start_attempt(alice)
        await play(alice, room, record.moves[:6])
        assert await refused(bob, room, "spectator") == "spoiler"
        assert await refused(bob, room, "racer") == "spoiler"
        assert await refused(alice, room, "spectator") == "own_race"
        await alice.join(room)  # (a refused join left the room)
        bobs, _ = await start_attempt(bob)
        await play(bob, bobs, record.moves[:3])
        assert await refused(bob, room, "spectator") == "spoiler", "playing is not finished"

        carols, _ = await start_attempt(carol)
        await carol.resign(carols)
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == carols)
        state = await carol.join(room, "spectator")
        assert state["daily"]["ranked"] and "seed" not in state
        await carol.expect(lambda m: m["t"] == "board" and m["room"] == room)
        assert await refused(carol, room, "racer") == "wrong_state"
        await play(alice, room, record.moves[6:12])
        await carol.expect(lambda m: m["t"] == "diff" and m["room"] == room and m["moves"] == 12)

        practice, _ = await start_attempt(carol)
        assert await refused(bob, practice, "spectator") == "spoiler"
        assert await refused(late, practice, "spectator") == "spoiler"

        await play(alice, room, record.moves[12:])
        results = await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
        assert "seed" not in results and "deal" not in results
        assert results["ranking"][0]["status"] == "won"
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == room)

        for path in (f"api/results/{room}/1", f"api/replay/{room}/1"):
            assert await get(daily_node, path) == (403, {"error": "spoiler"})
            assert await get(daily_node, path, bob.token) == (403, {"error": "spoiler"})
            assert await get(daily_node, path, "not-a-token") == (403, {"error": "spoiler"})
            shown = await get_ok(daily_node, path, carol.token)
            assert "seed" not in shown and "deal" not in shown
            assert record.seed not in repr(shown)
        replay = await get_ok(daily_node, f"api/replay/{room}/1", alice.token)
        assert replay["boards"][0]["status"] == "won" and replay["daily"]["ranked"]
        assert await get(daily_node, f"api/results/{bobs}/1", carol.token) == (
            404,
            {"error": "not_found"},
        ), "a game still played has no results"
        for listing in ("api/live", "api/rooms", "api/results"):
            assert all(
                entry["room"] not in (room, bobs, carols, practice)
                for entry in await get_ok(daily_node, listing)
            )

        clock.set(datetime(2030, 1, 2, 0, 0, 1, tzinfo=UTC))
        state = await late.join(room, "spectator")
        assert state["seed"] == record.seed and state["daily"]["closed"] is True
        revealed = await late.expect(lambda m: m["t"] == "results" and m["room"] == room)
        assert revealed["seed"] == record.seed and revealed["daily"]["closed"] is True
        shown = await get_ok(daily_node, f"api/results/{room}/1")
        assert shown["seed"] == record.seed and shown["deal"]
        assert (await get_ok(daily_node, f"api/replay/{room}/1"))["seed"] == record.seed
        await late.join(bobs, "spectator")
        await late.expect(lambda m: m["t"] == "board" and m["room"] == bobs)
        assert await audit_clients(redis, [alice, bob, carol, late]) > 30
    finally:
        await close_all([alice, bob, carol, late])


async def test_a_spectator_only_sees_what_the_player_saw(daily_node: Node) -> None:
    """Watching a ranked attempt (after finishing one's own), the boards show only
    what its player has seen face up (the auditor checks every frame)."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    carol = await connect_client(daily_node.ws_url, name="Carol")
    try:
        carols, _ = await start_attempt(carol)
        await play(carol, carols, record.moves[:20])
        await carol.resign(carols)
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == carols)
        room, _ = await start_attempt(alice)
        await carol.join(room, "spectator")
        snapshot = await carol.expect(lambda m: m["t"] == "board" and m["room"] == room)
        assert snapshot["audience"] == "spectator"
        assert sum(c >= 0 for _, pile in snapshot["view"]["tableau"] for c in pile) == 7
        await play(alice, room, record.moves[:30])
        await carol.expect(lambda m: m["t"] == "diff" and m["room"] == room and m["moves"] == 30)
        await alice.resign(room)
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == room)
    finally:
        await close_all([alice, carol])


def test_the_auditor_catches_a_daily_leak() -> None:
    """The daily rules of the auditor fail on a card the viewer could not know, on a
    seed before the close and on a result of someone else's game before one's own."""
    from auditor import ALL, DailyRoom, DailyTruth, Truth, audit_daily

    record = record_for(DAY, DRAW1)
    truth_a = Truth(DRAW1, record.seed, {0: list(record.moves[:10])})
    truth_b = Truth(DRAW1, record.seed, {0: []})
    truth = DailyTruth(
        DAY,
        record.seed,
        {"roomA": DailyRoom("a", True, truth_a), "roomB": DailyRoom("b", True, truth_b)},
        finished_at={"a": 5_000},
    )
    never = lambda _t: False  # noqa: E731
    seven = truth_b.seen(0, 0)
    unseen = next(c for c in range(52) if not seven >> c & 1)
    view = {
        "tableau": [[6, [unseen]]] + [[0, []]] * 6,
        "waste": [],
        "stock": 24,
        "foundations": [0, 0, 0, 0],
        "foundations_hidden": 0,
        "pass": 1,
    }
    frame = {
        "t": "board",
        "room": "roomB",
        "seat": 0,
        "audience": "own",
        "epoch": 1,
        "off": 0,
        "moves": 0,
        "status": "playing",
        "view": view,
    }
    with pytest.raises(AssertionError, match="may not know"):
        audit_daily([frame], [1.0], "b", truth, never)
    watching = dict(frame, room="roomA", audience="spectator")
    with pytest.raises(AssertionError, match="may not know"):
        audit_daily([watching], [1.0], "b", truth, never)
    seed = {"t": "error", "code": "x", "msg": f"oops {record.seed}"}
    with pytest.raises(AssertionError, match="seed leaked"):
        audit_daily([seed], [1.0], "b", truth, never)
    results = {"t": "results", "room": "roomA", "ranking": [{"seat": 0, "view": view}]}
    with pytest.raises(AssertionError, match="before its own attempt ended"):
        audit_daily([results], [1.0], "b", truth, never)
    closed = {"t": "room", "room": "roomA", "state": "racing", "daily": {"closed": True}}
    with pytest.raises(AssertionError, match="had not"):
        audit_daily([closed], [1.0], "b", truth, never)
    assert audit_daily([seed], [1.0], "b", truth, lambda _t: True) == 0
    assert ALL >> unseen & 1
