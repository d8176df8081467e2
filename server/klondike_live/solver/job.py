"""One solver job as JSON in, JSON out: the body of the worker process.

`python -m klondike_live.solver.job` reads one request object from stdin and writes one
result object to stdout. The request:

    {"op": "solve" | "par" | "hint", "position": "<klondike-position 1 text>",
     "seconds": float | null, "nodes": int | null}

or, for the per-ply analysis of a game (`analysis.analyse`):

    {"op": "analyse", "record": "<klondike-game 1 text>", "seconds": per position,
     "total": per game, "nice": int}

answered by `Analysis.to_json()` plus `searches`, `nodes` and `seconds`. `nice` lowers
the child's own scheduling priority first (background work yields to live games).
The position travels as the notation's position text, so the child needs no other
state. `run_job` is the same thing as a function, used by the worker and by tests.

This module must stay free of asyncio: the async side lives in `worker.py` only.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from klondike_live.engine.position import parse_position
from klondike_live.engine.record import GameRecord
from klondike_live.solver.analysis import AnalysisBudget, analyse
from klondike_live.solver.hints import hint
from klondike_live.solver.par import par
from klondike_live.solver.search import Budget, solve


def run_job(request: dict[str, Any]) -> dict[str, object]:
    """Carry out one request (see the module docstring) and return its JSON result."""
    if request.get("op") == "analyse":
        record = GameRecord.parse(request["record"])
        limits = AnalysisBudget(float(request["seconds"]), float(request["total"]))
        result = analyse(record, limits)
        return result.to_json() | {
            "searches": result.searches,
            "nodes": result.nodes,
            "seconds": round(result.seconds, 3),
        }
    board = parse_position(request["position"])
    seconds = request.get("seconds")
    nodes = request.get("nodes")
    op = request.get("op")
    if op == "hint":
        return hint(board, 1.0 if seconds is None else seconds, nodes).to_json()
    budget = Budget(seconds, nodes)
    if op == "par":
        return par(board, budget).to_json()
    if op == "solve":
        return solve(board, budget).to_json()
    raise ValueError(f"unknown solver job {op!r}")


def main() -> int:
    """Read a request from stdin, write the result (or an error) to stdout."""
    try:
        request = json.loads(sys.stdin.read())
        if request.get("nice"):
            os.nice(int(request["nice"]))
        result = run_job(request)
    except Exception as exc:  # reported to the parent, which raises it there
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
