"""The load of the capacity and heat benchmarks (bench_capacity.py, bench_heat.py), run
in worker processes (`harness.workers.Workers`).

Two kinds of worker:

- a **race worker** holds paced races: per race two racers on raw websockets, each
  sending its next legal move (stock turns: `D` until the stock is empty, then `R`)
  every `MOVE_INTERVAL` seconds once the last one was acknowledged, and one *timed
  spectator* that stamps when each move's spectator diff arrives. A latency sample is
  arrival - send for one move, both read from this process's clock. A race ends as
  real ones do: after `GAME_MOVES` moves each racer resigns, the race's results go to
  everyone in the room, the host asks for a rematch, both get ready, the host starts
  the next race in the same room, and its spectators (timed and sinks) stay. With
  `spread_ends`, a room's first race is cut short at a random point (uniform over
  1..`GAME_MOVES` moves), so that the races added together end spread over a race's
  length from then on, as a server's races do, instead of all at once every two
  minutes.
- a **sink worker** holds the other spectators: raw TCP connections that speak just
  enough WebSocket to say hello, join a room as spectator and then read and discard
  every frame (answering pings), so that ten thousand of them cost the load generator
  little next to the node. A sink counts its frames and notices a close.

What the benchmark calls on them:

    RaceWorker   add(count)             -> [room, ...]   (RaceWorker(url, moves, spread_ends))
                 window(seconds)        -> (samples_ms, sent, late, errors, rematches)
    SinkWorker   add([room, ...])       -> (opened, joins sent again)
                 window(seconds)        -> (frames, closed)
                 counts()               -> (frames so far, closed)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import random
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from harness.clients import Racer, expect, pack, race_room, start_race_now, unpack

MOVE_INTERVAL = 0.5
"""Seconds between a racer's moves: 2 moves per second each."""

VARIANT = "draw=1 passes=unlimited"
"""Stock turns are always legal in it: the racers never run out of moves."""

RETRYABLE = frozenset({"wrong_state", "busy", "unavailable", "rate_limited"})
"""Refusals after which a racer sends the same move (same id) again."""

SETUP_CONCURRENCY = 8
"""Races set up at once by one worker."""

SINK_CONCURRENCY = 64
"""Sinks connecting or joining at once in one worker."""

JOINED_FRAMES = 3
"""Frames a sink has received once its join was served: welcome, room, a board."""

GAME_MOVES = 240
"""Moves each racer makes before resigning (by default): a race lasts about two minutes (a real
race's length), and a node's boards, streams and results turn over as in play."""


# ---------------------------------------------------------------- paced races


class PacedRacer(Racer):
    """One racer of a paced race: sends a move, waits for its own diff, and so on."""

    def __init__(self, conn: ClientConnection, room: str, seat: int, moves: int) -> None:
        super().__init__(conn, room)
        self.seat = seat
        self.moves = moves
        self.acked = asyncio.Event()
        self.refused: str | None = None  # the error code that answered the last move
        self.dealt = asyncio.Event()  # a new race's own board
        self.awaiting_deal = False


@dataclass(eq=False)
class PacedRace:
    """Two racers and the timed spectator of one race room."""

    room: str
    racers: list[PacedRacer]
    watcher: ClientConnection
    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (seat, moves) -> t
    resigned: int = 0
    both_resigned: asyncio.Event = field(default_factory=asyncio.Event)
    results: asyncio.Event = field(default_factory=asyncio.Event)
    lobby: asyncio.Event = field(default_factory=asyncio.Event)
    all_ready: asyncio.Event = field(default_factory=asyncio.Event)
    next_race: asyncio.Event = field(default_factory=asyncio.Event)
    races: int = 1  # races started in this room
    first_moves: int = GAME_MOVES  # moves each racer makes in the room's first race


class RaceWorker:
    """Paced races in this process; latency samples are kept per measuring window."""

    def __init__(self, url: str, game_moves: int = GAME_MOVES, spread_ends: bool = False) -> None:
        self.url = url
        self.game_moves = game_moves
        self.spread_ends = spread_ends
        self.races: list[PacedRace] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.samples: list[float] = []
        self.sent = 0
        self.late = 0  # moves sent later than their schedule (the racer was kept waiting)
        self.errors: list[str] = []

    async def add(self, count: int) -> list[str]:
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def one() -> PacedRace:
            async with gate:
                return await self._race()

        races = await asyncio.gather(*(one() for _ in range(count)))
        for race in races:
            self.races.append(race)
            self.tasks.append(asyncio.create_task(self._watch(race)))
            self.tasks.append(asyncio.create_task(self._rematches(race)))
            for racer in race.racers:
                self.tasks.append(asyncio.create_task(self._read_own(race, racer)))
                self.tasks.append(asyncio.create_task(self._play(race, racer)))
        return [race.room for race in races]

    async def _race(self) -> PacedRace:
        """Create, join, ready and start one race; the timed spectator joins first."""
        room, conns, watcher = await race_room(self.url, self.url, VARIANT)
        boards = await start_race_now(room, conns)
        await expect(watcher, lambda m: m["t"] == "board", 60)
        racers = [
            PacedRacer(conn, room, seat, int(board["moves"]))
            for seat, (conn, board) in enumerate(zip(conns, boards, strict=True))
        ]
        first = random.randint(1, self.game_moves) if self.spread_ends else self.game_moves
        return PacedRace(room, racers, watcher, first_moves=first)

    async def _read_own(self, race: PacedRace, racer: PacedRacer) -> None:
        try:
            async for frame in racer.conn:
                message = unpack(frame)
                kind = message["t"]
                if kind == "diff" and message.get("id") == racer.move_id:
                    racer.refused = None
                    racer.acked.set()
                elif kind == "board" and message.get("audience") == "own" and racer.awaiting_deal:
                    racer.awaiting_deal = False
                    racer.moves = int(message["moves"])
                    racer.dealt.set()
                elif kind == "board" and message.get("last_id", 0) >= racer.move_id:
                    racer.refused = None  # a resync's snapshot stands in for the diff
                    racer.acked.set()
                elif kind == "error" and message.get("id") == racer.move_id:
                    racer.refused = str(message.get("code"))
                    self.errors.append(f"{message.get('code')}: {message.get('msg')}")
                    racer.acked.set()
                elif kind == "error":
                    self.errors.append(f"{message.get('code')}: {message.get('msg')}")
                elif kind == "results" and racer.seat == 0:
                    race.results.set()
                elif kind == "room" and racer.seat == 0 and message.get("state") == "lobby":
                    race.lobby.set()
                    if all(seat and seat.get("ready") for seat in message["seats"]):
                        race.all_ready.set()
        except ConnectionClosed as exc:
            self.errors.append(f"racer connection closed: {exc}")

    async def _rematches(self, race: PacedRace) -> None:
        """Once both racers resigned: the results, a rematch, both ready, the next race
        started by the host; then the racers play on."""
        host = race.racers[0]
        with contextlib.suppress(ConnectionClosed):
            while True:
                await race.both_resigned.wait()
                await race.results.wait()
                await host.conn.send(pack({"t": "rematch", "room": race.room}))
                await race.lobby.wait()
                for racer in race.racers:
                    racer.dealt.clear()
                    racer.awaiting_deal = True
                    await racer.conn.send(pack({"t": "ready", "room": race.room, "ready": True}))
                await race.all_ready.wait()
                await host.conn.send(pack({"t": "start", "room": race.room}))
                await asyncio.gather(*(racer.dealt.wait() for racer in race.racers))
                race.sent.clear()
                race.resigned = 0
                for event in (race.both_resigned, race.results, race.lobby, race.all_ready):
                    event.clear()
                race.races += 1
                race.next_race.set()

    async def _play(self, race: PacedRace, racer: PacedRacer) -> None:
        """Paced moves; a retryable refusal (the start instant not reached yet on the
        store's clock, a busy or unavailable store) sends the same move again, any
        other stops this racer (its idea of the board would be wrong)."""
        clock = time.monotonic
        due = clock() + random.uniform(0, MOVE_INTERVAL)  # spread the races' phases
        played = 0
        with contextlib.suppress(ConnectionClosed):
            while True:
                if played == (race.first_moves if race.races == 1 else self.game_moves):
                    await self._resign(race, racer)
                    played = 0
                    due = clock() + random.uniform(0, MOVE_INTERVAL)
                played += 1
                await asyncio.sleep(max(0.0, due - clock()))
                _, frame = racer.next_frame()
                moves = racer.moves
                now = clock()
                if now - due > MOVE_INTERVAL / 2:
                    self.late += 1
                race.sent[(racer.seat, moves)] = now
                self.sent += 1
                while True:
                    racer.acked.clear()
                    await racer.conn.send(frame)
                    await racer.acked.wait()
                    if racer.refused is None:
                        break
                    if racer.refused not in RETRYABLE:
                        return
                    await asyncio.sleep(0.05)
                due = max(due + MOVE_INTERVAL, clock())

    async def _resign(self, race: PacedRace, racer: PacedRacer) -> None:
        """Resign this race and wait until the next one has started."""
        if race.resigned == 0:
            race.next_race.clear()  # set when the last race started
        await racer.conn.send(pack({"t": "resign", "room": race.room}))
        race.resigned += 1
        if race.resigned == len(race.racers):
            race.both_resigned.set()
        await race.next_race.wait()

    def rematches(self) -> int:
        """Races started again after one ended, in all rooms of this worker."""
        return sum(race.races - 1 for race in self.races)

    async def _watch(self, race: PacedRace) -> None:
        clock = time.monotonic
        try:
            async for frame in race.watcher:
                now = clock()
                message = unpack(frame)
                if message["t"] != "diff":
                    continue
                sent = race.sent.pop((int(message["seat"]), int(message["moves"])), None)
                if sent is not None:
                    self.samples.append((now - sent) * 1000)
        except ConnectionClosed as exc:
            self.errors.append(f"timed spectator closed: {exc}")

    async def window(self, seconds: float) -> tuple[list[float], int, int, list[str], int]:
        """What the races did in the next `seconds`: latency samples (ms), moves sent,
        moves sent late, errors, races started again."""
        before = self.rematches()
        self.samples = []
        self.sent = self.late = 0
        self.errors = []
        await asyncio.sleep(seconds)
        return self.samples, self.sent, self.late, self.errors, self.rematches() - before

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        conns = [r.conn for race in self.races for r in race.racers]
        conns += [race.watcher for race in self.races]
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)


# ---------------------------------------------------------------- sinks


class Sink(asyncio.Protocol):
    """A spectator that reads frames and throws them away (pings get their pong)."""

    def __init__(
        self,
        key: bytes,
        request: bytes,
        hello: bytes,
        join: bytes,
        joined_frames: int = JOINED_FRAMES,
    ) -> None:
        self.key = key
        self.joined_frames = joined_frames  # frames that show the join was served
        self.request = request
        self.hello = hello  # sent once the handshake is answered, with the join
        self.join = join  # sent again after a retryable refusal, as a real client does
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        loop = asyncio.get_running_loop()
        self.upgraded = loop.create_future()
        # Set at the `joined_frames`-th frame (welcome, the room, a first board, for a
        # started race): the join was served.
        self.joined = loop.create_future()
        self.frames = 0
        self.retries = 0  # joins sent again after a retryable refusal
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.upgraded.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end])
            del self.buffer[: end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(RuntimeError(head.split(b"\r\n")[0].decode()))
                return
            self.upgraded.set_result(None)
            assert self.transport is not None
            self.transport.write(self.hello + self.join)
        self._frames()

    def _frames(self) -> None:
        buffer = self.buffer
        at = 0
        while len(buffer) - at >= 2:
            opcode = buffer[at] & 0x0F
            length = buffer[at + 1] & 0x7F
            head = 2
            if length == 126:
                if len(buffer) - at < 4:
                    break
                (length,) = struct.unpack_from("!H", buffer, at + 2)
                head = 4
            elif length == 127:
                if len(buffer) - at < 10:
                    break
                (length,) = struct.unpack_from("!Q", buffer, at + 2)
                head = 10
            if len(buffer) - at < head + length:
                break
            if opcode == 0x9 and self.transport is not None:  # ping: pong, same payload
                payload = bytes(buffer[at + head : at + head + length])
                self.transport.write(_frame(0xA, payload))
            elif opcode == 0x8:
                self.closed = True
            elif not self.joined.done():
                self._joining(bytes(buffer[at + head : at + head + length]))
            else:
                self.frames += 1
            at += head + length
        del buffer[:at]

    def _joining(self, payload: bytes) -> None:
        """A frame before the join was served: a retryable refusal sends the join again
        (a node shedding a burst of joins answers `unavailable` after its request
        timeout), any other refusal fails the sink."""
        message = unpack(payload)
        if message.get("t") == "error":
            if message.get("code") not in RETRYABLE:
                self.joined.set_exception(RuntimeError(f"join refused: {message}"))
                return
            self.retries += 1
            loop = asyncio.get_running_loop()
            loop.call_later(random.uniform(0.2, 1.0), self._rejoin)
            return
        self.frames += 1
        if self.frames == self.joined_frames:
            self.joined.set_result(None)

    def _rejoin(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(self.join)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError("closed during the handshake"))
        if not self.joined.done():
            self.joined.set_exception(ConnectionError("closed before the join was served"))


def _frame(opcode: int, payload: bytes) -> bytes:
    """A masked client frame (FIN set)."""
    mask = os.urandom(4)
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
    elif length < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


class SinkWorker:
    """Sinks of this process; a sink counts as joined at its `joined_frames`-th frame
    (welcome, the room and a board for a race under way; 2 for a room in its lobby)."""

    def __init__(self, url: str, joined_frames: int = JOINED_FRAMES) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path or "/"
        self.joined_frames = joined_frames
        self.sinks: list[Sink] = []

    async def add(self, rooms: Sequence[str]) -> tuple[int, int]:
        """A sink joined to each of `rooms`: how many, and their joins sent again."""
        gate = asyncio.Semaphore(SINK_CONCURRENCY)
        loop = asyncio.get_running_loop()

        async def one(index: int, room: str) -> Sink:
            key = base64.b64encode(os.urandom(16))
            request = (
                f"GET {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key.decode()}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
            hello = _frame(0x2, pack({"t": "hello", "v": 1, "name": f"Sink {index}"}))
            join = _frame(0x2, pack({"t": "join", "room": room, "as": "spectator", "rid": 1}))
            # At most SINK_CONCURRENCY sinks of this process are connecting or joining
            # at once; the level is measured only once every sink has been served.
            async with gate:
                _, sink = await loop.create_connection(
                    lambda: Sink(key, request, hello, join, self.joined_frames),
                    self.host,
                    self.port,
                )
                await asyncio.wait_for(sink.upgraded, 60)
                await asyncio.wait_for(sink.joined, 300)
            return sink

        base = len(self.sinks)
        added = await asyncio.gather(*(one(base + i, r) for i, r in enumerate(rooms)))
        self.sinks += added
        return len(added), sum(sink.retries for sink in added)

    def counts(self) -> tuple[int, int]:
        """Frames received so far, sinks closed."""
        return sum(s.frames for s in self.sinks), sum(1 for s in self.sinks if s.closed)

    async def window(self, seconds: float) -> tuple[int, int]:
        """Frames received in the next `seconds`, sinks closed by then."""
        before, _ = self.counts()
        await asyncio.sleep(seconds)
        frames, closed = self.counts()
        return frames - before, closed

    async def stop(self) -> None:
        for sink in self.sinks:
            if not sink.joined.done():
                sink.joined.cancel()
            if sink.transport is not None:
                sink.transport.abort()
