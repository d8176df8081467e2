"""The certified deal pool: only proven deals, each handed out once, refilled in the
background, kept in Redis."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest
from prometheus_client import CollectorRegistry
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.daily.certify import CertificateError, CertifiedDeal
from klondike_live.daily.pool import DealPool, PoolMetrics
from klondike_live.daily.variants import DRAW1, DRAW3, variant_slug
from klondike_live.engine import Board, Variant
from klondike_live.solver import Budget
from klondike_live.store.connect import open_redis
from klondike_live.store.pool import PoolStore

from daily_helpers import EASY, certified_deals
from processes import solver_children
from waits import scaled

if TYPE_CHECKING:
    from conftest import WaitFor

BUDGET = Budget(seconds=10, nodes=20_000)


def replays_to_a_win(deal: CertifiedDeal) -> bool:
    board = Board.from_seed(deal.seed, deal.variant)
    for token in deal.moves:
        board.play(token)
    return board.is_won()


async def test_take_hands_out_added_deals_in_order(redis: Redis) -> None:
    """Deals come out oldest first, with their line; an empty pool gives None."""
    pool = DealPool(PoolStore(redis), [EASY])
    deals = certified_deals(EASY, 3)
    for deal in deals:
        assert await pool.add(deal)
    assert await pool.size(EASY) == 3
    assert await pool.size(DRAW1) == 0
    taken = [await pool.take(EASY) for _ in range(3)]
    assert taken == deals
    assert all(d is not None and replays_to_a_win(d) for d in taken)
    assert await pool.take(EASY) is None
    assert await pool.take(DRAW3) is None


async def test_a_line_that_does_not_win_is_never_pooled(redis: Redis) -> None:
    """`add` replays the certificate first: a short or foreign line is refused."""
    pool = DealPool(PoolStore(redis), [EASY])
    deal = certified_deals(EASY, 1)[0]
    with pytest.raises(CertificateError):
        await pool.add(CertifiedDeal(deal.seed, EASY, deal.moves[:-1]))
    other = certified_deals(EASY, 1)[0]
    with pytest.raises(CertificateError):
        await pool.add(CertifiedDeal(deal.seed, EASY, other.moves))
    assert await pool.size(EASY) == 0


async def test_a_seed_is_never_handed_out_twice_under_concurrent_takes(
    redis: Redis, valkey_url: str
) -> None:
    """Two "nodes" (own clients) racing to take: every deal once, none repeated."""
    deals = certified_deals(EASY, 30)
    other = await open_redis(valkey_url)
    try:
        first, second = DealPool(PoolStore(redis), [EASY]), DealPool(PoolStore(other), [EASY])
        for deal in deals:
            assert await first.add(deal)
        takes = [pool.take(EASY) for _ in range(40) for pool in (first, second)]
        results = await asyncio.gather(*takes)
        taken = [d.seed for d in results if d is not None]
        assert len(taken) == len(set(taken)) == 30
        assert set(taken) == {d.seed for d in deals}
        # A retried or repeated push of a seed already handed out is refused.
        assert not await second.add(deals[0])
        assert await first.take(EASY) is None
    finally:
        await other.aclose()


async def test_a_waiting_seed_is_not_queued_twice(redis: Redis) -> None:
    """Adding the same seed again while it waits changes nothing."""
    pool = DealPool(PoolStore(redis), [EASY])
    deal = certified_deals(EASY, 1)[0]
    assert await pool.add(deal)
    assert not await pool.add(deal)
    assert await pool.size(EASY) == 1
    assert await pool.take(EASY) == deal
    assert await pool.take(EASY) is None


async def test_the_pool_survives_a_new_instance_and_client(redis: Redis, valkey_url: str) -> None:
    """Everything is in Redis: another process (new client, new pool) sees the deals."""
    deals = certified_deals(EASY, 2)
    for deal in deals:
        assert await DealPool(PoolStore(redis), [EASY]).add(deal)
    fresh = await open_redis(valkey_url)
    try:
        pool = DealPool(PoolStore(fresh), [EASY])
        assert await pool.size(EASY) == 2
        assert [await pool.take(EASY), await pool.take(EASY)] == deals
    finally:
        await fresh.aclose()
    slug = variant_slug(EASY)
    assert await redis.zcard(keys.pool_issued(slug)) == 2
    assert await redis.hlen(keys.pool_deals(slug)) == 0


async def test_refill_fills_every_pool_to_target_with_certified_deals(
    redis: Redis, wait_for: WaitFor
) -> None:
    """The refiller certifies random seeds until each variant has `target` deals."""
    registry = CollectorRegistry()
    pool = DealPool(
        PoolStore(redis), [EASY, DRAW3], target=2, budget=BUDGET, metrics=PoolMetrics(registry)
    )
    task = asyncio.create_task(pool.run_refill())
    try:

        async def full() -> bool:
            return await pool.size(EASY) >= 2 and await pool.size(DRAW3) >= 2

        await wait_for(full, timeout=60)
        await asyncio.sleep(scaled(0.3))  # a pause: full pools, it waits instead of overfilling
        assert await pool.size(EASY) == 2 and await pool.size(DRAW3) == 2
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    rejected = [
        sample
        for family in registry.collect()
        if family.name == "klondike_pool_rejected"
        for sample in family.samples
        if sample.name.endswith("_total")
    ]
    assert {s.labels["verdict"] for s in rejected} <= {"unsolvable", "unknown"}
    for variant in (EASY, DRAW3):
        label = {"variant": str(variant)}
        assert registry.get_sample_value("klondike_pool_deals", label) == 2
        assert registry.get_sample_value("klondike_pool_certified_total", label) == 2
        for _ in range(2):
            deal = await pool.take(variant)
            assert deal is not None and len(deal.seed) == 32 and replays_to_a_win(deal)
        assert registry.get_sample_value("klondike_pool_deals", label) == 0


class TakenWhileCounting(PoolStore):
    """A pool store whose first `sizes` answer is read just before another task takes
    a deal: the refiller's count is stale by the time it decides to idle."""

    def __init__(self, redis: Redis) -> None:
        super().__init__(redis)
        self.pool: DealPool | None = None
        self.taken: CertifiedDeal | None = None

    async def sizes(self, variants: Sequence[Variant]) -> list[int]:
        counted = await super().sizes(variants)
        if self.pool is not None and self.taken is None:
            self.taken = await self.pool.take(variants[0])
        return counted


async def test_a_take_while_the_refiller_counts_is_not_lost(
    redis: Redis, wait_for: WaitFor
) -> None:
    """A take between the refiller's count of the pool and its idling still wakes it:
    the pool is topped up at once, not after the polling interval (an hour here)."""
    store = TakenWhileCounting(redis)
    pool = DealPool(store, [EASY], target=1, budget=BUDGET, interval=3600)
    await pool.add(certified_deals(EASY, 1)[0])
    store.pool = pool
    task = asyncio.create_task(pool.run_refill())
    try:
        await wait_for(lambda: store.taken is not None, timeout=10)
        assert await pool.size(EASY) == 0
        await wait_for(lambda: pool.size(EASY), timeout=150)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_refill_tops_up_after_a_take(redis: Redis, wait_for: WaitFor) -> None:
    """A take wakes the local refiller at once, long before its polling interval."""
    pool = DealPool(PoolStore(redis), [EASY], target=1, budget=BUDGET, interval=3600)
    task = asyncio.create_task(pool.run_refill())
    try:
        # Each fill is a solver process: on a loaded machine it can take a minute or
        # two, still far under the refiller's hour-long polling interval that a take
        # must not wait for.
        await wait_for(lambda: pool.size(EASY), timeout=150)
        first = await pool.take(EASY)
        assert first is not None
        await wait_for(lambda: pool.size(EASY), timeout=150)
        second = await pool.take(EASY)
        assert second is not None and second.seed != first.seed
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_refill_stops_promptly_on_cancel(redis: Redis, wait_for: WaitFor) -> None:
    """Cancelling kills the running solver, re-raises, and pools nothing unproven."""
    pool = DealPool(PoolStore(redis), [DRAW1], target=50, budget=Budget(seconds=60))
    task = asyncio.create_task(pool.run_refill())
    await wait_for(solver_children, timeout=10)
    assert len(solver_children()) == 1  # one solver at a time
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2
    assert solver_children() == []
    while (deal := await pool.take(DRAW1)) is not None:
        assert replays_to_a_win(deal)


async def test_pool_options_are_checked(redis: Redis) -> None:
    """A pool needs a positive target and interval."""
    with pytest.raises(ValueError):
        DealPool(PoolStore(redis), [EASY], target=0)
    with pytest.raises(ValueError):
        DealPool(PoolStore(redis), [EASY], interval=0)
