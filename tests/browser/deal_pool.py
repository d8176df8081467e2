"""Deals put first in a test server's certified deal pool, so that the next game of
a variant is a deal a test chose (its winning line known, its first moves planned)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from klondike_live.engine import Board, Variant
from klondike_live.solver.search import SOLVABLE, Budget, solve
from klondike_live.store.connect import open_redis
from klondike_live.store.pool import PoolStore

from waits import scaled


def queue_deals(valkey_url: str, variant: Variant, seeds: tuple[str, ...]) -> dict[str, list[str]]:
    """Put `seeds` first in the certified deal pool of `variant`, so that the next solo
    games of that variant get them in order (a seed the pool handed out before, in an
    earlier run on the same Valkey, is not queued again); each seed's winning line, the
    one its hints follow."""
    lines: dict[str, list[str]] = {}

    async def push() -> None:
        redis = await open_redis(valkey_url)
        try:
            pool = PoolStore(redis)
            for seed in seeds:
                # Seconds on the tests' clock: a loaded machine searches slower.
                line = solve(Board.from_seed(seed, variant), Budget(seconds=scaled(60)))
                assert line.result == SOLVABLE, seed
                await pool.push(variant, seed, line.moves)
                lines[seed] = list(line.moves)
        finally:
            await redis.aclose()

    # Playwright's sync API runs an event loop in this thread: the store's in another.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, push()).result()
    return lines
