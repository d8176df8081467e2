"""The `klondike-live solve` subcommand: one position, or a batch of seeds.

    klondike-live solve SEED|FILE [--draw 1|3] [--passes N|unlimited] [--f2t]
                        [--timeout SECONDS] [--nodes N] [--par] [--json]
    klondike-live solve --seeds 1-1000 [variant and budget options] [--jsonl OUT]
    klondike-live solve --batch FILE|- [variant and budget options]

`--batch` reads one seed per line (optionally followed by a variant, `12 draw=3
passes=3`) from a file or stdin and answers each with one JSON line on stdout as soon
as it is solved, all in one process: a persistent worker that pays the interpreter's
start-up once, not per deal.

A FILE holds a deal text, a position text or a game record (solved from the position
after its last move; records and positions carry their own variant). The main CLI
calls `add_parser`. Exit status: 0 when every search ran (whatever its verdict), 1 when
the solver produced a line the engine rejects (a bug, never reported as a success),
2 for unusable input, with a message on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TextIO

from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs in the dev deps

from klondike_live.argtypes import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    positive_int,
    positive_seconds,
)
from klondike_live.engine import Board, Deal, KlondikeError, Variant
from klondike_live.engine.position import parse_position
from klondike_live.engine.record import GameRecord
from klondike_live.engine.variant import UNLIMITED
from klondike_live.errors import InputError
from klondike_live.solver.par import par
from klondike_live.solver.search import (
    SOLVABLE,
    Budget,
    SolverError,
    SolveResult,
    check_line,
    solve,
)

MAX_BATCH = 1_000_000


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `solve` subcommand to the main CLI."""
    parser = subparsers.add_parser(
        "solve",
        help="decide whether a deal can be won, with a solution",
        description="Exact search for a win. Verdicts: solvable (with the moves), "
        "unsolvable (every line tried), unknown (the budget ran out).",
    )
    parser.add_argument(
        "source",
        nargs="?",
        metavar="SEED|FILE",
        help="a seed, or a file with a deal text, a position or a game record",
    )
    parser.add_argument("--seeds", metavar="A-B", help="batch mode: solve seeds A to B")
    parser.add_argument(
        "--batch",
        metavar="FILE|-",
        help="read seeds (one a line, optionally with a variant) from FILE or stdin (-); "
        "one JSON line each on stdout",
    )
    parser.add_argument("--draw", type=int, choices=(1, 3), default=1, help="cards per turn")
    parser.add_argument(
        "--passes",
        type=_passes,
        default=None,
        metavar="N|unlimited",
        help="passes through the stock: N or 'unlimited' (default: 1 with draw 1, 3 with draw 3)",
    )
    parser.add_argument("--f2t", action="store_true", help="allow foundation-to-tableau moves")
    parser.add_argument(
        "--timeout", type=positive_seconds, default=30.0, help="seconds per search (default 30)"
    )
    parser.add_argument("--nodes", type=positive_int, default=None, help="node budget per search")
    parser.add_argument("--par", action="store_true", help="search for the shortest solution")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--jsonl", metavar="OUT", help="batch mode: write one JSON line per deal")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of the subcommand; returns the exit status."""
    try:
        variant = Variant(
            draw=args.draw, passes=-1 if args.passes is None else args.passes, f2t=args.f2t
        )
        budget = Budget(args.timeout, args.nodes)
        given = [args.source is not None, args.seeds is not None, args.batch is not None]
        if sum(given) > 1:
            raise InputError("give one of SEED|FILE, --seeds A-B or --batch FILE, not both")
        if args.seeds is not None:
            return _batch(args, _seed_range(args.seeds), variant, budget)
        if args.batch is not None:
            if args.jsonl is not None:
                raise InputError("--batch writes JSON lines to stdout; --jsonl is for --seeds")
            return _stream(args, variant, budget)
        if args.source is None:
            raise InputError("give a SEED or FILE to solve, or --seeds A-B, or --batch FILE")
        if args.jsonl is not None:
            raise InputError("--jsonl is for batch mode (--seeds A-B)")
        board = load(args.source, variant)
        result = (par if args.par else solve)(board, budget)
    except (InputError, SolverError) as exc:
        return stopped("solve", exc)
    print(json.dumps(result.to_json()) if args.json else _describe(result))
    return EXIT_OK


def stopped(command: str, exc: InputError | SolverError) -> int:
    """Say on stderr why `klondike-live COMMAND` stopped (unusable input, or a solver
    bug), and return the exit status for it."""
    if isinstance(exc, SolverError):
        print(f"klondike-live {command}: solver bug: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"klondike-live {command}: {exc}", file=sys.stderr)
    return EXIT_BAD_INPUT


def load(source: str, variant: Variant) -> Board:
    """A board from a seed or from a file (deal text, position text or game record).

    An existing file is read and recognised by its first line; anything else is a seed.
    Records and positions bring their own variant; deals and seeds use `variant`.
    """
    path = Path(source)
    if not path.is_file():
        if not source.strip():
            raise InputError("an empty seed")
        return Board.from_seed(source, variant)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {source}: {exc}") from None
    header = next((line.strip() for line in text.splitlines() if line.strip()), "")
    try:
        if header == "klondike-game 1":
            return GameRecord.parse(text).replay()
        if header == "klondike-position 1":
            return parse_position(text)
        return Board(Deal.parse(text), variant)
    except (KlondikeError, ValueError) as exc:
        raise InputError(f"{source}: {exc}") from None


def _describe(result: SolveResult) -> str:
    head = f"{result.result}: {result.nodes} nodes in {result.seconds:.2f} s"
    if result.result != SOLVABLE:
        return head
    length = f"{len(result.moves)} moves"
    if result.optimal is not None:
        length += " (proven shortest)" if result.optimal else " (shortest not proven)"
    return f"{head}, {length}\n{' '.join(result.moves)}"


def _batch(args: argparse.Namespace, seeds: range, variant: Variant, budget: Budget) -> int:
    out: TextIO | None = None
    if args.jsonl is not None:
        try:
            out = Path(args.jsonl).open("w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise InputError(f"cannot write {args.jsonl}: {exc}") from None
    counts = {"solvable": 0, "unsolvable": 0, "unknown": 0, "error": 0}
    times: list[float] = []
    nodes = 0
    started = time.perf_counter()
    try:
        for seed in tqdm(seeds, desc=f"solve {variant}", unit="deal", file=sys.stderr):
            board = Board.from_seed(str(seed), variant)
            line: dict[str, object] = {"seed": str(seed)}
            try:
                result = (par if args.par else solve)(board, budget)
                if result.result == SOLVABLE:
                    check_line(board, result.moves)  # replayed again here, always
                line |= result.to_json()
                verdict: str = result.result
                times.append(result.seconds)
                nodes += result.nodes
            except SolverError as exc:
                line |= {"result": "error", "error": str(exc)}
                verdict = "error"
            counts[verdict] += 1
            if out is not None:
                out.write(json.dumps(line) + "\n")
                out.flush()
    finally:
        if out is not None:
            out.close()
    wall = time.perf_counter() - started
    summary = _summary(len(seeds), counts, times, nodes, wall)
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{summary['deals']} deals, {variant}: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
            + f"; time median {summary['median_seconds']} s, p90 {summary['p90_seconds']} s; "
            f"{summary['nodes_per_second']} nodes/s"
        )
    return EXIT_FAILED if counts["error"] else EXIT_OK


def _stream(args: argparse.Namespace, variant: Variant, budget: Budget) -> int:
    """`--batch`: solve each line's seed as it is read; one JSON line out per line in.

    A line is `SEED` or `SEED VARIANT` (`12 draw=3 passes=3 f2t=no`; the options'
    variant otherwise). Blank lines and `#` comments are skipped. A bad line is answered
    with `{"result": "error", "error": ...}` and the batch goes on; the exit status is
    then 2 (1 if the solver produced a line the engine rejects). Counts go to stderr.
    """
    try:
        source: TextIO = (
            sys.stdin if args.batch == "-" else Path(args.batch).open(encoding="utf-8")  # noqa: SIM115
        )
    except OSError as exc:
        raise InputError(f"cannot read {args.batch}: {exc}") from None
    counts = {"solvable": 0, "unsolvable": 0, "unknown": 0, "error": 0, "bad": 0}
    try:
        for raw in source:
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            seed, _, rest = text.partition(" ")
            line: dict[str, object] = {"seed": seed}
            try:
                this = Variant.parse(rest) if rest.strip() else variant
                board = Board.from_seed(seed, this)
                line["variant"] = str(this)
            except (KlondikeError, ValueError) as exc:
                counts["bad"] += 1
                line |= {"result": "error", "error": str(exc)}
            else:
                try:
                    result = (par if args.par else solve)(board, budget)
                    if result.result == SOLVABLE:
                        check_line(board, result.moves)  # replayed again here, always
                    line |= result.to_json()
                    counts[result.result] += 1
                except SolverError as exc:
                    counts["error"] += 1
                    line |= {"result": "error", "error": f"solver bug: {exc}"}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
    finally:
        if source is not sys.stdin:
            source.close()
    print(
        "klondike-live solve --batch: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        file=sys.stderr,
    )
    if counts["error"]:
        return EXIT_FAILED
    return EXIT_BAD_INPUT if counts["bad"] else EXIT_OK


def _summary(
    deals: int, counts: dict[str, int], times: list[float], nodes: int, wall: float
) -> dict[str, object]:
    ordered = sorted(times)
    median = statistics.median(ordered) if ordered else 0.0
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] if ordered else 0.0
    searched = sum(times)
    return {
        "deals": deals,
        **counts,
        "median_seconds": round(median, 3),
        "p90_seconds": round(p90, 3),
        "nodes_per_second": round(nodes / searched) if searched else 0,
        "wall_seconds": round(wall, 1),
    }


def _seed_range(text: str) -> range:
    first, sep, last = text.partition("-")
    if not first.strip().isdigit() or (sep and not last.strip().isdigit()):
        raise InputError(f"bad seed range {text!r}: expected A-B with whole numbers, e.g. 1-1000")
    a = int(first)
    b = int(last) if sep else a
    if b < a:
        raise InputError(f"bad seed range {text!r}: {b} is below {a}")
    if b - a + 1 > MAX_BATCH:
        raise InputError(f"bad seed range {text!r}: at most {MAX_BATCH} deals at once")
    return range(a, b + 1)


def _passes(text: str) -> int:
    if text == "unlimited":
        return UNLIMITED
    if text.isascii() and text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected a positive number or 'unlimited', not {text!r}")
