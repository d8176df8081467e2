"""Each reduction keeps verdicts: the solver with it switched off agrees on random positions.

The positions are near the end of a game (a few to a dozen cards off the foundations),
shuffled at random into piles, stock and waste across every variant, so that the search
without reductions stays cheap. A position one configuration cannot decide within its
node budget is skipped; the tests check such skips stay rare and that both verdicts
occur often enough for the agreement to mean something.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from klondike_live.engine import Board, Variant
from klondike_live.solver import Budget, Reductions, solve

from solver_helpers import random_position

SWITCHES = ("tt", "autoplay", "stock", "partial", "symmetry", "ordering", "empty", "dead")


def compare(boards: list[Board], other: Reductions, nodes: int) -> tuple[int, int, int]:
    """(solvable, unsolvable, skipped) counts; fails on any disagreement with the default."""
    solvable = unsolvable = skipped = 0
    for index, board in enumerate(boards):
        reference = solve(board, Budget(nodes=nodes))
        result = solve(board, Budget(nodes=nodes), other)
        if "unknown" in (reference.result, result.result):
            skipped += 1
            continue
        assert result.result == reference.result, (index, board.variant, other)
        if reference.result == "solvable":
            solvable += 1
        else:
            unsolvable += 1
    return solvable, unsolvable, skipped


def boards(seed: int, count: int, low: int, high: int) -> list[Board]:
    """`count` random positions with `low`..`high` cards off the foundations."""
    rng = random.Random(seed)
    return [random_position(rng, rng.randint(low, high)) for _ in range(count)]


@pytest.mark.parametrize("switch", SWITCHES)
def test_switching_one_reduction_off_keeps_verdicts(switch: str) -> None:
    """With any single reduction off, 250 random near-end positions get the same verdicts."""
    other = dataclasses.replace(Reductions(), **{switch: False})
    high = 16 if switch == "tt" else 20
    solvable, unsolvable, skipped = compare(
        boards(SWITCHES.index(switch), 250, 8, high), other, 40_000
    )
    assert skipped <= 12
    assert solvable >= 50 and unsolvable >= 40


def test_brute_force_keeps_verdicts() -> None:
    """With every reduction off but a plain visited set, 250 positions get the same verdicts."""
    plain = dataclasses.replace(Reductions.none(), tt=True)
    solvable, unsolvable, skipped = compare(boards(100, 250, 8, 14), plain, 60_000)
    assert skipped <= 12
    assert solvable >= 50 and unsolvable >= 30


def test_no_reduction_at_all_keeps_verdicts() -> None:
    """With everything off (cycles cut on the current line only), small positions agree."""
    solvable, unsolvable, skipped = compare(boards(200, 200, 4, 8), Reductions.none(), 100_000)
    # Without any table the search is exponential, so only small positions fit here; the
    # `tt` and brute-force tests above cover larger ones.
    assert skipped <= 10
    assert solvable >= 50 and unsolvable >= 3


@pytest.mark.parametrize("seed", ["3", "4", "6", "8", "10"])
def test_brute_force_agrees_on_full_draw3_single_pass_deals(seed: str) -> None:
    """On whole deals small enough to exhaust, the search with no reductions agrees."""
    board = Board.from_seed(seed, Variant(draw=3, passes=1))
    plain = dataclasses.replace(Reductions.none(), tt=True)
    reference = solve(board, Budget(nodes=100_000))
    assert reference.result != "unknown"
    assert solve(board, Budget(nodes=100_000), plain).result == reference.result
