"""The asyncio API: searches run in a child process that cancellation kills."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable

import pytest

from klondike_live.engine import Board, Variant
from klondike_live.solver import Budget
from klondike_live.solver.job import run_job
from klondike_live.solver.worker import (
    SolverSpares,
    hint_in_worker,
    par_in_worker,
    solve_in_worker,
)

from processes import solver_children
from waits import scaled, wait_for

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
        with contextlib.suppress(TimeoutError):  # asserted below
            await wait_for(solver_children)
        running = len(solver_children())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running, len(solver_children())

    running, left = asyncio.run(scenario())
    assert running == 1
    assert left == 0


async def until(condition: Callable[[], object], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + scaled(seconds)
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_spare_child_serves_the_next_job_and_none_outlives_the_spares() -> None:
    """Under `SolverSpares` the first job starts its own child and a spare behind it;
    the next job runs on that spare (already started, waiting for its request), and
    another spare follows. On exit the waiting spare is killed and reaped."""

    async def scenario() -> None:
        board = Board.from_seed("4", DRAW1)
        async with SolverSpares() as spares:
            assert spares.ready() == 0 and solver_children() == []  # none before a job
            first = await solve_in_worker(board, Budget(seconds=20))
            await until(lambda: spares.ready() == 1)
            (spare,) = solver_children()
            second = await solve_in_worker(board, Budget(seconds=20))
            assert spares.taken == 1 and spare not in solver_children()
            assert first.result == second.result == "solvable"
            assert first.moves == second.moves
            await until(lambda: spares.ready() == 1)
            assert len(solver_children()) == 1
        assert solver_children() == []

    asyncio.run(scenario())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cancelling_a_job_on_a_spare_kills_it_and_a_dead_spare_is_passed_over() -> None:
    async def scenario() -> None:
        async with SolverSpares() as spares:
            await hint_in_worker(Board.from_seed("4", DRAW1), 5.0)
            await until(lambda: spares.ready() == 1)
            (spare,) = solver_children()
            task = asyncio.create_task(
                solve_in_worker(Board.from_seed("15", DRAW1), Budget(seconds=60))
            )
            await until(lambda: spares.taken == 1 and spares.ready() == 1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await until(lambda: spare not in solver_children())
            (waiting,) = solver_children()  # the spare started behind it
            os.kill(waiting, signal.SIGKILL)
            await until(lambda: spares.ready() == 0)
            advice = await hint_in_worker(Board.from_seed("4", DRAW1), 5.0)
            assert advice.status == "winning" and spares.taken == 1  # a child of its own
        assert solver_children() == []

    asyncio.run(scenario())


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

    assert asyncio.run(scenario()) < scaled(0.5)


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
