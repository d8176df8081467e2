"""Engine micro-benchmarks: checked play, unchecked push, legal moves, deals, view diffs.

Positions come from random legal playouts of random seeds (fixed RNG seed, so every run
measures the same positions). Each operation is timed call by call with
`perf_counter_ns`, minus the measured cost of an empty timed call, and reported as median
and p90 microseconds. Absolute times drift on a shared machine, so the table also gives
ratios against baselines measured in the same run: checked `play` against unchecked
`push`, and each operation against the standard library's `random.shuffle` of a 52-item
list (a yardstick for how fast this machine runs plain Python right now), and the views
after a move advanced over the piles the move changed (`advance`, what the server does)
against the whole views built again and diffed.

    .venv/bin/python bench/bench_engine.py [--positions 3000]
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable

from harness.report import parser, percentile
from klondike_live.engine import Board, Deal, Move, Variant, View, diff, view_of
from klondike_live.engine.view import advance, changed_piles, racer_view

VARIANTS = (Variant(), Variant(draw=3), Variant(draw=1, passes=0))


def sample_positions(count: int, rng: random.Random) -> list[tuple[Board, Move]]:
    """`count` (board, legal move) pairs from random playouts of random seeds."""
    out: list[tuple[Board, Move]] = []
    while len(out) < count:
        board = Board.from_seed(str(rng.getrandbits(64)), rng.choice(VARIANTS))
        for _ in range(rng.randrange(0, 150)):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        moves = board.legal_moves()
        if moves:
            out.append((board, rng.choice(moves)))
    return out


Case = tuple[Callable[[], object], Callable[[], object] | None]


def timed(cases: list[Case], overhead: float) -> list[float]:
    """Microseconds per call, one measurement per call, overhead removed.

    The second item of a case, when given, runs untimed after the call (to undo it).
    """
    clock = time.perf_counter_ns
    samples = []
    for call, undo in cases:
        start = clock()
        call()
        samples.append((clock() - start) / 1000 - overhead)
        if undo is not None:
            undo()
    return samples


def empty_overhead() -> float:
    clock = time.perf_counter_ns

    def nothing() -> None:
        return None

    runs = []
    for _ in range(20_000):
        start = clock()
        nothing()
        runs.append((clock() - start) / 1000)
    return statistics.median(runs)


def summary(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), percentile(samples, 90)


def main() -> int:
    options = parser(__doc__)
    options.add_argument("--positions", type=int, default=3000)
    options.add_argument("--rounds", type=int, default=5, help="repeat and keep the best median")
    args = options.parse_args()
    rng = random.Random(20261130)
    positions = sample_positions(args.positions, rng)
    overhead = empty_overhead()
    seeds = [str(rng.getrandbits(64)) for _ in range(args.positions)]

    def play(board: Board, move: Move | str) -> Case:
        return (lambda: board.play(move)), board.pop

    def push(board: Board, move: Move) -> Case:
        return (lambda: board.push(move)), board.pop

    def only(call: Callable[[], object]) -> Case:
        return call, None

    def unpop(board: Board) -> Case:
        last = board.moves[-1]
        return board.pop, (lambda: board.push(last))

    def deal(seed: str) -> Case:
        return only(lambda: Deal.from_seed(seed))

    def diff_of(old: View, new: View) -> Case:
        return only(lambda: diff(old, new))

    def racer_diff(board: Board, old: View) -> Case:
        return only(lambda: diff(old, racer_view(board)))

    def spectator_diff(board: Board, old: View, known: int) -> Case:
        return only(lambda: diff(old, view_of(board, known)))

    def advanced(board: Board, old: View, known: int | None, piles: tuple[int, ...]) -> Case:
        return only(lambda: advance(old, board, known, piles))

    # A spectator's knowledge: what this board's racer and a rival racer both saw.
    spectator_masks = [
        b.seen & Board.from_seed(str(rng.getrandbits(64))).seen for b, _ in positions
    ]
    # Spectators of a live race keep one mask for move after move: masks from a pool of
    # 200 rivals, so that they are cached as on a server (every position's own mask above
    # is the worst case, a mask seen for the first time).
    rivals = [Board.from_seed(str(rng.getrandbits(64))).seen for _ in range(200)]
    live_masks = [rivals[i % len(rivals)] for i in range(len(positions))]
    # Views before and after each move, for the diff benchmark; the boards after the
    # moves (copies) and the views before them, for building the views after a move.
    view_pairs = []
    moved = []
    for (board, move), known in zip(positions, live_masks, strict=True):
        before = view_of(board, board.seen)
        racer_before = racer_view(board)
        spec_before = view_of(board, known)
        board.push(move)
        view_pairs.append((board, before, view_of(board, board.seen)))
        moved.append((board.copy(), racer_before, spec_before, known, changed_piles([move])))
        board.pop()

    deck = list(range(52))
    shuffler = random.Random(1)
    cases: dict[str, list[Case]] = {
        "baseline: random.shuffle(52)": [only(lambda: shuffler.shuffle(deck)) for _ in positions],
        "push (unchecked)": [push(b, m) for b, m in positions],
        "play (checked)": [play(b, m) for b, m in positions],
        "play of a token string": [play(b, str(m)) for b, m in positions],
        "pop (undo)": [unpop(b) for b, _ in positions if b.moves],
        "legal_moves()": [only(b.legal_moves) for b, _ in positions],
        "Deal.from_seed (kd1)": [deal(s) for s in seeds],
        "diff(old view, new view)": [diff_of(o, n) for _, o, n in view_pairs],
        "racer_view + diff": [racer_diff(a, r) for a, r, _, _, _ in moved],
        "advance (racer)": [advanced(a, r, None, p) for a, r, _, _, p in moved],
        "view_of(mask) + diff (spectator)": [spectator_diff(a, s, k) for a, _, s, k, _ in moved],
        "advance (spectator)": [advanced(a, s, k, p) for a, _, s, k, p in moved],
        "view_of(new mask) + diff": [
            spectator_diff(b, o, k)
            for (b, o, _), k in zip(view_pairs, spectator_masks, strict=True)
        ],
    }
    results: dict[str, tuple[float, float]] = {}
    for name, calls in cases.items():
        best: tuple[float, float] | None = None
        for _ in range(args.rounds):
            # Each case leaves its board as it found it, so rounds measure the same work.
            med, p90 = summary(timed(calls, overhead))
            if best is None or med < best[0]:
                best = (med, p90)
        assert best is not None
        results[name] = best

    base = results["baseline: random.shuffle(52)"][0]
    print(f"Python {sys.version.split()[0]}, {len(positions)} positions, best of {args.rounds}")
    print(f"{'operation':34} {'median us':>10} {'p90 us':>8} {'x baseline':>11}")
    for name, (med, p90) in results.items():
        print(f"{name:34} {med:10.2f} {p90:8.2f} {med / base:11.2f}")
    checked = results["play (checked)"][0]
    unchecked = results["push (unchecked)"][0]
    print(f"checked play / unchecked push: {checked / unchecked:.2f}x")
    for who, whole, patched in (
        ("racer", "racer_view + diff", "advance (racer)"),
        ("spectator", "view_of(mask) + diff (spectator)", "advance (spectator)"),
    ):
        ratio = results[patched][0] / results[whole][0]
        print(f"view after a move, changed piles / whole view ({who}): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
