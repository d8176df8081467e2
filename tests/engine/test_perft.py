"""The golden perft file: legal-move tree sizes for fixed seeds must not change."""

from __future__ import annotations

import pytest

from klondike_live.engine import Board, Variant

from perft import perft
from testdata import DATA


def golden() -> list[tuple[str, str, str, list[int]]]:
    rows = []
    for line in (DATA / "perft.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        seed, variant, prefix, counts = line.split("\t")
        rows.append((seed, variant, prefix, [int(n) for n in counts.split()]))
    return rows


def test_golden_file_covers_the_cases() -> None:
    """The golden file has 21 seeds x 3 variants x 2 starting points."""
    assert len(golden()) == 126


@pytest.mark.parametrize(("seed", "variant", "prefix", "counts"), golden())
def test_perft_matches_golden(seed: str, variant: str, prefix: str, counts: list[int]) -> None:
    """Counts of legal move sequences at depths 1..6 match the golden file."""
    board = Board.from_seed(seed, Variant.parse(variant))
    for token in prefix.split():
        board.play(token)
    assert [perft(board, d) for d in range(1, len(counts) + 1)] == counts
