"""Board writes: this node as the single writer of its racers' boards.

    boards = Boards(rooms, hub, catchup, metrics)
    await boards.write(viewer, BoardOp.MOVE, move, move_id)   # or UNDO, RESIGN
    await boards.hint(viewer, request)                        # practice only: follows a
                                                              # winning line once found
    await boards.end_playing(state, BoardOp.TIMEOUT)          # server-side
    await boards.release(local, seat)                         # the racer's connection left

Each board is written by the node holding its racer's connection, with the board in
memory (a `LiveBoard`, kept in `LocalRoom.writers`). This module is the one place that
creates, replaces and drops writers, each under its seat's lock (`LocalRoom.seat_lock`:
one board's changes strictly in order; the racers of one room are written side by
side, their writes batched together, each checked by its own sequence number). A
write applies the change to the writer (the engine checks the move; frames per
audience), then the store writes the event, checked against the board's sequence
number and the racer's current connection:

    ok                    the writer confirms; the racer gets its own frame from here
    refused for a reason  (replaced, done, early, late) the writer rolls back
    stale, or unknown     (another writer got there first; Redis failed mid-write) the
                          writer is dropped and loaded again from Redis before the next
                          write, so a node's copy can never drift from the store

When spectators may know more (a racer saw a card everyone else had seen, or finished),
`refresh_soon` re-publishes this node's boards' spectator views.

This module must never write a board without its sequence check and never send a board
frame that `LiveBoard` did not make.
"""

from __future__ import annotations

import logging

from klondike_live.engine import IllegalMoveError, Move
from klondike_live.errors import Refusal
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Audience, BoardPosition
from klondike_live.race.live_board import BoardEvent, LiveBoard
from klondike_live.race.results import board_after
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING, RoomState
from klondike_live.race.rules import check_practice, move_starts_clock
from klondike_live.race.status import BoardOp, BoardStatus
from klondike_live.service.catchup import CatchUp
from klondike_live.service.ending import board_ended, check_end
from klondike_live.service.hub import Hub
from klondike_live.service.local import LocalRoom, ProgressChange, Viewer
from klondike_live.service.rooms import Rooms
from klondike_live.solver.hints import KnownLine, forced_finish, hint
from klondike_live.solver.search import SOLVABLE, Budget, SolverError
from klondike_live.solver.worker import hint_in_worker, solve_in_worker
from klondike_live.store import WriteResult, WriteStatus

log = logging.getLogger(__name__)

HINT_SECONDS = 1.0
"""Search budget of a practice hint (in a worker process, off the event loop)."""
DEAL_LINE_BUDGET = Budget(seconds=10.0, nodes=300_000)
"""The search that certified a pooled deal (`daily.pool`'s budget, with more time for a
busy machine): it finds that deal's winning line from its start again."""
NO_LINE = KnownLine((), ())
"""Kept for a certified board whose line was looked for and not found: not again."""

WRITE_ATTEMPTS = 3
"""Tries of one write against concurrent writers before the client is told `busy`."""


class Boards:
    """The boards this node writes (see the module docstring)."""

    def __init__(self, rooms: Rooms, hub: Hub, catchup: CatchUp, metrics: Metrics) -> None:
        self.rooms = rooms
        self.store = rooms.store
        self.hub = hub
        self.catchup = catchup
        self.metrics = metrics

    # ------------------------------------------------------------ writers

    async def _writer(self, local: LocalRoom, state: RoomState | None, seat: int) -> LiveBoard:
        """The board of `seat` in memory: the cached copy, or one loaded from Redis.
        Call holding the seat's lock."""
        writer = local.writers.get(seat)
        if writer is not None and writer.epoch == local.gen:
            return writer
        state = state or await self.rooms.load(local.room_id)
        if state.state not in (COUNTDOWN, RACING, FINISHED):
            raise Refusal(ErrorCode.WRONG_STATE, "the race has not started")
        if local.gen != state.gen or not local.loaded:
            await self.rooms.sync_local(local, state)
        record = await self.store.load_board(state.id, state.gen, seat)
        if record is None:
            raise Refusal(ErrorCode.WRONG_STATE, "the race has not started")
        writer = LiveBoard(
            state.id,
            seat,
            state.gen,
            board_after(state, record.moves),
            race=state.race_rules,
            seq=record.int("seq"),
            own_offset=record.int("own_offset"),
            spec_offset=record.int("spec_offset"),
            spec_mask=int(record.fields["spec_mask"]),
            last_move_id=record.int("last_move_id"),
            status=BoardStatus(record.fields["status"]),
        )
        local.writers[seat] = writer
        return writer

    async def release(self, local: LocalRoom, seat: int) -> None:
        """The racer's connection left this node: its writer goes (another node may
        write the board next)."""
        async with local.seat_lock(seat):
            local.writers.pop(seat, None)

    async def _store(
        self,
        local: LocalRoom,
        writer: LiveBoard,
        event: BoardEvent,
        seq: int,
        *,
        user: str = "",
        conn_id: str = "",
    ) -> WriteResult:
        """Write the writer's pending event; confirm, roll back or drop the writer by
        the store's answer. Call holding the seat's lock."""
        try:
            result = await self.store.write_board_event(
                local.room_id,
                writer.epoch,
                writer.seat,
                user,
                conn_id,
                event,
                seq,
                publish_own=not conn_id,
            )
        except BaseException:
            # The write's outcome is unknown: only Redis knows the board now.
            local.writers.pop(writer.seat, None)
            raise
        if result.status is WriteStatus.OK:
            writer.confirm()
            if event.progress is not None:
                change = local.apply_progress(event.progress)
                self._progressed(local, change, written=writer.seat)
        elif result.status is WriteStatus.STALE:
            local.writers.pop(writer.seat, None)
        else:
            writer.rollback()
        return result

    # ------------------------------------------------------------ the racer's writes

    async def write(self, viewer: Viewer, op: BoardOp, move: Move | None, move_id: int) -> None:
        """Apply a racer's move, undo or resignation; a board that finished ends the
        race if it was the last one playing."""
        local = self.hub.rooms.get(viewer.room_id)
        if local is None or viewer.seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "join the room first")
        conn = viewer.conn
        seat = viewer.seat
        for _attempt in range(WRITE_ATTEMPTS):
            async with local.seat_lock(seat):
                writer = await self._writer(local, None, seat)
                if op in (BoardOp.MOVE, BoardOp.UNDO) and move_id <= writer.last_move_id:
                    # Applied already: its diff may never have reached the racer (the
                    # answer to the first try was lost), so what it misses of its board
                    # comes with the ack; never a frame it holds.
                    ack = outgoing.Ack(local.room_id, move_id, writer.own_offset).encode()
                    await self.catchup.answer_applied(local, viewer, ack)
                    return
                if writer.status.done:
                    self.hub.spawn(check_end(self.rooms, local.room_id), f"end-{local.room_id}")
                    raise Refusal(ErrorCode.WRONG_STATE, f"your game is over ({writer.status})")
                seats = local.seats()
                seq = writer.seq
                try:
                    if op is BoardOp.MOVE:
                        assert move is not None
                        event = writer.apply_move(move, move_id, seats)
                    elif op is BoardOp.UNDO:
                        check_practice(writer.race, "undo")
                        event = writer.apply_undo(move_id, seats)
                    else:
                        event = writer.apply_ending(op, seats)
                except IllegalMoveError as exc:
                    self.metrics.error("illegal_move")
                    await conn.send(
                        outgoing.Error(
                            ErrorCode.ILLEGAL_MOVE,
                            exc.reason,
                            room=local.room_id,
                            move_id=move_id or None,
                        ).encode()
                    )
                    return
                result = await self._store(
                    local, writer, event, seq, user=conn.user, conn_id=conn.conn_id
                )
                if result.status is WriteStatus.OK:
                    if event.own_frame is not None:
                        # This node holds the racer's connection: deliver directly. The
                        # frame carries the move id, acknowledging the move.
                        position = BoardPosition(Audience.OWN, seat, writer.epoch, event.own_offset)
                        self.hub.deliver_board(local, local.racers(seat), event.own_frame, position)
                    if op is BoardOp.MOVE:
                        self.metrics.moves.inc()
                    if event.won and not writer.race:
                        await self._practice_won(local, writer, viewer)
                    done = writer.status.done
                    break
            if result.status is WriteStatus.PAUSED:
                # The game's clock stands still (no move yet, or its player was away):
                # run it, then play the move on it.
                await self.rooms.transition(local.room_id, move_starts_clock)
                continue
            if result.status is not WriteStatus.STALE:
                if result.status is WriteStatus.DONE:
                    # Over already (its end written by another node): the race may be
                    # over too, if whoever ended the last board could not finish it.
                    self.hub.spawn(check_end(self.rooms, local.room_id), f"end-{local.room_id}")
                raise Refusal(*_refusal(result))
        else:
            raise Refusal(ErrorCode.BUSY, "the board kept changing; try again")
        if done:
            self.hub.spawn(
                board_ended(self.rooms, local.room_id, local.gen), f"end-{local.room_id}"
            )

    async def _practice_won(self, local: LocalRoom, writer: LiveBoard, viewer: Viewer) -> None:
        """A won practice game is over (a race board wins with its move): a status event
        ends it, so that its results and replay are stored. Call holding the seat's lock."""
        seq = writer.seq
        event = writer.apply_ending(BoardOp.WIN, local.seats())
        result = await self._store(
            local, writer, event, seq, user=viewer.conn.user, conn_id=viewer.conn.conn_id
        )
        if result.status is WriteStatus.OK and event.own_frame is not None:
            position = BoardPosition(Audience.OWN, writer.seat, writer.epoch, event.own_offset)
            self.hub.deliver_board(local, local.racers(writer.seat), event.own_frame, position)

    async def hint(self, viewer: Viewer, request: msg.HintRequest) -> None:
        """The solver's advice on a practice board (refused in races and ranked attempts)."""
        local = self.hub.rooms.get(request.room)
        if local is None or viewer.seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "join the room first")
        state = await self.rooms.load(request.room)
        check_practice(state.race_rules, "hints")
        seat = viewer.seat
        async with local.seat_lock(seat):
            position = (await self._writer(local, state, seat)).board.copy()
            known = local.hint_lines.get(seat)
        if known is None and state.certified:
            # A certified deal is winnable from its start: its line, once per board, so
            # that a player who follows the hints from the deal is led to the win.
            known = await self._deal_line(state)
            async with local.seat_lock(seat):
                local.hint_lines.setdefault(seat, known)
        # A winning line found before still holds while the player follows it: its next
        # move, with no search (a search against the clock may miss the win it found).
        advice = known.follow(position) if known is not None else None
        if advice is None and position.is_won():
            advice = hint(position)  # no search: it says the game is won
        if advice is None:
            advice = await hint_in_worker(position, seconds=HINT_SECONDS)
            if advice.status == "winning" and advice.line:
                try:
                    line = KnownLine.of(position, advice.line)
                except SolverError:
                    log.warning("hint line of room %s does not win; not kept", request.room)
                else:
                    async with local.seat_lock(seat):
                        local.hint_lines[seat] = line
        await viewer.conn.send(
            outgoing.Hint(
                request.room, request.rid, advice.move, advice.status, advice.message
            ).encode()
        )

    async def _deal_line(self, state: RoomState) -> KnownLine:
        """The winning line of a certified deal from its start (NO_LINE if not found)."""
        start = board_after(state, ())
        result = await solve_in_worker(start, DEAL_LINE_BUDGET)
        if result.result == SOLVABLE:
            try:
                return KnownLine.of(start, result.moves)
            except SolverError:
                log.warning("the deal line of room %s does not win; not kept", state.id)
        return NO_LINE

    async def finish_check(self, viewer: Viewer, request: msg.FinishRequest) -> None:
        """Whether the rest of a practice board is forced (`forced_finish`): the client
        then offers auto-completion. Refused in races and ranked attempts, where it
        would tell something of the stock's order."""
        local = self.hub.rooms.get(request.room)
        if local is None or viewer.seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "join the room first")
        state = await self.rooms.load(request.room)
        check_practice(state.race_rules, "auto-complete checks")
        async with local.seat_lock(viewer.seat):
            board = (await self._writer(local, state, viewer.seat)).board
            ok = forced_finish(board)
        await viewer.conn.send(outgoing.Finish(request.room, request.rid, ok).encode())

    # ------------------------------------------------------------ server-side writes

    async def end_playing(
        self, state: RoomState, op: BoardOp, *, only_seat: int | None = None
    ) -> None:
        """Server-side end (time limit, abandonment) of boards still playing; then the
        race ends if no board plays on (`ending.board_ended`)."""
        local = await self.hub.enter(state.id)
        try:
            for seat, _ in state.seated():
                if only_seat is not None and seat != only_seat:
                    continue
                for _attempt in range(WRITE_ATTEMPTS):
                    async with local.seat_lock(seat):
                        # Written elsewhere until now: read the board as Redis has it.
                        local.writers.pop(seat, None)
                        writer = await self._writer(local, state, seat)
                        if writer.status.done:
                            break
                        seq = writer.seq
                        event = writer.apply_ending(op, local.seats())
                        result = await self._store(local, writer, event, seq)
                        local.writers.pop(seat, None)
                        if result.status is not WriteStatus.STALE:
                            break
        finally:
            await self.hub.release_if_idle(local)
        await board_ended(self.rooms, state.id, state.gen)

    # ------------------------------------------------------------ spectators may know more

    def on_progress(self, local: LocalRoom, change: ProgressChange) -> None:
        """A board's progress came over the bus (another node's write)."""
        self._progressed(local, change)

    def _progressed(
        self, local: LocalRoom, change: ProgressChange, *, written: int | None = None
    ) -> None:
        """A board's progress changed (`written`: the seat of this node's write that
        changed it, whose own event already showed spectators all they may know)."""
        if not (change.knowledge_grew or change.status_changed):
            return
        if any(seat != written for seat in local.writers):
            self.hub.spawn(self._refresh(local, written), f"refresh-{local.room_id}")

    async def _refresh(self, local: LocalRoom, written: int | None) -> None:
        """Spectators may know more: re-publish this node's other boards' spectator
        views."""
        for seat in [seat for seat in local.writers if seat != written]:
            async with local.seat_lock(seat):
                writer = local.writers.get(seat)
                if writer is None:
                    continue
                seats = local.seats()
                known = seats.get(seat)
                if known is not None and known.status is not writer.status:
                    # Ended elsewhere (a timeout, an abandonment): this copy is stale.
                    local.writers.pop(seat, None)
                    continue
                seq = writer.seq
                event = writer.apply_refresh(seats)
                if event is not None:
                    await self._store(local, writer, event, seq)


def _refusal(result: WriteResult) -> tuple[ErrorCode, str]:
    match result.status:
        case WriteStatus.REPLACED:
            return ErrorCode.WRONG_STATE, "a newer connection speaks for you now"
        case WriteStatus.DONE:
            return ErrorCode.WRONG_STATE, f"your game is over ({result.detail})"
        case WriteStatus.EARLY:
            return ErrorCode.WRONG_STATE, f"the race starts in {result.detail} ms"
        case WriteStatus.LATE:
            return ErrorCode.WRONG_STATE, "time is up"
        case WriteStatus.MISSING:
            return ErrorCode.WRONG_STATE, "the race has not started"
        case _:
            return ErrorCode.BUSY, "the board changed; try again"
