"""One racer's board as its writer holds it, and the events its changes produce.

A board has exactly one writer at a time: the node holding its racer's connection. The
writer keeps the engine board, the last view it published to each audience and the
stream offsets; `plan_*` applies a change locally and returns a `BoardEvent` with every
frame already encoded for its audience (the racer's own view, and the spectators' view
under the knowledge they may have). The store then writes the event atomically, checked
against the board's sequence number. If the store refuses it (another writer got there
first), this copy is stale: the writer drops it and loads the board again.

Audiences:
- `own`: the racer, who knows every card it has seen face up (`Board.seen`).
- `spectator`: live watchers, who know only what every racer still playing knows (a
  mask the caller passes in, ANDed here with this racer's own knowledge). In a solo
  game that mask is the player's own knowledge.

Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgpack

from klondike_live.engine import Board, IllegalMoveError, Move, diff, view_of
from klondike_live.engine.moves import T2F
from klondike_live.engine.view import racer_view
from klondike_live.protocol import outgoing
from klondike_live.protocol.outgoing import BoardHeader

PLAYING = "playing"
WON = "won"
RESIGNED = "resigned"
TIMEOUT = "timeout"
DONE = (WON, RESIGNED, TIMEOUT)


@dataclass(slots=True)
class BoardEvent:
    """One change of a board, ready to store: tokens, fields and encoded frames."""

    op: str  # "move", "undo", "refresh", "resign", "timeout"
    tokens: tuple[str, ...]
    own_frame: bytes | None
    own_offset: int
    spec_frame: bytes | None
    spec_offset: int
    fields: dict[str, str | int]
    progress: bytes
    won: bool = False


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


def progress_note(seat: int, board: Board, status: str, seen: int | None) -> bytes:
    """Internal bus note: a board's public progress, and the racer's knowledge when it
    grew (`seen`, else None). Never forwarded to clients as is."""
    data: bytes = msgpack.packb(
        [
            seat,
            board.foundation_count,
            board.face_down_count,
            len(board.moves),
            status,
            None if seen is None else str(seen),
        ]
    )
    return data


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
        status: str = PLAYING,
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

    # ------------------------------------------------------------ snapshots

    def own_snapshot(self) -> bytes:
        header = BoardHeader(self.room, self.seat, "own", self.epoch, self.own_offset)
        return outgoing.board(
            header,
            self.own_view,
            moves=len(self.board.moves),
            status=self.status,
            score=self.board.score,
            last_id=self.last_move_id,
        )

    def spec_snapshot(self) -> bytes:
        header = BoardHeader(self.room, self.seat, "spectator", self.epoch, self.spec_offset)
        return outgoing.board(
            header, self.spec_view, moves=len(self.board.moves), status=self.status
        )

    # ------------------------------------------------------------ planning

    def spectator_knowledge(self, others: int) -> int:
        """What spectators may know of this board: `others` AND this racer's knowledge."""
        if not self.race:
            return self.board.seen
        if self.status == PLAYING:
            return others & self.board.seen
        return others

    def plan_move(self, move: Move, move_id: int, others: int) -> BoardEvent:
        """Apply a checked move (plus auto-completion of a trivially won race board)."""
        board = self.board
        reason = board.illegal_reason(move)
        if reason is not None:
            raise IllegalMoveError(str(move), reason)
        board.push(move)
        tokens = [str(move)]
        if self.race and not board.is_won() and board.is_trivially_won():
            for extra in finishing_moves(board):
                board.push(extra)
                tokens.append(str(extra))
        won = board.is_won()
        status = WON if (won and self.race) else self.status
        event = self._event(
            "move", tuple(tokens), others, status, move_token=str(move), move_id=move_id
        )
        event.fields["last_move_id"] = move_id
        event.won = won
        return event

    def plan_undo(self, move_id: int, others: int) -> BoardEvent:
        """Undo the last move (practice games only; the caller checks that)."""
        if not self.board.moves:
            raise IllegalMoveError("undo", "there is no move to undo")
        self.board.pop()
        event = self._event("undo", (), others, self.status, move_token=None, move_id=move_id)
        event.fields["last_move_id"] = move_id
        return event

    def plan_refresh(self, others: int) -> BoardEvent | None:
        """Re-publish the spectators' view when their knowledge grew; None if unchanged."""
        known = self.spectator_knowledge(others)
        if known == self.spec_mask:
            return None
        new_view = view_of(self.board, known)
        if new_view == self.spec_view:
            self.spec_mask = known
            return None
        return self._event("refresh", (), others, self.status, move_token=None, own=False)

    def plan_status(self, op: str, status: str, others: int) -> BoardEvent:
        """The racer resigns or runs out of time: a status change with no move."""
        return self._event(op, (), others, status, move_token=None)

    def _event(
        self,
        op: str,
        tokens: tuple[str, ...],
        others: int,
        status: str,
        *,
        move_token: str | None,
        move_id: int | None = None,
        own: bool = True,
    ) -> BoardEvent:
        board = self.board
        self.status = status
        moves = len(board.moves)
        own_frame = None
        if own:
            new_own = racer_view(board)
            self.own_offset += 1
            header = BoardHeader(self.room, self.seat, "own", self.epoch, self.own_offset)
            own_frame = outgoing.diff(
                header,
                diff(self.own_view, new_own),
                moves=moves,
                move=move_token,
                status=status,
                score=board.score,
                move_id=move_id,
            )
            self.own_view = new_own
        known = self.spectator_knowledge(others)
        if known == board.seen:  # spectators know what the racer knows (solo, or caught up)
            new_spec = self.own_view if own else racer_view(board)
        else:
            new_spec = view_of(board, known)
        self.spec_offset += 1
        header = BoardHeader(self.room, self.seat, "spectator", self.epoch, self.spec_offset)
        spec_frame = outgoing.diff(
            header, diff(self.spec_view, new_spec), moves=moves, move=move_token, status=status
        )
        self.spec_view = new_spec
        self.spec_mask = known
        self.seq += 1
        published_seen = self.published_seen
        self.published_seen = board.seen
        fields: dict[str, str | int] = {
            "seq": self.seq,
            "own_offset": self.own_offset,
            "spec_offset": self.spec_offset,
            "spec_mask": str(known),
            "seen": str(board.seen),
            "status": status,
            "found": board.foundation_count,
            "down": board.face_down_count,
            "moves": moves,
        }
        return BoardEvent(
            op=op,
            tokens=tokens,
            own_frame=own_frame,
            own_offset=self.own_offset,
            spec_frame=spec_frame,
            spec_offset=self.spec_offset,
            fields=fields,
            progress=progress_note(
                self.seat, board, status, board.seen if board.seen != published_seen else None
            ),
        )

    def commit(self, event: BoardEvent) -> None:
        """The store accepted the event."""
        move_id = event.fields.get("last_move_id")
        if isinstance(move_id, int):
            self.last_move_id = move_id
