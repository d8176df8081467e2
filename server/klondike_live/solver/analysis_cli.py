"""The `klondike-live analyse` subcommand: per-ply verdicts of a game record.

    klondike-live analyse FILE|- [--budget SECONDS] [--total SECONDS] [--json]

FILE holds a game record (`klondike-game 1`). Every position of the game, ply 0 (the
deal) to ply n (after move n), is decided by `solver.analysis.analyse` under a CPU
budget per searched position (`--budget`) and per game (`--total`). Text output: one
line per ply; `--json` prints exactly `{"plies": [{"ply", "verdict", "line"}, ...],
"lost_at": ply or null}`. Exit status: 0 when the analysis ran, 1 if the solver
produced a line the engine rejects (a bug), 2 for unusable input (a message on stderr,
no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from klondike_live.argtypes import EXIT_OK, positive_seconds
from klondike_live.engine import GameRecord, KlondikeError
from klondike_live.engine.errors import ReplayError
from klondike_live.errors import InputError
from klondike_live.solver.analysis import (
    DEFAULT_BUDGET,
    LOST,
    WINNABLE,
    Analysis,
    AnalysisBudget,
    analyse,
)
from klondike_live.solver.cli import stopped
from klondike_live.solver.search import SolverError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `analyse` subcommand to the main CLI."""
    parser = subparsers.add_parser(
        "analyse",
        help="decide every position of a game record: winnable, lost or unknown",
        description="Per-ply verdicts of a game: winnable (with a winning line), lost "
        "(proven by exhaustive search) or unknown (the budget ran out). Ply 0 is the "
        "deal, ply n the position after move n.",
    )
    parser.add_argument("file", metavar="FILE", help="a game record file, or - for stdin")
    parser.add_argument(
        "--budget",
        type=positive_seconds,
        default=DEFAULT_BUDGET.per_position,
        metavar="SECONDS",
        help=f"CPU seconds per searched position (default {DEFAULT_BUDGET.per_position:g})",
    )
    parser.add_argument(
        "--total",
        type=positive_seconds,
        default=DEFAULT_BUDGET.total,
        metavar="SECONDS",
        help=f"CPU seconds for the whole game (default {DEFAULT_BUDGET.total:g})",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of the subcommand; returns the exit status."""
    try:
        record = _load(args.file)
        result = analyse(record, AnalysisBudget(args.budget, args.total))
    except (InputError, SolverError) as exc:
        return stopped("analyse", exc)
    print(json.dumps(result.to_json()) if args.json else describe(record, result))
    return EXIT_OK


def _load(source: str) -> GameRecord:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {source}: {exc}") from None
    try:
        record = GameRecord.parse(text)
        record.replay()
    except ReplayError as exc:
        problem = f"illegal move {exc.index} {exc.token!r}: {exc.reason}"
        raise InputError(f"{source}: {problem}") from None
    except (KlondikeError, ValueError) as exc:
        raise InputError(f"{source}: {exc}") from None
    return record


def describe(record: GameRecord, result: Analysis) -> str:
    """The text output: one line per ply, then a summary."""
    rows = []
    for ply in result.plies:
        move = "deal" if ply.ply == 0 else f"after {record.moves[ply.ply - 1]}"
        row = f"{ply.ply:4d}  {move:<12} {ply.verdict}"
        if ply.verdict == WINNABLE and ply.line is not None:
            shown = " ".join(ply.line[:12]) + (" ..." if len(ply.line) > 12 else "")
            row += f"  ({len(ply.line)} moves: {shown})"
        rows.append(row)
    lost = sum(1 for p in result.plies if p.verdict == LOST)
    won = sum(1 for p in result.plies if p.verdict == WINNABLE)
    summary = (
        f"{len(result.plies)} plies: {won} winnable, {lost} lost, "
        f"{len(result.plies) - won - lost} unknown; {result.searches} searches, "
        f"{result.seconds:.2f} s CPU"
    )
    if result.lost_at is not None:
        summary += (
            f"\nthe game was lost by move {result.lost_at} "
            f"({record.moves[result.lost_at - 1]}): ply {result.lost_at - 1} was winnable"
        )
    return "\n".join([*rows, summary])
