"""End to end: reconnects, idempotent moves, identity, refusals, abuse, timers, HTTP."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import jwt
import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from klondike_live.client import ServerError
from klondike_live.config import Settings
from klondike_live.engine import UNKNOWN
from klondike_live.gateway.server import Node, running
from klondike_live.protocol.kinds import Audience
from klondike_live.store.connect import RedisClient

from auditor import Truth, audit, audit_clients
from helpers import FAST, WON, close_all, node, started_race
from waits import connect_client, scaled, wait_for

__all__ = ["node"]  # the fixture, imported for pytest


async def test_reconnect_resumes_with_no_lost_or_repeated_event(node: Node) -> None:
    """A racer dropped mid-race resumes from its offsets: exactly the missed events."""
    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    moves = list(WON.moves)
    try:
        for token in moves[:10]:
            await alice.move(room, token)
        before = alice.own_board(room, 0).offset
        assert alice.connection.transport is not None
        alice.connection.transport.abort()  # no close frame: a dropped network
        await alice.close()
        for token in moves[:5]:
            await bob.move(room, token)
        again = await connect_client(node.ws_url, token=alice.token, resume_from=alice)
        await again.join(room, since=again.since(room))
        for token in moves[10:20]:
            await again.move(room, token)
        own = [m for m in again.received if m["t"] in ("board", "diff") and m["audience"] == "own"]
        assert [m["t"] for m in own] == ["diff"] * 10, "resumed with diffs only, no snapshot"
        assert [m["off"] for m in own] == list(range(before + 1, before + 11))
        mirror = again.own_board(room, 0)
        assert mirror.moves == 20
        await carol.expect(lambda m: m["t"] == "diff" and m["seat"] == 0 and m["moves"] == 20)
        carol_offsets = [
            m["off"] for m in carol.received if m["t"] in ("board", "diff") and m["seat"] == 0
        ]
        # 21 move events of seat 0, plus any refresh when Bob's moves let spectators see
        # more of Alice's board: each offset once, in order.
        assert len(carol_offsets) >= 21
        assert carol_offsets == list(range(len(carol_offsets))), "each event once, in order"
        await again.close()
    finally:
        await close_all([bob, carol])


async def test_a_spectator_resuming_two_boards_is_told_the_racers_progress_first(
    node: Node, redis: RedisClient
) -> None:
    """A spectator away while Alice, then Bob, play the same moves resumes from its
    offsets: Alice's events come first and show, once Bob caught up, the cards he
    uncovered too, before Bob's own events do. The `progress` ahead of them says where
    Bob is already, so that no frame shows a card ahead of what the spectator was told."""
    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    moves = list(WON.moves[:12])
    try:
        await wait_for(lambda: len(carol.since(room)) == 2)  # both boards at the start
        await carol.close()
        for racer in (alice, bob):
            for token in moves:
                await racer.move(room, token)
        again = await connect_client(node.ws_url, token=carol.token, resume_from=carol)
        await again.join(room, "spectator", since=again.since(room))
        await again.expect(lambda m: m["t"] == "diff" and m["seat"] == 1 and m["moves"] == 12)
        caught_up = [m for m in again.received if m["t"] in ("progress", "board", "diff")]
        assert caught_up[0]["t"] == "progress"
        assert [row[3] for row in caught_up[0]["boards"]] == [12, 12]
        assert all(m["t"] == "diff" for m in caught_up[1:]), "missed events, no snapshot"
        refreshes = [m for m in caught_up if m["t"] == "diff" and m["seat"] == 0 and not m.get("m")]
        assert refreshes, "Alice's board shows more once Bob has seen it too"
        assert await audit_clients(redis, [again]) > 0
        await again.close()
    finally:
        await close_all([alice, bob])


async def test_resume_after_a_gap_too_old_gets_a_snapshot(node: Node) -> None:
    """An offset from another epoch cannot be proven complete: a fresh snapshot instead."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        await alice.move(room, WON.moves[0])
        again = await connect_client(node.ws_url, token=alice.token)
        await alice.close()
        await again.join(room, since=[[0, 999, 1]])
        snapshot = await again.expect(lambda m: m["t"] == "board")
        assert snapshot["off"] == 1 and snapshot["moves"] == 1 and snapshot["last_id"] >= 1
        await again.close()
    finally:
        await close_all([bob])


async def test_duplicate_move_id_is_applied_once(node: Node) -> None:
    """Re-sending a move id acks again with the same offset and applies nothing."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        first = await alice.move(room, WON.moves[0], move_id=50)
        repeat = await alice.move(room, WON.moves[0], move_id=50)
        older = await alice.move(room, "D", move_id=7)
        assert first["off"] == repeat["off"] == older["off"] == 1
        await asyncio.sleep(scaled(0.1))  # a pause: nothing more is applied
        assert alice.own_board(room, 0).moves == 1
    finally:
        await close_all([alice, bob])


async def test_illegal_and_malformed_moves_are_refused_with_reasons(node: Node) -> None:
    """The rules' reason comes back with `illegal_move`; a bad token with `bad_move`."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        with pytest.raises(ServerError) as info:
            await alice.move(room, "WF")
        assert info.value.code == "illegal_move" and "waste is empty" in info.value.message["msg"]
        with pytest.raises(ServerError) as info:
            await alice.move(room, "Z9")
        assert info.value.code == "bad_move"
        assert alice.own_board(room, 0).moves == 0
    finally:
        await close_all([alice, bob])


async def test_a_spectator_cannot_move_and_a_racer_cannot_watch_own_race(node: Node) -> None:
    """Spectators get `not_a_racer`; a racer's account joining as spectator gets `own_race`."""
    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    try:
        with pytest.raises(ServerError) as info:
            await carol.move(room, "D")
        assert info.value.code == "not_a_racer"
        spy = await connect_client(node.ws_url, token=bob.token)
        with pytest.raises(ServerError) as info:
            await spy.join(room, "spectator")
        assert info.value.code == "own_race"
        await spy.close()
    finally:
        await close_all([alice, bob, carol])


async def test_a_refused_join_as_spectator_of_ones_own_race_changes_nothing(
    node: Node,
) -> None:
    """A racer whose own connection asks to watch its race gets `own_race` and keeps its
    seat connection: its next move is applied."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        with pytest.raises(ServerError) as info:
            await alice.join(room, "spectator")
        assert info.value.code == "own_race"
        acknowledged = await alice.move(room, WON.moves[0])
        assert acknowledged["t"] == "diff" and alice.own_board(room, 0).moves == 1
    finally:
        await close_all([alice, bob])


async def test_newer_connection_takes_over_and_the_older_is_closed(node: Node) -> None:
    """A second connection of the same racer takes over; the first is closed with 4001."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        second = await connect_client(node.ws_url, token=alice.token)
        await second.join(room)
        await second.expect(lambda m: m["t"] == "board")
        with pytest.raises(ConnectionError):
            await alice.expect(lambda m: False, timeout=scaled(5))
        assert alice.connection.close_code == 4001
        await second.move(room, WON.moves[0])
        await second.close()
    finally:
        await close_all([bob])


@pytest.mark.parametrize("case", ["forged", "expired", "wrong_secret", "alg_none", "garbage"])
async def test_bad_tokens_are_refused(node: Node, case: str) -> None:
    """Forged, expired and wrong-secret tokens get an error code and close 4002."""
    secret = node.settings.secret
    now = int(time.time())
    tokens = {
        "forged": jwt.encode({"sub": "u1"}, secret, algorithm="HS256")[:-4] + "AAAA",
        "expired": jwt.encode({"sub": "u1", "exp": now - 3600}, secret, algorithm="HS256"),
        "wrong_secret": jwt.encode({"sub": "u1"}, b"x" * 32, algorithm="HS256"),
        "alg_none": jwt.encode({"sub": "u1"}, "", algorithm="none"),
        "garbage": "not.a.token",
    }
    with pytest.raises(ServerError) as info:
        await connect_client(node.ws_url, token=tokens[case])
    assert info.value.code == ("token_expired" if case == "expired" else "token_invalid")


async def test_operator_tokens_are_accepted(node: Node) -> None:
    """A token minted by the operator's own site with the same secret is a login."""
    token = jwt.encode({"sub": "site-user-7", "name": "Seven"}, node.settings.secret, "HS256")
    client = await connect_client(node.ws_url, token=token)
    assert (client.user, client.name) == ("site-user-7", "Seven")
    await client.close()


async def _raw(node: Node) -> ClientConnection:
    connection = await connect(node.ws_url, compression=None)
    await connection.send(msgpack.packb({"t": "hello", "v": 1, "name": "Raw"}))
    welcome = msgpack.unpackb(await connection.recv())
    assert welcome["t"] == "welcome"
    return connection


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\xc1", "malformed"),
        (msgpack.packb([1, 2, 3]), "malformed"),
        (msgpack.packb({"t": "teleport"}), "unknown_type"),
        (msgpack.packb({"t": "move", "room": "abcdefgh", "id": "1", "m": "D"}), "bad_field"),
        (msgpack.packb({"t": "move", "room": "abcdefgh", "id": 1}), "bad_field"),
        (msgpack.packb({"t": "ping", "extra": 1}), "bad_field"),
        (msgpack.packb({"t": "join", "room": "no{such}", "as": "racer"}), "no_room"),
        (msgpack.packb({"t": "join", "room": "nosuchroom", "as": "king"}), "bad_field"),
        ("text frame", "text_frame"),
    ],
)
async def test_bad_input_gets_a_stable_error_code(
    node: Node, frame: bytes | str, code: str
) -> None:
    """Malformed frames, unknown types and bad fields get an `error` with a stable code."""
    connection = await _raw(node)
    try:
        await connection.send(frame)
        reply = msgpack.unpackb(await wait_for(connection.recv(), 5))
        assert reply["t"] == "error" and reply["code"] == code
        await connection.send(msgpack.packb({"t": "ping", "rid": 9}))
        pong = msgpack.unpackb(await wait_for(connection.recv(), 5))
        assert pong == {"t": "pong", "rid": 9, "now": pong["now"]}
    finally:
        await connection.close()


async def test_oversized_frame_closes_with_1009(node: Node) -> None:
    """A frame over the size limit is refused by closing with 1009."""
    connection = await _raw(node)
    await connection.send(b"\x00" * (node.settings.max_frame_bytes + 1))
    with pytest.raises(ConnectionClosed):
        await wait_for(connection.recv(), 5)
    assert connection.close_code == 1009


async def test_no_hello_closes_with_4004(
    make_settings: Callable[..., Settings], redis: RedisClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that never says hello is closed with 4004."""
    monkeypatch.setattr("klondike_live.gateway.session.HELLO_TIMEOUT", 0.2)
    async with running(make_settings(**FAST)) as started:
        connection = await connect(started.ws_url)
        with pytest.raises(ConnectionClosed):
            await wait_for(connection.recv(), 5)
        assert connection.close_code == 4004


async def test_flood_closes_with_1008_while_others_keep_playing(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A flooding client is closed with 1008; the racers' game goes on unharmed."""
    settings = make_settings(
        countdown_seconds=0.2, tick_seconds=0.05, rate_per_second=5.0, rate_burst=5, abuse_limit=5
    )
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        room, (alice, bob), _ = await started_race(started, "Alice", "Bob")
        flooder = await _raw(started)
        try:
            for _ in range(200):
                await flooder.send(msgpack.packb({"t": "ping"}))
        except ConnectionClosed:
            pass
        with pytest.raises(ConnectionClosed):
            while True:
                await wait_for(flooder.recv(), 5)
        assert flooder.close_code == 1008
        for token in WON.moves[:4]:
            await alice.move(room, token)
            await asyncio.sleep(scaled(0.25))  # a pace within this node's low rate limit
        assert alice.own_board(room, 0).moves == 4
        await close_all([alice, bob])


async def test_shutdown_closes_clients_with_4000(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """Stopping a node tells its clients to reconnect (4000)."""
    async with running(make_settings(**FAST)) as started:
        client = await connect_client(started.ws_url)
    with pytest.raises(ConnectionError):
        await client.expect(lambda m: False, timeout=scaled(5))
    assert client.connection.close_code == 4000


async def test_absent_racer_is_resigned_after_the_grace_period(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A racer gone longer than the grace period counts as resigned; the race ends."""
    settings = make_settings(**FAST, grace_seconds=0.3)
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        room, (alice, bob), (carol,) = await started_race(
            started, "Alice", "Bob", spectators=("Carol",)
        )
        await bob.close()
        await alice.resign(room)
        results = await carol.expect(lambda m: m["t"] == "results", timeout=scaled(10))
        statuses = {row["name"]: row["status"] for row in results["ranking"]}
        assert statuses == {"Alice": "resigned", "Bob": "resigned"}
        audit(carol.received, Truth.from_results(results), role="spectator")
        await close_all([alice, carol])


async def test_time_limit_ends_the_race(
    make_settings: Callable[..., Settings], redis: RedisClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the time limit every board still playing times out and results follow."""
    async with running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as started:
        alice = await connect_client(started.ws_url, name="Alice")
        bob = await connect_client(started.ws_url, name="Bob")
        room = await alice.create_race("draw=1", seats=2, time_limit=1)
        for racer in (alice, bob):
            await racer.join(room)
            await racer.ready(room)
        await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "board")
        first_to_foundation = next(i for i, t in enumerate(WON.moves) if t.endswith("F"))
        for token in WON.moves[: first_to_foundation + 1]:
            await alice.move(room, token)
        results = await alice.expect(lambda m: m["t"] == "results", timeout=scaled(10))
        assert {row["status"] for row in results["ranking"]} == {"timeout"}
        ranks = [(row["name"], row["rank"], row["found"]) for row in results["ranking"]]
        assert ranks == [("Alice", 1, 1), ("Bob", 2, 0)], "more foundation cards ranks first"
        await close_all([alice, bob])


async def test_solo_practice_allows_undo_and_hints_races_do_not(node: Node) -> None:
    """Undo and hints work in a solo game and are refused in a race."""
    solo = await connect_client(node.ws_url, name="Solo")
    room = await solo.create_solo("draw=1")
    await solo.join(room)
    await solo.expect(lambda m: m["t"] == "board")
    await solo.move(room, WON.moves[0])
    await solo.undo(room)
    assert solo.own_board(room, 0).moves == 0
    hint = await solo.hint(room)
    assert hint["verdict"] in ("winning", "heuristic") and isinstance(hint["m"], str)
    assert hint["msg"]
    race, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    with pytest.raises(ServerError) as info:
        await alice.undo(race)
    assert info.value.code == "not_allowed"
    with pytest.raises(ServerError) as info:
        await alice.hint(race)
    assert info.value.code == "not_allowed"
    await close_all([solo, alice, bob])


def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=scaled(5)) as response:
        return response.status, response.headers["Content-Type"], response.read()


async def test_http_endpoints(node: Node) -> None:
    """Health, metrics and the JSON API answer on the websocket's port."""
    base = node.url
    status, kind, body = await asyncio.to_thread(_get, base + "healthz")
    assert status == 200 and json.loads(body)["status"] == "ok"
    status, kind, body = await asyncio.to_thread(_get, base + "metrics")
    assert status == 200 and b"klondike_connections" in body and kind.startswith("text/plain")
    host = await connect_client(node.ws_url, name="Host")
    room = await host.create_race("draw=3", seats=3, public=True)
    status, _, body = await asyncio.to_thread(_get, base + "api/rooms")
    listed = json.loads(body)
    assert [(r["room"], r["variant"], r["capacity"]) for r in listed] == [
        (room, "draw=3 passes=3 f2t=no", 3)
    ]
    await host.close()
    with pytest.raises(urllib.error.HTTPError) as info:
        await asyncio.to_thread(_get, base + "api/results/nosuchroom/1")
    assert info.value.code == 404


async def test_rematch_deals_a_fresh_race_to_the_same_racers(node: Node) -> None:
    """After the results, a rematch returns to the lobby with the same racers; the new
    race has a new epoch and its own commitment."""
    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    try:
        first = await carol.expect(lambda m: m["t"] == "room" and "commitment" in m)
        await alice.resign(room)
        await bob.resign(room)
        await carol.expect(lambda m: m["t"] == "results")
        await bob.rematch(room)
        lobby = await alice.expect(lambda m: m["t"] == "room" and m["gen"] == 2)
        assert lobby["state"] == "lobby"
        assert [s["name"] for s in lobby["seats"]] == ["Alice", "Bob"]
        await alice.ready(room)
        await bob.ready(room)
        await alice.expect(
            lambda m: m["t"] == "room" and m["gen"] == 2 and all(s["ready"] for s in m["seats"])
        )
        await alice.start(room)
        board = await alice.expect(lambda m: m["t"] == "board" and m["epoch"] == 2)
        assert board["off"] == 0 and board["moves"] == 0
        second = await carol.expect(
            lambda m: m["t"] == "room" and m["gen"] == 2 and "commitment" in m
        )
        assert second["commitment"] == first["commitment"], "the test node deals one seed"
        await carol.expect(lambda m: m["t"] == "board" and m["epoch"] == 2)
        await alice.move(room, WON.moves[0])
    finally:
        await close_all([alice, bob, carol])


async def test_solo_games_can_be_watched(node: Node) -> None:
    """A spectator of a practice game sees its moves live, as the player sees them."""
    player = await connect_client(node.ws_url, name="Solo")
    watcher = await connect_client(node.ws_url, name="Fan")
    try:
        room = await player.create_solo("draw=1")
        await player.join(room)
        await player.expect(lambda m: m["t"] == "board")
        await watcher.join(room, "spectator")
        await watcher.expect(lambda m: m["t"] == "board")
        for token in WON.moves[:5]:
            await player.move(room, token)
        await watcher.expect(lambda m: m["t"] == "diff" and m["moves"] == 5)
        mirror = watcher.boards[(room, 0, Audience.SPECTATOR)]
        assert mirror.view == player.own_board(room, 0).view
    finally:
        await close_all([player, watcher])


async def test_moves_survive_a_script_flush(node: Node, redis: RedisClient) -> None:
    """If Redis forgets the Lua scripts (a restart), board writes reload them."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        await alice.move(room, WON.moves[0])
        await redis.script_flush()
        await alice.move(room, WON.moves[1])
        assert alice.own_board(room, 0).moves == 2
    finally:
        await close_all([alice, bob])


async def test_joining_and_a_new_race_are_not_counted_as_resyncs(node: Node) -> None:
    """`klondike_resyncs` counts snapshots that stand in for a viewer's backlog, not the
    boards a viewer sees for the first time: a join, or the next race of a rematch."""
    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    try:
        await alice.move(room, WON.moves[0])
        await carol.expect(lambda m: m["t"] == "diff" and m["epoch"] == 1)
        for player in (alice, bob):
            await player.resign(room)
        await carol.expect(lambda m: m["t"] == "results")
        await bob.rematch(room)
        await alice.expect(lambda m: m["t"] == "room" and m["gen"] == 2)
        for player in (alice, bob):
            await player.ready(room)
        await alice.expect(
            lambda m: m["t"] == "room" and m["gen"] == 2 and all(s["ready"] for s in m["seats"])
        )
        await alice.start(room)
        await carol.expect(lambda m: m["t"] == "board" and m["seat"] == 1 and m["epoch"] == 2)
        await alice.move(room, WON.moves[0])
        await carol.expect(lambda m: m["t"] == "diff" and m["epoch"] == 2)
        assert node.metrics.resyncs._value.get() == 0
        assert node.metrics.snapshots._value.get() >= 8  # 2 boards x 2 races x 2 viewers
    finally:
        await close_all([alice, bob, carol])


async def test_lagging_spectator_gets_snapshots_instead_of_a_backlog(
    node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spectator whose send buffer is full is skipped, then resynced with snapshots."""
    from klondike_live.gateway.session import Session

    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    slow = {s for s in node.sessions if s.user == carol.user}
    full = {"now": True}
    real = Session.lagging
    monkeypatch.setattr(Session, "lagging", lambda s: (s in slow and full["now"]) or real(s))
    try:
        before = len(carol.received)
        for token in WON.moves[:6]:
            await alice.move(room, token)
        await asyncio.sleep(scaled(0.2))  # a pause: no diff reaches the lagging spectator
        skipped = [m for m in carol.received[before:] if m["t"] == "diff"]
        assert skipped == [], "a lagging spectator gets no backlog"
        full["now"] = False
        snapshot = await carol.expect(lambda m: m["t"] == "board" and m["seat"] == 0)
        assert snapshot["moves"] == 6 and snapshot["off"] == 6
        await alice.move(room, WON.moves[6])
        await carol.expect(lambda m: m["t"] == "diff" and m["seat"] == 0 and m["off"] == 7)
        assert node.metrics.resyncs._value.get() >= 1
    finally:
        await close_all([alice, bob, carol])


async def test_a_race_with_no_countdown_still_sends_every_viewer_its_boards(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With `countdown_seconds=0` the start instant has passed when the room frame
    arrives: viewers who joined in the lobby get their boards all the same."""
    settings = make_settings(**{**FAST, "countdown_seconds": 0.0})
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        alice = await connect_client(started.ws_url, name="Alice")
        bob = await connect_client(started.ws_url, name="Bob")
        carol = await connect_client(started.ws_url, name="Carol")
        room = await alice.create_race("draw=1", seats=2)
        for racer in (alice, bob):
            await racer.join(room)
        await carol.join(room, "spectator")
        for racer in (alice, bob):
            await racer.ready(room)
        await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
        await alice.start(room)
        for racer in (alice, bob):
            await racer.expect(
                lambda m: m["t"] == "board" and m["audience"] == "own", timeout=scaled(5)
            )
        await carol.expect(lambda m: m["t"] == "board" and m["seat"] == 1, timeout=scaled(5))
        await alice.move(room, WON.moves[0])
        assert alice.own_board(room, 0).moves == 1
        await close_all([alice, bob, carol])


async def test_a_racer_whose_board_is_done_watches_the_rest_as_a_spectator(node: Node) -> None:
    """Once its own board is done a racer may watch its race, and is shown exactly the
    spectator view: the cards every racer still playing has seen (the leak auditor checks
    every frame it got). A racer still playing is still refused."""
    room, (alice, bob, cyd), _ = await started_race(node, "Alice", "Bob", "Cyd")
    try:
        with pytest.raises(ServerError) as info:
            await bob.join(room, "spectator")
        assert info.value.code == "own_race"
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "diff" and m.get("status") == "resigned")
        state = await alice.join(room, "spectator")
        assert state["state"] in ("countdown", "racing")
        for seat in (0, 1, 2):

            def spectator_board(m: dict[str, Any], s: int = seat) -> bool:
                return bool(m["t"] == "board" and m["seat"] == s and m["audience"] == "spectator")

            await alice.expect(spectator_board)
        for _ in range(3):
            await bob.move(room, "D")
        await alice.expect(
            lambda m: (
                m["t"] == "diff"
                and m["seat"] == 1
                and m["moves"] == 3
                and m["audience"] == "spectator"
            )
        )
        watched = alice.boards[(room, 1, Audience.SPECTATOR)]
        # Cyd has not seen the cards Bob turned: a spectator, Alice included, may not.
        assert watched.view.waste == (UNKNOWN,) * 3
        assert all(m.get("audience") != "own" or m["seat"] == 0 for m in alice.received)
    finally:
        await close_all([alice, bob, cyd])


async def test_an_away_racer_shows_since_when_and_the_grace_period(node: Node) -> None:
    """A racer whose connection closed shows away, with the time it left and the race's
    grace period, so that others can count down to its resignation."""
    _room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        before = int(time.time() * 1000)
        await bob.close()
        frame = await alice.expect(
            lambda m: m["t"] == "room" and m["seats"][1] is not None and not m["seats"][1]["online"]
        )
        away = frame["seats"][1]["away_since"]
        assert before - 5_000 <= away <= int(time.time() * 1000) + 5_000
        assert frame["grace"] == int(node.settings.grace_seconds * 1000)
        assert "away_since" not in frame["seats"][0]
    finally:
        await close_all([alice, bob])
