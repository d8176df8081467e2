"""Golden verdicts: seeds with the verdict this solver decided for each variant.

`golden_verdicts.json` maps a variant's text to `{seed: [verdict, nodes]}`, as decided
by this solver when the file was made. The test re-decides the quick ones (few nodes at
the time) so it stays fast in CI; the slower entries are kept as a reference for the
benchmark. Regenerate (after a change that is meant to alter verdicts, which none
should) with:

    .venv/bin/python tests/solver/test_golden.py SEEDS SECONDS
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from klondike_live.engine import Board, Variant
from klondike_live.engine.variant import UNLIMITED
from klondike_live.solver import Budget, solve

GOLDEN = Path(__file__).with_name("golden_verdicts.json")
QUICK = 40_000
"""Entries decided within this many nodes are re-checked by the test."""

VARIANTS = (
    Variant(draw=1, passes=1),
    Variant(draw=3, passes=3),
    Variant(draw=1, passes=UNLIMITED),
    Variant(draw=3, passes=1),
)


def quick_cases() -> list[tuple[str, str, str]]:
    """(variant text, seed, verdict) of every quick golden entry."""
    if not GOLDEN.exists():  # only while regenerating; the coverage test then fails
        return []
    data = json.loads(GOLDEN.read_text())
    return [
        (variant, seed, verdict)
        for variant, seeds in data.items()
        for seed, (verdict, nodes) in seeds.items()
        if nodes <= QUICK
    ]


def test_golden_file_covers_every_variant_and_both_verdicts() -> None:
    """The golden file holds both verdicts and a quick subset for each variant."""
    cases = quick_cases()
    assert {variant for variant, _, _ in cases} == {str(v) for v in VARIANTS}
    assert {"solvable", "unsolvable"} <= {verdict for _, _, verdict in cases}
    assert len(cases) >= 40


@pytest.mark.parametrize(("variant", "seed", "verdict"), quick_cases())
def test_golden_verdict(variant: str, seed: str, verdict: str) -> None:
    """The solver still reaches the recorded verdict on this seed (and a win replays)."""
    board = Board.from_seed(seed, Variant.parse(variant))
    result = solve(board, Budget(nodes=20 * QUICK))
    assert result.result == verdict
    if verdict == "solvable":
        for token in result.moves:
            board.play(token)
        assert board.is_won()


def regenerate(seeds: range, seconds: float) -> None:
    """Decide `seeds` in every variant and write the golden file (undecided seeds left out)."""
    data: dict[str, dict[str, list[object]]] = {}
    for variant in VARIANTS:
        entries: dict[str, list[object]] = {}
        for seed in seeds:
            result = solve(Board.from_seed(str(seed), variant), Budget(seconds=seconds))
            if result.result != "unknown":
                entries[str(seed)] = [result.result, result.nodes]
            print(variant, seed, result.result, result.nodes, file=sys.stderr)
        data[str(variant)] = entries
    GOLDEN.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    first, _, last = sys.argv[1].partition("-")
    regenerate(range(int(first), int(last) + 1), float(sys.argv[2]))
