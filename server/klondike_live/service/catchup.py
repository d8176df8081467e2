"""Catching a viewer up: the room, the progress, then each board as missing events or a
snapshot.

    catchup = CatchUp(rooms, hub, metrics, history)
    await catchup.catch_up(local, viewer, state, since)   # a join or a resume
    hub.on_resync = catchup.resync              # a lagging viewer drained its buffer
    hub.on_room_frame = catchup.on_room_frame   # a new race: boards at its start instant
    await catchup.answer_applied(local, viewer, ack)   # a move resent: what it misses, ack

A viewer (re)joining sends its last offset per board: if the board's stream still holds
every later entry (at most `MAX_BACKLOG`), it gets exactly those frames, else a
snapshot. The progress ahead of the boards, read after them, tells how far every racer
is already, so that no board frame shows a card resting on moves the viewer was not
told of (boards come one after the other; live, a board's note travels before any frame
that rests on it). Live frames that arrive meanwhile are held on the viewer and released
after, minus those its snapshots or backlog already covered: nothing lost, nothing
repeated.
A viewer that joined before the start gets its snapshots at the start instant (the
reveal), once per race and node.

This module must never send a board frame before the viewer's snapshot of that board,
and never builds a board frame other than with `race.live_board.snapshot` under the
audience's mask: a racer's own knowledge, or the spectator mask its writer stored
(both from `race.visibility`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgpack

from klondike_live.bus.messages import RoomFrame
from klondike_live.engine import GameRecord
from klondike_live.errors import Refusal
from klondike_live.history import History, HistoryError
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode
from klondike_live.protocol.kinds import Audience, BoardPosition, Role
from klondike_live.race.live_board import snapshot
from klondike_live.race.results import board_after
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING, RoomState
from klondike_live.race.status import BoardStatus
from klondike_live.service.hub import Hub
from klondike_live.service.local import Held, LocalRoom, Viewer
from klondike_live.service.rooms import Rooms, progress_of
from klondike_live.store import BoardRecord, StoreError

log = logging.getLogger(__name__)

RESYNC_PAUSES = (0.1, 0.2, 0.5, 1.0) + (2.0,) * 30
"""Pauses between tries of a resync that the store failed (about a minute in all):
short, because live frames (a move's acknowledgement among them) wait for it."""

MAX_BACKLOG = 200
"""A resuming viewer missing more events than this gets a snapshot instead."""

Sent = dict[tuple[Audience, int], tuple[int, int]]
"""The (epoch, offset) each (audience, seat) board was sent up to, by a snapshot or a
backlog."""


def progress_frame(local: LocalRoom, records: Mapping[int, BoardRecord] | None = None) -> bytes:
    """Every racer's progress in the room, as this node knows it; a board in `records`
    (read from the store) as read."""
    rows = {int(row[0]): row for row in local.progress_rows()}
    for seat, record in (records or {}).items():
        rows[seat] = progress_of(seat, record).wire()
    boards = [rows[seat] for seat in sorted(rows)]
    return outgoing.Progress(local.room_id, boards, local.spectators_total).encode()


@dataclass(slots=True)
class Boards:
    """A viewer's boards read and encoded, not sent yet (`CatchUp._send_boards`)."""

    frames: list[bytes]
    sent: Sent
    records: dict[int, BoardRecord]
    """The boards as read after every frame above: where they stand is at least as far
    as the frames show, and as far as any card they show needs."""


class CatchUp:
    """Joins, resumes, resyncs and start-instant reveals of one node's viewers."""

    def __init__(self, rooms: Rooms, hub: Hub, metrics: Metrics, history: History) -> None:
        self.rooms = rooms
        self.history = history
        self.hub = hub
        self.store = rooms.store
        self.metrics = metrics
        self._reveals: dict[tuple[str, int], asyncio.Task[None]] = {}
        # Viewers being resynced, with whether another resync was asked for meanwhile.
        self._resyncing: dict[Viewer, bool] = {}

    async def catch_up(
        self,
        local: LocalRoom,
        viewer: Viewer,
        state: RoomState,
        since: tuple[msg.Since, ...],
        *,
        rid: int | None = None,
    ) -> None:
        """Send the room (carrying `rid`, the join's, when it answers one) and the boards
        (missing events or snapshots), then release the frames that arrived meanwhile,
        minus those already covered."""
        conn = viewer.conn
        await conn.send(self.rooms.room_frame(state, rid=rid))
        sent: Sent = {}
        if state.state == FINISHED:
            data = await self._results(state)
            if data is not None:
                results = msgpack.unpackb(data, raw=False)
                if viewer.role is Role.RACER and viewer.seat is not None:
                    own = await self._final_own(state, viewer.seat, results)
                    if own is not None:
                        frame, at = own
                        await conn.send(frame)
                        sent[at.stream] = at.at
                await conn.send(
                    outgoing.Results(state.id, self.rooms.shown(state, results)).encode()
                )
            viewer.boards_ready = True
        elif state.state in (COUNTDOWN, RACING):
            await self.rooms.sync_local(local, state)
            if self.rooms.now_ms() >= state.start_at_ms:
                boards = await self._read_boards(viewer, state, since)
                sent = await self._send_boards(local, viewer, boards)
                viewer.boards_ready = True
            else:
                self.schedule_reveal(local, state)
        await self._release(local, viewer, sent)

    async def _results(self, state: RoomState) -> bytes | None:
        """A finished race's stored results: in Valkey while cached there, else in the
        history database (a room kept longer than its results' cache, a ranked daily
        attempt's); None when neither has them (or the database does not answer)."""
        data = await self.store.load_results(state.id, state.gen)
        if data is not None:
            return data
        try:
            return await self.history.load_results(state.id, state.gen)
        except HistoryError as exc:
            log.warning("results of %s gen %d not read: %s", state.id, state.gen, exc)
            return None

    async def _final_own(
        self, state: RoomState, seat: int, results: dict[str, Any]
    ) -> tuple[bytes, BoardPosition] | None:
        """A racer back in its finished game: its own board as it ended, as it saw it
        (`Board.seen`, within what `race.redaction` shows anyone of that board), with
        its stored offset and last move id while the board's keys are kept; and where
        that snapshot stands in its stream."""
        row = next((r for r in results["ranking"] if int(r["seat"]) == seat), None)
        if row is None:
            return None
        # The record holds the moves made before the start too (`RoomState.prefix`).
        board = board_after(state, GameRecord.parse(row["record"]).moves[len(state.prefix) :])
        record = await self.store.load_board(state.id, state.gen, seat)
        offset = record.int("own_offset") if record is not None else 0
        last_id = record.int("last_move_id") if record is not None else 0
        at = BoardPosition(Audience.OWN, seat, state.gen, offset)
        status = BoardStatus(row["status"])
        return snapshot(state.id, at, board, board.seen, status, last_move_id=last_id), at

    async def _release(self, local: LocalRoom, viewer: Viewer, sent: Sent) -> None:
        """Send the frames held for `viewer`, minus those its snapshots or backlog already
        covered; board frames stay held while it has no snapshots yet."""
        pending = viewer.take_held() + (viewer.catching_up or [])
        # Frames arriving while these are sent keep queueing behind them: the viewer
        # goes live only once nothing is left, so no frame overtakes an older one.
        viewer.catching_up = []
        while pending:
            for frame, position in pending:
                if position is not None and not viewer.boards_ready:
                    viewer.held.append(Held(frame, position))
                elif position is None or position.at > sent.get(position.stream, (-1, -1)):
                    await viewer.conn.send(frame)
            pending, viewer.catching_up = viewer.catching_up, []
        # Frames published before the snapshots were read may still be on their way
        # (the bus, or this node's own writes): they must not reach the viewer twice.
        # A board whose stream this node delivered that far already needs no entry
        # (the node drops such repeats for every viewer, `LocalRoom.fresh`): an idle
        # viewer keeps nothing of its catch-up.
        covered = viewer.covered
        covered.clear()
        for key, upto in sent.items():
            if not local.passed(key, upto):
                covered[key] = upto
        viewer.catching_up = None

    async def _send_boards(
        self, local: LocalRoom, viewer: Viewer, boards: Boards, *, progress: bool = True
    ) -> Sent:
        """Send `boards`: first (with `progress`) where every board stands, then each
        board's frames. Each board's missed events come board after board, and a card
        one board's events show may rest on another racer's progress that the other
        board's events come to later: the progress first tells where every racer is
        already, so that no frame shows a card ahead of what the viewer was told of
        the racers (`race.visibility`)."""
        if progress:
            await viewer.conn.send(progress_frame(local, boards.records))
        for frame in boards.frames:
            await viewer.conn.send(frame)
        return boards.sent

    async def _read_boards(
        self,
        viewer: Viewer,
        state: RoomState,
        since: tuple[msg.Since, ...],
        shared: SharedSnapshots | None = None,
    ) -> Boards:
        """The boards of the viewer's audience: for each, its events after `since` when
        the stream proves none is missing, else a snapshot."""
        last = {s.seat: s for s in since}
        if viewer.role is Role.RACER and viewer.seat is not None:
            seats = [viewer.seat]
            audience = Audience.OWN
        else:
            seats = [seat for seat, _ in state.seated()]
            audience = Audience.SPECTATOR
        if shared is not None and audience is Audience.SPECTATOR and not since:
            return await self._read_shared(state, seats, shared)
        records = await self.store.load_boards(state.id, state.gen, seats)
        boards = Boards([], {}, records)
        backlogs = False
        for seat in seats:
            record = records.get(seat)
            if record is None:
                continue
            offset = record.int("own_offset" if audience is Audience.OWN else "spec_offset")
            mark = last.get(seat)
            frames = None
            if mark is not None and mark.epoch == state.gen and mark.offset <= offset:
                frames = await self.store.stream_after(
                    state.id, state.gen, seat, audience, mark.offset, MAX_BACKLOG
                )
            if frames is None:
                if mark is not None and mark.epoch == state.gen:
                    # The viewer had this board, but its gap cannot be proven complete
                    # from the stream (a first sight of a board or a new race is not).
                    self.metrics.resyncs.inc()
                self.metrics.snapshots.inc()
                boards.frames.append(_snapshot(state, seat, record, audience))
            else:
                backlogs = True
                for number, frame in frames:
                    boards.frames.append(frame)
                    # The stream may have grown since the board was read: whatever the
                    # backlog sent is covered too, so the live copy is not sent again.
                    offset = max(offset, number)
            boards.sent[(audience, seat)] = (state.gen, offset)
        if backlogs and audience is Audience.SPECTATOR:
            # A backlog may hold events written after the boards were read above, whose
            # cards rest on other racers' moves (a racer's own frames rest on its own).
            boards.records = await self.store.load_boards(state.id, state.gen, seats)
        return boards

    async def _read_shared(
        self, state: RoomState, seats: list[int], shared: SharedSnapshots
    ) -> Boards:
        """Spectator snapshots read and built once for every spectator of one reveal.
        Safe for viewers that hold every board frame until their snapshots are sent (a
        viewer without its boards yet, `Hub.deliver`): what happened on a board since
        its shared snapshot is in the viewer's held frames, released after it."""
        if shared.records is None:
            shared.records = await self.store.load_boards(state.id, state.gen, seats)
        boards = Boards([], {}, shared.records)
        for seat in seats:
            record = shared.records.get(seat)
            if record is None:
                continue
            frame = shared.frames.get(seat)
            if frame is None:
                frame = shared.frames[seat] = _snapshot(state, seat, record, Audience.SPECTATOR)
            self.metrics.snapshots.inc()
            boards.frames.append(frame)
            boards.sent[(Audience.SPECTATOR, seat)] = (state.gen, record.int("spec_offset"))
        return boards

    async def answer_applied(self, local: LocalRoom, viewer: Viewer, ack: bytes) -> None:
        """A racer sent again a move applied before (the answer to its first try may
        have been lost, with its node): its own board from where it holds it, which is
        nothing when it holds it all, then `ack`. A viewer being caught up gets the ack
        after its catch-up; a lagging one after its resync, which sends its board."""
        if viewer.catching_up is not None:
            viewer.catching_up.append(Held(ack, None))
            return
        if viewer.lagging or not viewer.boards_ready or viewer.seat is None:
            await viewer.conn.send(ack)
            return
        epoch, offset = local.holds(viewer, (Audience.OWN, viewer.seat))
        viewer.catching_up = []
        sent: Sent = {}
        try:
            state = await self.rooms.load(local.room_id)
            mark = msg.Since(viewer.seat, epoch, offset)
            boards = await self._read_boards(viewer, state, (mark,))
            sent = await self._send_boards(local, viewer, boards, progress=False)
            await viewer.conn.send(ack)
        finally:
            await self._release(local, viewer, sent)

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
                shared = SharedSnapshots()  # every spectator sees the start alike
                for viewer in list(local.viewers):
                    await self._reveal_to(local, viewer, state, shared)
            finally:
                self._reveals.pop(key, None)

        self._reveals[key] = asyncio.create_task(reveal(), name=f"reveal-{state.id}")

    async def _reveal_to(
        self, local: LocalRoom, viewer: Viewer, state: RoomState, shared: SharedSnapshots
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
            boards = await self._read_boards(viewer, state, (), shared)
            sent = await self._send_boards(local, viewer, boards)
            viewer.boards_ready = True
        except Exception:
            log.debug("reveal to %s failed", viewer.conn.conn_id, exc_info=True)
        finally:
            await self._release(local, viewer, sent)

    # ------------------------------------------------------------ bus hooks

    async def resync(self, viewer: Viewer) -> None:
        """A lagging viewer drained its buffer, or the bus had a gap: fresh snapshots,
        then live again. While the store fails (it may be restarting or failing over) it
        is tried again, and live frames stay held from the first try until one succeeds:
        none is lost (a racer's move acknowledgement among them), none overtakes the
        snapshots. A resync asked for while one runs makes that one go round once more.
        A store away for longer than the tries closes the connection (`SERVER_RESTART`:
        the client reconnects and resumes)."""
        if viewer in self._resyncing:
            self._resyncing[viewer] = True
            return
        viewer.lagging = False
        self._resyncing[viewer] = True
        try:
            while self._resyncing[viewer]:
                self._resyncing[viewer] = False
                if not await self._resync_once(viewer):
                    return
        finally:
            del self._resyncing[viewer]
            viewer.catching_up = None

    async def _resync_once(self, viewer: Viewer) -> bool:
        """One resync, tried until it succeeds; False when the viewer is gone or was
        closed because the store stayed away."""
        for pause in RESYNC_PAUSES:
            local = self.hub.rooms.get(viewer.room_id)
            if local is None or viewer not in local.viewers:
                return False
            if viewer.catching_up is None:
                viewer.catching_up = []
            try:
                state = await self.rooms.load(local.room_id)
                await self.catch_up(local, viewer, state, ())
                return True
            except (StoreError, Refusal) as exc:
                log.info(
                    "catching %s up failed (%s); again in %g s", viewer.conn.conn_id, exc, pause
                )
            await asyncio.sleep(pause)
        log.warning("could not catch %s up: the store stayed away", viewer.conn.conn_id)
        viewer.conn.close_soon(
            CloseCode.SERVER_RESTART, "the server lost its store; reconnect and resume"
        )
        return False

    async def on_room_frame(self, local: LocalRoom, message: RoomFrame) -> None:
        """A room frame of a local room: a new race resets the local cache (its boards
        come with its start); a race under way is revealed to the local viewers once."""
        if message.gen != local.gen:
            local.reset(message.gen)
        starting = message.phase == COUNTDOWN and message.start_at_ms > self.rooms.now_ms()
        # With no countdown (or a late bus) the start instant has passed when the frame
        # arrives: viewers without their boards still get them, once per race.
        missed = (
            message.phase in (COUNTDOWN, RACING)
            and local.revealed_gen != local.gen
            and any(not viewer.boards_ready for viewer in local.viewers)
        )
        if starting or missed:
            state = await self.rooms.load(local.room_id)
            if state.state in (COUNTDOWN, RACING):
                await self.rooms.sync_local(local, state)
                self.schedule_reveal(local, state)


@dataclass
class SharedSnapshots:
    """The boards of one start instant as spectators see them: read once, each frame
    built once, sent to every spectator of the node (`CatchUp.schedule_reveal`)."""

    records: dict[int, BoardRecord] | None = None
    frames: dict[int, bytes] = field(default_factory=dict)


def _snapshot(state: RoomState, seat: int, record: BoardRecord, audience: Audience) -> bytes:
    """One board as its audience may see it, replayed from the stored moves."""
    board = board_after(state, record.moves)
    status = BoardStatus(record.fields["status"])
    if audience is Audience.OWN:
        at = BoardPosition(audience, seat, state.gen, record.int("own_offset"))
        return snapshot(
            state.id,
            at,
            board,
            board.seen,
            status,
            last_move_id=record.int("last_move_id"),
        )
    at = BoardPosition(audience, seat, state.gen, record.int("spec_offset"))
    return snapshot(state.id, at, board, int(record.fields["spec_mask"]), status)
