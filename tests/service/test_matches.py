"""Matches of several deals through the live service (real Valkey, nodes in memory):
deals dealt in turn with their commitments first, the score after each, the end at the
majority, a forfeit, and spectators (and a catch-up) following the whole match."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.engine import Board, Deal, Move, Variant
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind
from klondike_live.race.room import COUNTDOWN, FINISHED, LOBBY, RACING

from race_support import board_of
from service_fixtures import (
    GRACE_SECONDS,
    SERVICE_SETTINGS,
    Cluster,
    MemoryConnection,
    SettingsFactory,
)

SEEDS = (
    "54ae056c91141f64e3a4c7a2ce36c663",
    "121458e7133ee31878b0530193f304c0",
    "7cc344cb1128198459bc6e2589a7b7f1",
    "6cfab7b8e85f90ce21e2db52862ef54a",
    "7987b4a6633e80d4d6599fc7a398d940",
)
"""Deals dealt in turn, each with a card that goes home in one move."""

GRACE_MS = int(GRACE_SECONDS * 1000)


@pytest.fixture
async def matches(
    valkey_url: str, redis: Redis, make_settings: SettingsFactory
) -> AsyncIterator[Cluster]:
    """One node dealing `SEEDS` in turn, the next deal of a match due at once."""
    seeds = itertools.cycle(SEEDS)
    async with Cluster.running(
        valkey_url,
        lambda i: make_settings(**SERVICE_SETTINGS, match_interval_seconds=0.0, node_id=f"n{i}"),
        lambda: next(seeds),
    ) as started:
        yield started


def home_move(board: Board) -> Move:
    """A legal move that puts a card home."""
    for move in board.legal_moves():
        probe = board.copy()
        probe.push(move)
        if probe.foundation_count > board.foundation_count:
            return move
    raise AssertionError("no card goes home in one move")


async def deal_to(cluster: Cluster, room: str, racers: list[MemoryConnection], seat: int) -> None:
    """Racer `seat` (-1: nobody) puts a card home, then every racer resigns."""
    if seat >= 0:
        now = await cluster.race(room)
        token = str(home_move(board_of(now, seat)))
        assert await cluster.request(racers[seat], msg.MoveRequest(room, 1, token)) is None
    for racer in racers:
        assert await cluster.request(racer, msg.Resign(room)) is None
    assert (await cluster.race(room)).state.state == FINISHED


async def next_deal(cluster: Cluster, room: str, gen: int) -> None:
    """The match's next deal is dealt (its timer), then it begins."""
    await cluster.fire_timers(0)  # the next deal
    state = (await cluster.race(room)).state
    assert (state.gen, state.state) == (gen, COUNTDOWN)
    await cluster.fire_timers(0)  # its begin
    assert (await cluster.race(room)).state.state == RACING


def rooms_of(conn: MemoryConnection, room: str) -> list[dict[str, Any]]:
    return [m for m in conn.received if m.get("t") == "room" and m["room"] == room]


def last_match(conn: MemoryConnection, room: str) -> dict[str, Any]:
    match = rooms_of(conn, room)[-1]["match"]
    assert isinstance(match, dict)
    return match


async def start_match(
    cluster: Cluster, best_of: int, spectators: tuple[str, ...] = ("sue",)
) -> tuple[str, list[MemoryConnection], list[MemoryConnection]]:
    racers = [cluster.connect(user) for user in ("ann", "bob")]
    room = await cluster.create_race(racers[0], 2, best_of=best_of)
    for racer in racers:
        assert await cluster.request(racer, msg.Join(room, Role.RACER)) is None
    watchers = [cluster.connect(user) for user in spectators]
    for watcher in watchers:
        assert await cluster.request(watcher, msg.Join(room, Role.SPECTATOR)) is None
    assert rooms_of(racers[0], room)[-1]["best_of"] == best_of
    for racer in racers:
        assert await cluster.request(racer, msg.Ready(room, True)) is None
    assert await cluster.request(racers[0], msg.Start(room)) is None
    await cluster.fire_timers(0)
    assert (await cluster.race(room)).state.state == RACING
    return room, racers, watchers


async def test_a_best_of_3_deals_in_turn_until_the_majority(matches: Cluster) -> None:
    """Each deal is a fresh deal whose commitment reaches every viewer before its
    cards; the score follows each deal (a drawn one counts for nobody); the match
    stops at two deals won; a spectator who joins mid-match gets the score at once."""
    room, racers, (sue,) = await start_match(matches, 3)
    await deal_to(matches, room, racers, 0)
    assert last_match(sue, room) | {"next_at": 0} == {
        "best_of": 3,
        "from": 1,
        "deals": [0],
        "score": [1, 0],
        "over": False,
        "winner": None,
        "forfeit": None,
        "next_at": 0,
    }
    first_results = [m for m in sue.received if m.get("t") == "results"]
    assert first_results[-1]["match"]["score"] == [1, 0]
    assert await matches.request(racers[1], msg.Rematch(room)) is ErrorCode.WRONG_STATE

    await next_deal(matches, room, 2)
    await deal_to(matches, room, racers, -1)  # nobody put a card home: drawn
    assert last_match(sue, room)["deals"] == [0, None]

    await next_deal(matches, room, 3)
    tom = matches.connect("tom")
    assert await matches.request(tom, msg.Join(room, Role.SPECTATOR)) is None
    assert rooms_of(tom, room)[0]["match"]["score"] == [1, 0]
    await deal_to(matches, room, racers, 1)
    await next_deal(matches, room, 4)
    await deal_to(matches, room, racers, 0)

    over = last_match(sue, room)
    assert (over["deals"], over["score"], over["over"], over["winner"]) == (
        [0, None, 1, 0],
        [2, 1],
        True,
        0,
    )
    await matches.fire_timers(0)  # no deal follows the last
    assert (await matches.race(room)).state.gen == 4

    for viewer in (sue, *racers):
        frames = [m for m in viewer.received if m.get("room") == room]
        for gen, seed in zip(range(1, 5), SEEDS, strict=False):
            commitment = hashlib.sha256(str(Deal.from_seed(seed)).encode()).hexdigest()
            dealt = next(
                i
                for i, m in enumerate(frames)
                if m["t"] == "room" and m["gen"] == gen and m["state"] in ("countdown", "racing")
            )
            assert frames[dealt]["commitment"] == commitment
            boards = [i for i, m in enumerate(frames) if m["t"] == "board" and m["epoch"] == gen]
            assert boards and min(boards) > dealt, f"gen {gen}: a board before its commitment"
        results = [m["gen"] for m in frames if m["t"] == "results"]
        assert results == [1, 2, 3, 4]
    queries = matches.nodes[0].service.queries
    record = await queries.match(room, 3)  # any deal leads to its match
    assert record is not None and record == await queries.match(room, 1)
    assert (record["from"], record["score"], record["over"], record["winner"]) == (
        1,
        [2, 1],
        True,
        0,
    )
    assert [d["winner"] for d in record["deals"]] == [0, None, 1, 0]
    assert [d["gen"] for d in record["deals"]] == [1, 2, 3, 4]
    assert [p["name"] for p in record["players"]] == ["Ann", "Bob"]
    assert await queries.match(room, 5) is None
    assert await matches.request(racers[1], msg.Rematch(room)) is None
    assert (await matches.race(room)).state.state == LOBBY
    assert "match" not in rooms_of(sue, room)[-1]


async def test_a_racer_gone_for_good_forfeits_the_match(matches: Cluster) -> None:
    """A racer away past its grace in a deal of a match forfeits: its board is
    resigned, the match is over for the other, and no deal follows."""
    room, racers, (sue,) = await start_match(matches, 5)
    await deal_to(matches, room, racers, 1)
    await next_deal(matches, room, 2)
    await matches.disconnect(racers[1])
    await matches.fire_timers(GRACE_MS + 1000)
    over = last_match(sue, room)
    assert (over["over"], over["winner"], over["forfeit"]) == (True, 0, 1)
    assert (await matches.race(room)).state.state == RACING  # ann plays her deal on
    assert await matches.request(racers[0], msg.Resign(room)) is None
    results = [m for m in sue.received if m.get("t") == "results"][-1]
    assert results["gen"] == 2 and results["match"]["forfeit"] == 1
    assert results["match"]["winner"] == 0
    await matches.fire_timers(0)
    assert (await matches.race(room)).state.gen == 2
    record = await matches.nodes[0].service.queries.match(room, 2)
    assert record is not None and (record["forfeit"], record["winner"]) == (1, 0)


async def test_leaving_between_deals_forfeits_at_the_next(matches: Cluster) -> None:
    """A racer who leaves the room between deals forfeits once the next deal is dealt,
    so that deal's results say so."""
    room, racers, (sue,) = await start_match(matches, 3)
    await deal_to(matches, room, racers, 0)
    assert await matches.request(racers[1], msg.Leave(room)) is None
    await matches.fire_timers(0)  # the next deal, and the forfeit waiting for it
    await matches.fire_timers(0)
    over = last_match(sue, room)
    assert (over["over"], over["winner"], over["forfeit"]) == (True, 0, 1)
    state = (await matches.race(room)).state
    assert state.gen == 2 and not state.match_on


async def test_a_join_sets_a_lost_next_deal_again(matches: Cluster) -> None:
    """The node that finished a deal died before it set the next deal's timer: the
    next viewer to join sets it again, and the match goes on."""
    room, racers, _ = await start_match(matches, 3, spectators=())
    await deal_to(matches, room, racers, 0)
    bucket = keys.timers(keys.timer_bucket(room))
    assert await matches.nodes[0].redis.zrem(bucket, f"{room}|next|1") == 1
    await matches.fire_timers(0)
    assert (await matches.race(room)).state.gen == 1  # nothing deals it now
    late = matches.connect("tom")
    assert await matches.request(late, msg.Join(room, Role.SPECTATOR)) is None
    await next_deal(matches, room, 2)


async def test_a_public_match_is_listed_as_one(matches: Cluster) -> None:
    """The open races list says which lobby is a match, and of how many deals."""
    ann = matches.connect("ann")
    create = msg.Create(
        rid=1,
        kind=RoomKind.RACE,
        variant=Variant(),
        seats=2,
        time_limit=0,
        public=True,
        best_of=5,
    )
    assert await matches.request(ann, create) is None
    room = ann.of_kind("created")[-1]["room"]
    listed = await matches.nodes[0].service.queries.public_rooms()
    assert [(r["room"], r["best_of"]) for r in listed] == [(room, 5)]
