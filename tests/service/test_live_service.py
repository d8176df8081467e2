"""The live service driven through its API: rooms, races, timers and catch-up, no sockets.

Every frame each client gets is checked as it arrives (service_checks.py): no card its
viewer may not know, no gap or repeat in any board stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from klondike_live.engine import Move
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.kinds import Role
from klondike_live.race.room import FINISHED, RACING
from klondike_live.race.status import BoardOp, BoardStatus
from klondike_live.service.ending import RECHECK_MS
from klondike_live.store import StoreError, TimerKind

from race_support import board_of, pick_move, play, start_race
from service_checks import Streams
from service_fixtures import GRACE_SECONDS, SEED, Cluster, MemoryConnection
from waits import wait_for

if TYPE_CHECKING:
    from conftest import WaitFor

GRACE_MS = int(GRACE_SECONDS * 1000)


def board_frames(conn: MemoryConnection, seat: int | None = None) -> list[dict[str, Any]]:
    """The `board` and `diff` frames a connection got (of one seat)."""
    return [
        m
        for m in conn.received
        if m.get("t") in ("board", "diff") and (seat is None or m["seat"] == seat)
    ]


def since_of(streams: Streams, audience: str) -> tuple[msg.Since, ...]:
    """What a client resuming would send: its last offset of each board stream."""
    return tuple(
        msg.Since(seat, epoch, offset)
        for (_room, seat, aud, epoch), offset in sorted(streams.at.items())
        if aud == audience
    )


async def test_a_race_starts_with_each_viewer_s_snapshots(cluster: Cluster) -> None:
    """At the start each racer gets its own board, the spectator each racer's, at offset 0."""
    race = await start_race(cluster)
    for seat, racer in enumerate(race.racers):
        frames = board_frames(racer)
        assert [(m["t"], m["seat"], m["audience"], m["off"]) for m in frames] == [
            ("board", seat, "own", 0)
        ]
        assert frames[0]["last_id"] == 0
    (sue,) = race.spectators
    assert [(m["t"], m["seat"], m["audience"], m["off"]) for m in board_frames(sue)] == [
        ("board", 0, "spectator", 0),
        ("board", 1, "spectator", 0),
    ]
    assert race.racers[0].of_kind("room")[-1]["state"] == RACING
    assert "seed" not in race.racers[0].of_kind("room")[-1]


async def test_a_move_gives_its_racer_a_diff_with_the_move_id_and_spectators_a_diff(
    cluster: Cluster,
) -> None:
    """A move comes back to its racer as a diff with the move id, to spectators as a diff."""
    race = await start_race(cluster)
    ann, bob = race.racers
    (sue,) = race.spectators
    token = await play(cluster, ann, race.room)
    own = board_frames(ann)[-1]
    assert (own["t"], own["audience"], own["seat"], own["off"], own["id"], own["m"]) == (
        "diff",
        "own",
        0,
        1,
        1,
        token,
    )
    watched = board_frames(sue, seat=0)[-1]
    assert (watched["t"], watched["audience"], watched["off"], watched["m"]) == (
        "diff",
        "spectator",
        1,
        token,
    )
    assert "id" not in watched
    assert [m["seat"] for m in board_frames(bob)] == [1]
    await cluster.tick()
    now = await cluster.race(race.room)
    assert now.moves[0] == [token]
    fields = now.fields[0]
    row = [0, int(fields["found"]), int(fields["down"]), 1, "playing"]
    assert bob.of_kind("progress")[-1]["boards"][0] == row


async def test_a_repeated_move_id_is_acknowledged_and_not_applied_again(cluster: Cluster) -> None:
    """A move resent with an applied id gets an `ack` at the board's offset, and no replay."""
    race = await start_race(cluster)
    ann = race.racers[0]
    token = await play(cluster, ann, race.room)
    assert await cluster.request(ann, msg.MoveRequest(race.room, 1, token)) is None
    ack = ann.received[-1]
    assert (ack["t"], ack["id"], ack["off"]) == ("ack", 1, 1)
    assert (await cluster.race(race.room)).moves[0] == [token]


async def test_a_resuming_spectator_gets_exactly_the_events_it_missed(cluster: Cluster) -> None:
    """A spectator resuming with its offsets gets each missed event once, in order."""
    race = await start_race(cluster)
    ann, bob = race.racers
    (sue,) = race.spectators
    await play(cluster, ann, race.room)
    await play(cluster, bob, race.room)
    await cluster.disconnect(sue)
    since = since_of(cluster.streams[sue.conn_id], "spectator")
    assert [s.seat for s in since] == [0, 1]
    for _ in range(3):
        await play(cluster, ann, race.room)
    await play(cluster, bob, race.room)
    now = await cluster.race(race.room)
    back = cluster.connect("sue")
    assert await cluster.request(back, msg.Join(race.room, Role.SPECTATOR, since)) is None
    for mark in since:
        got = [(m["t"], m["off"]) for m in board_frames(back, mark.seat)]
        stored = now.offset(mark.seat, "spectator")
        assert got == [("diff", off) for off in range(mark.offset + 1, stored + 1)]


async def test_a_racer_resuming_after_a_lost_ack_gets_the_missing_own_events(
    cluster: Cluster,
) -> None:
    """A racer resuming after its acks were lost in a lagging socket gets exactly those."""
    race = await start_race(cluster)
    ann = race.racers[0]
    await play(cluster, ann, race.room)
    ann.lag()  # the socket's buffer is full: the hub skips it
    for move_id in (2, 3):
        now = await cluster.race(race.room)
        token = str(pick_move(board_of(now, 0)))
        assert await cluster.request(ann, msg.MoveRequest(race.room, move_id, token)) is None
    assert [m["off"] for m in board_frames(ann)] == [0, 1]
    await cluster.disconnect(ann)
    again = cluster.connect("ann")
    since = since_of(cluster.streams[ann.conn_id], "own")
    assert await cluster.request(again, msg.Join(race.room, Role.RACER, since)) is None
    assert [(m["t"], m["off"], m.get("id")) for m in board_frames(again)] == [
        ("diff", 2, 2),
        ("diff", 3, 3),
    ]


async def test_a_lagging_spectator_gets_fresh_snapshots_once_drained(cluster: Cluster) -> None:
    """A lagging spectator is skipped, then gets fresh snapshots once drained, then diffs."""
    race = await start_race(cluster)
    ann = race.racers[0]
    (sue,) = race.spectators
    sue.lag()
    await play(cluster, ann, race.room)
    await play(cluster, ann, race.room)
    skipped = len(board_frames(sue))
    sue.drain()
    await cluster.settle()
    now = await cluster.race(race.room)
    fresh = board_frames(sue)[skipped:]
    assert {(m["t"], m["seat"], m["off"]) for m in fresh} >= {
        ("board", 0, now.offset(0, "spectator")),
        ("board", 1, now.offset(1, "spectator")),
    }
    await play(cluster, ann, race.room)
    assert board_frames(sue, seat=0)[-1]["off"] == now.offset(0, "spectator") + 1


async def test_a_spectator_on_another_node_sees_a_racer_s_move(cluster: Cluster) -> None:
    """A racer's move on node 0 reaches a spectator on node 1 through the bus."""
    await cluster.add_node()
    race = await start_race(cluster, spectator_node=1)
    (sue,) = race.spectators
    token = await play(cluster, race.racers[0], race.room)
    watched = board_frames(sue, seat=0)
    assert [(m["t"], m["off"]) for m in watched] == [("board", 0), ("diff", 1)]
    assert watched[-1]["m"] == token


async def test_a_racer_s_move_on_another_node_after_a_reconnect(cluster: Cluster) -> None:
    """A racer back on another node goes on with its board; spectators see its moves."""
    await cluster.add_node()
    race = await start_race(cluster)
    ann = race.racers[0]
    (sue,) = race.spectators
    await play(cluster, ann, race.room)
    await cluster.disconnect(ann)
    again = cluster.connect("ann", node=1)
    since = since_of(cluster.streams[ann.conn_id], "own")
    assert await cluster.request(again, msg.Join(race.room, Role.RACER, since)) is None
    token = await play(cluster, again, race.room)
    assert board_frames(sue, seat=0)[-1]["m"] == token
    assert (await cluster.race(race.room)).moves[0][-1] == token


async def test_a_second_connection_of_a_racer_replaces_the_first(cluster: Cluster) -> None:
    """A racer's second connection takes over: the first is closed with `replaced`."""
    await cluster.add_node()
    race = await start_race(cluster)
    ann = race.racers[0]
    newer = cluster.connect("ann", node=1)
    assert await cluster.request(newer, msg.Join(race.room, Role.RACER)) is None
    assert ann.closed is not None and ann.closed[0] == CloseCode.REPLACED
    assert cluster.gone(ann)
    await play(cluster, newer, race.room)


async def test_every_racer_resigning_finishes_the_race_with_results(cluster: Cluster) -> None:
    """When every racer resigned the race is finished: results for all, seed revealed."""
    race = await start_race(cluster)
    ann, bob = race.racers
    await play(cluster, ann, race.room)
    assert await cluster.request(ann, msg.Resign(race.room)) is None
    assert (await cluster.race(race.room)).state.state == RACING
    assert await cluster.request(bob, msg.Resign(race.room)) is None
    now = await cluster.race(race.room)
    assert now.state.state == FINISHED
    assert [now.status(seat) for seat in (0, 1)] == [BoardStatus.RESIGNED] * 2
    for conn in [*race.racers, *race.spectators]:
        (results,) = conn.of_kind("results")
        assert results["seed"] == SEED
        assert sorted(row["seat"] for row in results["ranking"]) == [0, 1]
        assert conn.of_kind("room")[-1]["seed"] == SEED
    assert await cluster.request(ann, msg.Resign(race.room)) is ErrorCode.WRONG_STATE


async def test_grace_expiry_resigns_an_absent_racer(cluster: Cluster) -> None:
    """A racer still away when its grace runs out is resigned; the others race on."""
    race = await start_race(cluster)
    ann, bob = race.racers
    (sue,) = race.spectators
    await cluster.disconnect(bob)
    assert (await cluster.race(race.room)).state.seats[1].online is False  # type: ignore[union-attr]
    await cluster.fire_timers(GRACE_MS - 1000)
    assert (await cluster.race(race.room)).status(1) is BoardStatus.PLAYING
    await cluster.fire_timers(GRACE_MS + 1000)
    now = await cluster.race(race.room)
    assert now.status(1) is BoardStatus.RESIGNED
    assert now.status(0) is BoardStatus.PLAYING
    assert now.state.state == RACING
    assert board_frames(sue, seat=1)[-1]["status"] == "resigned"
    await play(cluster, ann, race.room)


async def test_a_racer_back_within_grace_keeps_playing(cluster: Cluster) -> None:
    """A racer back before its grace ran out is not resigned when the grace timer runs."""
    race = await start_race(cluster)
    bob = race.racers[1]
    await cluster.disconnect(bob)
    again = cluster.connect("bob")
    assert await cluster.request(again, msg.Join(race.room, Role.RACER)) is None
    await cluster.nodes[0].service.timers.run_timer(race.room, TimerKind.GRACE, "bob")
    await cluster.settle()
    assert (await cluster.race(race.room)).status(1) is BoardStatus.PLAYING
    await play(cluster, again, race.room)


async def test_a_refused_join_changes_nothing(cluster: Cluster) -> None:
    """A refused join (`own_race`, `wrong_state`) changes nothing: the racer moves on."""
    race = await start_race(cluster)
    ann = race.racers[0]
    before = await cluster.nodes[0].store.load_room(race.room)
    code = await cluster.request(ann, msg.Join(race.room, Role.SPECTATOR))
    assert code is ErrorCode.OWN_RACE
    late = cluster.connect("zed")
    assert await cluster.request(late, msg.Join(race.room, Role.RACER)) is ErrorCode.WRONG_STATE
    assert await cluster.nodes[0].store.load_room(race.room) == before
    assert [m["t"] for m in board_frames(late)] == []
    await play(cluster, ann, race.room)


async def test_an_illegal_move_is_refused_and_changes_nothing(cluster: Cluster) -> None:
    """An illegal or a malformed move is refused with its code and changes nothing."""
    race = await start_race(cluster)
    ann = race.racers[0]
    before = await cluster.race(race.room)
    assert await cluster.request(ann, msg.MoveRequest(race.room, 1, "WF")) is ErrorCode.ILLEGAL_MOVE
    assert ann.received[-1]["id"] == 1
    assert await cluster.request(ann, msg.MoveRequest(race.room, 1, "zz")) is ErrorCode.BAD_MOVE
    after = await cluster.race(race.room)
    assert after.moves == before.moves and after.fields == before.fields
    await play(cluster, ann, race.room)


async def test_the_time_limit_ends_the_race(cluster: Cluster) -> None:
    """When the time limit runs out the boards still playing time out; the race ends."""
    race = await start_race(cluster, time_limit=60)
    await play(cluster, race.racers[0], race.room)
    await cluster.fire_timers(61_000)
    now = await cluster.race(race.room)
    assert now.state.state == FINISHED
    assert [now.status(seat) for seat in (0, 1)] == [BoardStatus.TIMEOUT] * 2
    assert race.spectators[0].of_kind("results")


async def test_the_checks_catch_a_leaked_card_and_a_gap(cluster: Cluster) -> None:
    """The checks fail on a spectator frame showing a hidden card, and on a stream gap."""
    race = await start_race(cluster)
    (sue,) = race.spectators
    snapshot = next(m for m in sue.received if m.get("t") == "board" and m["seat"] == 0)
    now = await cluster.race(race.room)
    hidden = next(c for c in range(52) if not now.spectators_may_know() >> c & 1)
    leaky = {**snapshot, "view": {**snapshot["view"], "waste": [hidden]}}
    sue.deliver(outgoing.pack(leaky))
    with pytest.raises(AssertionError, match="shows"):
        await cluster.settle()
    gap = {**snapshot, "t": "diff", "off": snapshot["off"] + 2, "d": {"piles": []}}
    sue.deliver(outgoing.pack(gap))
    with pytest.raises(AssertionError, match="jumps"):
        await cluster.settle()


async def test_a_lobby_left_by_its_host_alone_gets_a_new_host(cluster: Cluster) -> None:
    """A lobby its host left alone makes the next racer to sit the host, so it can start."""
    ann = cluster.connect("ann")
    room = await cluster.create_race(ann, 2)
    assert await cluster.request(ann, msg.Join(room, Role.RACER)) is None
    assert await cluster.request(ann, msg.Leave(room)) is None
    racers = [cluster.connect("bob"), cluster.connect("cat")]
    for conn in racers:
        assert await cluster.request(conn, msg.Join(room, Role.RACER)) is None
        assert await cluster.request(conn, msg.Ready(room, True)) is None
    state = (await cluster.race(room)).state
    assert state.host in ("bob", "cat"), f"the room's host is {state.host!r}"
    host = racers[0] if state.host == "bob" else racers[1]
    assert await cluster.request(host, msg.Start(room)) is None


async def test_a_racer_who_left_a_race_and_stays_away_is_resigned(cluster: Cluster) -> None:
    """A racer who left a race under way is resigned by the end of its grace: the race ends."""
    race = await start_race(cluster)
    ann, bob = race.racers
    assert await cluster.request(bob, msg.Leave(race.room)) is None
    await cluster.disconnect(bob)
    await cluster.fire_timers(GRACE_MS + 1000)
    assert (await cluster.race(race.room)).status(1) is BoardStatus.RESIGNED
    assert await cluster.request(ann, msg.Resign(race.room)) is None
    assert (await cluster.race(race.room)).state.state == FINISHED


async def test_a_move_made_while_a_resync_fails_is_acknowledged_after_it(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A racer resynced after a bus gap while the store fails (a failover): its move's
    diff is held while the resync tries, and once a try succeeds the move is
    acknowledged, by the diff or by an own snapshot whose `last_id` includes it."""
    race = await start_race(cluster)
    ann = race.racers[0]
    node = cluster.nodes[0]
    (viewer,) = [v for v in node.hub.rooms[race.room].viewers if v.conn is ann]
    rooms = node.service.rooms
    load = rooms.load
    entered, fail = asyncio.Event(), asyncio.Event()

    async def failing_once(room_id: str) -> Any:
        monkeypatch.setattr(rooms, "load", load)
        entered.set()
        await fail.wait()
        raise StoreError("the master went away")

    monkeypatch.setattr(rooms, "load", failing_once)
    resync = asyncio.create_task(node.service.catchup.resync(viewer))
    await entered.wait()
    now = await cluster.race(race.room)
    token = str(pick_move(board_of(now, 0)))
    move = msg.MoveRequest(race.room, 1, token)
    assert await cluster.request(ann, move, settle=False) is None
    assert not [m for m in ann.of_kind("diff") if m.get("id") == 1], "overtook the resync"
    fail.set()
    await wait_for(resync, 5)
    await cluster.settle()
    acked = [m for m in ann.of_kind("diff") if m.get("id") == 1]
    acked += [m for m in ann.of_kind("board") if m.get("last_id", 0) >= 1]
    assert acked, "the move was never acknowledged"
    assert (await cluster.race(race.room)).moves[0] == [token]


async def test_a_move_count_alone_is_progress_news_to_racers_only(cluster: Cluster) -> None:
    """A stock draw changes only a move count: the racers hear it in `progress`, the
    spectators (whose diffs carry `moves`) do not; a new spectator count reaches all."""
    race = await start_race(cluster)
    ann, bob = race.racers
    (sue,) = race.spectators
    await cluster.tick()
    racer_frames, spectator_frames = len(bob.of_kind("progress")), len(sue.of_kind("progress"))
    assert await cluster.request(ann, msg.MoveRequest(race.room, 1, "D")) is None
    await cluster.tick()
    assert len(bob.of_kind("progress")) == racer_frames + 1
    assert bob.of_kind("progress")[-1]["boards"][0][3] == 1  # ann's moves
    assert len(sue.of_kind("progress")) == spectator_frames
    assert board_frames(sue, seat=0)[-1]["moves"] == 1
    tom = cluster.connect("tom")
    assert await cluster.request(tom, msg.Join(race.room, Role.SPECTATOR)) is None
    await cluster.tick()
    assert sue.of_kind("progress")[-1]["spectators"] == 2
    assert bob.of_kind("progress")[-1]["spectators"] == 2


async def test_a_spectator_joining_keeps_nothing_of_its_catch_up_and_sees_the_next_move(
    cluster: Cluster,
) -> None:
    """A spectator joining a race this node delivered as far as its snapshots keeps no
    catch-up entry and no held-frame list, and gets the next move once."""
    race = await start_race(cluster)
    ann, _bob = race.racers
    await play(cluster, ann, race.room)
    tom = cluster.connect("tom")
    assert await cluster.request(tom, msg.Join(race.room, Role.SPECTATOR)) is None
    local = cluster.nodes[0].hub.rooms[race.room]
    (viewer,) = [v for v in local.viewers if v.conn is tom]
    assert [(m["seat"], m["off"]) for m in board_frames(tom)] == [(0, 1), (1, 0)]
    assert viewer.covered == {}
    assert viewer._held is None
    await play(cluster, ann, race.room)
    assert [(m["t"], m["off"]) for m in board_frames(tom, seat=0)] == [("board", 1), ("diff", 2)]


async def test_a_viewer_joining_mid_race_gets_the_room_frame_with_its_grace(
    cluster: Cluster,
) -> None:
    """The room frame of a join's catch-up is the one every published room frame is:
    in a race under way it carries `grace`, so a late viewer can count an away racer
    down at once."""
    race = await start_race(cluster)
    bob = race.racers[1]
    await cluster.disconnect(bob)
    late = cluster.connect("lea")
    assert await cluster.request(late, msg.Join(race.room, Role.SPECTATOR, rid=7)) is None
    first = late.of_kind("room")[0]
    assert first["rid"] == 7
    assert first["grace"] == GRACE_MS
    assert first["seats"][1]["online"] is False
    published = race.racers[0].of_kind("room")[-1]
    assert {k: v for k, v in first.items() if k not in ("rid", "spectators")} == {
        k: v for k, v in published.items() if k != "spectators"
    }


async def test_a_move_resent_after_a_node_died_gets_its_ack_and_no_frame_again(
    cluster: Cluster,
) -> None:
    """A racer whose node wrote its move and died before answering resumes on another
    node (its own diff comes with the catch-up) and sends the move again: it gets the
    `ack` alone, no frame of an offset it holds; a resend on a node that never delivered
    the move's diff gets that diff, then the `ack`."""
    await cluster.add_node()
    race = await start_race(cluster)
    ann = race.racers[0]
    await play(cluster, ann, race.room)
    ann.closed = (CloseCode.NORMAL, "its node died")  # nothing more reaches the client
    now = await cluster.race(race.room)
    token = str(pick_move(board_of(now, 0)))
    assert await cluster.request(ann, msg.MoveRequest(race.room, 2, token)) is None
    await cluster.disconnect(ann)
    since = since_of(cluster.streams[ann.conn_id], "own")
    assert [(s.seat, s.offset) for s in since] == [(0, 1)]
    again = cluster.connect("ann", node=1)
    assert await cluster.request(again, msg.Join(race.room, Role.RACER, since)) is None
    assert [(m["t"], m["off"], m.get("id")) for m in board_frames(again)] == [("diff", 2, 2)]
    first = len(again.received)
    assert await cluster.request(again, msg.MoveRequest(race.room, 2, token)) is None
    assert [(m["t"], m["id"], m["off"]) for m in again.received[first:]] == [("ack", 2, 2)]
    assert (await cluster.race(race.room)).moves[0] == now.moves[0] + [token]


def failing_room_writes(cluster: Cluster, monkeypatch: pytest.MonkeyPatch, times: int) -> list[str]:
    """Every node's next `times` room writes fail as if the master went away; the list
    names the rooms of those that failed."""
    failed: list[str] = []
    for node in cluster.nodes:
        update = node.store.update_room

        async def failing(room_id: str, *args: Any, _update: Any = update) -> Any:
            if len(failed) < times:
                failed.append(room_id)
                raise StoreError("the master went away")
            return await _update(room_id, *args)

        monkeypatch.setattr(node.store, "update_room", failing)
    return failed


async def test_a_race_whose_end_could_not_be_written_ends_at_its_second_look(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last board's end reached the store, the race's end did not (its room write
    failed): the `end` timer looks again `RECHECK_MS` later and finishes it, long before
    its time limit."""
    race = await start_race(cluster)
    ann, bob = race.racers
    await play(cluster, ann, race.room)
    failed = failing_room_writes(cluster, monkeypatch, times=1)
    for conn in (ann, bob):
        assert await cluster.request(conn, msg.Resign(race.room)) is None
    assert failed == [race.room]
    assert (await cluster.race(race.room)).state.state == RACING
    await cluster.fire_timers(RECHECK_MS - 500)
    assert (await cluster.race(race.room)).state.state == RACING  # not yet due
    await cluster.fire_timers(RECHECK_MS + 1000)
    assert (await cluster.race(race.room)).state.state == FINISHED
    for conn in [*race.racers, *race.spectators]:
        (results,) = conn.of_kind("results")
        assert sorted(row["seat"] for row in results["ranking"]) == [0, 1]


async def test_a_second_look_the_store_could_not_answer_looks_again(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `end` timer's own check fails too: it writes itself again, and the next look
    finishes the race."""
    race = await start_race(cluster)
    ann, bob = race.racers
    failed = failing_room_writes(cluster, monkeypatch, times=2)
    for conn in (ann, bob):
        assert await cluster.request(conn, msg.Resign(race.room)) is None
    await cluster.fire_timers(RECHECK_MS + 1000)
    assert failed == [race.room, race.room]
    assert (await cluster.race(race.room)).state.state == RACING
    await cluster.fire_timers(2 * RECHECK_MS + 1000)
    assert (await cluster.race(race.room)).state.state == FINISHED
    assert len(ann.of_kind("results")) == 1


async def test_a_move_resent_after_its_diff_was_lost_gets_that_diff_then_the_ack(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move stored but whose diff never reached its racer (the write's outcome was
    unknown to the node): sent again, it gets the missing diff, then the `ack`."""
    race = await start_race(cluster)
    ann = race.racers[0]
    await play(cluster, ann, race.room)
    now = await cluster.race(race.room)
    token = str(pick_move(board_of(now, 0)))
    node = cluster.nodes[0]
    local = node.hub.rooms[race.room]
    write = node.store.write_board_event

    async def lost_answer(*args: Any, **kwargs: Any) -> Any:
        await write(*args, **kwargs)
        raise StoreError("the connection broke before the answer")

    monkeypatch.setattr(node.store, "write_board_event", lost_answer)
    (viewer,) = [v for v in local.viewers if v.conn is ann]
    with pytest.raises(StoreError):
        await node.service.boards.write(viewer, BoardOp.MOVE, Move.parse(token), 2)
    monkeypatch.undo()
    assert [m["off"] for m in board_frames(ann)] == [0, 1]
    first = len(ann.received)
    assert await cluster.request(ann, msg.MoveRequest(race.room, 2, token)) is None
    assert [(m["t"], m["off"], m.get("id")) for m in ann.received[first:]] == [
        ("diff", 2, 2),
        ("ack", 2, 2),
    ]


async def test_a_move_resent_in_a_finished_race_rejoined_gets_its_ack_alone(
    cluster: Cluster,
) -> None:
    """Every racer resigned and left (the node forgot the room); one comes back and sends
    its last move again: its rejoin's own board covers the move, so it gets the `ack`
    and no frame of an offset that board holds."""
    race = await start_race(cluster, spectators=())
    ann, bob = race.racers
    await play(cluster, ann, race.room)
    for conn in (ann, bob):
        assert await cluster.request(conn, msg.Resign(race.room)) is None
        await cluster.disconnect(conn)
    now = await cluster.race(race.room)
    assert now.state.state == FINISHED
    back = cluster.connect("ann")
    assert await cluster.request(back, msg.Join(race.room, Role.RACER)) is None
    ((kind, offset),) = [(m["t"], m["off"]) for m in board_frames(back)]
    assert (kind, offset) == ("board", int(now.fields[0]["own_offset"]))
    first = len(back.received)
    last = int(now.fields[0]["last_move_id"])
    assert await cluster.request(back, msg.MoveRequest(race.room, last, "D")) is None
    assert [(m["t"], m["id"], m["off"]) for m in back.received[first:]] == [("ack", last, offset)]


class GatedWrites:
    """Board writes held at the store's door until `expected` are in flight at once (or
    a scaled timeout passed), then let through; what was in flight together is noted."""

    def __init__(
        self, cluster: Cluster, wait_for: WaitFor, expected: int, patience: float = 1.0
    ) -> None:
        self.store = cluster.nodes[0].store
        self.write = self.store.write_board_event
        self.wait_for = wait_for
        self.expected = expected
        self.patience = patience
        self.in_flight: list[int] = []  # the seats of the writes in flight
        self.together: list[list[int]] = []  # in flight, as each write arrived
        self.arrived = asyncio.Event()

    async def __call__(self, room_id: str, gen: int, seat: int, *args: Any, **kw: Any) -> Any:
        self.in_flight.append(seat)
        self.together.append(sorted(self.in_flight))
        if len(self.in_flight) >= self.expected:
            self.arrived.set()
        try:
            with contextlib.suppress(TimeoutError):
                await self.wait_for(self.arrived.wait(), self.patience)
            return await self.write(room_id, gen, seat, *args, **kw)
        finally:
            self.in_flight.remove(seat)


async def test_racers_of_one_room_are_written_at_once(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, wait_for: WaitFor
) -> None:
    """Two racers of one room on one node: the second's board write goes to the store
    while the first's is in flight (nothing room-wide is held across the round trip, so
    both can ride one batch); each gets its own diff."""
    race = await start_race(cluster)
    ann, bob = race.racers
    gate = GatedWrites(cluster, wait_for, expected=2)
    monkeypatch.setattr(gate.store, "write_board_event", gate)
    move = msg.MoveRequest(race.room, 1, "D")
    codes = await asyncio.gather(*(cluster.request(c, move, settle=False) for c in race.racers))
    await cluster.settle()
    assert codes == [None, None]
    assert [0, 1] in gate.together
    for conn in (ann, bob):
        assert [m["id"] for m in conn.of_kind("diff") if m["audience"] == "own"] == [1]
    assert (await cluster.race(race.room)).moves == {0: ["D"], 1: ["D"]}


async def test_a_racer_s_second_move_waits_for_its_first(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, wait_for: WaitFor
) -> None:
    """Two moves of one racer sent at once are written one after the other, in order:
    never both in flight, each acknowledged by its own diff."""
    race = await start_race(cluster)
    ann = race.racers[0]
    gate = GatedWrites(cluster, wait_for, expected=2, patience=0.2)
    monkeypatch.setattr(gate.store, "write_board_event", gate)
    moves = [msg.MoveRequest(race.room, move_id, "D") for move_id in (1, 2)]
    codes = await asyncio.gather(*(cluster.request(ann, m, settle=False) for m in moves))
    await cluster.settle()
    assert codes == [None, None]
    assert gate.together == [[0], [0]]
    own = [(m["off"], m["id"]) for m in ann.of_kind("diff") if m["audience"] == "own"]
    assert own == [(1, 1), (2, 2)]
    assert (await cluster.race(race.room)).moves[0] == ["D", "D"]


async def test_a_node_s_stores_time_their_round_trips_on_one_latency_wrapper(
    cluster: Cluster,
) -> None:
    """The stores a node's service opens share the store's `Latency`, so one observer
    (`klondike_redis_latency_seconds`) sees the round trips of them all."""
    node = cluster.nodes[0]
    store, service = node.store, node.service
    shared = store.latency
    assert store.players.latency is shared
    assert service.daily.daily_store.latency is shared
    assert store.outbox.latency is shared
    assert service.tournaments.tournaments.latency is shared
    seen: list[float] = []
    store.latency_observer = seen.append
    calls: list[Callable[[], Awaitable[object]]] = [
        store.list_public,
        lambda: service.tournaments.tournaments.listed(5),
        store.outbox.length,
        lambda: store.players.unfinished("u_latency", 0),
    ]
    for call in calls:
        before = len(seen)
        await call()
        assert len(seen) > before, call
