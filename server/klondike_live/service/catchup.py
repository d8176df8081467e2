"""Catching a viewer up: the room, then each board as missing events or a snapshot.

    catchup = CatchUp(rooms, metrics, session_of)
    await catchup.catch_up(session, local, viewer, state, since)   # a join or a resume
    hub.on_resync = catchup.resync              # a lagging viewer drained its buffer
    hub.on_room_frame = catchup.on_room_frame   # a new race: boards at its start instant

A viewer (re)joining sends its last offset per board: if the board's stream still holds
every later entry (at most `MAX_BACKLOG`), it gets exactly those frames, else a
snapshot. Live frames that arrive meanwhile are held on the viewer and released after,
minus those its snapshots or backlog already covered: nothing lost, nothing repeated.
A viewer that joined before the start gets its snapshots at the start instant (the
reveal), once per race and node.

This module must never send a board frame before the viewer's snapshot of that board,
and never builds a board frame other than from an engine view under the audience's
mask (`view_of`): a racer's own knowledge, or the stored spectator mask.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgpack

from klondike_live.engine import view_of
from klondike_live.gateway.hub import LocalRoom, Viewer
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.outgoing import BoardHeader
from klondike_live.race.results import replay
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING, RoomState
from klondike_live.service.rooms import Rooms
from klondike_live.store import BoardRecord

if TYPE_CHECKING:
    from klondike_live.gateway.session import Session

log = logging.getLogger(__name__)

MAX_BACKLOG = 200
"""A resuming viewer missing more events than this gets a snapshot instead."""

Sent = dict[tuple[str, int], int]
"""The offset each (audience, seat) board was sent up to, by a snapshot or a backlog."""


def progress_frame(local: LocalRoom) -> bytes:
    """Every racer's progress in the room, as this node knows it."""
    boards = [local.progress[seat] for seat in sorted(local.progress)]
    return outgoing.progress(local.room_id, boards, local.spectators_total)


def _frame_offset(frame: bytes) -> tuple[str, int, int] | None:
    """(audience, seat, offset) of a board frame, for de-duplicating after a resume."""
    data = msgpack.unpackb(frame, raw=False)
    if data.get("t") in ("board", "diff"):
        return data["audience"], data["seat"], data["off"]
    return None


class CatchUp:
    """Joins, resumes, resyncs and start-instant reveals of one node's viewers."""

    def __init__(
        self, rooms: Rooms, metrics: Metrics, session_of: Callable[[Viewer], Session | None]
    ) -> None:
        self.rooms = rooms
        self.store = rooms.store
        self.metrics = metrics
        self.session_of = session_of
        self._reveals: dict[tuple[str, int], asyncio.Task[None]] = {}

    async def catch_up(
        self,
        session: Session,
        local: LocalRoom,
        viewer: Viewer,
        state: RoomState,
        since: tuple[msg.Since, ...],
    ) -> None:
        """Send the room and the boards (missing events or snapshots), then release the
        frames that arrived meanwhile, minus those already covered."""
        day_closed = self.rooms.daily.day_closed(state)
        await session.send(
            outgoing.room_state(
                state.public(spectators=local.spectators_total, day_closed=day_closed)
            )
        )
        sent: Sent = {}
        if state.state == FINISHED:
            data = await self.store.load_results(state.id, state.gen)
            if data is not None:
                results = msgpack.unpackb(data, raw=False)
                await session.send(outgoing.results(state.id, self.rooms.shown(state, results)))
            viewer.boards_ready = True
        elif state.state in (COUNTDOWN, RACING):
            await self.rooms.sync_local(local, state)
            if self.rooms.now_ms() >= state.start_at_ms:
                sent = await self._send_boards(session, local, viewer, state, since)
                await session.send(progress_frame(local))
                viewer.boards_ready = True
            else:
                self.schedule_reveal(local, state)
        await self._release(session, viewer, sent)

    async def _release(self, session: Session, viewer: Viewer, sent: Sent) -> None:
        """Send the frames held for `viewer`, minus those its snapshots or backlog already
        covered; board frames stay held while it has no snapshots yet."""
        frames = viewer.held + (viewer.catching_up or [])
        viewer.held = []
        viewer.catching_up = None
        for frame in frames:
            where = _frame_offset(frame)
            if where is not None and not viewer.boards_ready:
                viewer.held.append(frame)
            elif where is None or where[2] > sent.get((where[0], where[1]), -1):
                await session.send(frame)

    async def _send_boards(
        self,
        session: Session,
        local: LocalRoom,
        viewer: Viewer,
        state: RoomState,
        since: tuple[msg.Since, ...],
    ) -> Sent:
        last = {s.seat: s for s in since}
        if viewer.role == "racer" and viewer.seat is not None:
            seats = [viewer.seat]
            audience = "own"
        else:
            seats = [seat for seat, _ in state.seated()]
            audience = "spectator"
        records = await self.store.load_boards(state.id, state.gen, seats)
        sent: Sent = {}
        for seat in seats:
            record = records.get(seat)
            if record is None:
                continue
            offset = record.int("own_offset" if audience == "own" else "spec_offset")
            mark = last.get(seat)
            frames = None
            if mark is not None and mark.epoch == state.gen and mark.offset <= offset:
                frames = await self.store.stream_after(
                    state.id, state.gen, seat, audience, mark.offset, MAX_BACKLOG
                )
            if frames is None:
                self.metrics.resyncs.inc()
                await session.send(_snapshot(state, seat, record, audience))
            else:
                for _, frame in frames:
                    await session.send(frame)
            sent[(audience, seat)] = offset
        return sent

    # ------------------------------------------------------------ the start instant

    def schedule_reveal(self, local: LocalRoom, state: RoomState) -> None:
        """At the start instant, send each local viewer its boards (once per race)."""
        key = (state.id, state.gen)
        if key in self._reveals or local.revealed_gen == state.gen:
            return
        local.revealed_gen = state.gen

        async def reveal() -> None:
            try:
                await asyncio.sleep(max(0.0, (state.start_at_ms - self.rooms.now_ms()) / 1000))
                for viewer in list(local.viewers):
                    session = self.session_of(viewer)
                    if session is not None:
                        await self._reveal_to(session, local, viewer, state)
            finally:
                self._reveals.pop(key, None)

        self._reveals[key] = asyncio.create_task(reveal(), name=f"reveal-{state.id}")

    async def _reveal_to(
        self, session: Session, local: LocalRoom, viewer: Viewer, state: RoomState
    ) -> None:
        """Send one viewer the boards of a race that just started, holding live frames
        meanwhile; a viewer still being caught up by its own join is left to that."""
        for _ in range(100):
            if viewer.catching_up is None:
                break
            await asyncio.sleep(0.01)
        if viewer.boards_ready or viewer.catching_up is not None:
            return
        viewer.catching_up = []
        sent: Sent = {}
        try:
            sent = await self._send_boards(session, local, viewer, state, ())
            await session.send(progress_frame(local))
            viewer.boards_ready = True
        except Exception:
            log.debug("reveal to %s failed", viewer.conn_id, exc_info=True)
        finally:
            await self._release(session, viewer, sent)

    # ------------------------------------------------------------ bus hooks

    async def resync(self, local: LocalRoom, viewer: Viewer) -> None:
        """A lagging viewer drained its buffer: fresh snapshots, then live again."""
        session = self.session_of(viewer)
        if session is None:
            return
        viewer.catching_up = []
        viewer.lagging = False
        try:
            state = await self.rooms.load(local.room_id)
            await self.catch_up(session, local, viewer, state, ())
        finally:
            viewer.catching_up = None

    async def on_room_frame(self, local: LocalRoom, frame: bytes) -> None:
        """A room frame of a local room: a new race resets the local caches (its boards
        come with its start); a race under way is revealed to the local viewers once."""
        data = msgpack.unpackb(frame, raw=False)
        if data.get("t") != "room":
            return
        if data.get("gen") != local.gen:
            for viewer in local.viewers:  # a new race: its boards come with its start
                viewer.boards_ready = False
                viewer.held = []
            local.writers.clear()
            local.masks.clear()
            local.statuses.clear()
            local.progress.clear()
            local.seats = set()
            local.gen = data.get("gen", 0)
        starting = data.get("state") == COUNTDOWN and data.get("start_at", 0) > self.rooms.now_ms()
        # With no countdown (or a late bus) the start instant has passed when the frame
        # arrives: viewers without their boards still get them, once per race.
        missed = (
            data.get("state") in (COUNTDOWN, RACING)
            and local.revealed_gen != local.gen
            and any(not viewer.boards_ready for viewer in local.viewers)
        )
        if starting or missed:
            state = await self.rooms.load(local.room_id)
            if state.state in (COUNTDOWN, RACING):
                await self.rooms.sync_local(local, state)
                self.schedule_reveal(local, state)


def _snapshot(state: RoomState, seat: int, record: BoardRecord, audience: str) -> bytes:
    """One board as its audience may see it, replayed from the stored moves."""
    board = replay(state, record.moves)
    status = record.fields["status"]
    if audience == "own":
        header = BoardHeader(state.id, seat, audience, state.gen, record.int("own_offset"))
        return outgoing.board(
            header,
            view_of(board, board.seen),
            moves=len(board.moves),
            status=status,
            score=board.score,
            last_id=record.int("last_move_id"),
        )
    header = BoardHeader(state.id, seat, audience, state.gen, record.int("spec_offset"))
    known = int(record.fields["spec_mask"])
    return outgoing.board(header, view_of(board, known), moves=len(board.moves), status=status)
