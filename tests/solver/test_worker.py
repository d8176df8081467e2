"""The asyncio API: searches run in a child process that cancellation kills."""

from __future__ import annotations

import asyncio
import sys

import pytest

from klondike_live.engine import Board, Variant
from klondike_live.solver import Budget
from klondike_live.solver.job import run_job
from klondike_live.solver.worker import hint_in_worker, par_in_worker, solve_in_worker

from processes import solver_children

DRAW1 = Variant(draw=1, passes=1)


def test_solve_in_worker_returns_a_replayed_solution() -> None:
    """A solvable deal comes back from the child as tokens the engine replays to a win."""
    board = Board.from_seed("4", DRAW1)
    result = asyncio.run(solve_in_worker(board, Budget(seconds=20)))
    assert result.result == "solvable"
    replay = board.copy()
    for token in result.moves:
        replay.play(token)
    assert replay.is_won()


def test_hint_and_par_in_worker() -> None:
    """Hints and par come back from the child with the same fields as in process."""
    board = Board.from_seed("4", DRAW1)
    advice = asyncio.run(hint_in_worker(board, 10.0))
    assert advice.status == "winning" and advice.move == advice.line[0]
    result = asyncio.run(par_in_worker(board, Budget(seconds=30, nodes=120_000)))
    assert result.result == "solvable" and result.optimal is not None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cancelling_kills_the_child() -> None:
    """Cancelling the awaiting task stops the search: the child process is gone at once."""

    async def scenario() -> tuple[int, int]:
        board = Board.from_seed("15", DRAW1)  # not decided within a minute
        task = asyncio.create_task(solve_in_worker(board, Budget(seconds=60)))
        for _ in range(100):
            await asyncio.sleep(0.05)
            if solver_children():
                break
        running = len(solver_children())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running, len(solver_children())

    running, left = asyncio.run(scenario())
    assert running == 1
    assert left == 0


def test_event_loop_stays_responsive_during_a_search() -> None:
    """While a child searches, the event loop keeps running other tasks on time."""

    async def scenario() -> float:
        board = Board.from_seed("15", DRAW1)
        task = asyncio.create_task(solve_in_worker(board, Budget(seconds=1.0)))
        worst = 0.0
        loop = asyncio.get_running_loop()
        while not task.done():
            before = loop.time()
            await asyncio.sleep(0.01)
            worst = max(worst, loop.time() - before)
        assert (await task).result == "unknown"
        return worst

    assert asyncio.run(scenario()) < 0.5


def test_job_rejects_an_unknown_operation() -> None:
    """A request for an operation the worker does not know is an error, not a guess."""
    text = (
        "klondike-position 1\nvariant: draw=1 passes=1 f2t=no\npass: 1\n"
        + "".join(f"{k}:\n" for k in range(1, 8))
        + "stock:\nwaste:\nfoundations: C13 D13 H13 S13\n"
    )
    assert run_job({"op": "solve", "position": text})["result"] == "solvable"
    with pytest.raises(ValueError, match="unknown solver job"):
        run_job({"op": "guess", "position": text})
