"""A hint's wall time through the node's solver API, with and without a spare child.

    .venv/bin/python bench/bench_hints.py [--hints 20] [--rounds 5] [--seconds 1.0] [--gap 0.5]

Each hint is `solver.worker.hint_in_worker` on a deal's opening position (draw 1, one
pass; deals `1..--hints`), as a player's hint request runs it on a node: the position
goes to a child process that searches for at most `--seconds` and answers in JSON, and
the line is replayed here. Rounds alternate between one child started per hint (as a
script or a test runs it) and `SolverSpares` (as a node runs it: the child was started
ahead of the request and waits on stdin). Hints are `--gap` seconds apart in both, as a
player's are (a spare needs about 0.15 s after its start to be ready). Reported per
round and in all: the median and p90 wall time per hint, the ratio spare / cold of the
medians, and how many hints came out the same both ways (a search cut by its time may
not).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time

from harness.report import code_version, parser, percentile, table
from klondike_live.engine import Board, Variant
from klondike_live.solver.worker import SolverSpares, hint_in_worker

DRAW1 = Variant(draw=1, passes=1)


async def one_round(
    boards: list[Board], seconds: float, spares: bool, gap: float
) -> tuple[list[float], list[str]]:
    """Wall seconds per hint and the hints' moves, hints one after another."""
    times: list[float] = []
    moves: list[str] = []
    scope = SolverSpares() if spares else contextlib.nullcontext()
    async with scope as pool:
        if isinstance(pool, SolverSpares):
            # A node has its spare ready long before a player's request: one job first.
            await hint_in_worker(boards[0], seconds)
        for board in boards:
            await asyncio.sleep(gap)
            began = time.perf_counter()
            advice = await hint_in_worker(board, seconds)
            times.append(time.perf_counter() - began)
            moves.append(f"{advice.status}:{advice.move}")
    return times, moves


async def main_async(args: argparse.Namespace) -> int:
    boards = [Board.from_seed(str(seed), DRAW1) for seed in range(1, args.hints + 1)]
    print(
        f"hints at {code_version()}: {args.hints} deals' openings, draw 1 one pass, search"
        f" up to {args.seconds:g} s; {args.rounds} rounds each way, alternating",
        flush=True,
    )
    cold_all: list[float] = []
    warm_all: list[float] = []
    rows: list[list[object]] = []
    same = 0
    for index in range(args.rounds):
        cold, cold_moves = await one_round(boards, args.seconds, False, args.gap)
        warm, warm_moves = await one_round(boards, args.seconds, True, args.gap)
        same += sum(a == b for a, b in zip(cold_moves, warm_moves, strict=True))
        cold_all += cold
        warm_all += warm
        rows.append(
            [
                index + 1,
                statistics.median(cold) * 1000,
                statistics.median(warm) * 1000,
                statistics.median(warm) / statistics.median(cold),
            ]
        )
    print(table(["round", "cold median ms", "spare median ms", "spare / cold"], rows))
    print()
    print(
        table(
            ["how", "hints", "median ms", "p90 ms"],
            [
                [
                    "a child per hint",
                    len(cold_all),
                    statistics.median(cold_all) * 1000,
                    percentile(cold_all, 90) * 1000,
                ],
                [
                    "a spare child",
                    len(warm_all),
                    statistics.median(warm_all) * 1000,
                    percentile(warm_all, 90) * 1000,
                ],
            ],
        )
    )
    ratio = statistics.median(warm_all) / statistics.median(cold_all)
    print(
        f"\nspare / cold, medians: {ratio:.2f}; the same hint both ways: {same} of {len(cold_all)}"
    )
    return 0


def main() -> int:
    options = parser(__doc__)
    options.add_argument("--hints", type=int, default=20)
    options.add_argument("--rounds", type=int, default=5)
    options.add_argument("--seconds", type=float, default=1.0)
    options.add_argument("--gap", type=float, default=0.5, help="seconds between hints")
    return asyncio.run(main_async(options.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
