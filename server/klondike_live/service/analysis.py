"""Background analysis of finished games: each board's per-ply verdicts, cached.

    analyses = Analyses(store, history)
    analyses.request(room_id, gen)          # after a game ends, or on demand
    stored, pending = await analyses.load(room_id, gen)

A finished game's boards are analysed one at a time (`solver.analysis` through
`solver.worker.analyse_in_worker`): in a child process at a lower scheduling priority
(`nice`), so hints and live games come first, with a CPU budget per position and per
board, and at most `concurrency` children per node. The result is stored beside the
game's results (`Store.save_analysis`: the same key, so the same expiry and hash slot)
and in the history database (`History.save_analysis`; a game not there yet takes the
analysis with it from Valkey when it is drained, `service.archive`). A claim in the
store (`Store.claim_analysis`) makes one node of the cluster do the work, and a claim
older than `STALE_MS` (a node that died mid-way) may be taken over. A game whose results
left Valkey is read back into it from the database for the time of its analysis
(`Store.cache_results`).

What a viewer may see of it is `race.redaction.analysis_for`'s business.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Final

import msgpack

from klondike_live.history import History, HistoryError
from klondike_live.solver.analysis import AnalysisBudget
from klondike_live.solver.search import SolverError
from klondike_live.solver.worker import WorkerError, analyse_in_worker
from klondike_live.store import Store, StoreError

log = logging.getLogger(__name__)

BUDGET: Final = AnalysisBudget(per_position=1.0, total=20.0)
"""CPU seconds per searched position and per board of a finished game (the default)."""


def analysis_budget(seconds: float) -> AnalysisBudget:
    """The budget for `seconds` per board (the `analysis_seconds` setting): at most 1 s
    per position."""
    return AnalysisBudget(per_position=min(1.0, seconds), total=seconds)


NICE: Final = 10
"""How much lower than the node's the analysing child's scheduling priority is."""

MAX_QUEUED: Final = 64
"""Games at most waiting for (or in) analysis on one node; more are not queued (their
analysis is made when it is asked for over HTTP), so a burst of finished games cannot
grow the backlog without bound."""

STALE_MS: Final = 10 * 60 * 1000
"""A claim older than this is taken to be abandoned (its node stopped)."""


class Analyses:
    """The node's analysis jobs; see the module docstring."""

    def __init__(
        self,
        store: Store,
        history: History,
        *,
        budget: AnalysisBudget = BUDGET,
        nice: int = NICE,
        concurrency: int = 1,
    ) -> None:
        self.store = store
        self.history = history
        self.budget = budget
        self.nice = nice
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: set[tuple[str, int]] = set()
        self.enabled = budget.total > 0

    def request(self, room_id: str, gen: int) -> None:
        """Analyse a finished game in the background unless it is stored or under way."""
        if (room_id, gen) in self._running or len(self._running) >= MAX_QUEUED:
            return
        self._running.add((room_id, gen))
        task = asyncio.create_task(self._run(room_id, gen), name=f"analysis {room_id}/{gen}")
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._done(done, room_id, gen))

    def _done(self, task: asyncio.Task[None], room_id: str, gen: int) -> None:
        # Also for a task cancelled before it ran (its own `finally` never did).
        self._tasks.discard(task)
        self._running.discard((room_id, gen))

    async def load(self, room_id: str, gen: int) -> tuple[dict[str, Any] | None, bool]:
        """The stored analysis (or None) and whether one is being made."""
        data, claim = await self.store.load_analysis(room_id, gen)
        if data is None and claim is None:
            data = await self.history.load_analysis(room_id, gen)
        if data is None:
            return None, claim is not None or (room_id, gen) in self._running
        stored: dict[str, Any] = msgpack.unpackb(data, raw=False)
        return stored, False

    async def close(self) -> None:
        """Cancel the jobs under way (their children are killed and reaped)."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, room_id: str, gen: int) -> None:
        try:
            async with self._slots:
                now = await self.store.now_ms()
                blob = await self.store.load_results(room_id, gen)
                if blob is None:  # no longer cached: from the database, for a while
                    blob = await self.history.load_results(room_id, gen)
                    if blob is None:
                        return
                    await self.store.cache_results(room_id, gen, blob)
                if not await self.store.claim_analysis(room_id, gen, now, STALE_MS):
                    return
                results: dict[str, Any] = msgpack.unpackb(blob, raw=False)
                analysis = await self._analyse(results)
                data = msgpack.packb(analysis, use_bin_type=True)
                await self.store.save_analysis(room_id, gen, data)
                await self.history.save_analysis(room_id, gen, data)
                log.info("analysis of %s gen %d stored", room_id, gen)
        except (
            StoreError,
            HistoryError,
            OSError,
            WorkerError,
            SolverError,
            TimeoutError,
        ) as exc:
            # The claim stays and goes stale: a later request tries again.
            log.warning("analysis of %s gen %d failed: %s", room_id, gen, exc)
        finally:
            self._running.discard((room_id, gen))

    async def _analyse(self, results: dict[str, Any]) -> dict[str, Any]:
        boards = []
        for row in sorted(results["ranking"], key=lambda r: int(r["seat"])):
            data = await analyse_in_worker(row["record"], self.budget, nice=self.nice)
            if data is None:  # the child overran its budget: nothing decided
                count = int(row["moves"]) + 1
                data = {
                    "plies": [{"ply": k, "verdict": "unknown", "line": None} for k in range(count)],
                    "lost_at": None,
                }
            boards.append(
                {
                    "seat": int(row["seat"]),
                    "name": row["name"],
                    "plies": data["plies"],
                    "lost_at": data["lost_at"],
                }
            )
        return {
            "budget": {"per_position": self.budget.per_position, "total": self.budget.total},
            "boards": boards,
        }
