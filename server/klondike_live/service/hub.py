"""This node's rooms: who watches what here, the bus subscriptions, and fan-out.

    hub = Hub(broadcast, metrics, node_id)
    local = await hub.enter(room_id)                    # subscribed before it returns
    hub.deliver(local.spectators(), frame, position)    # one frame, many viewers
    await hub.leave(local, viewer)

The node subscribes to a room's channel (see `bus.messages`) while it has any viewer or
writer of the room. Each bus message is decoded once into its type and routed:

    RoomFrame      every local viewer; then `on_room_frame` (a new race, the start)
    BoardFrame     the audience's viewers (own: the racer's connections), once: a frame
                   this node already delivered (after a catch-up) is dropped
    ProgressNote   its spectator frame as a BoardFrame; its progress to the room's cache
                   (`LocalRoom.apply_progress`), then `on_progress`, from another node
                   only: a writer here applied its own already. A node with no
                   spectator of the room drops its own notes by their first bytes,
                   undecoded
    Takeover       `on_takeover` (older connections of that racer close)
    ReactionCounts `on_reactions` (`service.reactions`: added up, shown once a second)

Delivery holds frames for viewers being caught up, holds board frames for viewers that
have no snapshot of the current race yet, and skips a viewer whose connection lags
(its buffer past the write limit), which gets fresh snapshots once it drained
(`on_resync`). Frames are sent with the transport's `broadcast`, which never awaits a
slow client.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, assert_never

from klondike_live import keys
from klondike_live.bus.messages import (
    BoardFrame,
    BusError,
    ProgressNote,
    ReactionCounts,
    RoomFrame,
    Takeover,
    decode,
    note_prefix,
)
from klondike_live.bus.subscriber import OnMessage
from klondike_live.metrics import Metrics
from klondike_live.protocol.kinds import Audience, BoardPosition, Reaction
from klondike_live.service.connection import Broadcast
from klondike_live.service.local import Held, LocalRoom, ProgressChange, Viewer
from klondike_live.tasks import TaskGroup

log = logging.getLogger(__name__)


class Subscriptions(Protocol):
    """What the hub needs of the bus subscriber (`bus.subscriber.Subscriber`)."""

    async def subscribe(self, channel: str) -> None: ...
    async def unsubscribe(self, channel: str) -> None: ...


class Hub:
    """Local rooms, their bus subscriptions and fan-out for one node."""

    def __init__(
        self,
        broadcast: Broadcast,
        metrics: Metrics,
        node_id: str,
    ) -> None:
        self.broadcast = broadcast
        self.metrics = metrics
        self.node_id = node_id
        self._own_notes = note_prefix(node_id)
        self.rooms: dict[str, LocalRoom] = {}
        self.bus: Subscriptions | None = None
        self._channels: dict[str, str] = {}  # channel -> room id
        self._tasks = TaskGroup()
        # Set by the service: what follows a message beyond its delivery.
        self.on_room_frame: Callable[[LocalRoom, RoomFrame], Awaitable[None]] | None = None
        self.on_progress: Callable[[LocalRoom, ProgressChange], None] | None = None
        self.on_takeover: Callable[[LocalRoom, str, str], None] | None = None
        self.on_resync: Callable[[Viewer], Awaitable[None]] | None = None
        self.on_reactions: Callable[[str, dict[Reaction, int]], None] | None = None

    def room_of_channel(self, channel: str) -> LocalRoom | None:
        """The local room a subscribed channel belongs to."""
        room_id = self._channels.get(channel)
        return self.rooms.get(room_id) if room_id is not None else None

    def attach(self, bus: Subscriptions) -> OnMessage:
        """Use `bus` for subscriptions; returns the handler its reader must call."""
        self.bus = bus
        return self.on_message

    async def stop(self) -> None:
        await self._tasks.cancel()

    def spawn(self, coro: Awaitable[Any], name: str) -> None:
        """Run a background task owned by the hub (cancelled at stop, errors logged)."""
        self._tasks.spawn(coro, name)

    # ------------------------------------------------------------ rooms

    async def enter(self, room_id: str) -> LocalRoom:
        """The local room, subscribed to its channel before this returns."""
        room = self.rooms.get(room_id)
        if room is None:
            room = LocalRoom(room_id)
            self.rooms[room_id] = room
            self.metrics.rooms.set(len(self.rooms))
        await self._subscribe(room_id, keys.channel(room_id))
        return room

    async def leave(self, room: LocalRoom, viewer: Viewer) -> None:
        """Forget `viewer`; drop the subscription when nobody here needs it any more."""
        room.remove(viewer)
        await self.release_if_idle(room)

    async def release_if_idle(self, room: LocalRoom) -> None:
        """Drop the room and its subscription when no local viewer or writer is left."""
        if room.idle and self.rooms.get(room.room_id) is room:
            self.rooms.pop(room.room_id, None)
            self.metrics.rooms.set(len(self.rooms))
            await self._unsubscribe(keys.channel(room.room_id))

    async def _subscribe(self, room_id: str, channel: str) -> None:
        assert self.bus is not None, "attach a bus first"
        self._channels[channel] = room_id
        await self.bus.subscribe(channel)

    async def _unsubscribe(self, channel: str) -> None:
        if self._channels.pop(channel, None) is not None and self.bus is not None:
            await self.bus.unsubscribe(channel)

    # ------------------------------------------------------------ bus

    async def on_message(self, channel: str, data: bytes) -> None:
        """One message of a room's channel (the subscriber's reader calls this)."""
        room_id = self._channels.get(channel)
        room = self.rooms.get(room_id) if room_id is not None else None
        if room is None or (data.startswith(self._own_notes) and not room.spectators()):
            return
        try:
            message = decode(data)
        except BusError as exc:
            log.warning("dropped a bus message of room %s: %s", room.room_id, exc)
            return
        match message:
            case ProgressNote(node, progress, spectator):
                self._to_spectators(room, spectator)
                if node != self.node_id:
                    change = room.apply_progress(progress)
                    if self.on_progress is not None:
                        self.on_progress(room, change)
            case BoardFrame(position) if position.audience is Audience.SPECTATOR:
                self._to_spectators(room, message)
            case BoardFrame(position, frame):
                self.deliver_board(room, room.racers(position.seat), frame, position)
            case RoomFrame(frame):
                self.deliver(list(room.viewers), frame, None)
                if self.on_room_frame is not None:
                    await self.on_room_frame(room, message)
            case Takeover(user, conn_id):
                if self.on_takeover is not None:
                    self.on_takeover(room, user, conn_id)
            case ReactionCounts(counts):
                if self.on_reactions is not None:
                    self.on_reactions(room.room_id, counts)
            case _:
                assert_never(message)

    # ------------------------------------------------------------ fan-out

    def _to_spectators(self, room: LocalRoom, message: BoardFrame) -> None:
        started = time.perf_counter()
        self.deliver_board(room, room.spectators(), message.frame, message.position)
        self.metrics.fanout_latency.observe(time.perf_counter() - started)

    def deliver_board(
        self, room: LocalRoom, viewers: list[Viewer], frame: bytes, position: BoardPosition
    ) -> None:
        """Deliver a board frame unless this node already delivered it (the same event
        can come from the bus and from a catch-up read of its stream)."""
        if room.fresh(position):
            self.deliver(viewers, frame, position)

    def deliver(self, viewers: list[Viewer], frame: bytes, position: BoardPosition | None) -> None:
        """Broadcast one encoded frame; hold it for viewers being caught up (and board
        frames for viewers without their snapshots yet); skip laggards."""
        ready = []
        for viewer in viewers:
            if viewer.catching_up is not None:
                viewer.catching_up.append(Held(frame, position))
            elif position is not None and not viewer.boards_ready:
                viewer.held.append(Held(frame, position))
            elif viewer.lagging or (
                viewer.covered and position is not None and viewer.already_has(position)
            ):
                continue
            elif viewer.conn.lagging():
                viewer.lagging = True
                self._start_resync(viewer)
            else:
                ready.append(viewer.conn)
        if ready:
            self.broadcast(ready, frame)
            self.metrics.frames_out.inc(len(ready))

    def _start_resync(self, viewer: Viewer) -> None:
        callback = self.on_resync
        if callback is None:
            return

        async def resync() -> None:
            if not await viewer.conn.drained():
                return
            self.metrics.resyncs.inc()
            await callback(viewer)

        self.spawn(resync(), f"resync-{viewer.conn.conn_id}")
