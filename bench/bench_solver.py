"""Benchmark of the solver on seeded deals (not a test): how many it decides, how fast.

    .venv/bin/python bench/bench_solver.py --seeds 1-40 --timeout 10
    .venv/bin/python bench/bench_solver.py --seeds 1-20 --timeout 10 --unreduced

For draw-1 single pass and draw-3 three passes it solves each seed with a per-deal
timeout and prints, per variant: share decided (within the timeout and within 10 s),
share solvable, share of the winnable
deals solved within 10 s (a lower bound: undecided deals are counted as winnable ones
not solved), median and p90 time per deal (an undecided deal counts as its full
timeout), and nodes per second. Every solution is replayed through `Board.play`.

Times are CPU seconds of the solving process (`Budget(cpu=True)`), so that other work on
a shared machine does not count against the solver; `--wall` budgets wall-clock time.

Baselines measured in the same run, for context: the raw engine's `push`/`pop` speed
(moves per second over random playouts: the cost of one node if the search used the
engine directly), and with `--unreduced` the solver with every reduction off except a
plain visited set, on the same deals with the same budget.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import sys
import time
from dataclasses import dataclass

from harness.report import parser, percentile, seeds
from klondike_live.engine import Board, Variant
from klondike_live.solver import Budget, Reductions, solve
from klondike_live.solver.search import check_line

VARIANTS = (Variant(draw=1, passes=1), Variant(draw=3, passes=3))


@dataclass
class Row:
    """Aggregate numbers of one variant and one configuration."""

    deals: int
    decided: int
    decided_10s: int
    solvable: int
    solved_10s: int
    median: float
    p90: float
    nodes_per_second: float


def run(
    numbers: list[str], variant: Variant, timeout: float, reductions: Reductions, cpu: bool
) -> Row:
    """Solve every seed; aggregate."""
    times: list[float] = []
    nodes = 0
    decided = decided_10s = solvable = solved_10s = 0
    for seed in numbers:
        board = Board.from_seed(seed, variant)
        result = solve(board, Budget(seconds=timeout, cpu=cpu), reductions)
        if result.result == "solvable":
            check_line(board, result.moves)
            solvable += 1
            solved_10s += result.seconds <= 10.0
        decided += result.result != "unknown"
        decided_10s += result.result != "unknown" and result.seconds <= 10.0
        times.append(result.seconds if result.result != "unknown" else timeout)
        nodes += result.nodes
        print(f"  {variant} seed {seed}: {result.result} {result.seconds:.2f} s", file=sys.stderr)
    return Row(
        len(numbers),
        decided,
        decided_10s,
        solvable,
        solved_10s,
        statistics.median(times),
        percentile(times, 90),
        nodes / sum(times),
    )


def engine_speed(seconds: float = 2.0) -> float:
    """Raw engine moves per CPU second: `legal_moves` + `push` + `key` + `pop` on playouts."""
    rng = random.Random(1)
    done = 0
    start = time.process_time()
    seed = 0
    while time.process_time() - start < seconds:
        seed += 1
        board = Board.from_seed(str(seed))
        for _ in range(200):
            moves = board.legal_moves()
            if not moves:
                break
            for move in moves:
                board.push(move)
                board.key()
                board.pop()
                done += 1
            board.push(rng.choice(moves))
    return done / (time.process_time() - start)


def main() -> int:
    """Run the benchmark and print a markdown table."""
    options = parser(__doc__, seeds="1-40", timeout=10.0)
    options.add_argument("--unreduced", action="store_true", help="also run without reductions")
    options.add_argument("--wall", action="store_true", help="wall-clock budgets (default: CPU)")
    args = options.parse_args()
    chosen = seeds(args.seeds)
    configs = [("solver", Reductions())]
    if args.unreduced:
        configs.append(("unreduced", dataclasses.replace(Reductions.none(), tt=True)))
    speed = engine_speed()
    rows: list[tuple[str, Variant, Row]] = []
    for variant in VARIANTS:
        for name, reductions in configs:
            rows.append(
                (name, variant, run(chosen, variant, args.timeout, reductions, not args.wall))
            )
    clock = "wall-clock" if args.wall else "CPU"
    print(f"seeds {args.seeds}, timeout {args.timeout:g} {clock} s per deal, one process\n")
    print(
        "| variant | config | decided | decided <= 10 s | solvable "
        "| winnable solved <= 10 s (lower bound) | median s | p90 s "
        "| nodes/s | nodes/s vs engine push/pop |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, variant, row in rows:
        # Undecided deals may be winnable too: count them in, for a lower bound.
        maybe = row.solvable + row.deals - row.decided
        share = row.solved_10s / maybe if maybe else 0.0
        print(
            f"| {variant} | {name} | {row.decided / row.deals:.0%} "
            f"| {row.decided_10s / row.deals:.0%} "
            f"| {row.solvable / row.deals:.0%} | {share:.0%} | {row.median:.2f} | {row.p90:.2f} "
            f"| {row.nodes_per_second:,.0f} "
            f"| {row.nodes_per_second / speed:.2f}x |"
        )
    print(f"\nengine baseline: {speed:,.0f} moves/s (legal_moves + push + key + pop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
