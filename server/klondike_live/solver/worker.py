"""The solver for the asyncio server: each search in its own child process.

    result = await solve_in_worker(board, Budget(seconds=30))
    result = await par_in_worker(board, Budget(seconds=10))
    advice = await hint_in_worker(board, seconds=1.0)
    analysis = await analyse_in_worker(record_text, AnalysisBudget(2.0, 60.0), nice=10)

The event loop never runs a search: the child (`python -m klondike_live.solver.job`)
gets the position as notation text on stdin and answers in JSON on stdout. Cancelling
the awaiting task kills the child and waits for it, so no search outlives its caller
and no process is left behind. A child that overruns its own budget by `GRACE`
seconds is killed too, and the answer is `unknown`. A solution is replayed through the
engine again here before it is returned.

A child's start (the interpreter and the solver's imports) takes 0.1-0.2 s, longer than
many hints' searches. A node keeps a spare child started ahead of the next job
(`async with SolverSpares():` for the node's lifetime, from its first job on): a job
takes the spare, which has already started and waits for its request on stdin, and
another spare is started behind it. Each child still runs one job and exits, so a
search can be killed with its process as before. Without spares (tests, scripts) each
job starts its own child.

This is the only solver module that imports asyncio.
"""

from __future__ import annotations

import asyncio
import json
import sys
from types import TracebackType
from typing import Any, Final

from klondike_live.engine.board import Board
from klondike_live.engine.position import format_position
from klondike_live.engine.record import GameRecord
from klondike_live.errors import LiveError
from klondike_live.solver.analysis import AnalysisBudget, positions
from klondike_live.solver.hints import Hint, best_move
from klondike_live.solver.search import SOLVABLE, UNKNOWN, Budget, SolveResult, check_line

GRACE: Final = 5.0
"""Seconds a child may overrun its budget (start-up, replay) before it is killed."""


class WorkerError(LiveError, RuntimeError):
    """The child process failed (it crashed or reported an error)."""


async def solve_in_worker(board: Board, budget: Budget) -> SolveResult:
    """`search.solve` in a child process; cancellation kills the child."""
    return await _search("solve", board, budget)


async def par_in_worker(board: Board, budget: Budget) -> SolveResult:
    """`par.par` in a child process; cancellation kills the child."""
    return await _search("par", board, budget)


async def hint_in_worker(board: Board, seconds: float = 1.0) -> Hint:
    """`hints.hint` in a child process; cancellation kills the child."""
    data = await run_in_child({"op": "hint", "seconds": seconds}, board, seconds)
    if data is None:  # the child overran: fall back on the (cheap) heuristic here
        best = best_move(board)
        move = None if best is None else str(best)
        return Hint("heuristic", move, f"{move} looks most promising (the search overran)")
    line = [str(t) for t in data["line"]]
    move = data["move"]
    return Hint(data["status"], None if move is None else str(move), str(data["message"]), line)


async def analyse_in_worker(
    record: str, budget: AnalysisBudget, *, nice: int = 0
) -> dict[str, Any] | None:
    """`analysis.analyse` of a game record's text in a child process at lower priority
    (`nice`); its JSON (`Analysis.to_json()` with `searches`, `nodes`, `seconds`), or None
    when the child overran `budget.total`. Lines are replayed here again (`_check_analysis`,
    in a thread)."""
    request = {
        "op": "analyse",
        "record": record,
        "seconds": budget.per_position,
        "total": budget.total,
        "nice": nice,
    }
    data = await _communicate(request, budget.total)
    if data is None:
        return None
    await asyncio.to_thread(_check_analysis, record, data)
    return data


def _check_analysis(record: str, data: dict[str, Any]) -> None:
    """Replay the lines of ply 0 and of the last winnable ply (the one a replay shows
    before the losing move); the others are the game's moves followed by one of these
    or by lines the child replayed."""
    boards, _ = positions(GameRecord.parse(record))
    winnable = [p for p in data["plies"] if p["verdict"] == "winnable"]
    for ply in winnable[:1] + winnable[-1:]:
        check_line(boards[int(ply["ply"])], [str(t) for t in ply["line"]])


async def _search(op: str, board: Board, budget: Budget) -> SolveResult:
    request = {"op": op, "seconds": budget.seconds, "nodes": budget.nodes}
    data = await run_in_child(request, board, budget.seconds)
    if data is None:
        return SolveResult(UNKNOWN, seconds=budget.seconds or 0.0)
    result = SolveResult(
        data["result"],
        [str(t) for t in data["moves"]],
        int(data["nodes"]),
        float(data["seconds"]),
        data.get("optimal"),
    )
    if result.result == SOLVABLE:
        check_line(board, result.moves)
    return result


async def run_in_child(
    request: dict[str, Any], board: Board, seconds: float | None
) -> dict[str, Any] | None:
    """Run one job in a child; its JSON answer, or None when it overran its time."""
    return await _communicate(request | {"position": format_position(board)}, seconds)


async def _start_child() -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "klondike_live.solver.job",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _stop_child(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
        # Shielded, so a second cancellation cannot leave the child unreaped.
        await asyncio.shield(proc.wait())


class SolverSpares:
    """Solver children started ahead of their jobs, for one event loop (see the module
    doc). Entered, it serves every job of this module run on its loop; the first job
    starts its own child and the first spare behind it (a node that never searches
    starts none); on exit the spares are killed and reaped."""

    def __init__(self, count: int = 1) -> None:
        self.count = count
        self._spares: list[asyncio.subprocess.Process] = []
        self._starting: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.started = 0  # children started as spares
        self.taken = 0  # jobs that found a spare ready

    async def __aenter__(self) -> SolverSpares:
        global _spares
        self._loop = asyncio.get_running_loop()
        _spares = self
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        global _spares
        if _spares is self:
            _spares = None
        for task in self._starting:
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        spares, self._spares = self._spares, []
        await asyncio.gather(*(_stop_child(proc) for proc in spares), return_exceptions=True)

    def ready(self) -> int:
        """Spares started and waiting for a job."""
        return sum(1 for proc in self._spares if proc.returncode is None)

    def serves_this_loop(self) -> bool:
        return self._loop is asyncio.get_running_loop()

    async def take(self) -> asyncio.subprocess.Process:
        """A started child for one job: a live spare, or a new child when none is."""
        proc = None
        while self._spares and proc is None:
            candidate = self._spares.pop(0)
            if candidate.returncode is None:
                proc = candidate
        self._fill()
        if proc is None:
            return await _start_child()
        self.taken += 1
        return proc

    def _fill(self) -> None:
        while len(self._spares) + len(self._starting) < self.count:
            task = asyncio.create_task(self._start_spare())
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def _start_spare(self) -> None:
        proc = await _start_child()
        self.started += 1
        self._spares.append(proc)


_spares: SolverSpares | None = None
"""The spares of the node running in this process, if any (see `SolverSpares`)."""


async def _communicate(request: dict[str, Any], seconds: float | None) -> dict[str, Any] | None:
    payload = json.dumps(request).encode()
    spares = _spares
    if spares is not None and spares.serves_this_loop():
        proc = await spares.take()
    else:
        proc = await _start_child()
    try:
        limit = None if seconds is None else seconds + GRACE
        out, err = await asyncio.wait_for(proc.communicate(payload), limit)
    except TimeoutError:
        return None
    finally:
        await _stop_child(proc)
    try:
        data: dict[str, Any] = json.loads(out)
    except ValueError:
        raise WorkerError(f"solver worker failed: {err.decode(errors='replace')[-500:]}") from None
    if "error" in data:
        raise WorkerError(f"solver worker: {data['error']}")
    return data
