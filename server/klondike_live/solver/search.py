"""Exact depth-first search for a win, with a budget: `solve(board) -> SolveResult`.

The search is complete: it answers `solvable` with a move list, `unsolvable` only after
exhausting every line (up to the verdict-preserving reductions of `Reductions`), and
`unknown` when its budget (seconds and/or nodes) runs out first. Every solution is
replayed through the engine's checked `Board.play` before it is returned; a failed
replay raises `SolverError` rather than being reported.

Pruning is by a transposition table keyed on the canonical position without the pass
number or how far the stock has been turned; a position is cut when the table holds the
same cards at a pass no later and a waste position from which turning the stock gets
to this one (`_TurnTable`): whatever this position can do, that one could too. Lost there
means lost here; on the current line, it is a cycle.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final, Literal

from klondike_live.engine.board import Board
from klondike_live.engine.errors import KlondikeError
from klondike_live.engine.variant import UNLIMITED
from klondike_live.errors import LiveError
from klondike_live.solver.errors import SolverError as SolverError
from klondike_live.solver.state import (
    FOUNDATION,
    K_T2F,
    K_TALON,
    Position,
    Reductions,
    SMove,
    Snapshot,
)

Verdict = Literal["solvable", "unsolvable", "unknown"]

SOLVABLE: Final = "solvable"
UNSOLVABLE: Final = "unsolvable"
UNKNOWN: Final = "unknown"

_CHECK_EVERY: Final = 512


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits of one search; None means no limit of that kind.

    `cpu=True` counts the process's CPU time instead of wall-clock time, so that a
    benchmark on a shared machine measures the solver rather than its neighbours.
    """

    seconds: float | None = None
    nodes: int | None = None
    cpu: bool = False


@dataclass(slots=True)
class SolveResult:
    """A verdict, the winning tokens when solvable, and what it cost."""

    result: Verdict
    moves: list[str] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    optimal: bool | None = None

    def to_json(self) -> dict[str, object]:
        """The CLI's `--json` object."""
        out: dict[str, object] = {
            "result": self.result,
            "moves": self.moves,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 3),
        }
        if self.optimal is not None:
            out["optimal"] = self.optimal
        return out


class OutOfBudget(LiveError):
    """Raised inside a search when its budget is spent."""


class Meter:
    """Counts nodes and raises `OutOfBudget` when the budget is spent."""

    __slots__ = ("clock", "deadline", "max_nodes", "next_check", "nodes", "start")

    def __init__(self, budget: Budget) -> None:
        self.clock = time.process_time if budget.cpu else time.perf_counter
        self.start = self.clock()
        self.deadline = None if budget.seconds is None else self.start + budget.seconds
        self.max_nodes = budget.nodes
        self.nodes = 0
        self.next_check = _CHECK_EVERY

    def check(self) -> None:
        """Called when `nodes` reaches `next_check`."""
        self.next_check = self.nodes + _CHECK_EVERY
        if self.max_nodes is not None and self.nodes >= self.max_nodes:
            raise OutOfBudget
        if self.deadline is not None and self.clock() >= self.deadline:
            raise OutOfBudget

    def elapsed(self) -> float:
        """Seconds since the search started."""
        return self.clock() - self.start


def settle(position: Position, red: Reductions, path: list[SMove]) -> None:
    """Make the safe foundation moves (when `red.autoplay`), recording them in `path`."""
    if not red.autoplay:
        return
    safe = position.safe_move()
    while safe is not None:
        path.append(safe)
        position.apply(safe)
        safe = position.safe_move()


_Entry = tuple[bytes, tuple[int, int]]
"""A position's record in the table: its key and what `forget` needs."""

_Frame = tuple[list[SMove], Snapshot, int, _Entry]
"""A search frame: the moves from a position, its snapshot, the path's length there and
its table entry (the index of the next move to try is kept beside it, in `tried`)."""


class _DFS:
    """One depth-first search; `run()` returns the winning move path or None."""

    def __init__(self, position: Position, red: Reductions, meter: Meter) -> None:
        self.position = position
        self.red = red
        self.meter = meter
        self.path: list[SMove] = []

    def run(self) -> list[SMove] | None:
        position = self.position
        settle(position, self.red, self.path)
        if self._finished():
            return self.path
        if self.red.dead and position.is_dead():
            return None
        return self.path if self._search() else None

    def _finished(self) -> bool:
        position = self.position
        if position.is_won():
            return True
        if position.is_trivially_won():
            self.path += position.finishing_moves()
            return True
        return False

    def _search(self) -> bool:
        # Iterative, so that long lines cannot hit the interpreter's recursion limit.
        meter, position, red, path = self.meter, self.position, self.red, self.path
        symmetry, keep, autoplay, dead = red.symmetry, red.tt, red.autoplay, red.dead
        # With collapsed stock moves the key leaves out how far the stock has been turned,
        # and `visit` decides by dominance (see `_TurnTable`); otherwise the key is exact.
        table = _TurnTable(position) if red.stock else _PassTable(position)
        key = position.key(symmetry, False)
        entry = table.visit(key)
        assert entry is not None
        stack: list[_Frame] = [(position.moves(red), position.snapshot(), len(path), entry)]
        tried = [0]
        while stack:
            moves, snapshot, length, here = stack[-1]
            i = tried[-1]
            if i:
                position.restore(snapshot)
                del path[length:]
            if i == len(moves):
                stack.pop()
                tried.pop()
                if not keep:
                    # Without a table only the current line is remembered (to cut cycles).
                    table.forget(here)
                continue
            tried[-1] = i + 1
            move = moves[i]
            path.append(move)
            position.apply(move)
            raised = move[0] == K_T2F or (move[0] == K_TALON and move[3] == FOUNDATION)
            if autoplay:  # `settle`, inlined: this loop is the solver's hot path
                # Every position on the stack is settled, so unless `move` raised a
                # foundation only what it touched can offer a safe move.
                safe = position.safe_move() if raised else position.safe_after(move)
                while safe is not None:
                    raised = True
                    path.append(safe)
                    position.apply(safe)
                    safe = position.safe_move()
            found = position.found
            if found[0] + found[1] + found[2] + found[3] == 52 or (
                not position.talon and not any(position.down) and self._finished()
            ):
                return True
            meter.nodes += 1
            if meter.nodes >= meter.next_check:
                meter.check()
            entry = table.visit(position.key(symmetry, False))
            if entry is not None:
                if (
                    dead
                    and (raised or move[0] == K_TALON)
                    and position.dead_after(snapshot, move, raised)
                ):
                    continue  # lost: a card can never move off one it needs
                stack.append((position.moves(red), position.snapshot(), len(path), entry))
                tried.append(0)
        return False


class _PassTable:
    """Visited positions, keyed exactly (stock position included) with pass dominance."""

    def __init__(self, position: Position) -> None:
        self.position = position
        self.seen: dict[bytes, int] = {}

    def visit(self, key: bytes) -> _Entry | None:
        """Record the position; None when it (or a dominating one) was seen before."""
        position = self.position
        key += bytes((position.pos,))
        value = position.pass_key()
        seen = self.seen.get(key)
        if seen is not None and seen <= value:
            return None
        self.seen[key] = value
        return key, (value, 0)

    def forget(self, entry: _Entry) -> None:
        """Drop a position recorded by `visit` (used without a table)."""
        self.seen.pop(entry[0], None)


class _TurnTable:
    """Visited positions keyed without the stock position, with dominance on turning.

    A position is dominated by the same cards at an earlier or equal pass from which
    turning the stock (and recycling, when that pass allows) gets to the same waste top:
    anything the later one can do, the earlier one can do after those turns. Per key the
    table keeps the (pass, cards in waste) pairs seen. In draw-1 every later waste
    position is reachable, so one pair (the least) suffices; in draw-3 only every third
    card, the last one, and after a recycle every third card from the start.
    """

    def __init__(self, position: Position) -> None:
        self.position = position
        self.seen: dict[bytes, list[tuple[int, int]]] = {}
        self.draw = position.draw
        self.unlimited = position.max_passes == UNLIMITED

    def visit(self, key: bytes) -> _Entry | None:
        """Record the position; None when it (or a dominating one) was seen before."""
        position = self.position
        k = position.pass_key()
        p = position.pos
        pairs = self.seen.get(key)
        if pairs is None:
            pair = (k, p)
            self.seen[key] = [pair]
            return key, pair
        draw, n, unlimited = self.draw, len(position.talon), self.unlimited
        for k0, p0 in pairs:
            if k0 > k:
                continue
            if p in (p0, n) or (p > p0 and (p - p0) % draw == 0):
                return None
            if (unlimited or k0 < k) and p % draw == 0:
                return None  # recycle, then turn
        pair = (k, p)
        pairs.append(pair)
        return key, pair

    def forget(self, entry: _Entry) -> None:
        """Drop a position recorded by `visit` (used without a table)."""
        key, pair = entry
        pairs = self.seen[key]
        pairs.remove(pair)
        if not pairs:
            del self.seen[key]


def to_tokens(board: Board, path: list[SMove]) -> list[str]:
    """Expand a search path into notation tokens, from `board`'s position."""
    position = Position(board)
    tokens: list[str] = []
    for move in path:
        tokens += position.tokens(move)
        position.apply(move)
    return tokens


def check_line(board: Board, tokens: list[str], *, must_win: bool = True) -> None:
    """Replay `tokens` from `board` through the checked `Board.play`; raise on failure."""
    replay = board.copy()
    for index, token in enumerate(tokens, start=1):
        try:
            replay.play(token)
        except KlondikeError as exc:
            raise SolverError(f"solver line fails at move {index} {token!r}: {exc}") from exc
    if must_win and not replay.is_won():
        raise SolverError(f"solver line of {len(tokens)} moves does not win")


def solve(
    board: Board,
    budget: Budget | None = None,
    reductions: Reductions | None = None,
) -> SolveResult:
    """Decide whether `board`'s position can be won; see the module docstring."""
    meter = Meter(budget or Budget())
    red = reductions or Reductions()
    search = _DFS(Position(board), red, meter)
    try:
        path = search.run()
    except OutOfBudget:
        return SolveResult(UNKNOWN, nodes=meter.nodes, seconds=meter.elapsed())
    if path is None:
        return SolveResult(UNSOLVABLE, nodes=meter.nodes, seconds=meter.elapsed())
    tokens = to_tokens(board, path)
    check_line(board, tokens)
    return SolveResult(SOLVABLE, tokens, nodes=meter.nodes, seconds=meter.elapsed())
