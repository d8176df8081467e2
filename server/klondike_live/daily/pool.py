"""The certified deal pool: per variant, deals the solver has proven winnable.

    pool = DealPool(PoolStore(redis), [DRAW1, DRAW3], target=20,
                    metrics=PoolMetrics(registry))
    refill = asyncio.create_task(pool.run_refill())   # one per node, until cancelled
    deal = await pool.take(DRAW1)                      # CertifiedDeal | None (pool empty)

The deals wait in Redis, per variant, through `store.pool.PoolStore`: a list of seeds,
oldest first, their certificates (the winning lines), and the set of seeds already
handed out. Each deal is handed out at most once. `take` is one Lua script: `LPOP` a
seed, remove its certificate and `ZADD NX` it to the issued set; a seed that was issued
already is dropped and the next one popped. `LPOP` alone gives each list element to
exactly one caller, on any node; the issued set covers the one way an element can be in
the list twice: a push whose reply was lost and that the client retried. A push is a
script that refuses a seed that is waiting or was issued, so a retried push is a no-op.
The issued set keeps 30 days (`ISSUED_RETENTION_MS`), which bounds its memory; after
that a repeat would need two independent 128-bit random seeds to collide.

`run_refill` is the only producer: it keeps each variant's pool at `target` by
certifying fresh random seeds (`secrets.token_hex(16)`, 128 bits) with the solver, one
child process at a time, neediest variant first; deals the solver does not prove
winnable within `budget` (unsolvable or unknown) are discarded. Several nodes may each
run it; the pool then overshoots its target by at most one deal per node. The pool
lives in Redis, so it survives restarts (the embedded Valkey keeps an AOF).

This module must never pool a deal without a checked winning line, never hand out a
seed twice, and never log a seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Sequence
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge

from klondike_live.daily.certify import CertificateError, CertifiedDeal, certify
from klondike_live.engine import Variant
from klondike_live.solver import Budget, SolverError
from klondike_live.solver.worker import WorkerError
from klondike_live.store import StoreError
from klondike_live.store.pool import PoolStore
from klondike_live.tasks import cancel_requested

__all__ = [
    "DEFAULT_POOL_BUDGET",
    "ISSUED_RETENTION_MS",
    "DealPool",
    "PoolMetrics",
]

log = logging.getLogger(__name__)

DEFAULT_POOL_BUDGET: Final = Budget(seconds=5.0, nodes=300_000)
"""Per random deal: about 1.5 s of search, within which most winnable deals are proven."""

ISSUED_RETENTION_MS: Final = 30 * 86_400_000
"""How long a handed-out seed stays in the issued set."""

SEED_BYTES: Final = 16
"""Random bytes per seed (128 bits; the seed is their lowercase hex)."""


class PoolMetrics:
    """The pool's Prometheus metrics, registered on the node's registry.

    Labels are variant texts (the configured few) and verdicts, never seeds.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.size = Gauge(
            "klondike_pool_deals",
            "Certified deals waiting in the pool, by variant (as last seen by this node).",
            ["variant"],
            registry=registry,
        )
        self.certified = Counter(
            "klondike_pool_certified",
            "Random deals this node proved winnable and added to the pool, by variant.",
            ["variant"],
            registry=registry,
        )
        self.rejected = Counter(
            "klondike_pool_rejected",
            "Random deals this node discarded, by variant and verdict "
            "(unsolvable, or unknown: not proven within the budget).",
            ["variant", "verdict"],
            registry=registry,
        )
        self.empty = Counter(
            "klondike_pool_empty",
            "Games dealt a random, uncertified deal because the pool of their variant was "
            "empty (or the variant is not pooled), by variant.",
            ["variant"],
            registry=registry,
        )


class DealPool:
    """Certified winnable deals per variant, shared through Redis by every node."""

    def __init__(
        self,
        store: PoolStore,
        variants: Sequence[Variant],
        *,
        target: int = 20,
        budget: Budget = DEFAULT_POOL_BUDGET,
        par_budget: Budget | None = None,
        metrics: PoolMetrics | None = None,
        interval: float = 2.0,
    ) -> None:
        """`variants` are the ones `run_refill` keeps at `target` deals each.

        `budget` bounds the solver per random deal (a deal not proven within it is
        discarded); `par_budget`, if given, adds a par search to shorten each line;
        `interval` is how often (seconds) a refiller with full pools looks again.
        """
        if target < 1:
            raise ValueError(f"target must be at least 1, not {target!r}")
        if interval <= 0:
            raise ValueError(f"interval must be positive, not {interval!r}")
        self.store = store
        self.variants = tuple(dict.fromkeys(variants))
        self.target = target
        self.budget = budget
        self.par_budget = par_budget
        self.metrics = metrics
        self.interval = interval
        self._wake = asyncio.Event()

    async def take(self, variant: Variant) -> CertifiedDeal | None:
        """Hand out the oldest waiting deal of `variant` (atomic), or None if none waits.

        No seed is ever returned twice, by this or any other process.
        """
        taken = await self.store.take(variant, ISSUED_RETENTION_MS)
        self._observe(variant, taken.size)
        self._wake.set()  # a local refiller tops the pool up at once
        if taken.seed is None:
            return None
        return CertifiedDeal(taken.seed, variant, taken.moves)

    async def size(self, variant: Variant) -> int:
        """How many certified deals of `variant` are waiting."""
        count = await self.store.size(variant)
        self._observe(variant, count)
        return count

    async def add(self, deal: CertifiedDeal) -> bool:
        """Put a certified deal in its variant's pool, after replaying its line.

        Raises `CertificateError` when the line does not win; returns False (and adds
        nothing) when the seed is waiting already or was handed out.
        """
        deal.check()
        size = await self.store.push(deal.variant, deal.seed, deal.moves)
        if size:
            self._observe(deal.variant, size)
        return size > 0

    async def run_refill(self) -> None:
        """Keep every configured variant's pool at `target`, until cancelled.

        One solver process at a time; Redis or solver failures are logged and retried
        after `interval`, and a line the engine rejects drops that deal. Cancellation
        kills a running solver and propagates.
        """
        failing = False
        while not cancel_requested():
            # Cleared before the sizes are read, not when idling: a take between the
            # two would otherwise be lost, and the pool left short for `interval`.
            self._wake.clear()
            try:
                variant = await self._neediest()
                if variant is None:
                    await self._idle()
                else:
                    await self.refill_once(variant)
            except (StoreError, WorkerError, OSError) as exc:
                if not failing:
                    log.warning("deal pool refill failed, retrying: %s", exc)
                failing = True
                await asyncio.sleep(self.interval)
            except (SolverError, CertificateError) as exc:
                # A solver bug: that deal is dropped, never pooled; the next one may do.
                log.error("deal pool: the solver's line was rejected: %s", exc)
            else:
                failing = False
        raise asyncio.CancelledError

    async def refill_once(self, variant: Variant) -> bool:
        """Certify one fresh random deal of `variant`; True when it joined the pool."""
        seed = secrets.token_hex(SEED_BYTES)
        outcome = await certify(seed, variant, self.budget, par_budget=self.par_budget)
        label = str(variant)
        if outcome.deal is None:
            if self.metrics is not None:
                self.metrics.rejected.labels(variant=label, verdict=outcome.verdict).inc()
            return False
        added = await self.add(outcome.deal)
        if added and self.metrics is not None:
            self.metrics.certified.labels(variant=label).inc()
        return added

    async def _neediest(self) -> Variant | None:
        """The configured variant with the fewest waiting deals below target, if any."""
        sizes = await self.store.sizes(self.variants)
        for variant, size in zip(self.variants, sizes, strict=True):
            self._observe(variant, size)
        below = [(size, i) for i, size in enumerate(sizes) if size < self.target]
        return self.variants[min(below)[1]] if below else None

    async def _idle(self) -> None:
        """Wait `interval` seconds, or less when a local `take` woke us since the sizes
        were read."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), self.interval)

    def _observe(self, variant: Variant, size: int) -> None:
        if self.metrics is not None:
            self.metrics.size.labels(variant=str(variant)).set(size)
