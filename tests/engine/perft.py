"""Perft for Klondike: leaf counts of the legal-move tree, like chess perft files.

`perft(board, depth)` counts the move sequences of exactly `depth` plies (fewer where a
game ends early does not count). The golden file `tests/data/perft.tsv` holds, for fixed
seeds and variants, the counts at depths 1..6 from the deal and from the position after
a fixed move prefix; any implementation of the rules can be checked against it.

Regenerate (only when the rules deliberately change):
    .venv/bin/python tests/engine/perft.py > tests/data/perft.tsv
"""

from __future__ import annotations

from klondike_live.engine import Board, Variant

SEEDS = [str(n) for n in range(1, 21)] + ["hello world"]
VARIANTS = ["draw=1 passes=1 f2t=no", "draw=3 passes=3 f2t=no", "draw=1 passes=unlimited f2t=yes"]
PREFIX = "D D D D D"
DEPTH = 6


def perft(board: Board, depth: int) -> int:
    """Number of legal move sequences of length `depth` from `board`."""
    moves = board.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def rows() -> list[tuple[str, str, str, list[int]]]:
    """(seed, variant, prefix, counts at depth 1..DEPTH) for every golden case."""
    out = []
    for seed in SEEDS:
        for variant in VARIANTS:
            for prefix in ("", PREFIX):
                board = Board.from_seed(seed, Variant.parse(variant))
                for token in prefix.split():
                    board.play(token)
                out.append((seed, variant, prefix, [perft(board, d) for d in range(1, DEPTH + 1)]))
    return out


if __name__ == "__main__":
    print("# seed\tvariant\tmoves played first\tperft 1..6 (legal move sequences of that length)")
    for seed, variant, prefix, counts in rows():
        print(f"{seed}\t{variant}\t{prefix}\t{' '.join(map(str, counts))}")
