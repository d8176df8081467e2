"""The node's hub: which local connections watch which room, and the bus subscriber.

One subscriber task per process reads the channels of the rooms this node has viewers
or writers for, and routes each message by its header:

    room channel (`keys.channel`), subscribed for every local room:
      L|frame       room-wide frame (room state, results): every local viewer of the room
      O<s>|frame    board s, racer's own audience (only for server-side status changes;
                    a writer delivers its racer's own frames itself)
      P<node>|note  progress of one board, and its racer's knowledge when it grew
                    (internal: progress is coalesced and sent per tick; more knowledge
                    may let spectators see more). Notes from this node are skipped:
                    the writer applied them already.
      X|note        a newer connection took over a racer (internal; older ones close)
    spectator channel (`keys.spectator_channel`), subscribed only while the node has
    local spectators of the room:
      S<s>|frame    board s, spectator audience
    daily channel (`keys.DAILY_UPDATES`), always subscribed: a day's leaderboard got an
    entry (handed to `on_daily`, which tells the connections watching it)

Frames are forwarded as the bytes they arrived as, with `websockets.broadcast`, which
never awaits a slow client. A connection whose send buffer passed the server's write
limit (asyncio pauses its writing) is skipped and marked lagging; once it drains it gets
fresh snapshots instead of a backlog. Internal notes are never forwarded to clients.
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
from klondike_live.tasks import cancel_requested

log = logging.getLogger(__name__)

LAG_BYTES = 256 * 1024
"""A connection with more than this waiting in its send buffer is lagging (the server
passes it to websockets as the write limit, so asyncio pauses writing at that point)."""


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
    # Board frames wait until the viewer has its snapshots of the current race (a diff
    # must never arrive before the board it applies to).
    boards_ready: bool = False
    held: list[bytes] = field(default_factory=list)


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
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Audience lists, kept up to date on add/remove so fan-out never rebuilds them.
    _spectators: list[Viewer] = field(default_factory=list)
    _racers: dict[int, list[Viewer]] = field(default_factory=dict)

    def add(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)
        self._index()

    def remove(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        self._index()

    def reseat(self, viewer: Viewer, seat: int | None) -> None:
        viewer.seat = seat
        self._index()

    def _index(self) -> None:
        self._spectators = [v for v in self.viewers if v.role == "spectator"]
        racers: dict[int, list[Viewer]] = {}
        for viewer in self.viewers:
            if viewer.role == "racer" and viewer.seat is not None:
                racers.setdefault(viewer.seat, []).append(viewer)
        self._racers = racers

    def racers(self, seat: int) -> list[Viewer]:
        return self._racers.get(seat, [])

    def spectators(self) -> list[Viewer]:
        return self._spectators

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


class Hub:
    """Local rooms, the bus subscriber and fan-out for one node."""

    def __init__(self, redis: Redis, metrics: Metrics, node_id: str) -> None:
        self.redis = redis
        self.metrics = metrics
        self.node_id = node_id
        self.rooms: dict[str, LocalRoom] = {}
        self._pubsub: PubSub = redis.pubsub(ignore_subscribe_messages=False)
        self._reader: asyncio.Task[None] | None = None
        self._channels: dict[str, str] = {}  # channel -> room id
        self._confirmations: dict[str, asyncio.Future[None]] = {}
        self._own_progress = b"P" + node_id.encode()
        # Set by the service: what to do with internal notes and lagging viewers.
        self.on_mask: Callable[[LocalRoom], Awaitable[None]] | None = None
        self.on_status: Callable[[LocalRoom, int, str], Awaitable[None]] | None = None
        self.on_takeover: Callable[[LocalRoom, str, str], None] | None = None
        self.on_resync: Callable[[LocalRoom, Viewer], Awaitable[None]] | None = None
        self.on_room_frame: Callable[[LocalRoom, bytes], Awaitable[None]] | None = None
        self.on_daily: Callable[[bytes], None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        # A subscription must exist before the reader starts listening.
        await self._pubsub.subscribe(f"{keys.PREFIX}:node-alive", keys.DAILY_UPDATES)
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

    async def enter(self, room_id: str, *, spectating: bool = False) -> LocalRoom:
        """The local room, subscribed to its channel(s) before this returns."""
        room = self.rooms.get(room_id)
        if room is None:
            room = LocalRoom(room_id)
            self.rooms[room_id] = room
            self.metrics.rooms.set(len(self.rooms))
        await self._subscribe(room_id, keys.channel(room_id))
        if spectating:
            await self._subscribe(room_id, keys.spectator_channel(room_id))
        return room

    async def _subscribe(self, room_id: str, channel: str) -> None:
        waiting = self._confirmations.get(channel)
        if channel not in self._channels:
            self._channels[channel] = room_id
            waiting = asyncio.get_running_loop().create_future()
            self._confirmations[channel] = waiting
            await self._pubsub.subscribe(channel)
        if waiting is not None:
            await asyncio.wait_for(asyncio.shield(waiting), timeout=10)

    async def _unsubscribe(self, channel: str) -> None:
        if self._channels.pop(channel, None) is not None:
            self._confirmations.pop(channel, None)
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(channel)

    async def leave(self, room: LocalRoom, viewer: Viewer) -> None:
        """Forget `viewer`; drop subscriptions nobody here needs any more."""
        room.remove(viewer)
        if not room.spectators():
            await self._unsubscribe(keys.spectator_channel(room.room_id))
        await self.release_if_idle(room)

    async def release_if_idle(self, room: LocalRoom) -> None:
        """Drop the room and its subscriptions when no local viewer or writer is left."""
        if not room.viewers and not room.writers and self.rooms.get(room.room_id) is room:
            self.rooms.pop(room.room_id, None)
            self.metrics.rooms.set(len(self.rooms))
            await self._unsubscribe(keys.channel(room.room_id))
            await self._unsubscribe(keys.spectator_channel(room.room_id))

    # ------------------------------------------------------------ bus

    async def _read(self) -> None:
        while not cancel_requested():
            try:
                async for message in self._pubsub.listen():
                    await self._dispatch(message)
                    if cancel_requested():
                        # Swallowed by a library call of a hook (redis-py does, during
                        # shutdown): listening on would wait for a message that never
                        # comes, and the hub's stop with it.
                        raise asyncio.CancelledError
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bus read failed; retrying")
                await asyncio.sleep(0.5)
        raise asyncio.CancelledError

    async def _dispatch(self, message: dict[str, Any]) -> None:
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        kind = message["type"]
        if kind == "subscribe":
            waiting = self._confirmations.pop(channel, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)
            return
        if kind != "message":
            return
        if channel == keys.DAILY_UPDATES:
            if self.on_daily is not None:
                try:
                    self.on_daily(message["data"])
                except Exception:
                    log.exception("routing a daily update failed")
            return
        room_id = self._channels.get(channel)
        room = self.rooms.get(room_id) if room_id is not None else None
        if room is None:
            return
        try:
            await self._route(room, message["data"])
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("routing a bus message of room %s failed", room.room_id)

    async def _route(self, room: LocalRoom, data: bytes) -> None:
        split = data.index(b"|", 0, 48)
        head, frame = data[:split], data[split + 1 :]
        kind = head[:1]
        if kind == b"S":
            self.send(room.spectators(), frame, board=True)
        elif kind == b"P":
            if head != self._own_progress:
                await self.note_progress(room, frame)
        elif kind == b"L":
            self.send(list(room.viewers), frame)
            if self.on_room_frame is not None:
                await self.on_room_frame(room, frame)
        elif kind == b"O":
            self.send(room.racers(int(head[1:])), frame, board=True)
        elif kind == b"X":
            user, conn_id = msgpack.unpackb(frame)
            if self.on_takeover is not None:
                self.on_takeover(room, user, conn_id)

    async def note_progress(self, room: LocalRoom, note: bytes) -> None:
        """Apply a progress note: from the bus, or from this node's own write."""
        seat, found, down, moves, status, seen = msgpack.unpackb(note)
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

    # ------------------------------------------------------------ fan-out

    def send(self, viewers: list[Viewer], frame: bytes, *, board: bool = False) -> None:
        """Broadcast one encoded frame; hold it for resuming viewers (and board frames
        for viewers without their snapshots yet); skip laggards."""
        ready = []
        for viewer in viewers:
            if viewer.catching_up is not None:
                viewer.catching_up.append(frame)
            elif board and not viewer.boards_ready:
                viewer.held.append(frame)
            elif viewer.lagging:
                continue
            elif _lagging(viewer.connection):
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
            while _lagging(viewer.connection):
                if viewer.connection.state is not websockets.State.OPEN:
                    return
                await asyncio.sleep(0.05)
            self.metrics.resyncs.inc()
            await callback(room, viewer)

        self.spawn(resync(), f"resync-{viewer.conn_id}")


def _lagging(connection: ServerConnection) -> bool:
    """asyncio paused writing to this connection: its buffer passed the write limit
    (and it resumes only once drained to a quarter of it)."""
    return bool(connection.paused)
