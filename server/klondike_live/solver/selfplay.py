"""Seeded games played by a policy, for tests and benchmarks of the analysis.

`play_game(seed, variant, rng)` plays the deal of `seed` until the game is won, no move
is left, every move leads back to a position already seen (the player gives up), or
`max_moves` moves are made; the result is a `GameRecord` (result `won` or `unfinished`).
Each move is a random legal move with probability `mistakes`; otherwise, with
`solver_seconds`, the next move of a winning line when the solver found one (it searches
again after each random move, `solver_seconds` of CPU each time), else the move ranked
first by the hint heuristic (`hints.move_score`) that leads to a position not seen yet.
Deterministic for a given `rng` state and a node-bounded solver, nearly so with time.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

import random

from klondike_live.engine.board import Board, PositionKey
from klondike_live.engine.moves import Move
from klondike_live.engine.record import GameRecord
from klondike_live.engine.variant import Variant
from klondike_live.solver.hints import move_score
from klondike_live.solver.search import SOLVABLE, Budget, solve


def play_game(
    seed: str,
    variant: Variant,
    rng: random.Random,
    *,
    mistakes: float = 0.2,
    max_moves: int = 250,
    solver_seconds: float | None = None,
) -> GameRecord:
    """A game of `seed` by the policy of the module docstring."""
    board = Board.from_seed(seed, variant)
    tokens: list[str] = []
    seen = {board.key()}
    line: list[str] = []
    search = solver_seconds is not None
    while len(tokens) < max_moves and not board.is_won():
        moves = board.legal_moves()
        if not moves:
            break
        move: Move | None
        if rng.random() < mistakes:
            move = rng.choice(moves)
            line, search = [], solver_seconds is not None
        else:
            if search and not line:
                assert solver_seconds is not None
                found = solve(board, Budget(solver_seconds, cpu=True))
                line = found.moves if found.result == SOLVABLE else []
                search = False
            move = Move.parse(line.pop(0)) if line else _heuristic(board, moves, seen)
            if move is None:
                break
        board.play(move)
        seen.add(board.key())
        tokens.append(str(move))
    result = "won" if board.is_won() else "unfinished"
    return GameRecord(variant=variant, seed=seed, moves=tuple(tokens), result=result)


def _heuristic(board: Board, moves: list[Move], seen: set[PositionKey]) -> Move | None:
    """The best-ranked move to a position not seen yet, or None when there is none."""
    for candidate in sorted(moves, key=lambda m: -move_score(board, m)):
        trial = board.copy()
        trial.push(candidate)
        if trial.key() not in seen:
            return candidate
    return None
