"""One racer's board as its writer holds it, and the events its changes produce.

A board has exactly one writer at a time: the node holding its racer's connection. The
writer keeps the engine board, the last view it published to each audience and the
stream offsets. A change is applied in two steps:

    event = live.apply_move(move, move_id, seats)   # changes the board, returns the event
    ... the store writes the event, checked against the board's sequence number ...
    live.confirm()      # the store took it
    live.rollback()     # the store refused it: the board is exactly as before

Until one of the two is called the board refuses every other change, so a refused write
can never leave the copy ahead of Redis. A copy whose write had an unknown outcome (the
connection to Redis broke) or was refused as stale is not rolled back but dropped: the
caller loads the board again from Redis.

Every frame of an event is encoded here, once, for its audience: the racer's own view,
and the spectators' view under the mask `race.visibility` gives for the seats'
knowledge (`seats`, this board's own entry refreshed here). Snapshots are built by
`snapshot`, the same function catch-up uses for boards read back from Redis.

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from klondike_live.engine import Board, IllegalMoveError, Move, View, ViewDiff, diff, view_of
from klondike_live.engine.moves import T2F
from klondike_live.engine.view import advance, changed_piles, racer_view
from klondike_live.protocol import outgoing
from klondike_live.protocol.kinds import Audience, BoardPosition
from klondike_live.race.status import ENDING_STATUS, BoardOp, BoardStatus
from klondike_live.race.visibility import SeatKnowledge, spectator_knowledge


@dataclass(slots=True)
class BoardEvent:
    """One change of a board, ready to store: tokens, fields and encoded frames."""

    op: BoardOp
    tokens: tuple[str, ...]
    own_frame: bytes | None
    own_offset: int
    spec_frame: bytes
    spec_offset: int
    fields: dict[str, str | int]
    # None for a refresh: it changes only what spectators see, nothing of the board's
    # progress, so nobody is told of it.
    progress: Progress | None
    won: bool = False


@dataclass(frozen=True, slots=True)
class Progress:
    """A board's public progress, and its racer's knowledge (`seen`) when it grew."""

    seat: int
    found: int
    down: int
    moves: int
    status: BoardStatus
    seen: int | None

    def wire(self) -> list[int | str]:
        """The progress row of a `progress` frame (no knowledge: that stays inside)."""
        return [self.seat, self.found, self.down, self.moves, str(self.status)]


@dataclass(frozen=True, slots=True)
class _Saved:
    """What `rollback` restores."""

    seq: int
    own_offset: int
    spec_offset: int
    spec_mask: int
    status: BoardStatus
    published_seen: int
    own_view: View
    spec_view: View
    last_move_id: int
    moves: int
    undone: Move | None


def finishing_moves(board: Board) -> list[Move]:
    """Foundation moves that win a trivially won position (each lowest card is on top)."""
    out: list[Move] = []
    probe = board.copy()
    while not probe.is_won():
        for pile in range(7):
            move = Move(T2F, pile)
            if probe.is_legal(move):
                probe.push(move)
                out.append(move)
                break
        else:  # pragma: no cover - impossible for a trivially won position
            raise IllegalMoveError("auto-complete", "the position is not trivially won")
    return out


def snapshot(
    room: str,
    at: BoardPosition,
    board: Board,
    known: int,
    status: BoardStatus,
    *,
    last_move_id: int | None = None,
) -> bytes:
    """A `board` frame: the whole board under the mask `known`. The racer's own
    snapshot (`last_move_id` given) also carries its score and last applied move id."""
    if last_move_id is None:
        return outgoing.Board(
            room, at, view_of(board, known), moves=len(board.moves), status=status
        ).encode()
    return outgoing.Board(
        room,
        at,
        view_of(board, known),
        moves=len(board.moves),
        status=status,
        score=board.score,
        last_id=last_move_id,
    ).encode()


class LiveBoard:
    """The writer's copy of one board and of what it last published."""

    def __init__(
        self,
        room: str,
        seat: int,
        epoch: int,
        board: Board,
        *,
        race: bool,
        seq: int = 0,
        own_offset: int = 0,
        spec_offset: int = 0,
        spec_mask: int | None = None,
        last_move_id: int = 0,
        status: BoardStatus = BoardStatus.PLAYING,
    ) -> None:
        self.room = room
        self.seat = seat
        self.epoch = epoch
        self.board = board
        self.race = race
        self.seq = seq
        self.own_offset = own_offset
        self.spec_offset = spec_offset
        self.spec_mask = board.seen if spec_mask is None else spec_mask
        self.last_move_id = last_move_id
        self.status = status
        self.published_seen = board.seen
        self.own_view = racer_view(board)
        self.spec_view = view_of(board, self.spec_mask)
        self._pending: _Saved | None = None

    @property
    def pending(self) -> bool:
        """An applied event waits for `confirm` or `rollback`."""
        return self._pending is not None

    def knowledge(self) -> SeatKnowledge:
        """This racer's knowledge and status, as `race.visibility` takes them."""
        return SeatKnowledge(self.board.seen, self.status)

    def spectator_mask(self, seats: Mapping[int, SeatKnowledge]) -> int:
        """What spectators may know of this board, given the room's seats."""
        return spectator_knowledge(seats, self.seat, race_rules=self.race, own=self.knowledge())

    # ------------------------------------------------------------ changes

    def apply_move(
        self, move: Move, move_id: int, seats: Mapping[int, SeatKnowledge]
    ) -> BoardEvent:
        """Apply a checked move (plus auto-completion of a trivially won race board)."""
        board = self.board
        reason = board.illegal_reason(move)
        if reason is not None:
            raise IllegalMoveError(str(move), reason)
        self._save(None)
        board.push(move)
        made = [move]
        if self.race and not board.is_won() and board.is_trivially_won():
            made += finishing_moves(board)
            for extra in made[1:]:
                board.push(extra)
        won = board.is_won()
        status = BoardStatus.WON if (won and self.race) else self.status
        tokens = tuple(map(str, made))
        event = self._event(
            BoardOp.MOVE,
            tokens,
            seats,
            status,
            changed_piles(made),
            move_token=tokens[0],
            move_id=move_id,
        )
        event.won = won
        return event

    def apply_undo(self, move_id: int, seats: Mapping[int, SeatKnowledge]) -> BoardEvent:
        """Undo the last move (practice games only: `race.rules` says when)."""
        if not self.board.moves:
            raise IllegalMoveError("undo", "there is no move to undo")
        self._save(self.board.moves[-1])
        undone = self.board.pop()
        return self._event(
            BoardOp.UNDO,
            (),
            seats,
            self.status,
            changed_piles([undone]),
            move_token=None,
            move_id=move_id,
        )

    def apply_ending(self, op: BoardOp, seats: Mapping[int, SeatKnowledge]) -> BoardEvent:
        """The racer resigns, runs out of time, or wins a practice game: a status change
        with no move."""
        self._save(None)
        return self._event(op, (), seats, ENDING_STATUS[op], (), move_token=None)

    def apply_refresh(self, seats: Mapping[int, SeatKnowledge]) -> BoardEvent | None:
        """Re-publish the spectators' view when their knowledge grew; None (and nothing
        to confirm) if what they see is unchanged."""
        known = self.spectator_mask(seats)
        if known == self.spec_mask:
            return None
        if view_of(self.board, known) == self.spec_view:
            self.spec_mask = known  # nothing they see changes: no event needed
            return None
        self._save(None)
        return self._event(BoardOp.REFRESH, (), seats, self.status, (), move_token=None, own=False)

    def confirm(self) -> None:
        """The store accepted the pending event."""
        if self._pending is None:
            raise RuntimeError("no event is pending")
        self._pending = None

    def rollback(self) -> None:
        """The store refused the pending event: back to the state before it."""
        saved = self._pending
        if saved is None:
            raise RuntimeError("no event is pending")
        while len(self.board.moves) > saved.moves:
            self.board.pop()
        if saved.undone is not None:
            self.board.push(saved.undone)
        self.seq = saved.seq
        self.own_offset = saved.own_offset
        self.spec_offset = saved.spec_offset
        self.spec_mask = saved.spec_mask
        self.status = saved.status
        self.published_seen = saved.published_seen
        self.own_view = saved.own_view
        self.spec_view = saved.spec_view
        self.last_move_id = saved.last_move_id
        self._pending = None

    # ------------------------------------------------------------ internals

    def _save(self, undone: Move | None) -> None:
        if self._pending is not None:
            raise RuntimeError("an event is pending: confirm or roll it back first")
        self._pending = _Saved(
            seq=self.seq,
            own_offset=self.own_offset,
            spec_offset=self.spec_offset,
            spec_mask=self.spec_mask,
            status=self.status,
            published_seen=self.published_seen,
            own_view=self.own_view,
            spec_view=self.spec_view,
            last_move_id=self.last_move_id,
            moves=len(self.board.moves) - (1 if undone is not None else 0),
            undone=undone,
        )

    def _event(
        self,
        op: BoardOp,
        tokens: tuple[str, ...],
        seats: Mapping[int, SeatKnowledge],
        status: BoardStatus,
        piles: tuple[int, ...],
        *,
        move_token: str | None,
        move_id: int | None = None,
        own: bool = True,
    ) -> BoardEvent:
        """The event of a change made to the board, which changed only `piles` (tableau
        and waste, as `changed_piles` names them): each view is advanced over those piles
        alone, unless its viewers' knowledge changed."""
        board = self.board
        self.status = status
        moves = len(board.moves)
        own_frame = None
        old_own = self.own_view
        own_diff: ViewDiff | None = None
        if own:
            new_own, own_diff = advance(old_own, board, None, piles)
            self.own_offset += 1
            own_frame = outgoing.Diff(
                self.room,
                BoardPosition(Audience.OWN, self.seat, self.epoch, self.own_offset),
                own_diff,
                moves=moves,
                move=move_token,
                status=status,
                score=board.score,
                move_id=move_id,
            ).encode()
            self.own_view = new_own
        known = self.spectator_mask(seats)
        if known == board.seen:  # spectators know what the racer knows (solo, or caught up)
            new_spec = self.own_view if own else racer_view(board)
            if own_diff is not None and self.spec_view is old_own:
                spec_diff = own_diff  # their view was the racer's too: the same change
            else:
                spec_diff = diff(self.spec_view, new_spec)
        elif known == self.spec_mask:
            new_spec, spec_diff = advance(self.spec_view, board, known, piles)
        else:  # a card became known to them, anywhere on the board
            new_spec = view_of(board, known)
            spec_diff = diff(self.spec_view, new_spec)
        self.spec_offset += 1
        spec_frame = outgoing.Diff(
            self.room,
            BoardPosition(Audience.SPECTATOR, self.seat, self.epoch, self.spec_offset),
            spec_diff,
            moves=moves,
            move=move_token,
            status=status,
        ).encode()
        self.spec_view = new_spec
        self.seq += 1
        grew = board.seen != self.published_seen
        self.published_seen = board.seen
        # The board's hash as the store keeps it: what this change changed.
        fields: dict[str, str | int] = {
            "seq": self.seq,
            "own_offset": self.own_offset,
            "spec_offset": self.spec_offset,
            "status": str(status),
            "found": board.foundation_count,
            "down": board.face_down_count,
            "moves": moves,
        }
        if known != self.spec_mask:
            fields["spec_mask"] = str(known)
        if grew:
            fields["seen"] = str(board.seen)
        self.spec_mask = known
        if move_id is not None:
            fields["last_move_id"] = move_id
            self.last_move_id = move_id
        return BoardEvent(
            op=op,
            tokens=tokens,
            own_frame=own_frame,
            own_offset=self.own_offset,
            spec_frame=spec_frame,
            spec_offset=self.spec_offset,
            fields=fields,
            progress=Progress(
                self.seat,
                board.foundation_count,
                board.face_down_count,
                moves,
                status,
                board.seen if grew else None,
            )
            if own
            else None,
        )
