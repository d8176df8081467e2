"""The server process's garbage-collection policy: no stop-the-world pauses under load.

CPython frees almost every object by reference counting; its cycle collector exists for
the rest, and a full (generation 2) collection walks every tracked object of the
process. On a node holding thousands of connections that is millions of objects, and
the collector stops the event loop for 150-270 ms each time, in the middle of a race.

The policy (`GcPolicy.run`, a node's background task under `klondike-live serve`):

- every `gc_freeze_seconds` the collector's generations are frozen (`gc.freeze()`, a
  constant-time move of every tracked object into the permanent generation). Automatic
  collections then only walk what was allocated since, so even a generation 2
  collection is short. Frozen objects are still freed by reference counting as usual;
  what freezing defers is only the reclaiming of reference cycles among them.
- automatic collections stay young (`YOUNG_THRESHOLDS`): generation 1 is collected
  at every second collection of generation 0 (CPython's default, every eleventh, lets
  it grow to some 20,000 objects, walked in 10-20 ms on a loaded node; at every second,
  5-8 ms), and generation 2 never automatically. Between freezes generation 2 holds
  what outlived two young collections, up to 150,000 objects in 10 s under load:
  CPython walked it every few seconds, for 45-160 ms, and found nothing to free (the
  long-lived objects of connections, rooms and pending timers; cycles die young).
  Objects promoted there are frozen at the next freeze like everything else.
- every `gc_sweep_seconds` (0: never) the permanent generation is thawed, swept by one
  full collection, and frozen again: the one long pause of the policy, at a known
  interval the operator chooses, reclaiming any cycles that died old.
- the node's own per-connection objects die without cycles (`gateway.server` releases
  the one cycle CPython 3.11's socket transports leave behind, as 3.12 does), so little
  waits for a sweep; `tests/server/test_gc.py` checks that connections frozen while
  open leave nothing in cycles once closed. Short-lived garbage (a request's own, even
  in cycles) dies before a freeze reaches it and is freed by automatic collections.

`GcPauses` records every collection's pause in the `klondike_gc_pause_seconds`
histogram (by generation; sweeps as generation "sweep") through `gc.callbacks`, and the
CPU time the collector itself spent in `klondike_gc_cpu_seconds`: a pause is wall time,
so on a machine whose cores are all busy it also holds the time the process waited for
one, and the two together tell the collector's work from that wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["GC_PAUSE_BUCKETS", "YOUNG_THRESHOLDS", "GcPauses", "GcPolicy"]

YOUNG_THRESHOLDS = (700, 1)
"""Thresholds of generations 0 and 1 while the policy runs (`gc.set_threshold`); the
policy's freezes and sweeps stand in for generation 2."""

NEVER = 1 << 30
"""A generation-2 threshold that is never reached: no automatic full collections."""

GC_PAUSE_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
"""Young collections take well under a millisecond; a full one on a big heap, 100s."""


class GcPauses:
    """Times every collection of the process (via `gc.callbacks`) into a histogram.

    A context manager: the callback is registered on entry and removed on exit, so
    several nodes in one process (tests) each count while they run.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.pauses = Histogram(
            "klondike_gc_pause_seconds",
            "Pauses of the garbage collector, by generation (sweep: a scheduled full"
            " collection of the frozen heap), in seconds.",
            ["generation"],
            buckets=GC_PAUSE_BUCKETS,
            registry=registry,
        )
        self._by_generation = [self.pauses.labels(generation=str(g)) for g in range(3)]
        cpu = Histogram(
            "klondike_gc_cpu_seconds",
            "CPU time of the garbage collector's automatic collections, by generation"
            " (their pauses less any wait for a core), in seconds.",
            ["generation"],
            buckets=GC_PAUSE_BUCKETS,
            registry=registry,
        )
        self._cpu_by_generation = [cpu.labels(generation=str(g)) for g in range(3)]
        self.sweep = self.pauses.labels(generation="sweep")
        self.frozen = Gauge(
            "klondike_gc_frozen_objects",
            "Objects in the collector's permanent generation (see docs/operations.md).",
            registry=registry,
        )
        self.frozen.set_function(gc.get_freeze_count)
        self.sweeps = Counter(
            "klondike_gc_sweeps",
            "Scheduled full collections of the frozen heap.",
            registry=registry,
        )
        self._started = 0.0
        self._started_cpu = 0.0
        self._sweeping = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            self._started_cpu = time.thread_time()
        elif not self._sweeping:
            generation = info["generation"]
            self._by_generation[generation].observe(time.perf_counter() - self._started)
            self._cpu_by_generation[generation].observe(time.thread_time() - self._started_cpu)

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    @contextlib.contextmanager
    def sweeping(self) -> Iterator[None]:
        """A block whose collections count as one sweep, not as generation 2."""
        self._sweeping = True
        started = time.perf_counter()
        try:
            yield
        finally:
            self._sweeping = False
            self.sweep.observe(time.perf_counter() - started)
            self.sweeps.inc()


@dataclass
class GcPolicy:
    """Freeze the heap at an interval, sweep it at a longer one (see the module doc)."""

    freeze_seconds: float
    sweep_seconds: float
    pauses: GcPauses | None = None
    clock: Callable[[], float] = time.monotonic
    _settled: bool = field(default=False, init=False)

    def settle(self) -> None:
        """After start-up: collect once, then freeze everything start-up made (the node
        calls it before it reads the shared clock and serves anyone)."""
        gc.collect()
        gc.freeze()
        self._settled = True

    def sweep(self) -> int:
        """Thaw, collect everything, freeze again; returns the objects reclaimed."""
        if self.pauses is None:
            return self._sweep()
        with self.pauses.sweeping():
            return self._sweep()

    @staticmethod
    def _sweep() -> int:
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        return found

    async def run(self) -> None:
        """Apply the policy until cancelled (thawing the heap and giving CPython's
        thresholds back on the way out)."""
        if self.freeze_seconds <= 0:
            return
        if not self._settled:
            self.settle()
        last_sweep = self.clock()
        thresholds = gc.get_threshold()
        gc.set_threshold(*YOUNG_THRESHOLDS, NEVER)
        try:
            while True:
                await asyncio.sleep(self.freeze_seconds)
                if self.sweep_seconds > 0 and self.clock() - last_sweep >= self.sweep_seconds:
                    self.sweep()
                    last_sweep = self.clock()
                else:
                    gc.freeze()
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
