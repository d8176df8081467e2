"""Per-ply analysis of a game: is each position of it winnable, lost, or not decided?

    result = analyse(record, AnalysisBudget(per_position=2.0, total=60.0))
    result.to_json()  # {"plies": [{"ply", "verdict", "line"}, ...], "lost_at": ...}

Ply 0 is the deal, ply n the position after move n. Each ply gets a verdict:

- `winnable`, with a line of move tokens that wins from that position (replayed through
  the engine: the solver's own lines by `search.solve`, the others built from them);
- `lost`: no line wins from there, proven by the exhaustive search with only the
  certificate-grade reductions (`CERTIFICATE`: every reduction except `partial`, whose
  safety rests on evidence rather than proof). Each position is first searched with
  every reduction for half its budget, since that search finds wins soonest; only a
  certificate-grade search with the rest of the budget may answer `lost`;
- `unknown`: not decided within the budget. Nothing is ever guessed.

Work is shared between plies, because along one game the verdicts can only go from
winnable to lost, never back. A position reached from a lost one is lost (a win from
the later position would be a win from the earlier one, by playing the game's moves
first: the engine's positions carry the pass number, so nothing a later position can do
was unavailable earlier). A position from which the next position is winnable is
winnable (play the game's next move, then that line). So the true verdicts are a run of
`winnable` plies followed by a run of `lost` ones, and the analysis searches for the
boundary: the last ply first (a won game is then winnable everywhere, with the game's own
moves), then by bisection of the undecided plies between the last winnable and the first
lost one, the nearest to the middle first (a ply left `unknown` is skipped and the
nearest other undecided ply tried). A winning line found at ply k is also a certificate
for the plies after it while the game's moves follow the line (same position after the
move): ply k+1 is winnable with the line's suffix, and so on.

`lost_at` is the first `lost` ply whose previous ply is `winnable`: the ply after the move
that lost the game. It is None when no ply is lost, when ply 0 is lost (the deal was never
winnable), or when the plies before the first lost one are `unknown`.

CPU is bounded twice: each search by `per_position` seconds and the whole game by
`total` seconds (CPU time of this process). This module must stay pure: no I/O, no
asyncio.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final, Literal

from klondike_live.engine.board import Board
from klondike_live.engine.errors import KlondikeError
from klondike_live.engine.moves import Move
from klondike_live.engine.record import GameRecord
from klondike_live.solver.search import (
    SOLVABLE,
    UNSOLVABLE,
    Budget,
    SolverError,
    SolveResult,
    solve,
)
from klondike_live.solver.state import Reductions

PlyVerdict = Literal["winnable", "lost", "unknown"]

WINNABLE: Final[PlyVerdict] = "winnable"
LOST: Final[PlyVerdict] = "lost"
UNKNOWN: Final[PlyVerdict] = "unknown"

CERTIFICATE: Final = Reductions(partial=False, empty=False)
"""The reductions whose verdicts are proven (docs/solver.md): all but `partial`."""


@dataclass(frozen=True, slots=True)
class AnalysisBudget:
    """CPU seconds per searched position and for the whole game."""

    per_position: float = 2.0
    total: float = 60.0


DEFAULT_BUDGET: Final = AnalysisBudget()


@dataclass(frozen=True, slots=True)
class Ply:
    """The verdict of one position of the game, with its winning line when winnable."""

    ply: int
    verdict: PlyVerdict
    line: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, object]:
        """`{"ply", "verdict", "line"}`; `line` is null unless winnable."""
        return {
            "ply": self.ply,
            "verdict": self.verdict,
            "line": None if self.line is None else list(self.line),
        }


@dataclass(frozen=True, slots=True)
class Analysis:
    """Every ply's verdict, the ply after the losing move, and what it cost."""

    plies: tuple[Ply, ...]
    lost_at: int | None
    searches: int = 0
    nodes: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        """Exactly `{"plies": [...], "lost_at": ply or null}` (the CLI's `--json`)."""
        return {"plies": [p.to_json() for p in self.plies], "lost_at": self.lost_at}

    def decided(self) -> int:
        """How many plies have a verdict other than `unknown`."""
        return sum(1 for p in self.plies if p.verdict != UNKNOWN)


def positions(record: GameRecord) -> tuple[list[Board], list[str]]:
    """Every position of the record's game (ply 0 .. n) and its moves as canonical tokens.

    Raises the engine's `ReplayError`/`RecordResultError` for a record that does not
    replay (`GameRecord.replay` checks it first).
    """
    record.replay()
    board = Board(record.starting_deal(), record.variant)
    boards = [board.copy()]
    tokens: list[str] = []
    for token in record.moves:
        move = board.play(token)
        tokens.append(str(move))
        boards.append(board.copy())
    return boards, tokens


def analyse(record: GameRecord, budget: AnalysisBudget = DEFAULT_BUDGET) -> Analysis:
    """The per-ply analysis of a game record; see the module docstring."""
    boards, tokens = positions(record)
    return analyse_positions(boards, tokens, budget)


def lost_at(verdicts: list[PlyVerdict]) -> int | None:
    """The first `lost` ply whose previous ply is `winnable`, or None."""
    for index, verdict in enumerate(verdicts):
        if verdict == LOST:
            return index if index > 0 and verdicts[index - 1] == WINNABLE else None
    return None


class _Boundary:
    """The search for the last winnable and the first lost ply of one game."""

    def __init__(self, boards: list[Board], tokens: list[str], budget: AnalysisBudget) -> None:
        self.boards = boards
        self.tokens = tokens
        self.budget = budget
        self.last = len(tokens)
        self.lo = -1  # the last ply known winnable
        self.hi = self.last + 1  # the first ply known lost
        self.lines: dict[int, list[str]] = {}  # a winning line from some winnable plies
        self.spent = 0.0
        self.searches = 0
        self.nodes = 0

    def run(self) -> None:
        tried: set[int] = set()
        self.decide(self.last)
        tried.add(self.last)
        while self.lo + 1 < self.hi and self.spent < self.budget.total:
            middle = (self.lo + self.hi) / 2
            open_plies = [k for k in range(self.lo + 1, self.hi) if k not in tried]
            if not open_plies:
                break
            ply = min(open_plies, key=lambda k: (abs(k - middle), k))
            tried.add(ply)
            self.decide(ply)

    def decide(self, ply: int) -> None:
        board = self.boards[ply]
        if board.is_won():
            self.winnable(ply, [])
            return
        seconds = min(self.budget.per_position, self.budget.total - self.spent)
        if seconds <= 0:
            return
        # A win first with every reduction (a win is replayed, so it needs no proof, and
        # this search finds one soonest); a loss only by the certificate-grade search.
        result = solve(board, Budget(seconds=seconds / 2, cpu=True))
        self.account(result)
        if result.result != SOLVABLE:
            seconds = min(seconds - result.seconds, self.budget.total - self.spent)
            if seconds <= 0:
                return
            result = solve(board, Budget(seconds=seconds, cpu=True), CERTIFICATE)
            self.account(result)
        if result.result == SOLVABLE:
            self.winnable(ply, result.moves)
        elif result.result == UNSOLVABLE:
            if ply <= self.lo:
                raise SolverError(f"ply {ply} proven lost, but ply {self.lo} is winnable")
            self.hi = min(self.hi, ply)

    def account(self, result: SolveResult) -> None:
        self.searches += 1
        self.nodes += result.nodes
        self.spent += result.seconds

    def winnable(self, ply: int, line: list[str]) -> None:
        if ply >= self.hi:
            raise SolverError(f"ply {ply} is winnable, but ply {self.hi} was proven lost")
        self.lines[ply] = line
        self.lo = max(self.lo, ply)
        # The line certifies the following plies for as long as the game follows it.
        index = 0
        while ply + index < self.last and index < len(line):
            here = self.boards[ply + index].copy()
            try:
                here.play(line[index])
            except KlondikeError as exc:
                raise SolverError(f"winning line from ply {ply} fails: {exc}") from exc
            if here.key() != self.boards[ply + index + 1].key():
                break
            index += 1
            self.lines[ply + index] = line[index:]
            self.lo = max(self.lo, ply + index)

    def result(self) -> list[Ply]:
        plies: list[Ply] = []
        line: list[str] | None = None
        for ply in range(self.lo, -1, -1):  # winnable: back from the last one
            if ply in self.lines:
                line = self.lines[ply]
            else:
                assert line is not None
                line = [self.tokens[ply], *line]  # move ply + 1, then the later line
            plies.append(Ply(ply, WINNABLE, tuple(line)))
        plies.reverse()
        plies += [Ply(k, UNKNOWN) for k in range(self.lo + 1, min(self.hi, self.last + 1))]
        plies += [Ply(k, LOST) for k in range(self.hi, self.last + 1)]
        return plies


def analyse_positions(
    boards: list[Board], tokens: list[str], budget: AnalysisBudget = DEFAULT_BUDGET
) -> Analysis:
    """The analysis of a game given as its positions (ply 0 .. n) and its n move tokens."""
    if len(boards) != len(tokens) + 1:
        raise ValueError(f"{len(boards)} positions for {len(tokens)} moves")
    started = time.process_time()
    search = _Boundary(boards, tokens, budget)
    search.run()
    plies = search.result()
    return Analysis(
        tuple(plies),
        lost_at([p.verdict for p in plies]),
        searches=search.searches,
        nodes=search.nodes,
        seconds=time.process_time() - started,
    )


def play_prefix(record: GameRecord, ply: int) -> Board:
    """The position after the record's first `ply` moves (ply 0: the deal), checked."""
    if not 0 <= ply <= len(record.moves):
        raise ValueError(f"ply {ply} is outside 0..{len(record.moves)}")
    board = Board(record.starting_deal(), record.variant)
    for token in record.moves[:ply]:
        board.play(Move.parse(token))
    return board
