"""The compiled core against the same core as plain Python, in one run: engine and solver.

    .venv/bin/python bench/bench_compiled.py [--rounds 3] [--seeds 1-4] [--nodes 60000]
                                             [--games 60] [--seconds 1]

Two kinds of child process run the same workload in alternating rounds: one imports the
package as this interpreter has it (compiled by mypyc: `make` builds it so; the run
stops if it is not), the other a copy of the same package's `.py` files alone, in a
temporary folder put first on its path, with the same interpreter and dependencies.

The workload, on seeded deals (fixed RNG seed, so every round and both builds do the same
work): random playouts of `--games` games recorded once, then timed, each for `--seconds`
of CPU, as `legal_moves` at every position, the checked `play` of every move from the
start, and the views of every move (`view_of` of the racer and of a spectator, `diff` of
the racer's old and new views); and the solver on `--seeds` deals (draw-1 single pass and
draw-3 three passes) with a budget of `--nodes` positions each. Every figure is per CPU
second of the child (`time.process_time`), the median over the rounds; the ratio is
compiled over pure. The two builds must give the same answers: each child hashes the
legal moves, views, diffs and scores of the games and the solver's results, and the run
fails if the hashes differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.report import code_version, machine, parser, seeds, table

METRICS = (
    ("legal_moves", "legal_moves calls"),
    ("play", "checked play calls"),
    ("views", "views + diff per move"),
    ("solver", "solver positions"),
)


# ---------------------------------------------------------------- one child's workload


def playouts(games: int) -> list[tuple[str, list[str]]]:
    """`games` (seed, move tokens) pairs of random legal playouts, up to 200 moves each."""
    from klondike_live.engine import Board

    rng = random.Random(26)
    out = []
    for number in range(games):
        seed = f"bench-{number}"
        board = Board.from_seed(seed)
        for _ in range(200):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        out.append((seed, [str(move) for move in board.moves]))
    return out


def rate(work: Callable[[], int], seconds: float) -> float:
    """Calls per CPU second of `work` (which returns how many calls it made), run again
    until it has taken `seconds` of CPU."""
    calls = 0
    start = time.process_time()
    while True:
        calls += work()
        spent = time.process_time() - start
        if spent >= seconds:
            return calls / spent


def engine_round(
    games: list[tuple[str, list[str]]], seconds: float
) -> tuple[dict[str, float], str]:
    """Per-CPU-second rates of `legal_moves`, `play` and views over `games`, and a hash of
    everything they answered."""
    from klondike_live.engine import Board, Deal, Move, diff, view_of

    digest = hashlib.sha256()
    parsed = [(Deal.from_seed(seed), [Move.parse(t) for t in tokens]) for seed, tokens in games]
    positions = []
    for deal, moves in parsed:
        board = Board(deal)
        for move in moves:
            positions.append(board.copy())
            board.push(move)

    def legal() -> int:
        for board in positions:
            board.legal_moves()
        return len(positions)

    def play() -> int:
        for deal, moves in parsed:
            board = Board(deal)
            for move in moves:
                board.play(move)
        return len(positions)

    def views() -> int:
        for deal, moves in parsed:
            board = Board(deal)
            at_start = board.seen  # a spectator who knows only the cards dealt face up
            old = view_of(board, board.seen)
            for move in moves:
                board.push(move)
                new = view_of(board, board.seen)
                diff(old, new)
                view_of(board, board.seen & at_start)
                old = new
        return len(positions)

    for board in positions:  # what they answer, once, untimed
        digest.update(repr(board.legal_moves()).encode())
    for deal, moves in parsed:
        board = Board(deal)
        old = view_of(board, board.seen)
        for move in moves:
            board.play(move)
            new = view_of(board, board.seen)
            digest.update(repr((new, diff(old, new), board.score)).encode())
            old = new
    rates = {"legal_moves": rate(legal, seconds), "play": rate(play, seconds)}
    rates["views"] = rate(views, seconds)
    return rates, digest.hexdigest()


def solver_round(numbers: list[str], nodes: int) -> tuple[dict[str, float], str]:
    """Solver positions per CPU second on `numbers` in both variants, and a hash of the
    results."""
    from klondike_live.engine import Board, Variant
    from klondike_live.solver import Budget, solve

    digest = hashlib.sha256()
    searched = 0
    start = time.process_time()
    for variant in (Variant(draw=1, passes=1), Variant(draw=3, passes=3)):
        for seed in numbers:
            result = solve(Board.from_seed(seed, variant), Budget(nodes=nodes))
            searched += result.nodes
            digest.update(f"{result.result} {result.nodes} {result.moves}".encode())
    return {"solver": searched / (time.process_time() - start)}, digest.hexdigest()


def child(args: Any) -> None:
    """One round in this process: print its rates, hashes and core as one JSON line."""
    from klondike_live import compiled

    rates, engine_hash = engine_round(playouts(args.games), args.seconds)
    solver_rates, solver_hash = solver_round(seeds(args.seeds), args.nodes)
    rates.update(solver_rates)
    report = {"rates": rates, "hashes": [engine_hash, solver_hash], "core": compiled.describe()}
    print(json.dumps(report))


# ---------------------------------------------------------------- the comparison


def pure_copy(target: Path) -> Path:
    """The imported package's `.py` files (and data) under `target`, no extension module."""
    import klondike_live

    package = Path(klondike_live.__file__).parent
    shutil.copytree(
        package,
        target / "klondike_live",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "client_web"),
    )
    return target


def run_child(path: Path, args: Any) -> dict[str, Any]:
    """One round in a child process with `path` first on its module path."""
    command = [sys.executable, __file__, "--child", "--games", str(args.games)]
    command += ["--seeds", args.seeds, "--nodes", str(args.nodes), "--seconds", str(args.seconds)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(Path(__file__).parent)])}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


def main() -> int:
    """Alternate compiled and pure rounds; print the rates, the ratios and the check."""
    options = parser(__doc__, rounds=3, seeds="1-4")
    options.add_argument("--games", type=int, default=60, help="random playouts timed")
    options.add_argument("--nodes", type=int, default=60_000, help="solver budget per deal")
    options.add_argument(
        "--seconds", type=float, default=1.0, help="CPU seconds each engine measure runs"
    )
    options.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        child(args)
        return 0

    import klondike_live
    from klondike_live import compiled

    if not compiled.compiled():
        print(f"the imported core is {compiled.describe()}: build it first (make)")
        return 1
    built = Path(klondike_live.__file__).parent.parent
    reports: dict[str, list[dict[str, Any]]] = {"compiled": [], "pure": []}
    with tempfile.TemporaryDirectory() as folder:
        plain = pure_copy(Path(folder))
        for number in range(args.rounds):
            for build, path in (("compiled", built), ("pure", plain)):
                report = run_child(path, args)
                reports[build].append(report)
                print(f"  round {number + 1} {build}: {report['core']}", file=sys.stderr)
    hashes = {json.dumps(report["hashes"]) for side in reports.values() for report in side}
    cores = {build: {report["core"] for report in side} for build, side in reports.items()}
    if cores != {"compiled": {"compiled (mypyc)"}, "pure": {"pure Python"}}:
        print(f"the children did not run the builds compared: {cores}")
        return 1

    rows = []
    for key, label in METRICS:
        fast = statistics.median(report["rates"][key] for report in reports["compiled"])
        slow = statistics.median(report["rates"][key] for report in reports["pure"])
        rows.append((label, fast, slow, f"{fast / slow:.2f}x"))
    print(code_version())
    print(f"{machine()}; {args.rounds} rounds each, alternating; per CPU second, medians")
    print(f"games {args.games}, solver seeds {args.seeds} x 2 variants, {args.nodes:,} nodes")
    print()
    print(table(("per CPU second", "compiled", "pure Python", "ratio"), rows))
    same = len(hashes) == 1
    print(f"\nsame answers from both builds: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
