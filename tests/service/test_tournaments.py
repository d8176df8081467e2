"""Tournaments through the live service: a series over daily deals and live heats.

The series is driven day by day with the daily part's clock injected; its results are
daily leaderboard entries (as a finished ranked attempt records them) and the points
must match the hand-computed table of docs/tournaments.md. The heats race their
entrants on two nodes, with every frame checked by the leak rule (`Cluster.check`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from datetime import UTC, date, datetime
from typing import Any

import msgpack
import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.bus.messages import DailyUpdate
from klondike_live.config import Settings
from klondike_live.daily.leaderboard import DailyResult, Leaderboard
from klondike_live.daily.variants import DRAW1
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind, TournamentFormat
from klondike_live.race.room import FINISHED, LOBBY, RACING
from klondike_live.race.tournament_view import tournament_wire

from daily_support import DayClock, prepare
from race_support import play
from service_fixtures import SEED, Cluster, MemoryConnection

DAY1 = date(2030, 1, 1)
DAYS = [DAY1, date(2030, 1, 2), date(2030, 1, 3)]
PEOPLE = ("ann", "bob", "cy", "dee", "eve")


@pytest.fixture
async def day_clock() -> DayClock:
    return DayClock(datetime(2030, 1, 1, 8, 0, tzinfo=UTC))


@pytest.fixture
async def dated(
    valkey_url: str,
    redis: Redis,
    service_settings: Callable[[int], Settings],
    day_clock: DayClock,
) -> AsyncIterator[Cluster]:
    """One node whose daily part reads `day_clock`."""
    async with Cluster.running(valkey_url, service_settings, lambda: SEED, day_clock) as started:
        yield started


def now_ms(cluster: Cluster) -> int:
    return cluster.nodes[0].service.now_ms()


def latest(conn: MemoryConnection) -> dict[str, Any]:
    """The last `tournament` object the connection was sent."""
    frames = conn.of_kind("tournament")
    assert frames, f"{conn!r} got no tournament frame"
    data = frames[-1]["tournament"]
    assert isinstance(data, dict)
    return data


async def create(cluster: Cluster, organizer: MemoryConnection, **fields: Any) -> str:
    request = msg.TournamentCreate(**{"rid": 7, "public": True, "cap": 100, **fields})
    code = await cluster.request(organizer, request)
    assert code is None, code
    created = organizer.of_kind("tournament_created")[-1]
    assert created["rid"] == 7
    tid = created["tournament"]
    assert isinstance(tid, str)
    return tid


async def enter(cluster: Cluster, conns: list[MemoryConnection], tid: str) -> None:
    for conn in conns:
        assert await cluster.request(conn, msg.TournamentEnter(tid, rid=1), settle=False) is None
    await cluster.settle()


# ------------------------------------------------------------ series


def entry(user: str, won: bool, seconds: int, found: int, at: int, moves: int = 100) -> DailyResult:
    return DailyResult(
        user=user,
        name=user.title(),
        won=won,
        time_ms=seconds * 1000,
        moves=moves,
        found=52 if won else found,
        finished_at=at,
    )


async def test_a_series_scores_each_day_by_the_points_table(
    dated: Cluster, day_clock: DayClock
) -> None:
    """Three days, five entrants: places, shared points for a tie, nothing for a missed
    day, and the final standings are those of the worked example in docs/tournaments.md;
    watchers get the standings as each day's leaderboard grows."""
    cluster = dated
    org = cluster.connect("org")
    tid = await create(
        cluster,
        org,
        name="Club week",
        format=TournamentFormat.SERIES,
        variants=(DRAW1,),
        closes_at=now_ms(cluster) + 3 * 86_400_000,
        first_day=DAYS[0],
        last_day=DAYS[2],
    )
    people = [cluster.connect(user) for user in PEOPLE]
    watcher = cluster.connect("sue")
    assert await cluster.request(watcher, msg.TournamentWatch(tid, rid=3)) is None
    assert latest(watcher)["state"] == "running"  # its first day is today
    await enter(cluster, people, tid)
    assert [e["user"] for e in latest(watcher)["entrants"]] == list(PEOPLE)
    # An attempt finished before entering does not count for the tournament.
    late = cluster.connect("zed")
    before = now_ms(cluster)
    daily = cluster.nodes[0].service.daily
    board = Leaderboard(daily.daily_store, DAYS[0], DRAW1)
    assert await board.record_counted(entry("zed", True, 60, 52, before - 1))
    await enter(cluster, [late], tid)

    at = now_ms(cluster) + 1
    table = {
        0: [("ann", True, 130, 52), ("bob", True, 160, 52), ("cy", False, 0, 40),
            ("dee", False, 0, 12), ("eve", False, 0, 9)],
        1: [("ann", True, 180, 52), ("bob", True, 180, 52), ("cy", False, 0, 20),
            ("eve", False, 0, 18)],
        2: [("bob", True, 110, 52), ("cy", False, 0, 30), ("dee", True, 140, 52)],
    }  # fmt: skip
    for index, day in enumerate(DAYS):
        day_clock.set(datetime(day.year, day.month, day.day, 9, 0, tzinfo=UTC))
        board = Leaderboard(daily.daily_store, day, DRAW1)
        for user, won, seconds, found in table[index]:
            count = await board.record_counted(entry(user, won, seconds, found, at))
            assert count
            await daily.daily_store.publish_update(DailyUpdate(day.isoformat(), str(DRAW1), count))
        await cluster.settle()
    shown = latest(watcher)
    per_day = [
        {row["user"]: (row["place"], row["points"]) for row in r["results"]}
        for r in shown["rounds"]
    ]
    assert per_day[0] == {"ann": (1, 5), "bob": (2, 4), "cy": (3, 3), "dee": (4, 2), "eve": (5, 1)}
    assert per_day[1] == {"ann": (1, 3.5), "bob": (1, 3.5), "cy": (3, 2), "eve": (4, 1)}
    assert per_day[2] == {"bob": (1, 3), "dee": (2, 2), "cy": (3, 1)}
    standings = [(s["rank"], s["user"], s["points"], s["wins"]) for s in shown["standings"]]
    assert standings == [
        (1, "bob", 10.5, 2),
        (2, "ann", 8.5, 2),
        (3, "cy", 6, 0),
        (4, "dee", 4, 0),
        (5, "eve", 2, 0),
        (6, "zed", 0, 0),
    ]
    assert shown["state"] == "running"
    day_clock.set(datetime(2030, 1, 4, 0, 0, 1, tzinfo=UTC))  # the last day has closed
    assert await cluster.request(watcher, msg.TournamentWatch(tid, rid=4)) is None
    assert latest(watcher)["state"] == "finished"


async def test_an_entrant_of_a_series_is_bound_by_the_daily_spoiler_gate(
    dated: Cluster, redis: Redis
) -> None:
    """While the day is open an entrant who has not finished its own ranked attempt
    cannot watch another entrant's attempt of that day, and no round shows the seed."""
    cluster = dated
    record = await prepare(redis, DAY1, DRAW1)
    org = cluster.connect("org")
    tid = await create(
        cluster,
        org,
        name="Spoilers",
        format=TournamentFormat.SERIES,
        variants=(DRAW1,),
        closes_at=now_ms(cluster) + 86_400_000,
        first_day=DAY1,
        last_day=DAY1,
    )
    ann, bob = cluster.connect("ann"), cluster.connect("bob")
    await enter(cluster, [ann, bob], tid)
    create_daily = msg.Create(
        rid=2, kind=RoomKind.DAILY, variant=DRAW1, seats=1, time_limit=0, public=False
    )
    assert await cluster.request(ann, create_daily) is None
    room = ann.of_kind("created")[-1]["room"]
    code = await cluster.request(bob, msg.Join(room, Role.SPECTATOR))
    assert code is ErrorCode.SPOILER
    assert await cluster.request(bob, msg.TournamentWatch(tid)) is None
    day = latest(bob)["rounds"][0]
    assert day["commitment"] == record.commitment
    assert "seed" not in day and record.seed not in repr(bob.received)


# ------------------------------------------------------------ heats


async def heats_tournament(
    cluster: Cluster, org: MemoryConnection, entrants: list[MemoryConnection], heats: int
) -> str:
    now = now_ms(cluster)
    tid = await create(
        cluster,
        org,
        name="Friday heats",
        format=TournamentFormat.HEATS,
        variants=(DRAW1,),
        closes_at=now + 30_000,
        start_at=now + 60_000,
        heats=heats,
        pause=300,  # the next heat starts early, by the organizer's hand
        time_limit=600,
    )
    await enter(cluster, entrants, tid)
    return tid


async def open_heat(cluster: Cluster, org: MemoryConnection, tid: str, number: int) -> str:
    """Run the tournament's timers until heat `number`'s room is open; its id."""
    await cluster.fire_timers(35_000)  # registration closed: the room opens
    assert await cluster.request(org, msg.TournamentWatch(tid)) is None
    heat = latest(org)["rounds"][number - 1]
    assert heat["state"] == "lobby", heat
    room = heat["room"]
    assert isinstance(room, str)
    return room


def expected_points(ranking: list[dict[str, Any]]) -> dict[str, float]:
    """The points table applied to a race's own ranking: racers with a move, places by
    their race rank among them, tied places sharing."""
    played = [row for row in ranking if row["moves"] > 0]
    n = len(played)
    out: dict[str, float] = {}
    ranks = sorted(row["rank"] for row in played)
    for row in played:
        place = 1 + sum(1 for r in ranks if r < row["rank"])
        tied = sum(1 for r in ranks if r == row["rank"])
        out[row["user"]] = n - place + 1 - (tied - 1) / 2
    return out


async def test_heats_of_fifty_racers_on_two_nodes_score_by_the_race_ranking(
    pair: Cluster,
) -> None:
    """Fifty entrants over two nodes race three heats on one deal each; spectators'
    frames pass the leak rule; a racer who drops and comes back keeps its seat; the
    standings after the last heat add up each heat's race ranking through the table."""
    cluster = pair
    org = cluster.connect("org")
    racers = [cluster.connect(f"r{i:02d}", node=i % 2) for i in range(50)]
    tid = await heats_tournament(cluster, org, racers, heats=3)
    fans = [cluster.connect(f"fan{i}", node=i % 2) for i in range(4)]
    totals: dict[str, float] = {}
    for number in (1, 2, 3):
        if number == 1:
            room = await open_heat(cluster, org, tid, 1)
        else:
            heat = latest(org)["rounds"][number - 1]
            assert heat["state"] == "lobby", heat
            room = heat["room"]
        for racer in racers:
            assert await cluster.request(racer, msg.Join(room, Role.RACER), settle=False) is None
        for fan in fans:
            assert await cluster.request(fan, msg.Join(room, Role.SPECTATOR), settle=False) is None
        await cluster.settle()
        assert (await cluster.race(room)).state.state == LOBBY
        outsider = cluster.connect("crasher")
        assert await cluster.request(outsider, msg.Join(room, Role.RACER)) is ErrorCode.NOT_ALLOWED
        assert await cluster.request(org, msg.TournamentAction(tid, "start_heat")) is None
        await cluster.fire_timers(0)
        assert (await cluster.race(room)).state.state == RACING
        for index, racer in enumerate(racers):
            for _ in range(index % 4):
                await play(cluster, racer, room)
        if number == 2:  # a racer drops and comes back: same seat, same board
            gone = racers[7]
            seat = (await cluster.race(room)).state.seat_of(gone.user)
            await cluster.disconnect(gone)
            back = cluster.connect(gone.user, node=1 - gone.node)
            racers[7] = back
            assert await cluster.request(back, msg.Join(room, Role.RACER)) is None
            assert (await cluster.race(room)).state.seat_of(back.user) == seat
            await play(cluster, back, room)
        for racer in racers:
            assert await cluster.request(racer, msg.Resign(room), settle=False) is None
        await cluster.settle()
        now = await cluster.race(room)
        assert now.state.state == FINISHED
        results = await cluster.nodes[0].service.store.load_results(room, now.state.gen)
        assert results is not None
        ranking = msgpack.unpackb(results, raw=False)["ranking"]
        for user, points in expected_points(ranking).items():
            totals[user] = totals.get(user, 0) + points
        await cluster.settle()
        assert await cluster.request(org, msg.TournamentWatch(tid)) is None
        shown = latest(org)
        assert shown["rounds"][number - 1]["state"] == "finished"
        assert shown["rounds"][number - 1]["seed"] == now.state.seed
        if number < 3:
            # The next heat's room opens at once (its registration closed 30 s after
            # the creation: the clocks read true again after each `fire_timers`).
            await cluster.fire_timers(35_000)
            assert await cluster.request(org, msg.TournamentWatch(tid)) is None
    final = latest(org)
    assert final["state"] == "finished"
    got = {row["user"]: row["points"] for row in final["standings"]}
    assert got == {r.user: totals.get(r.user, 0) for r in racers}
    ordered = [row["points"] for row in final["standings"]]
    assert ordered == sorted(ordered, reverse=True)
    assert cluster.checks > 0


async def test_an_organizer_cancel_mid_heat_leaves_consistent_results(pair: Cluster) -> None:
    """Cancelled during a heat: the race ends at once with results for everyone, the
    heat is shown cancelled and scores nothing, the tournament is over and only the
    organizer could do it. (Before it: `ready` is refused in a heat's lobby and the
    registration closed when the first heat's room opened.)"""
    cluster = pair
    org = cluster.connect("org")
    racers = [cluster.connect(user, node=i % 2) for i, user in enumerate(("ann", "bob", "cy"))]
    tid = await heats_tournament(cluster, org, racers, heats=2)
    room = await open_heat(cluster, org, tid, 1)
    for racer in racers:
        assert await cluster.request(racer, msg.Join(room, Role.RACER)) is None
    # A heat starts at its time: nobody can hold it up by not being ready, and its
    # seats are the entrants of when its room opened.
    assert await cluster.request(racers[0], msg.Ready(room, False)) is ErrorCode.WRONG_STATE
    late = cluster.connect("dan")
    assert await cluster.request(late, msg.TournamentEnter(tid)) is ErrorCode.WRONG_STATE
    assert await cluster.request(org, msg.TournamentAction(tid, "start_heat")) is None
    await cluster.fire_timers(0)
    assert (await cluster.race(room)).state.state == RACING
    await play(cluster, racers[0], room)
    assert (
        await cluster.request(racers[1], msg.TournamentAction(tid, "cancel")) is ErrorCode.NOT_HOST
    )
    assert await cluster.request(org, msg.TournamentAction(tid, "cancel", rid=9)) is None
    now = await cluster.race(room)
    assert now.state.state == FINISHED
    for racer in racers:
        assert racer.of_kind("results"), f"{racer!r} got no results"
    shown = latest(org)
    assert shown["state"] == "cancelled"
    assert [r["state"] for r in shown["rounds"]] == ["cancelled", "cancelled"]
    assert all(row["points"] == 0 for row in shown["standings"])
    assert {"by": "Org", "text": "cancelled the tournament", "kind": "cancelled", "args": {}} in [
        {key: entry[key] for key in ("by", "text", "kind", "args")} for entry in shown["log"]
    ]
    code = await cluster.request(org, msg.TournamentAction(tid, "start_heat"))
    assert code is ErrorCode.WRONG_STATE


async def test_registration_rules(cluster: Cluster) -> None:
    """Entering needs open registration and room under the cap; a removed entrant cannot
    come back; only the organizer runs it; a bad id is `no_room`."""
    org = cluster.connect("org")
    now = now_ms(cluster)
    tid = await create(
        cluster,
        org,
        name="Small",
        format=TournamentFormat.HEATS,
        variants=(DRAW1,),
        cap=2,
        closes_at=now + 30_000,
        start_at=now + 60_000,
        heats=1,
        pause=10,
        time_limit=600,
    )
    ann, bob, cy = (cluster.connect(u) for u in ("ann", "bob", "cy"))
    await enter(cluster, [ann, bob], tid)
    assert await cluster.request(cy, msg.TournamentEnter(tid)) is ErrorCode.ROOM_FULL
    assert (
        await cluster.request(ann, msg.TournamentAction(tid, "remove", user="bob"))
        is ErrorCode.NOT_HOST
    )
    assert await cluster.request(org, msg.TournamentAction(tid, "remove", user="bob")) is None
    assert await cluster.request(bob, msg.TournamentEnter(tid)) is ErrorCode.NOT_ALLOWED
    assert await cluster.request(org, msg.TournamentAction(tid, "close")) is None
    assert await cluster.request(cy, msg.TournamentEnter(tid)) is ErrorCode.WRONG_STATE
    assert await cluster.request(org, msg.TournamentAction(tid, "open")) is None
    assert await cluster.request(cy, msg.TournamentEnter(tid)) is None
    assert [e["user"] for e in latest(cy)["entrants"]] == ["ann", "cy"]
    log = [(entry["kind"], entry["args"], entry["text"]) for entry in latest(cy)["log"]]
    assert log[-3:] == [
        ("removed", {"name": "Bob"}, "removed Bob"),
        ("registration_closed", {}, "closed registration"),
        ("registration_opened", {}, "opened registration"),
    ]
    assert await cluster.request(cy, msg.TournamentWatch("nosuchtournament")) is ErrorCode.NO_ROOM


async def test_a_heat_s_racers_may_all_join_at_once(pair: Cluster) -> None:
    """Forty entrants on two nodes join their heat's room in the same instant: the room's
    compare-and-set backs off instead of failing, a join that still loses is `busy` (the
    client sends it again), and every entrant ends up seated and present; at the start
    every spectator gets the same snapshots."""
    cluster = pair
    org = cluster.connect("org")
    racers = [cluster.connect(f"r{i:02d}", node=i % 2) for i in range(40)]
    tid = await heats_tournament(cluster, org, racers, heats=1)
    room = await open_heat(cluster, org, tid, 1)
    waiting = list(racers)
    for _ in range(5):
        codes = await asyncio.gather(
            *(cluster.request(r, msg.Join(room, Role.RACER), settle=False) for r in waiting)
        )
        assert set(codes) <= {None, ErrorCode.BUSY}, codes
        waiting = [r for r, code in zip(waiting, codes, strict=True) if code is not None]
        if not waiting:
            break
    assert not waiting, f"{len(waiting)} joins stayed busy"
    fans = [cluster.connect(f"fan{i}", node=i % 2) for i in range(6)]
    for fan in fans:
        assert await cluster.request(fan, msg.Join(room, Role.SPECTATOR)) is None
    await cluster.settle()
    seats = (await cluster.race(room)).state.seats
    assert all(seat is not None and seat.online for seat in seats)
    assert await cluster.request(org, msg.TournamentAction(tid, "start_heat")) is None
    await cluster.fire_timers(0)
    for node in (0, 1):
        frames = [
            sorted(m["seat"] for m in fan.of_kind("board") if m["room"] == room)
            for fan in fans
            if fan.node == node
        ]
        assert frames and all(f == list(range(40)) for f in frames), frames
    for node in (0, 1):  # one snapshot of each board per node, sent to all its fans
        sent = {
            id(frame)  # the very same bytes (frames are kept, so ids are not reused)
            for fan in fans
            if fan.node == node
            for frame, m in zip(fan.frames, fan.received, strict=True)
            if m.get("t") == "board" and m["room"] == room
        }
        assert len(sent) == 40, len(sent)


async def test_settings_that_make_no_tournament_deal_nothing(
    valkey_url: str, redis: Redis, service_settings: Callable[[int], Settings]
) -> None:
    """Refused settings are refused before any deal is taken for the heats (a pooled
    certified deal is not spent on a tournament that is never made); a series may not
    start before the open day."""
    dealt: list[str] = []

    def seeds() -> str:
        dealt.append(SEED)
        return SEED

    cluster = await Cluster.start(valkey_url, service_settings, seeds)
    try:
        org = cluster.connect("org")
        now = now_ms(cluster)
        heats = msg.TournamentCreate(
            rid=1,
            name="Too early",
            format=TournamentFormat.HEATS,
            variants=(DRAW1,),
            public=True,
            cap=10,
            closes_at=now + 30_000,
            start_at=now + 10_000,  # before registration closes
            heats=3,
            pause=10,
            time_limit=600,
        )
        assert await cluster.request(org, heats) is ErrorCode.BAD_FIELD
        assert dealt == []
        today = datetime.fromtimestamp(now / 1000, UTC).date()
        series = msg.TournamentCreate(
            rid=2,
            name="Yesterday",
            format=TournamentFormat.SERIES,
            variants=(DRAW1,),
            public=True,
            cap=10,
            closes_at=now + 30_000,
            first_day=date.fromordinal(today.toordinal() - 1),
            last_day=today,
        )
        assert await cluster.request(org, series) is ErrorCode.BAD_FIELD
        made = dataclasses.replace(heats, rid=3, start_at=now + 60_000)
        assert await cluster.request(org, made) is None
        assert len(dealt) == 3
    finally:
        await cluster.stop()


async def test_a_tournament_over_is_kept_by_the_history_database(
    cluster: Cluster, redis: Redis
) -> None:
    """Cancelled, a tournament goes to the history database and Valkey keeps it only as
    a cache, off its listing; once Valkey forgets it, its page and the public list read
    it from the database, and entering it is refused as over (not as unknown)."""
    org = cluster.connect("org")
    now = now_ms(cluster)
    tid = await create(
        cluster,
        org,
        name="Kept",
        format=TournamentFormat.HEATS,
        variants=(DRAW1,),
        closes_at=now + 30_000,
        start_at=now + 60_000,
        heats=1,
        pause=10,
        time_limit=600,
    )
    assert await cluster.request(org, msg.TournamentAction(tid, "cancel")) is None
    history = cluster.nodes[0].history
    assert await history.load_tournament(tid) is not None
    assert 0 < await redis.pttl(keys.tournament(tid)) <= 3_600_000
    assert await redis.zscore(keys.TOURNAMENTS, tid) is None
    shown = latest(org)
    await redis.delete(keys.tournament(tid))  # the cache expired
    tournaments = cluster.nodes[0].service.tournaments
    kept = await tournaments.load(tid)
    assert tournament_wire(kept, [], now_ms=now) == shown
    assert [t["id"] for t in await tournaments.listed()] == [tid]
    ann = cluster.connect("ann")
    assert await cluster.request(ann, msg.TournamentEnter(tid)) is ErrorCode.WRONG_STATE
    assert await cluster.request(ann, msg.TournamentEnter("nosuchtournament")) is ErrorCode.NO_ROOM
