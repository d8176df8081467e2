"""The stores' one latency wrapper: every round trip a store makes to Redis is timed here.

    latency = Latency()                                  # one per node, shared by its stores
    latency.observer = metrics.redis_latency.observe     # klondike_redis_latency_seconds
    reply = await self.latency.timed(self.redis.hget(key, "state"))

`Store` makes one and hands it to the stores it opens (`PlayerStore`) and to those the
service opens (`DailyStore`, `TournamentStore`, `PoolStore`, `OutboxStore`); a store made
on its own (a command-line tool, a test) gets one that observes nothing. A store awaits
Redis only through `timed`: tests/architecture/test_store_latency.py reads the store
modules and fails on any other await.

This module must stay free of Redis and of the metrics: it only measures.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["Latency"]

T = TypeVar("T")


class Latency:
    """Times awaited store calls and passes each duration (seconds) to `observer`."""

    def __init__(self, observer: Callable[[float], None] | None = None) -> None:
        self.observer = observer

    async def timed(self, call: Awaitable[T]) -> T:
        """Await `call` (a command, a script, a pipeline's `execute`), timing it, failed
        or not."""
        start = time.perf_counter()
        try:
            return await call
        finally:
            if self.observer is not None:
                self.observer(time.perf_counter() - start)
