"""Hints for solo practice: the next move of a winning line, or the most promising one.

`hint(board, seconds=1.0)` runs the exact solver on the position with a short budget:

- a winning line found: its first token (`status="winning"`, the whole line attached);
- the search proves there is none: `status="lost"`, "no winning line exists from here";
- the budget runs out: the best legal move by `move_score` (`status="heuristic"`).

`move_score` ranks moves the way a careful player does: a card that can safely go up
first; then a tableau move that turns a face-down card (the pile with most face-down
cards first); then other foundation moves; then playing the waste to the tableau; then
freeing a column while a king is waiting for one; then turning the stock; then anything
else (moving runs between piles, recycling, foundation-to-tableau). Ties keep the
engine's order of `legal_moves()`.

`forced_finish(board)` says whether the rest is forced: every tableau card is face up
and moving cards home wins, turning the stock when no card can go (the browser's
auto-completion plays exactly these moves).

`KnownLine.of(board, line)` keeps a winning line found for a board: `follow(board)`
answers the next hint from it without searching again while the board is still on the
line (its position is one the line passes through, and the rest of the line replays
legally from it and wins), and None once the player has left it.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from klondike_live.engine.board import Board
from klondike_live.engine.cards import RANK, RED
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T, Move
from klondike_live.engine.position import format_position
from klondike_live.solver.search import SOLVABLE, UNSOLVABLE, Budget, SolverError, check_line, solve

HintStatus = Literal["winning", "lost", "heuristic", "won"]

NO_WIN = "no winning line exists from here"


@dataclass(frozen=True, slots=True)
class Hint:
    """A suggested next token (None when there is nothing to suggest) and why."""

    status: HintStatus
    move: str | None
    message: str
    line: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "status": self.status,
            "move": self.move,
            "message": self.message,
            "line": self.line,
        }


def hint(board: Board, seconds: float = 1.0, nodes: int | None = None) -> Hint:
    """The hint for `board`'s position; see the module docstring."""
    if board.is_won():
        return Hint("won", None, "the game is won")
    result = solve(board, Budget(seconds, nodes))
    if result.result == SOLVABLE:
        first = result.moves[0]
        return Hint("winning", first, f"{first} starts a winning line", result.moves)
    if result.result == UNSOLVABLE:
        return Hint("lost", None, NO_WIN)
    best = best_move(board)
    if best is None:
        return Hint("lost", None, NO_WIN)
    return Hint("heuristic", str(best), f"{best} looks most promising (no win found in time)")


@dataclass(frozen=True, slots=True)
class KnownLine:
    """A winning line and the positions it passes through (the one before each move)."""

    line: tuple[str, ...]
    positions: tuple[str, ...]

    @classmethod
    def of(cls, board: Board, line: list[str]) -> KnownLine:
        """The line from `board`'s position; SolverError when it does not win from there."""
        check_line(board, line)
        replay = board.copy()
        positions = []
        for token in line:
            positions.append(format_position(replay))
            replay.play(token)
        return cls(tuple(line), tuple(positions))

    def follow(self, board: Board) -> Hint | None:
        """The line's next move from `board`'s position, or None when it is not on the line."""
        try:
            index = self.positions.index(format_position(board))
        except ValueError:
            return None
        rest = list(self.line[index:])
        try:
            check_line(board, rest)
        except SolverError:
            return None
        return Hint("winning", rest[0], f"{rest[0]} starts a winning line", rest)


def finish_move(board: Board) -> Move | None:
    """The auto-completion's next move: the lowest card that fits its foundation (column
    tops, left to right, before the waste's top at the same rank), else a turn of the
    stock, else of the waste; None when no move is left."""
    best: Move | None = None
    best_rank = 99
    for pile in range(7):
        move = Move(T2F, pile)
        if board.is_legal(move) and RANK[board.tableau[pile][-1]] < best_rank:
            best, best_rank = move, RANK[board.tableau[pile][-1]]
    waste = Move(W2F)
    if board.is_legal(waste) and RANK[board.waste[-1]] < best_rank:
        best = waste
    if best is not None:
        return best
    for move in (Move(DRAW), Move(RECYCLE)):
        if board.is_legal(move):
            return move
    return None


def forced_finish(board: Board) -> bool:
    """Every tableau card is face up and `finish_move` played to the end wins."""
    if any(board.face_down):
        return False
    probe = board.copy()
    # Each pass through the stock moves at least one card home or the game is stuck:
    # 52 cards, a pass of at most 24 turns and one turn of the waste.
    for _ in range(52 * 26):
        if probe.is_won():
            return True
        move = finish_move(probe)
        if move is None:
            return False
        probe.push(move)
    return False


def best_move(board: Board) -> Move | None:
    """The legal move with the highest `move_score`, or None when there is none."""
    best: Move | None = None
    best_score = -1
    for move in board.legal_moves():
        score = move_score(board, move)
        if score > best_score:
            best, best_score = move, score
    return best


def move_score(board: Board, move: Move) -> int:
    """How promising `move` looks (higher is better); the ranking of the module docstring."""
    kind = move.kind
    if kind in (T2F, W2F):
        card = board.tableau[move.src][-1] if kind == T2F else board.waste[-1]
        if _safe(board, card):
            return 100
        if kind == T2F and _turns_card(board, move.src, len(board.tableau[move.src]) - 1):
            return 80 + board.face_down[move.src]
        return 70
    if kind == T2T:
        start = _run_start(board, move.src, move.dst)
        if _turns_card(board, move.src, start):
            return 80 + board.face_down[move.src]
        if start == 0 and _king_waiting(board):
            return 50
        return 10
    if kind == W2T:
        return 60
    if kind == DRAW:
        return 30
    if kind == RECYCLE:
        return 5
    assert kind == F2T
    return 0


def _safe(board: Board, card: int) -> bool:
    rank = RANK[card]
    if rank <= 2:
        return True
    found = board.foundations
    others = (1, 2) if not RED[card] else (0, 3)
    return not board.variant.f2t and all(found[s] >= rank - 1 for s in others)


def _turns_card(board: Board, src: int, start: int) -> bool:
    down = board.face_down[src]
    return down > 0 and start == down


def _run_start(board: Board, src: int, dst: int) -> int:
    pile = board.tableau[src]
    target = board.tableau[dst]
    if not target:
        return board.face_down[src]
    wanted = RANK[target[-1]] - 1
    for index in range(board.face_down[src], len(pile)):
        if RANK[pile[index]] == wanted:
            return index
    return len(pile)


def _king_waiting(board: Board) -> bool:
    """A face-up king that is not at the bottom of its pile, or the waste top is a king."""
    if board.waste and RANK[board.waste[-1]] == 13:
        return True
    for pile, down in zip(board.tableau, board.face_down, strict=True):
        if down and RANK[pile[down]] == 13:
            return True
    return False
