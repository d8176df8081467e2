"""Benchmark of the per-ply analysis (not a test): CPU per game and share of plies decided.

    .venv/bin/python bench/bench_analysis.py --games 100 --budget 0.1 --total 2 --baseline 5

For each daily variant (draw 1 one pass, draw 3 three passes) it plays `--games` seeded
games (`solver.selfplay.play_game`: the solver's winning line when it finds one within
`--policy-seconds`, else the hint heuristic, and a random move at the rate `--mistakes`;
won games and lost ones), analyses each with `solver.analysis.analyse` under `--budget` CPU seconds
per searched position and `--total` per game, and prints per variant: games won, plies,
median and p90 analysis CPU per game, searches per game, and the share of plies decided
(`winnable` or `lost`) and of games with a `lost_at`.

Baseline measured in the same run: the first `--baseline` games of each variant analysed
without sharing work, every ply searched on its own with the same per-position search
(default reductions for half the budget, then the certificate-grade search), with no
total cap. Its CPU and decided share against the shared analysis on the same games are
printed as ratios. Every winnable line of the shared analysis is replayed to a win.
Times are CPU seconds of this process.
"""

from __future__ import annotations

import random
import statistics
import time

from harness.report import parser, percentile
from klondike_live.engine import Board, GameRecord, Variant
from klondike_live.solver import Budget, solve
from klondike_live.solver.analysis import (
    CERTIFICATE,
    LOST,
    UNKNOWN,
    WINNABLE,
    Analysis,
    AnalysisBudget,
    analyse,
    positions,
)
from klondike_live.solver.search import SOLVABLE, UNSOLVABLE
from klondike_live.solver.selfplay import play_game

VARIANTS = (Variant(draw=1, passes=1), Variant(draw=3, passes=3))


def naive(record: GameRecord, per_position: float) -> tuple[float, int]:
    """Every ply searched on its own: (CPU seconds, plies decided)."""
    started = time.process_time()
    boards, _ = positions(record)
    decided = 0
    for board in boards:
        if board.is_won():
            decided += 1
            continue
        first = solve(board, Budget(per_position / 2, cpu=True))
        if first.result == SOLVABLE:
            decided += 1
            continue
        rest = max(per_position - first.seconds, 0.001)
        second = solve(board, Budget(rest, cpu=True), CERTIFICATE)
        decided += second.result in (SOLVABLE, UNSOLVABLE)
    return time.process_time() - started, decided


def check(record: GameRecord, result: Analysis) -> None:
    """Every winnable line replays to a win (a failed one is a bug: stop)."""
    boards, _ = positions(record)
    for ply in result.plies:
        if ply.verdict == WINNABLE:
            board: Board = boards[ply.ply].copy()
            for token in ply.line or ():
                board.play(token)
            assert board.is_won(), f"{record.seed} ply {ply.ply}: the line does not win"


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--games", type=int, default=100, help="games per variant")
    options.add_argument("--budget", type=float, default=0.1, help="CPU s per position")
    options.add_argument("--total", type=float, default=2.0, help="CPU s per game")
    options.add_argument("--baseline", type=int, default=5, help="games analysed naively")
    options.add_argument("--mistakes", type=float, default=0.03, help="random-move rate")
    options.add_argument(
        "--policy-seconds", type=float, default=0.3, help="solver CPU s per search of the player"
    )
    options.add_argument("--seed", type=int, default=2026, help="seed of the games")
    args = options.parse_args()
    budget = AnalysisBudget(args.budget, args.total)
    print(
        f"analysis: {args.games} games per variant, budget {args.budget:g} s per position, "
        f"{args.total:g} s per game (CPU), mistakes {args.mistakes:g}, "
        f"player's solver {args.policy_seconds:g} s, seed {args.seed}"
    )
    for variant in VARIANTS:
        rng = random.Random(f"{args.seed}/{variant}")
        records = [
            play_game(
                f"bench-{args.seed}-{n}",
                variant,
                rng,
                mistakes=args.mistakes,
                solver_seconds=args.policy_seconds,
            )
            for n in range(args.games)
        ]
        cpu: list[float] = []
        searches: list[int] = []
        plies = decided = won = with_lost_at = lost = unknown = 0
        results: list[Analysis] = []
        for record in records:
            started = time.process_time()
            result = analyse(record, budget)
            cpu.append(time.process_time() - started)
            check(record, result)
            results.append(result)
            searches.append(result.searches)
            plies += len(result.plies)
            decided += result.decided()
            lost += sum(p.verdict == LOST for p in result.plies)
            unknown += sum(p.verdict == UNKNOWN for p in result.plies)
            won += record.result == "won"
            with_lost_at += result.lost_at is not None
        print(
            f"{variant}: {len(records)} games ({won} won), {plies} plies; "
            f"CPU per game median {statistics.median(cpu):.2f} s, p90 {percentile(cpu, 90):.2f} s, "
            f"max {max(cpu):.2f} s; searches per game median {statistics.median(searches):g}; "
            f"plies decided {decided / plies:.1%} ({lost} lost, {unknown} unknown); "
            f"games with lost_at {with_lost_at}"
        )
        if args.baseline:
            sample = records[: args.baseline]
            naive_cpu = naive_decided = 0.0
            shared_cpu = shared_decided = 0.0
            sample_plies = 0
            for record, result, seconds in zip(sample, results, cpu, strict=False):
                n_cpu, n_decided = naive(record, args.budget)
                naive_cpu += n_cpu
                naive_decided += n_decided
                shared_cpu += seconds
                shared_decided += result.decided()
                sample_plies += len(result.plies)
            print(
                f"  baseline, every ply on its own ({len(sample)} games, {sample_plies} plies): "
                f"CPU {naive_cpu:.1f} s vs {shared_cpu:.1f} s shared "
                f"({naive_cpu / max(shared_cpu, 1e-9):.1f}x); decided "
                f"{naive_decided / sample_plies:.1%} vs {shared_decided / sample_plies:.1%} shared"
            )


if __name__ == "__main__":
    main()
