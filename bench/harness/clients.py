"""Light clients of the live-server benchmarks, on raw websockets: the protocol's
frames packed and read by hand, so that a load generator costs little next to the node.

- `hello`, `expect`, `race_room`, `start_race_now`: a connection said hello, a frame
  awaited, a two-racer race set up and started;
- `Racer`: a solo game's player, an endless stream of legal stock turns;
- `Spectator`, `open_spectators`: watching connections, each of the room given to it,
  that count diffs, check their offsets and room and stamp when each move arrived;
- `SpectatorPool` and `LoadGenerator`: spectators and closed-loop racers in worker
  processes (`harness.workers.Workers`), so that reading sockets never delays the process that
  sends moves.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from harness.measure import cpu_seconds
from harness.workers import Workers, runs, split

Message = dict[str, Any]  # a frame as msgpack decodes it
SOLO_VARIANT = "draw=1 passes=unlimited"
STOCK_CARDS = 24  # draw-1 deals leave 24 cards in the stock
# Joins in flight at once per client process. A node on a Valkey Cluster refuses a
# command at once (`unavailable`) when 48 are already in flight to one shard (redis-py's
# cluster client raises MaxConnectionsError where the standalone client's blocking pool
# waits): a burst of joins beyond that fails there.
JOIN_CONCURRENCY = 16


def pack(message: Message) -> bytes:
    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


def unpack(frame: bytes | str) -> Message:
    data: Message = msgpack.unpackb(frame, raw=False)
    return data


def stock_turn(moves: int) -> str:
    """The legal move of a stock-turning game after `moves` moves: `D` until the stock
    is empty, then `R`, forever (draw 1, passes unlimited)."""
    return "R" if moves % (STOCK_CARDS + 1) == STOCK_CARDS else "D"


async def raw_connect(url: str) -> ClientConnection:
    return await connect(url, compression=None, max_size=2**22, open_timeout=60)


async def hello(url: str, name: str) -> ClientConnection:
    """A connection after `hello` → `welcome` (a fresh guest)."""
    conn = await raw_connect(url)
    await conn.send(pack({"t": "hello", "v": 1, "name": name}))
    reply = unpack(await asyncio.wait_for(conn.recv(), 30))
    if reply["t"] != "welcome":
        await conn.close()
        raise RuntimeError(f"hello refused: {reply}")
    return conn


async def expect(
    conn: ClientConnection, match: Callable[[Message], bool], timeout: float = 30.0
) -> Message:
    """Read frames until one matches; an `error` frame or the timeout raises."""
    async with asyncio.timeout(timeout):
        while True:
            message = unpack(await conn.recv())
            if message["t"] == "error":
                raise RuntimeError(f"server error: {message}")
            if match(message):
                return message


def answers(rid: int) -> Callable[[Message], bool]:
    """The room frame that answers request `rid`."""
    return lambda m: m["t"] == "room" and m.get("rid") == rid


async def join_as_spectator(url: str, room: str, name: str) -> ClientConnection:
    """A connection that joined `room` as a spectator (its room frame received)."""
    conn = await hello(url, name)
    await conn.send(pack({"t": "join", "room": room, "as": "spectator", "rid": 1}))
    await expect(conn, answers(1), 60)
    return conn


async def race_room(
    racer_url: str, watcher_url: str, variant: str, **options: Any
) -> tuple[str, list[ClientConnection], ClientConnection]:
    """A two-racer race created (`options` go into `create`), joined by both racers on
    `racer_url` and by a spectator on `watcher_url`, then started (`start_race_now`);
    (room, racers, watcher)."""
    host, other = await hello(racer_url, "Racer A"), await hello(racer_url, "Racer B")
    create = {"t": "create", "rid": 1, "kind": "race", "variant": variant, "seats": 2}
    await host.send(pack(create | options))
    room = str((await expect(host, lambda m: m["t"] == "created"))["room"])
    for rid, conn in enumerate((host, other), start=2):
        await conn.send(pack({"t": "join", "room": room, "as": "racer", "rid": rid}))
        await expect(conn, answers(rid))
    return room, [host, other], await join_as_spectator(watcher_url, room, "Watcher")


async def start_race_now(room: str, racers: Sequence[ClientConnection]) -> list[Message]:
    """Every racer ready, the host (the first) starts: each racer's own board, in order
    (the node runs with no countdown)."""
    for conn in racers:
        await conn.send(pack({"t": "ready", "room": room, "ready": True}))
    await expect(
        racers[0], lambda m: m["t"] == "room" and all(s and s.get("ready") for s in m["seats"])
    )
    await racers[0].send(pack({"t": "start", "room": room}))
    return [
        await expect(conn, lambda m: m["t"] == "board" and m["audience"] == "own", 60)
        for conn in racers
    ]


class Racer:
    """A solo game's player on a raw connection: an endless stream of stock turns."""

    def __init__(self, conn: ClientConnection, room: str) -> None:
        self.conn = conn
        self.room = room
        self.move_id = 0
        self.moves = 0  # moves applied so far (the board's move count)

    @classmethod
    async def solo(cls, url: str, name: str = "Racer") -> Racer:
        conn = await hello(url, name)
        await conn.send(pack({"t": "create", "rid": 1, "kind": "solo", "variant": SOLO_VARIANT}))
        room = str((await expect(conn, lambda m: m["t"] == "created"))["room"])
        await conn.send(pack({"t": "join", "room": room, "as": "racer", "rid": 2}))
        board = await expect(conn, lambda m: m["t"] == "board")
        racer = cls(conn, room)
        racer.moves = int(board["moves"])
        racer.move_id = int(board.get("last_id", 0))
        return racer

    def next_frame(self) -> tuple[int, bytes]:
        """(move id, encoded `move` frame) of the next legal move."""
        self.move_id += 1
        token = stock_turn(self.moves)
        self.moves += 1
        frame = pack({"t": "move", "room": self.room, "id": self.move_id, "m": token})
        return self.move_id, frame

    async def wait_ack(self, move_id: int, timeout: float = 30.0) -> None:
        """Read until `move_id` is acknowledged: an `ack`, or (newer servers) the racer's
        own diff carrying the move's `id`. Other frames are skipped."""
        async with asyncio.timeout(timeout):
            while True:
                message = unpack(await self.conn.recv())
                kind = message["t"]
                if kind == "error":
                    raise RuntimeError(f"move refused: {message}")
                if kind in ("ack", "diff") and message.get("id", 0) >= move_id:
                    return

    async def move(self) -> float:
        """One move, acknowledged: the seconds it took."""
        move_id, frame = self.next_frame()
        sent = time.perf_counter()
        await self.conn.send(frame)
        await self.wait_ack(move_id)
        return time.perf_counter() - sent


async def close_racers(racers: Sequence[Racer]) -> None:
    await asyncio.gather(*(r.conn.close() for r in racers), return_exceptions=True)


# ---------------------------------------------------------------- spectators


Stamps = dict[int, float]
"""When one spectator first saw each board move count (time.perf_counter: on Linux the
system-wide monotonic clock, so stamps from different processes compare)."""


@dataclass(eq=False)
class Spectator:
    """One watching connection: counts diffs, checks that their offsets follow on and
    (when it watches a `room`) that they are that room's, and (when `stamps` is given)
    records when each board move count first arrived."""

    conn: ClientConnection
    room: str | None = None  # None: a baseline server's connection (frames name no room)
    last_off: int = -1
    last_moves: int = -1
    diffs: int = 0
    others: int = 0
    gaps: int = 0
    strays: int = 0  # diffs of another room
    diff_bytes: int = 0  # size of the last diff frame
    other_bytes: int = 0  # size of the last other frame (progress, room)
    stamps: Stamps | None = None
    target_moves: int | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        clock = time.perf_counter
        try:
            async for frame in self.conn:
                now = clock()
                message = unpack(frame)
                kind = message["t"]
                if kind == "diff":
                    if self.room is not None and message.get("room") != self.room:
                        self.strays += 1
                    off = message.get("off", self.last_off + 1)
                    if self.last_off >= 0 and off != self.last_off + 1:
                        self.gaps += 1
                    self.last_off = off
                    self.diffs += 1
                    self.diff_bytes = len(frame)
                    moves = int(message["moves"])
                    if self.stamps is not None and moves not in self.stamps:
                        self.stamps[moves] = now
                    self.last_moves = moves
                    if self.target_moves is not None and moves >= self.target_moves:
                        self.done.set()
                elif kind == "board":
                    self.last_off = int(message["off"])
                    self.last_moves = int(message["moves"])
                else:
                    self.others += 1
                    self.other_bytes = len(frame)
        except ConnectionClosed:
            pass

    def expect_moves(self, target: int) -> None:
        self.target_moves = target
        if self.last_moves >= target:
            self.done.set()
        else:
            self.done.clear()


async def open_spectators(
    url: str, rooms: Sequence[str | None], *, stamps: bool = False
) -> tuple[list[Spectator], list[asyncio.Task[None]]]:
    """A spectator per entry of `rooms`: of that room (hello + join as spectator, snapshot
    received), or, for None, a bare connection to a baseline server; each read by its
    own task."""
    gate = asyncio.Semaphore(JOIN_CONCURRENCY)

    async def one(index: int, room: str | None) -> Spectator:
        async with gate:
            if room is None:
                conn = await raw_connect(url)
                return Spectator(conn, stamps={} if stamps else None)
            conn = await hello(url, f"Watcher {index}")
            await conn.send(pack({"t": "join", "room": room, "as": "spectator", "rid": 1}))
            board = await expect(conn, lambda m: m["t"] == "board")
            spectator = Spectator(conn, room, stamps={} if stamps else None)
            spectator.last_off = int(board["off"])
            spectator.last_moves = int(board["moves"])
            return spectator

    spectators = list(await asyncio.gather(*(one(i, r) for i, r in enumerate(rooms))))
    tasks = [asyncio.create_task(s.run()) for s in spectators]
    return spectators, tasks


async def close_all(
    conns: Sequence[ClientConnection], tasks: Sequence[asyncio.Task[object]]
) -> None:
    """Close connections (in parallel batches) and wait for their reader tasks."""
    for start in range(0, len(conns), 500):
        await asyncio.gather(
            *(c.close() for c in conns[start : start + 500]), return_exceptions=True
        )
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def wait_all(spectators: Sequence[Spectator], target: int, timeout: float) -> bool:
    """True when every spectator has seen the diff of move count `target` in time."""
    for spectator in spectators:
        spectator.expect_moves(target)
    try:
        await asyncio.wait_for(
            asyncio.gather(*(s.done.wait() for s in spectators)), timeout=timeout
        )
    except TimeoutError:
        return False
    return True


class SpectatorWorker:
    """Spectators of one worker process (`SpectatorPool`): one per entry of `rooms`."""

    def __init__(self, url: str, rooms: list[str | None], stamps: bool) -> None:
        self.url, self.rooms, self.stamped = url, rooms, stamps
        self.spectators: list[Spectator] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.base: dict[Spectator, tuple[int, int, int]] = {}

    async def open(self) -> None:
        self.spectators, self.tasks = await open_spectators(
            self.url, self.rooms, stamps=self.stamped
        )

    def mark(self) -> None:
        """Count from now."""
        self.base = {s: (s.diffs, s.others, s.gaps) for s in self.spectators}

    async def wait(self, target: int, timeout: float) -> dict[str, int]:
        """Wait until every spectator saw move count `target` of its room (or the
        timeout); counts since the mark: diffs, others, gaps, late (spectators that
        missed the target); strays (diffs of another room, ever); the last diff's and
        other frame's size."""
        await wait_all(self.spectators, target, timeout)
        zero = (0, 0, 0)
        group = self.spectators
        return {
            "diffs": sum(s.diffs - self.base.get(s, zero)[0] for s in group),
            "others": sum(s.others - self.base.get(s, zero)[1] for s in group),
            "gaps": sum(s.gaps - self.base.get(s, zero)[2] for s in group),
            "late": sum(1 for s in group if s.last_moves < target),
            "strays": sum(s.strays for s in group),
            "diff_bytes": max(s.diff_bytes for s in group),
            "other_bytes": max(s.other_bytes for s in group),
        }

    def stamps(self) -> list[Stamps]:
        return [dict(s.stamps or {}) for s in self.spectators]

    async def stop(self) -> None:
        await close_all([s.conn for s in self.spectators], self.tasks)


class SpectatorPool(Workers):
    """A spectator per entry of `rooms` (a room's id, or None: a connection to a baseline
    server) spread over `procs` worker processes, so that reading many sockets does not
    delay the racers (which stay in the benchmark's process) and no load-generator
    process saturates its core; `open()`, then per measurement `mark()` and `wait()`."""

    def __init__(
        self, url: str, rooms: Sequence[str | None], procs: int, stamps: bool = False
    ) -> None:
        super().__init__(SpectatorWorker, [(url, part, stamps) for part in runs(rooms, procs)])

    async def open(self) -> None:
        await self.call("open", timeout=180)

    async def mark(self) -> None:
        await self.call("mark", timeout=30)

    async def wait(self, target: int, timeout: float) -> dict[str, int]:
        """`SpectatorWorker.wait` of every worker, summed (sizes: the largest)."""
        out: dict[str, int] = {}
        for got in await self.call("wait", target, timeout, timeout=timeout + 30):
            for key, value in got.items():
                keep = max if key.endswith("bytes") else sum
                out[key] = keep((out.get(key, 0), value))
        return out

    async def stamps(self) -> list[Stamps]:
        return [seen for part in await self.call("stamps") for seen in part]


# ---------------------------------------------------------------- closed-loop racers


@dataclass
class LoadRound:
    """What the racers of a `LoadGenerator` did in one measured window."""

    moves: int
    per_node: list[int]  # moves per node URL, in the order given
    per_room: dict[str, int]
    cpu: list[float]  # CPU seconds of each load-generator process in the window


class LoadWorker:
    """Closed-loop solo racers of one worker process: racer `first + i` plays on node
    `(first + i) % len(urls)`."""

    def __init__(self, urls: list[str], first: int, count: int) -> None:
        self.urls, self.first, self.count = urls, first, count
        self.nodes = [(first + i) % len(urls) for i in range(count)]
        self.racers: list[Racer] = []

    async def open(self) -> list[tuple[int, str]]:
        """(node index, room) of each racer. One at a time: on a cluster, two joins of
        rooms on a shard that the node's bus is still connecting to can race (the second
        room's channel is added after the new connection listed the channels to
        subscribe and before it counts as connected, so it is never subscribed and its
        join times out); a join that returned has its channels confirmed."""
        for index, node in enumerate(self.nodes):
            self.racers.append(await Racer.solo(self.urls[node], f"Racer {self.first + index}"))
        return [(node, r.room) for node, r in zip(self.nodes, self.racers, strict=True)]

    async def play(self, begin: float, end: float) -> tuple[list[int], float]:
        """Play until `end` (time.monotonic), counting the moves acknowledged from
        `begin` (before it: the warm-up); this process's CPU seconds in between."""
        counted = [0] * len(self.racers)
        clock = time.monotonic

        async def play(index: int, racer: Racer) -> None:
            while clock() < end:
                await racer.move()
                if begin <= clock() < end:
                    counted[index] += 1

        async def meter() -> float:
            await asyncio.sleep(max(0.0, begin - clock()))
            cpu0 = cpu_seconds(os.getpid())
            await asyncio.sleep(max(0.0, end - clock()))
            return cpu_seconds(os.getpid()) - cpu0

        metered = asyncio.create_task(meter())
        try:
            await asyncio.gather(*(play(i, r) for i, r in enumerate(self.racers)))
        finally:
            cpu = await metered
        return counted, cpu

    async def stop(self) -> None:
        await close_racers(self.racers)


class LoadGenerator(Workers):
    """Closed-loop solo racers (each sends its next move as soon as the previous one is
    acknowledged) in `procs` worker processes, spread over node URLs in turn; measured in
    rounds, so that two configurations can alternate in one run. Between rounds the
    racers are idle (their games stay open)."""

    def __init__(self, urls: Sequence[str], racers: int, procs: int = 1) -> None:
        self.shares = split(racers, procs)
        firsts = [sum(self.shares[:i]) for i in range(procs)]
        super().__init__(
            LoadWorker, [(list(urls), f, n) for f, n in zip(firsts, self.shares, strict=True)]
        )
        self.nodes = len(urls)
        self.rooms: list[tuple[int, str]] = []  # (node index, room) of every racer

    async def open(self) -> None:
        self.rooms = [room for part in await self.call("open", timeout=300) for room in part]

    async def round(self, begin: float, end: float) -> LoadRound:
        """Play from `begin` to `end` (time.monotonic); moves acknowledged in between."""
        answers = await self.call("play", begin, end, timeout=end - time.monotonic() + 60)
        counts = [moves for part, _ in answers for moves in part]
        per_node = [0] * self.nodes
        per_room: dict[str, int] = {}
        for (node, room), moves in zip(self.rooms, counts, strict=True):
            per_node[node] += moves
            per_room[room] = moves
        return LoadRound(sum(counts), per_node, per_room, [cpu for _, cpu in answers])
