"""Board writes: this node as the single writer of its racers' boards.

    boards = Boards(rooms, metrics)
    await boards.write(session, viewer, room_id, "move", move, move_id)   # or undo, resign
    await boards.hint(session, viewer, request)                           # practice only
    await boards.end_playing(state, TIMEOUT)                              # server-side

Each board is written by the node holding its racer's connection, with the board in
memory (`LiveBoard`, cached in `LocalRoom.writers`). A write plans the event (the engine
checks the move; views and frames per audience), then the store applies it with the
board's sequence number and the racer's current connection: a stale copy fails the
check, is dropped and reloaded from Redis, so a board cannot fork. Writes of one room
are serialised by its local lock.

When spectators may know more (a racer saw a card everyone else had seen, or finished),
the bus hooks `on_mask` / `on_status` re-publish this node's boards' spectator views.

This module must never write a board without its sequence check, never send a board
frame that was not planned by `LiveBoard` (views per audience), and never offers undo
or hints in a race or ranked attempt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from klondike_live.engine import IllegalMoveError, Move
from klondike_live.gateway.hub import LocalRoom, Viewer
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.race.live_board import DONE, RESIGNED, WON, LiveBoard
from klondike_live.race.results import replay
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING, RoomState
from klondike_live.service.ending import check_end
from klondike_live.service.errors import RequestError
from klondike_live.service.rooms import Rooms
from klondike_live.solver.worker import hint_in_worker

if TYPE_CHECKING:
    from klondike_live.gateway.session import Session

HINT_SECONDS = 1.0
"""Search budget of a practice hint (in a worker process, off the event loop)."""


class Boards:
    """The boards this node writes (see the module docstring)."""

    def __init__(self, rooms: Rooms, metrics: Metrics) -> None:
        self.rooms = rooms
        self.store = rooms.store
        self.hub = rooms.hub
        self.metrics = metrics

    async def writer(self, local: LocalRoom, state_hint: RoomState | None, seat: int) -> LiveBoard:
        """The board of `seat` in memory: the cached copy, or one loaded from Redis."""
        writer = local.writers.get(seat)
        if writer is not None:
            return writer
        state = state_hint or await self.rooms.load(local.room_id)
        if state.state not in (COUNTDOWN, RACING, FINISHED):
            raise RequestError(ErrorCode.WRONG_STATE, "the race has not started")
        if local.gen != state.gen or not local.seats:
            await self.rooms.sync_local(local, state)
        record = await self.store.load_board(state.id, state.gen, seat)
        if record is None:
            raise RequestError(ErrorCode.WRONG_STATE, "the race has not started")
        board = replay(state, record.moves)
        writer = LiveBoard(
            state.id,
            seat,
            state.gen,
            board,
            race=state.race_rules,
            seq=record.int("seq"),
            own_offset=record.int("own_offset"),
            spec_offset=record.int("spec_offset"),
            spec_mask=int(record.fields["spec_mask"]),
            last_move_id=record.int("last_move_id"),
            status=record.fields["status"],
        )
        local.writers[seat] = writer
        local.masks[seat] = board.seen
        return writer

    # ------------------------------------------------------------ the racer's writes

    async def write(
        self,
        session: Session,
        viewer: Viewer,
        room_id: str,
        op: str,
        move: Move | None,
        move_id: int,
    ) -> None:
        """Apply a racer's `move`, `undo` or `resign`; a board that finished ends the
        race if it was the last one playing."""
        local = self.hub.rooms.get(room_id)
        if local is None or viewer.seat is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "join the room first")
        seat = viewer.seat
        for _attempt in range(3):
            async with local.lock:
                writer = await self.writer(local, None, seat)
                if op in ("move", "undo") and move_id <= writer.last_move_id:
                    await session.send(outgoing.ack(room_id, move_id, writer.own_offset))
                    return
                if writer.status in DONE:
                    raise RequestError(
                        ErrorCode.WRONG_STATE, f"your game is over ({writer.status})"
                    )
                others = local.common_mask(exclude=seat)
                seq = writer.seq
                try:
                    if op == "move":
                        assert move is not None
                        event = writer.plan_move(move, move_id, others)
                    elif op == "undo":
                        if writer.race:
                            raise RequestError(
                                ErrorCode.NOT_ALLOWED, "races and ranked attempts have no undo"
                            )
                        event = writer.plan_undo(move_id, others)
                    else:
                        event = writer.plan_status("resign", RESIGNED, others)
                except IllegalMoveError as exc:
                    self.metrics.error("illegal_move")
                    await session.send(
                        outgoing.error(
                            ErrorCode.ILLEGAL_MOVE,
                            exc.reason,
                            room=room_id,
                            move_id=move_id or None,
                        )
                    )
                    return
                result = await self.store.write_board_event(
                    room_id,
                    writer.epoch,
                    seat,
                    session.user,
                    session.conn_id,
                    event,
                    seq,
                    publish_own=False,
                )
                if result.status == "ok":
                    writer.commit(event)
                    await self.hub.note_progress(local, event.progress)
                    if event.own_frame is not None:
                        # This node holds the racer's connection: deliver directly. The
                        # frame carries the move id, acknowledging the move.
                        self.hub.send(local.racers(seat), event.own_frame, board=True)
                    if op != "resign":
                        self.metrics.moves.inc()
                    if event.won and not writer.race:
                        await self._practice_won(session, local, writer)
                    done = writer.status in DONE
                    break
                local.writers.pop(seat, None)
            if result.status == "stale":
                continue
            raise RequestError(*_refusal(result.status, result.detail))
        else:
            raise RequestError(ErrorCode.BUSY, "the board kept changing; try again")
        if done:
            self.hub.spawn(check_end(self.rooms, room_id), f"end-{room_id}")

    async def _practice_won(self, session: Session, local: LocalRoom, writer: LiveBoard) -> None:
        """A won practice game is over (a race board wins with its move): a status event
        ends it, so that its results and replay are stored. Called holding the lock."""
        seq = writer.seq
        event = writer.plan_status("won", WON, 0)
        result = await self.store.write_board_event(
            local.room_id,
            writer.epoch,
            writer.seat,
            session.user,
            session.conn_id,
            event,
            seq,
            publish_own=False,
        )
        if result.status != "ok":
            local.writers.pop(writer.seat, None)
            return
        writer.commit(event)
        await self.hub.note_progress(local, event.progress)
        if event.own_frame is not None:
            self.hub.send(local.racers(writer.seat), event.own_frame, board=True)

    async def hint(self, session: Session, viewer: Viewer, request: msg.HintRequest) -> None:
        """The solver's advice on a practice board (refused in races and ranked attempts)."""
        local = self.hub.rooms.get(request.room)
        if local is None or viewer.seat is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "join the room first")
        writer = await self.writer(local, None, viewer.seat)
        if writer.race:
            raise RequestError(ErrorCode.NOT_ALLOWED, "races and ranked attempts have no hints")
        advice = await hint_in_worker(writer.board.copy(), seconds=HINT_SECONDS)
        await session.send(
            outgoing.hint(request.room, request.rid, advice.move, advice.status, advice.message)
        )

    # ------------------------------------------------------------ server-side writes

    async def end_playing(
        self, state: RoomState, status: str, *, only_seat: int | None = None
    ) -> None:
        """Server-side status change (time limit, abandonment) of boards still playing."""
        local = await self.hub.enter(state.id)
        try:
            for seat, _ in state.seated():
                if only_seat is not None and seat != only_seat:
                    continue
                for _attempt in range(3):
                    async with local.lock:
                        local.writers.pop(seat, None)
                        writer = await self.writer(local, state, seat)
                        if writer.status in DONE:
                            break
                        seq = writer.seq
                        event = writer.plan_status(status, status, local.common_mask(exclude=seat))
                        result = await self.store.write_board_event(
                            state.id, state.gen, seat, "", "", event, seq
                        )
                        local.writers.pop(seat, None)
                        if result.status == "ok":
                            await self.hub.note_progress(local, event.progress)
                        if result.status != "stale":
                            break
        finally:
            await self.hub.release_if_idle(local)

    async def on_mask(self, local: LocalRoom) -> None:
        """Bus hook: a racer's knowledge grew, so spectators may know more."""
        if local.writers:
            self.hub.spawn(self._refresh(local), f"refresh-{local.room_id}")

    async def on_status(self, local: LocalRoom, seat: int, status: str) -> None:
        """Bus hook: a board's status changed (a finished racer no longer limits what
        spectators may know)."""
        if status in DONE:
            # A status written elsewhere (a timeout, an abandonment) makes a local copy stale.
            writer = local.writers.get(seat)
            if writer is not None and writer.status != status:
                local.writers.pop(seat, None)
            if local.writers:
                self.hub.spawn(self._refresh(local), f"refresh-{local.room_id}")

    async def _refresh(self, local: LocalRoom) -> None:
        """Spectators may know more: re-publish this node's boards' spectator views."""
        for seat in list(local.writers):
            async with local.lock:
                writer = local.writers.get(seat)
                if writer is None:
                    continue
                seq = writer.seq
                event = writer.plan_refresh(local.common_mask(exclude=seat))
                if event is None:
                    continue
                result = await self.store.write_board_event(
                    local.room_id, writer.epoch, seat, "", "", event, seq
                )
                if result.status == "ok":
                    writer.commit(event)
                    await self.hub.note_progress(local, event.progress)
                else:
                    local.writers.pop(seat, None)


def _refusal(status: str, detail: str) -> tuple[ErrorCode, str]:
    if status == "replaced":
        return ErrorCode.WRONG_STATE, "a newer connection speaks for you now"
    if status == "done":
        return ErrorCode.WRONG_STATE, f"your game is over ({detail})"
    if status == "early":
        return ErrorCode.WRONG_STATE, f"the race starts in {detail} ms"
    if status == "late":
        return ErrorCode.WRONG_STATE, "time is up"
    if status == "missing":
        return ErrorCode.WRONG_STATE, "the race has not started"
    return ErrorCode.BUSY, "the board changed; try again"
