"""Quick races end to end: two nodes on one Valkey, players on both, real websockets.
A player alone is racing a stranger from the other node once the fill window closes;
a Valkey restarted without its data gets the waiting player back at its place; the
leak auditor reads every frame (quick race frames included)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1, variant_slug
from klondike_live.gateway.server import running
from klondike_live.store.connect import RedisClient, open_redis

from auditor import audit_clients
from helpers import FAST, WON, close_all
from test_faults import RestartableValkey, valkey
from waits import connect_client, scaled, wait_for

__all__ = ["valkey"]  # the fixture, imported for pytest

QUICK = {**FAST, "quick_fill_seconds": 0.5, "quick_tick_seconds": 0.05}


async def test_players_on_two_nodes_race_the_same_deal(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    seed = lambda: str(WON.seed)  # noqa: E731 (one line per node)
    async with (
        running(make_settings(**QUICK), seed_source=seed) as one,
        running(make_settings(**QUICK), seed_source=seed) as two,
    ):
        ann = await connect_client(one.ws_url, name="Ann")
        bob = await connect_client(two.ws_url, name="Bob")
        cid = await connect_client(two.ws_url, name="Cid")
        try:
            queued = await ann.queue("draw=1")
            assert queued["waiting"] == 1 and queued["variant"] == "draw=1 passes=1 f2t=no"
            await bob.queue("draw=1 passes=1")
            room = await ann.matched()
            assert await bob.matched() == room
            # Cid queued for the other variant, alone, and leaves.
            assert (await cid.queue("draw=3"))["waiting"] == 1
            assert (await cid.unqueue())["reason"] == "left"
            for racer in (ann, bob):
                frame = await racer.join(room)
                assert frame["kind"] == "race" and frame["code"]
                await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
            for token in list(WON.moves)[:10]:
                await ann.move(room, token)
                await bob.move(room, token)
            await ann.resign(room)
            await bob.resign(room)
            for racer in (ann, bob):
                results = await racer.expect(lambda m: m["t"] == "results")
                assert {row["name"] for row in results["ranking"]} == {"Ann", "Bob"}
            assert not [m for m in cid.received if m["t"] == "matched"]
        finally:
            await close_all([ann, bob, cid])


async def test_a_valkey_restart_without_its_data_keeps_the_places(
    make_settings: Callable[..., Settings], valkey: RestartableValkey
) -> None:
    """Valkey stops and starts again with none of its data: the queue is gone, and the
    node of the player waiting puts it back at its original place; a newcomer on the
    other node then races it."""
    seed = lambda: str(WON.seed)  # noqa: E731 (one line per node)
    settings = {**QUICK, "redis_url": valkey.url, "quick_fill_seconds": 1.0}
    async with (
        running(make_settings(**settings), seed_source=seed) as one,
        running(make_settings(**settings), seed_source=seed) as two,
    ):
        ann = await connect_client(one.ws_url, name="Ann")
        bob = await connect_client(two.ws_url, name="Bob")
        store = await open_redis(valkey.url)
        order = keys.queue_order(variant_slug(DRAW1))
        try:
            since = (await ann.queue("draw=1"))["since"]
            await store.set("test:before-the-restart", 1)
            valkey.stop()
            shutil.rmtree(valkey.directory)  # a restart that lost everything
            valkey.start()
            assert not await store.exists("test:before-the-restart")

            async def back() -> None:
                while await store.zscore(order, ann.user) != since:
                    await asyncio.sleep(scaled(0.05))

            await wait_for(back(), 30)
            queued = await bob.queue("draw=1")
            assert queued["since"] > since and queued["waiting"] == 2
            room = await bob.matched(timeout=scaled(15))
            assert await ann.matched(timeout=scaled(15)) == room
            for racer in (ann, bob):
                await racer.join(room)
                await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
            assert await audit_clients(store, [ann, bob]) > 0
        finally:
            await close_all([ann, bob])
            await store.aclose()
