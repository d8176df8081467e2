"""The node's hub: which local connections watch which room, and the bus subscriber.

One subscriber task per process reads every room channel this node has viewers for and
routes each message by its header:

    L|frame   room-wide frame (room state, results): every local viewer of the room
    O<s>|frame  board s, racer's own audience: the local connections of that racer
    S<s>|frame  board s, spectator audience: the local spectators of the room
    P|note    progress of one board, and its racer's knowledge when it grew (internal:
              progress is coalesced and sent per tick; more knowledge may let
              spectators see more)
    X|note    a newer connection took over a racer (internal; older ones are closed)

Frames are forwarded as the bytes they arrived as, with `websockets.broadcast`, which
never awaits a slow client. A spectator whose send buffer is over the limit is skipped
and marked lagging; once its buffer drains it gets fresh snapshots instead of a backlog.
Internal notes are never forwarded to clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import websockets
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from websockets.asyncio.server import ServerConnection

from klondike_live import keys
from klondike_live.metrics import Metrics
from klondike_live.race.live_board import DONE, LiveBoard

log = logging.getLogger(__name__)

LAG_BYTES = 256 * 1024
"""A connection with more than this waiting in its send buffer is lagging."""


@dataclass(eq=False)
class Viewer:
    """One connection's presence in one room."""

    connection: ServerConnection
    conn_id: str
    user: str
    role: str  # "racer" or "spectator"
    seat: int | None
    catching_up: list[bytes] | None = None  # frames held while a resume is in flight
    lagging: bool = False


@dataclass(eq=False)
class LocalRoom:
    """What this node knows and holds for one room."""

    room_id: str
    gen: int = 0
    seats: set[int] = field(default_factory=set)  # seated racers of race `gen`
    revealed_gen: int = 0  # the race whose start this node has scheduled or sent
    viewers: set[Viewer] = field(default_factory=set)
    writers: dict[int, LiveBoard] = field(default_factory=dict)
    masks: dict[int, int] = field(default_factory=dict)
    statuses: dict[int, str] = field(default_factory=dict)
    progress: dict[int, list[Any]] = field(default_factory=dict)
    progress_dirty: bool = False
    spectators_total: int = 0
    subscribed: asyncio.Future[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def common_mask(self, exclude: int | None = None) -> int:
        """Cards every racer still playing knows (optionally leaving one seat out).

        Until every seated racer's knowledge is known here, the answer is "nothing":
        a missing racer must never widen what spectators see.
        """
        known = (1 << 52) - 1
        for seat in self.seats:
            if seat == exclude or self.statuses.get(seat) in DONE:
                continue
            mask = self.masks.get(seat)
            if mask is None:
                return 0
            known &= mask
        return known if self.seats else 0

    def racers(self, seat: int) -> list[Viewer]:
        return [v for v in self.viewers if v.role == "racer" and v.seat == seat]

    def spectators(self) -> list[Viewer]:
        return [v for v in self.viewers if v.role == "spectator"]


class Hub:
    """Local rooms, the bus subscriber and fan-out for one node."""

    def __init__(self, redis: Redis, metrics: Metrics) -> None:
        self.redis = redis
        self.metrics = metrics
        self.rooms: dict[str, LocalRoom] = {}
        self._pubsub: PubSub = redis.pubsub(ignore_subscribe_messages=False)
        self._reader: asyncio.Task[None] | None = None
        self._channels: dict[str, str] = {}  # channel -> room id
        # Set by the service: what to do with internal notes and lagging viewers.
        self.on_mask: Callable[[LocalRoom], Awaitable[None]] | None = None
        self.on_status: Callable[[LocalRoom, int, str], Awaitable[None]] | None = None
        self.on_takeover: Callable[[LocalRoom, str, str], None] | None = None
        self.on_resync: Callable[[LocalRoom, Viewer], Awaitable[None]] | None = None
        self.on_room_frame: Callable[[LocalRoom, bytes], Awaitable[None]] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        # A subscription must exist before the reader starts listening.
        await self._pubsub.subscribe(f"{keys.PREFIX}:node-alive")
        self._reader = asyncio.create_task(self._read(), name="bus-reader")

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        for task in list(self._tasks):
            task.cancel()
        await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    def spawn(self, coro: Awaitable[Any], name: str) -> None:
        """Run a background task owned by the hub (cancelled at stop, errors logged)."""

        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("background task %s failed", name)

        task = asyncio.create_task(guarded(), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ rooms

    async def enter(self, room_id: str) -> LocalRoom:
        """The local room, subscribed to its channel before this returns."""
        room = self.rooms.get(room_id)
        if room is None:
            room = LocalRoom(room_id)
            self.rooms[room_id] = room
            self.metrics.rooms.set(len(self.rooms))
        if room.subscribed is None:
            channel = keys.channel(room_id)
            room.subscribed = asyncio.get_running_loop().create_future()
            self._channels[channel] = room_id
            await self._pubsub.subscribe(channel)
        await asyncio.wait_for(asyncio.shield(room.subscribed), timeout=10)
        return room

    async def leave(self, room: LocalRoom, viewer: Viewer) -> None:
        """Forget `viewer`; drop the room (and its subscription) when nothing is left."""
        room.viewers.discard(viewer)
        await self.release_if_idle(room)

    async def release_if_idle(self, room: LocalRoom) -> None:
        """Drop the room and its subscription when no local viewer or writer is left."""
        if not room.viewers and not room.writers and self.rooms.get(room.room_id) is room:
            self.rooms.pop(room.room_id, None)
            self.metrics.rooms.set(len(self.rooms))
            channel = keys.channel(room.room_id)
            self._channels.pop(channel, None)
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(channel)

    # ------------------------------------------------------------ bus

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bus read failed; retrying")
                await asyncio.sleep(0.5)
                continue
            if message is None:
                continue
            kind = message["type"]
            channel = message["channel"]
            channel = channel.decode() if isinstance(channel, bytes) else channel
            room_id = self._channels.get(channel)
            if room_id is None:
                continue
            room = self.rooms.get(room_id)
            if room is None:
                continue
            if kind == "subscribe":
                if room.subscribed is not None and not room.subscribed.done():
                    room.subscribed.set_result(None)
            elif kind == "message":
                try:
                    await self._route(room, message["data"])
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("routing a bus message of room %s failed", room_id)

    async def _route(self, room: LocalRoom, data: bytes) -> None:
        split = data.index(b"|", 0, 8)
        head, frame = data[:split], data[split + 1 :]
        kind = head[:1]
        if kind == b"O":
            self.send(room.racers(int(head[1:])), frame)
        elif kind == b"S":
            self.send(room.spectators(), frame)
        elif kind == b"L":
            self.send(list(room.viewers), frame)
            if self.on_room_frame is not None:
                await self.on_room_frame(room, frame)
        elif kind == b"P":
            seat, found, down, moves, status, seen = msgpack.unpackb(frame)
            room.progress[seat] = [seat, found, down, moves, status]
            room.progress_dirty = True
            if room.statuses.get(seat) != status:
                room.statuses[seat] = status
                if self.on_status is not None:
                    await self.on_status(room, seat, status)
            if seen is not None:
                room.masks[seat] = int(seen)
                if self.on_mask is not None:
                    await self.on_mask(room)
        elif kind == b"X":
            user, conn_id = msgpack.unpackb(frame)
            if self.on_takeover is not None:
                self.on_takeover(room, user, conn_id)

    # ------------------------------------------------------------ fan-out

    def send(self, viewers: list[Viewer], frame: bytes) -> None:
        """Broadcast one encoded frame; hold it for resuming viewers; skip laggards."""
        ready = []
        for viewer in viewers:
            if viewer.catching_up is not None:
                viewer.catching_up.append(frame)
            elif viewer.lagging:
                continue
            elif _buffered(viewer.connection) > LAG_BYTES:
                viewer.lagging = True
                self._start_resync(viewer)
            else:
                ready.append(viewer.connection)
        if ready:
            websockets.broadcast(ready, frame)
            self.metrics.frames_out.inc(len(ready))

    def _start_resync(self, viewer: Viewer) -> None:
        room = next((r for r in self.rooms.values() if viewer in r.viewers), None)
        if room is None or self.on_resync is None:
            return
        callback = self.on_resync

        async def resync() -> None:
            while _buffered(viewer.connection) > LAG_BYTES // 4:
                if viewer.connection.state is not websockets.State.OPEN:
                    return
                await asyncio.sleep(0.05)
            self.metrics.resyncs.inc()
            await callback(room, viewer)

        self.spawn(resync(), f"resync-{viewer.conn_id}")


def _buffered(connection: ServerConnection) -> int:
    transport = connection.transport
    return 0 if transport is None else int(transport.get_write_buffer_size())
