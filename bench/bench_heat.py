"""A tournament heat on one node: 100 racers in one room on one deal, 500 spectators;
node CPU and move -> spectator latency, against the same racers and spectators in
ordinary two-racer races in the same run.

    .venv/bin/python bench/bench_heat.py [--racers 100] [--spectators 500] [--window 30]
    .venv/bin/python bench/bench_heat.py --profile /tmp/heat-profile     # py-spy the node

Each configuration gets a fresh node (no connection caps, no background solver work, a
2 s countdown) on one private Valkey:

- **heat**: an organizer creates a heats tournament (1 heat, registration closing a few
  seconds later, the heat a minute after that), the racers enter it, the heat's room
  opens when registration closes, every racer joins it, the spectators join it, and the
  organizer starts the heat (`start_heat`).
- **races** (the baseline): the same racers in races of 2 (`--racers / 2` rooms), the
  same spectators spread evenly over the rooms, every race started once all joined.

Racers (in `--procs` worker processes, as `klondike_live.client.Client`s) play from their
own board view: the relaxed bot's heuristic (`bots.policy.decide`), or a stock turn
(`D`, `R`) when it has nothing better; one move every `--interval` seconds (paced: the
next waits for the last one's acknowledgement). Most spectators are raw-socket sinks
(capacity_load.py's `Sink`) in `--sink-procs` processes; the timed spectators (`--timed`
in the heat, one per room in the races) decode every frame in the racers' processes,
check that each board's offsets follow on, and stamp each move's diff. A latency sample
is a timed spectator's arrival minus the racer's send, both `time.monotonic()` (one
system-wide clock), for every move sent in the window and every timed spectator of its
room. A racer's join refused as `internal` or `busy` (the room's compare-and-set lost to
the other joins) is tried again, and counted.

The start instant is measured on its own: every viewer gets a snapshot of each board
it may see (a spectator of the heat one per racer), and the window starts `--warmup`
seconds after the node has sent them all (its `klondike_snapshots_total` counts them).
The window runs `--window` seconds; then the racers stop, the spectators get 2 s for the
last diffs, and every racer resigns.

Printed per configuration: moves/s, node CPU (cores; "node waited": seconds per second
the node was runnable but waiting for a core, from /proc schedstat, so that a node short
of CPU on a shared machine shows; µs per move, µs per frame the node broadcast), frames
delivered to spectators, latency p50/p99/max, Valkey and load-generator CPU; the checks
(`late`: moves acknowledged after more than an interval, so that the racer fell behind
its pace); the start instant (snapshots, seconds until the node sent them all and until
the last timed spectator had all its boards, node CPU seconds); then the heat against
the races. `--profile DIR` records the node with py-spy (`harness.profiling.Profiler`) during
each start instant and window and prints the summaries (it slows the node: take the
table from a run without it). Exit 1 only when a check fails: a timed spectator missing
a move's diff or seeing offsets out of order, a refused move, a spectator closed, a
resync in the window (a lagging viewer skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from capacity_load import SinkWorker
from harness.clients import join_as_spectator, unpack
from harness.measure import CpuMeter, metric, waited_seconds
from harness.processes import FAST_RATE, Child, Harness, run_bench
from harness.profiling import profiler
from harness.report import code_version, parser, percentile, table
from harness.workers import Workers, split
from klondike_live.bots.levels import LEVELS
from klondike_live.bots.policy import Memory, decide
from klondike_live.client import Client, Message, ServerError
from klondike_live.engine import View
from klondike_live.protocol.kinds import Audience, BotLevel

COUNTDOWN = 2.0
NODE_ENV = {**FAST_RATE, "KLONDIKE_COUNTDOWN_SECONDS": f"{COUNTDOWN:g}"}
VARIANT = "draw=1 passes=unlimited"  # a stock turn is always legal: nobody runs dry
RETRYABLE = frozenset({"wrong_state", "busy", "unavailable", "rate_limited"})
SETUP_CONCURRENCY = 8  # joins (and other setup requests) in flight per worker process
JOIN_ATTEMPTS = 10
SETTLE = 2.0  # seconds after the window for the last diffs to arrive
LOBBY_FRAMES = 2  # a sink joined a room in its lobby: welcome, the room frame
SNAPSHOTS = "klondike_snapshots_total"
"""The node's count of board snapshots sent: each viewer's boards at the start instant,
then a lagging viewer's fresh snapshots."""


# ---------------------------------------------------------------- worker: racers, timed spectators


@dataclass(eq=False)
class Racer:
    """One racer: its client, its room and seat, its policy's memory; what it sent."""

    client: Client
    index: int
    room: str = ""
    seat: int = -1
    memory: Memory = field(default_factory=Memory)
    sends: list[tuple[str, int, int, float]] = field(default_factory=list)  # room, seat, moves, t


@dataclass(eq=False)
class Timed:
    """A timed spectator: when each (seat, move count) first arrived, and checks."""

    conn: ClientConnection
    room: str
    arrivals: dict[tuple[int, int], float] = field(default_factory=dict)
    frame_times: list[float] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)
    gaps: int = 0
    snapshots: int = 0  # board frames: one per seat at the start, more only on a resync
    seats_snapped: set[int] = field(default_factory=set)
    first_board: float = 0.0  # when its first and its latest first snapshot of a board came
    last_board: float = 0.0
    resyncs: int = 0
    closed: str = ""

    async def run(self) -> None:
        clock = time.monotonic
        try:
            async for frame in self.conn:
                now = clock()
                self.frame_times.append(now)
                message = unpack(frame)
                kind = message["t"]
                if kind == "diff":
                    seat = int(message["seat"])
                    off = int(message["off"])
                    last = self.offsets.get(seat)
                    if last is not None and off != last + 1:
                        self.gaps += 1
                    self.offsets[seat] = off
                    self.arrivals.setdefault((seat, int(message["moves"])), now)
                elif kind == "board":
                    seat = int(message["seat"])
                    if seat in self.seats_snapped:
                        self.resyncs += 1
                    else:
                        self.first_board = self.first_board or now
                        self.last_board = now
                    self.seats_snapped.add(seat)
                    self.offsets[seat] = int(message["off"])
        except ConnectionClosed as exc:
            self.closed = str(exc)


class PlayerWorker:
    """Racers and timed spectators of one worker process."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.spec = LEVELS[BotLevel.RELAXED]
        self.racers: list[Racer] = []
        self.timed: list[Timed] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.errors: list[str] = []
        self.join_refusals: list[str] = []
        self.late = 0
        self.idle = 0
        self.end = float("inf")
        self.playing: list[asyncio.Task[None]] = []
        self.won = 0

    async def _each(self, items: list[Any], action: Callable[[Any], Awaitable[Any]]) -> list[Any]:
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def one(item: Any) -> Any:
            async with gate:
                return await action(item)

        return list(await asyncio.gather(*(one(item) for item in items)))

    async def guests(self, count: int, first: int) -> list[str]:
        async def connect(index: int) -> Racer:
            return Racer(await Client.connect(self.url, name=f"Racer {index}"), index)

        self.racers = await self._each(list(range(first, first + count)), connect)
        return [r.client.user for r in self.racers]

    async def enter(self, tournament: str) -> None:
        async def enter(racer: Racer) -> None:
            for attempt in range(20):
                try:
                    await racer.client.enter_tournament(tournament)
                    return
                except ServerError as exc:
                    if exc.code != "busy" or attempt == 19:
                        raise
                    await asyncio.sleep(0.05 * (attempt + 1))

        await self._each(self.racers, enter)

    async def _join(self, racer: Racer, room: str) -> None:
        """Join `room` as its racer. A join refused as `internal` or `busy` (the room's
        compare-and-set lost to concurrent joins too often) is counted and tried again."""
        for attempt in range(JOIN_ATTEMPTS):
            try:
                state = await racer.client.join(room)
                break
            except ServerError as exc:
                if exc.code not in ("internal", "busy") or attempt == JOIN_ATTEMPTS - 1:
                    raise
                self.join_refusals.append(f"{exc.code}: {exc.message.get('msg')}")
                await asyncio.sleep(0.1 * (attempt + 1))
        racer.room = room
        racer.seat = _seat_of(state, racer.client.user)

    async def join(self, room: str) -> None:
        await self._each(self.racers, lambda racer: self._join(racer, room))

    async def races(self, count: int) -> list[str]:
        """`count` two-racer races among this worker's racers, joined and ready."""

        async def race(pair: tuple[Racer, Racer]) -> str:
            host = pair[0]
            room = await host.client.create_race(VARIANT, seats=2)
            for racer in pair:
                await self._join(racer, room)
            for racer in pair:
                await racer.client.ready(room)
            await host.client.expect(
                lambda m: (
                    m["t"] == "room"
                    and m.get("room") == room
                    and all(s and s.get("ready") for s in m["seats"])
                ),
                30,
            )
            return room

        pairs = [(self.racers[2 * i], self.racers[2 * i + 1]) for i in range(count)]
        return list(await self._each(pairs, race))

    async def start_races(self) -> None:
        hosts = {r.room: r for r in reversed(self.racers)}  # the first racer of each room
        for room, host in hosts.items():
            await host.client.start(room)

    async def watch(self, rooms: list[str]) -> None:
        """One timed spectator per entry of `rooms`."""

        async def watch(pair: tuple[int, str]) -> Timed:
            index, room = pair
            return Timed(await join_as_spectator(self.url, room, f"Timed {index}"), room)

        added = await self._each(list(enumerate(rooms, start=len(self.timed))), watch)
        self.timed += added
        self.tasks += [asyncio.create_task(t.run()) for t in added]

    def play(self, interval: float) -> None:
        """Every racer plays from its board's arrival until `finish`."""
        self.playing = [asyncio.create_task(self._play(r, interval)) for r in self.racers]

    async def finish(self, end: float) -> None:
        """The racers stop at `end` (time.monotonic)."""
        self.end = end
        await asyncio.gather(*self.playing)

    async def _play(self, racer: Racer, interval: float) -> None:
        clock = time.monotonic
        key = (racer.room, racer.seat, Audience.OWN)
        async with asyncio.timeout(60):  # the boards come at the start instant
            while key not in racer.client.boards:
                await asyncio.sleep(0.02)
        rng = random.Random(racer.index)
        due = clock() + rng.uniform(0, interval)  # spread the racers' phases
        while True:
            await asyncio.sleep(max(0.0, due - clock()))
            if clock() >= self.end:
                return
            mirror = racer.client.boards[key]
            if mirror.status != "playing":
                self.won += mirror.status == "won"
                return
            token = self._choose(racer, mirror.view)
            if token is None:
                self.idle += 1
            else:
                now = clock()
                moves = await self._move(racer, token)
                if moves is None:
                    return
                if clock() - now > interval:
                    self.late += 1  # acknowledged too late to keep the racer's pace
                racer.sends.append((racer.room, racer.seat, moves, now))
            due = max(due + interval, clock())

    def _choose(self, racer: Racer, view: View) -> str | None:
        token, racer.memory = decide(view, racer.memory, self.spec, racer.index)
        if token is None:  # the heuristic would resign: turn the stock instead
            if view.stock:
                token = "D"
            elif view.waste:
                token = "R"
        return token

    async def _move(self, racer: Racer, token: str) -> int | None:
        """Send one move and wait for its own diff: the board's move count after it, or
        None when it was refused for good (noted in `errors`)."""
        client = racer.client
        move_id = client._new_id()
        frame = {"t": "move", "room": racer.room, "id": move_id, "m": token}

        def answer(m: Message) -> bool:
            if m.get("id") != move_id and m["t"] != "board":
                return False
            if m["t"] == "board":  # a resync's snapshot stands in for the diff
                return bool(
                    m.get("room") == racer.room
                    and m.get("audience") == "own"
                    and int(m.get("last_id", 0)) >= move_id
                )
            return m["t"] in ("diff", "ack", "error")

        for _ in range(20):
            await client.send(frame)
            reply = await client.expect(answer, 30)
            if reply["t"] != "error":
                return int(
                    reply.get("moves", client.boards[(racer.room, racer.seat, Audience.OWN)].moves)
                )
            code = str(reply.get("code"))
            if code not in RETRYABLE:
                self.errors.append(f"{code}: {reply.get('msg')} ({token})")
                return None
            await asyncio.sleep(0.05)
        self.errors.append(f"move {token} still refused after 20 tries")
        return None

    def boards(self) -> list[tuple[int, float, float]]:
        """Per timed spectator: boards it has a snapshot of, when the first and the last
        of those came."""
        return [(len(t.seats_snapped), t.first_board, t.last_board) for t in self.timed]

    def report(self) -> dict[str, Any]:
        return {
            "sends": [s for r in self.racers for s in r.sends],
            "timed": [
                {
                    "room": t.room,
                    "arrivals": t.arrivals,
                    "frame_times": t.frame_times,
                    "gaps": t.gaps,
                    "resyncs": t.resyncs,
                    "closed": t.closed,
                }
                for t in self.timed
            ],
            "errors": self.errors,
            "join_refusals": self.join_refusals,
            "late": self.late,
            "idle": self.idle,
            "won": self.won,
        }

    async def resign(self) -> None:
        for racer in self.racers:
            with contextlib.suppress(ConnectionError, ConnectionClosed):
                await racer.client.resign(racer.room)

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        conns = [t.conn.close() for t in self.timed]
        await asyncio.gather(
            *conns, *(r.client.close() for r in self.racers), return_exceptions=True
        )


def _seat_of(room: Message, user: str) -> int:
    for index, seat in enumerate(room["seats"]):
        if seat and seat.get("user") == user:
            return index
    raise RuntimeError(f"{user} has no seat in room {room.get('room')}")


# ---------------------------------------------------------------- the benchmark


@dataclass
class Result:
    name: str
    rooms: int
    racers: int
    spectators: int
    timed: int
    moves: int
    measured: Measured  # the window, as the node and the sinks saw it
    spectator_frames: int
    samples: list[float]
    missing: int
    gaps: int
    resyncs: int
    closed: int
    errors: list[str]
    join_refusals: list[str]
    late: int
    idle: int
    won: int
    start: Start | None = None

    @property
    def us_per_move(self) -> float:
        return self.measured.node_cpu / self.moves * 1e6 if self.moves else float("nan")

    @property
    def us_per_frame(self) -> float:
        m = self.measured
        return m.node_cpu / m.node_frames * 1e6 if m.node_frames else float("nan")

    def cells(self) -> list[object]:
        m = self.measured
        return [
            self.name,
            self.moves / m.wall,
            m.node_cpu / m.wall,
            m.node_wait / m.wall,
            self.us_per_move,
            m.node_frames / m.wall,
            self.us_per_frame,
            self.spectator_frames / m.wall,
            percentile(self.samples, 50),
            percentile(self.samples, 99),
            max(self.samples) if self.samples else float("nan"),
            len(self.samples),
            m.valkey_cpu / m.wall,
            m.load_cpu / m.wall,
        ]


HEADERS = [
    "configuration",
    "moves/s",
    "node cpu",
    "node waited",
    "node us/move",
    "node frames/s",
    "node us/frame",
    "spect frames/s",
    "p50 ms",
    "p99 ms",
    "max ms",
    "samples",
    "valkey cpu",
    "load cpu",
]


async def run_config(
    harness: Harness, valkey_url: str, heat: bool, args: argparse.Namespace
) -> Result:
    name = "heat" if heat else "races"
    node = harness.node(valkey_url, name=f"node-{name}", env=NODE_ENV)
    players = Workers(PlayerWorker, [(node.ws_url,)] * args.procs)
    sinks = Workers(SinkWorker, [(node.ws_url, LOBBY_FRAMES)] * args.sink_procs)
    organizer: Client | None = None
    try:
        shares = split(args.racers, args.procs)
        if not heat and any(s % 2 for s in shares):
            raise RuntimeError("--racers / --procs must be even for races of 2")
        firsts = [sum(shares[:i]) for i in range(len(shares))]
        await players.each([("guests", n, f) for n, f in zip(shares, firsts, strict=True)])
        if heat:
            organizer = await Client.connect(node.ws_url, name="Organizer")
            now = int(time.time() * 1000)
            tid = await organizer.create_tournament(
                "Bench heat",
                "heats",
                [VARIANT],
                public=True,
                closes_at=now + int(args.registration * 1000),
                start_at=now + int(args.registration * 1000) + 60_000,
                heats=1,
            )
            await organizer.watch_tournament(tid)
            await players.call("enter", tid)
            room = await organizer.heat_room(tid, 1, timeout=args.registration + 30)
            await players.call("join", room)
            rooms = [room]
            timed_rooms = [[room] * n for n in split(args.timed, args.procs)]
            sink_rooms = [room] * (args.spectators - args.timed)
        else:
            counts = [n // 2 for n in shares]
            per_proc = await players.each([("races", n) for n in counts])
            rooms = [r for part in per_proc for r in part]
            timed_rooms = per_proc  # one timed spectator per race, in its racers' process
            each = split(args.spectators - len(rooms), len(rooms))
            sink_rooms = [r for r, n in zip(rooms, each, strict=True) for _ in range(n)]
        timed = sum(len(t) for t in timed_rooms)
        await players.each([("watch", t) for t in timed_rooms])
        procs = args.sink_procs
        await sinks.each([("add", sink_rooms[i::procs]) for i in range(procs)], 600)
        print(
            f"  {name}: {len(rooms)} room(s), {args.racers} racers, {timed} timed spectators "
            f"+ {len(sink_rooms)} sinks joined; starting",
            file=sys.stderr,
            flush=True,
        )
        snapshots0 = await asyncio.to_thread(metric, node.port, SNAPSHOTS)
        start_profiler = await asyncio.to_thread(profiler, args.profile, node.pid, f"{name}-start")
        cpu0 = node.cpu()
        if heat:
            assert organizer is not None
            await organizer.tournament_action(tid, "start_heat")
        else:
            await players.call("start_races")
        started = time.monotonic()
        await players.call("play", args.interval)
        start = await start_instant(node, players, args, started, snapshots0, cpu0, len(rooms))
        if start_profiler is not None:
            start.profile = await asyncio.to_thread(start_profiler.stop)
        begin = time.monotonic() + args.warmup
        end = begin + args.window
        finish = asyncio.create_task(players.call("finish", end))
        measured = await measure(harness, node, players, sinks, begin, end, args, name)
        await finish
        await asyncio.sleep(SETTLE)
        reports = await players.call("report")
        await players.call("resign")
        result = summarise(name, len(rooms), args, timed, reports, measured, measured.begin, end)
        result.start = start
        return result
    finally:
        players.close()
        sinks.close()
        if organizer is not None:
            with contextlib.suppress(Exception):
                await organizer.close()
        harness.stop(node)


@dataclass
class Start:
    """The start instant: every viewer gets a snapshot of each board it may see."""

    snapshots: int  # sent by the node
    node_done: float  # s from the start instant until the node had sent them all
    timed_done: float  # ... until the last timed spectator had a snapshot of every board
    node_cpu: float  # node CPU seconds from the start request until the node was done
    profile: str = ""


async def start_instant(
    node: Child,
    players: Workers,
    args: argparse.Namespace,
    started: float,
    snapshots0: float,
    cpu0: float,
    rooms: int,
) -> Start:
    """Wait until the node has sent every viewer its boards (the racers their own,
    the spectators one per racer of their room): the window starts after that."""
    expected = args.spectators * (args.racers // rooms) + args.racers
    instant = started + COUNTDOWN
    while True:
        sent = await asyncio.to_thread(metric, node.port, SNAPSHOTS) - snapshots0
        if sent >= expected:
            break
        if time.monotonic() - instant > args.start_timeout:
            raise RuntimeError(
                f"the start instant: {sent:.0f} of {expected} board snapshots sent "
                f"in {args.start_timeout:g} s"
            )
        await asyncio.sleep(1.0)  # a scrape costs the node about 10 ms: not too often
    done = time.monotonic()
    cpu = node.cpu() - cpu0
    await asyncio.sleep(0.5)
    boards = [b for part in await players.call("boards") for b in part]
    last = max((b[2] for b in boards), default=done)
    return Start(int(sent), done - instant, last - instant, cpu)


@dataclass
class Measured:
    wall: float
    node_cpu: float
    node_wait: float
    valkey_cpu: float
    load_cpu: float
    node_frames: float
    sink_frames: int
    closed: int
    resyncs: float
    profile: str
    begin: float

    @property
    def node_cores(self) -> float:
        return self.node_cpu / self.wall


async def measure(
    harness: Harness,
    node: Child,
    players: Workers,
    sinks: Workers,
    begin: float,
    end: float,
    args: argparse.Namespace,
    name: str,
) -> Measured:
    meter = CpuMeter(
        {"node": [node.pid], "valkey": harness.valkey_pids(), "load": players.pids + sinks.pids}
    )
    await asyncio.sleep(max(0.0, begin - time.monotonic()))
    frames0 = await asyncio.to_thread(metric, node.port, "klondike_frames_out_total")
    resyncs0 = await asyncio.to_thread(metric, node.port, "klondike_resyncs_total")
    sinks0 = await sinks.call("counts")
    spy = await asyncio.to_thread(profiler, args.profile, node.pid, name)
    wait0 = waited_seconds(node.pid)
    meter.start()
    begin = time.monotonic()  # moves are counted over the same span as CPU
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    meter.stop()
    node_wait = waited_seconds(node.pid) - wait0
    profile = await asyncio.to_thread(spy.stop) if spy is not None else ""
    sinks1 = await sinks.call("counts")
    frames1 = await asyncio.to_thread(metric, node.port, "klondike_frames_out_total")
    resyncs1 = await asyncio.to_thread(metric, node.port, "klondike_resyncs_total")
    return Measured(
        wall=meter.wall,
        node_cpu=meter.used["node"],
        node_wait=node_wait,
        valkey_cpu=meter.used["valkey"],
        load_cpu=meter.used["load"],
        node_frames=frames1 - frames0,
        sink_frames=sum(c[0] for c in sinks1) - sum(c[0] for c in sinks0),
        closed=sum(c[1] for c in sinks1),
        resyncs=resyncs1 - resyncs0,
        profile=profile,
        begin=begin,
    )


def summarise(
    name: str,
    rooms: int,
    args: argparse.Namespace,
    timed: int,
    reports: list[dict[str, Any]],
    measured: Measured,
    begin: float,
    end: float,
) -> Result:
    sends = [s for report in reports for s in report["sends"] if begin <= s[3] < end]
    spectators = [t for report in reports for t in report["timed"]]
    by_room: dict[str, list[tuple[int, int, float]]] = {}
    for room, seat, moves, sent in sends:
        by_room.setdefault(room, []).append((seat, moves, sent))
    samples: list[float] = []
    missing = 0
    for spectator in spectators:
        arrivals = spectator["arrivals"]
        for seat, moves, sent in by_room.get(spectator["room"], []):
            arrived = arrivals.get((seat, moves))
            if arrived is None:
                missing += 1
            else:
                samples.append((arrived - sent) * 1000)
    timed_frames = sum(
        1 for t in spectators for at in t["frame_times"] if measured.wall and begin <= at < end
    )
    samples.sort()
    return Result(
        name=f"{name}: {rooms} room{'s' if rooms > 1 else ''} x {args.racers // rooms}",
        rooms=rooms,
        racers=args.racers,
        spectators=args.spectators,
        timed=timed,
        moves=len(sends),
        measured=measured,
        spectator_frames=measured.sink_frames + timed_frames,
        samples=samples,
        missing=missing,
        gaps=sum(t["gaps"] for t in spectators),
        resyncs=int(measured.resyncs) + sum(t["resyncs"] for t in spectators),
        closed=measured.closed + sum(1 for t in spectators if t["closed"]),
        errors=[e for report in reports for e in report["errors"]],
        join_refusals=[e for report in reports for e in report["join_refusals"]],
        late=sum(report["late"] for report in reports),
        idle=sum(report["idle"] for report in reports),
        won=sum(report["won"] for report in reports),
    )


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    print(code_version(), flush=True)
    print(
        f"Python {sys.version.split()[0]}; one node; {args.racers} racers at one move per "
        f"{args.interval:g} s (relaxed bot's heuristic from their own view, else a stock "
        f"turn), {args.spectators} spectators ({args.timed} timed in the heat, one per race "
        f"in the races; the rest raw-socket sinks); warm-up {args.warmup:g} s, window "
        f"{args.window:g} s",
        flush=True,
    )
    valkey_url = harness.valkey()
    results: list[Result] = []
    order = [False, True] if args.order == "races-first" else [True, False]
    for heat in order:
        results.append(await run_config(harness, valkey_url, heat, args))
    results.sort(key=lambda r: not r.name.startswith("heat"))
    print()
    print(table(HEADERS, [r.cells() for r in results]))
    print()
    print(
        table(
            ["configuration", "spectators", "timed", "missing", "gaps", "resyncs", "closed",
             "refused", "joins refused", "late", "idle", "won"],
            [
                [r.name, r.spectators, r.timed, r.missing, r.gaps, r.resyncs, r.closed,
                 len(r.errors), len(r.join_refusals), r.late, r.idle, r.won]
                for r in results
            ],
        )
    )  # fmt: skip
    print()
    print(
        table(
            ["start instant", "snapshots sent", "node done s", "last timed spectator s",
             "node cpu s"],
            [
                [r.name, r.start.snapshots, r.start.node_done, r.start.timed_done,
                 r.start.node_cpu]
                for r in results
                if r.start is not None
            ],
        )
    )  # fmt: skip
    heat_run, races = results
    print()
    print(
        "heat / races: node CPU "
        f"{ratio(heat_run.measured.node_cores, races.measured.node_cores)}, "
        f"per move {ratio(heat_run.us_per_move, races.us_per_move)}, "
        f"per frame sent {ratio(heat_run.us_per_frame, races.us_per_frame)}; "
        f"spectator frames {ratio(heat_run.spectator_frames, races.spectator_frames)}; "
        f"p50 {ratio(percentile(heat_run.samples, 50), percentile(races.samples, 50))}, "
        f"p99 {ratio(percentile(heat_run.samples, 99), percentile(races.samples, 99))}"
    )
    for result in results:
        if result.start is not None and result.start.profile:
            print(f"\nprofile of the node, {result.name}, start instant:\n{result.start.profile}")
        if result.measured.profile:
            print(f"\nprofile of the node, {result.name}, window:\n{result.measured.profile}")
    failed = []
    for r in results:
        for what, count in (
            ("moves' diffs missed by a timed spectator", r.missing),
            ("offset gaps", r.gaps),
            ("resyncs", r.resyncs),
            ("spectators closed", r.closed),
            ("refused moves", len(r.errors)),
        ):
            if count:
                failed.append(f"{r.name}: {count} {what}")
        for error in sorted(set(r.errors))[:5]:
            print(f"  {r.name} error: {error}")
        for refusal in sorted(set(r.join_refusals))[:3]:
            print(f"  {r.name}: a racer's join refused, then tried again: {refusal}")
    print()
    if failed:
        print("FAILED: " + "; ".join(failed))
        return 1
    print("every timed spectator got every move's diff, offsets consecutive, no resync, "
          "no refused move: yes")  # fmt: skip
    return 0


def main() -> int:
    options = parser(
        __doc__, interval=0.5, window=30.0, warmup=5.0, procs=2, sink_procs=2,
        profile="the node's start instants and windows",
    )  # fmt: skip
    options.add_argument("--racers", type=int, default=100)
    options.add_argument("--spectators", type=int, default=500, help="timed ones included")
    options.add_argument("--timed", type=int, default=10, help="timed spectators of the heat")
    options.add_argument("--registration", type=float, default=6.0, help="s until it closes")
    options.add_argument("--start-timeout", type=float, default=120.0, help="s for the start")
    options.add_argument("--order", choices=["races-first", "heat-first"], default="races-first")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
