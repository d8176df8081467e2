"""Where bots think, and how a busy node slows them first.

    pool = ThinkPool(workers=1)          # one per process (the node's), shared by its bots
    token, memory = await pool.decide(view, memory, spec, seed)
    gate = LoadGate(moves_per_second=50)
    monitor = asyncio.create_task(gate.watch())   # measures the event loop's lag
    await gate.acquire()                 # before each bot move
    await pool.close()

`ThinkPool` runs `policy.decide` in worker processes (`workers` of them, a
`concurrent.futures.ProcessPoolExecutor`), each started at a lower CPU priority
(`os.nice(NICE)`): the node's own process, which serves the people, wins the CPU
whenever both want it, and the bots' searches use at most `workers` cores.

`LoadGate` is a token bucket every bot move passes: `moves_per_second` while the event
loop keeps up, shrinking as it lags. `watch` wakes every `PROBE` seconds and measures how
late it woke (the lag); the rate is divided by `1 + lag / LAG_UNIT`, and below
`FLOOR` of the nominal rate a bot's move waits for the loop to recover. People's
moves never pass the gate: under load the bots slow down before anyone else.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import time
from typing import Final

from klondike_live.bots.levels import LevelSpec
from klondike_live.bots.policy import Memory, decide
from klondike_live.engine import View

NICE: Final = 10
"""How much lower the thinking processes' CPU priority is than the node's."""

PROBE: Final = 0.1
"""Seconds between two measures of the event loop's lag."""

LAG_UNIT: Final = 0.02
"""Seconds of lag that halve the bots' move rate."""

FLOOR: Final = 0.02
"""The lowest share of the nominal rate the gate keeps."""


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(NICE)


class ThinkPool:
    """Worker processes for bots' thinking, created on first use."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self.decisions = 0

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers, initializer=_lower_priority
            )
        return self._executor

    async def decide(
        self, view: View, memory: Memory, spec: LevelSpec, seed: int
    ) -> tuple[str | None, Memory]:
        """`policy.decide` in a worker process."""
        loop = asyncio.get_running_loop()
        self.decisions += 1
        return await loop.run_in_executor(self._pool(), decide, view, memory, spec, seed)

    async def close(self) -> None:
        """Stop the workers (a search under way is abandoned)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


class LoadGate:
    """A token bucket for bots' moves whose rate shrinks while the event loop lags."""

    def __init__(self, moves_per_second: float, burst: float | None = None) -> None:
        self.nominal = moves_per_second
        self.burst = burst if burst is not None else max(1.0, moves_per_second)
        self.tokens = self.burst
        self.lag = 0.0
        self._stamp = time.monotonic()

    @property
    def rate(self) -> float:
        """Moves per second the bots may make now."""
        return self.nominal * max(FLOOR, 1.0 / (1.0 + self.lag / LAG_UNIT))

    def observe(self, lag: float) -> None:
        """Take one lag measure (seconds the loop woke late); smoothed, quick to rise."""
        self._refill()
        self.lag = lag if lag > self.lag else 0.7 * self.lag + 0.3 * lag

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def try_take(self) -> bool:
        self._refill()
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    async def acquire(self) -> None:
        """Wait for a token (at the current rate)."""
        while not self.try_take():
            await asyncio.sleep(max(0.005, (1 - self.tokens) / self.rate))

    async def watch(self) -> None:
        """Measure the loop's lag every `PROBE` seconds (runs until cancelled)."""
        while True:
            started = time.monotonic()
            await asyncio.sleep(PROBE)
            self.observe(max(0.0, time.monotonic() - started - PROBE))
