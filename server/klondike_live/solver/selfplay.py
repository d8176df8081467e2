"""Seeded games played by a policy, for tests and benchmarks of the analysis.

`play_game(seed, variant, rng)` plays the deal of `seed` with the hint heuristic
(`hints.move_score`), choosing a random legal move instead with probability `mistakes`,
until the game is won, no move is left, or `max_moves` moves are made; the result is a
`GameRecord` (result `won` or `unfinished`). Deterministic for a given `rng` state.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

import random

from klondike_live.engine.board import Board
from klondike_live.engine.record import GameRecord
from klondike_live.engine.variant import Variant
from klondike_live.solver.hints import move_score


def play_game(
    seed: str,
    variant: Variant,
    rng: random.Random,
    *,
    mistakes: float = 0.2,
    max_moves: int = 250,
) -> GameRecord:
    """A game of `seed` by the heuristic with random mistakes; see the module docstring."""
    board = Board.from_seed(seed, variant)
    tokens: list[str] = []
    seen = {board.key()}
    while len(tokens) < max_moves and not board.is_won():
        moves = board.legal_moves()
        if not moves:
            break
        if rng.random() < mistakes:
            move = rng.choice(moves)
        else:
            # The best-ranked move that does not go back to a position already seen.
            ranked = sorted(moves, key=lambda m: -move_score(board, m))
            move = ranked[0]
            for candidate in ranked:
                trial = board.copy()
                trial.push(candidate)
                if trial.key() not in seen:
                    move = candidate
                    break
        board.push(move)
        seen.add(board.key())
        tokens.append(str(move))
    result = "won" if board.is_won() else "unfinished"
    return GameRecord(variant=variant, seed=seed, moves=tuple(tokens), result=result)
