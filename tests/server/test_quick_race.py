"""Quick races end to end: two nodes on one Valkey, players on both, real websockets.
A player alone is racing a stranger from the other node once the fill window closes;
the leak auditor reads every frame (quick race frames included)."""

from __future__ import annotations

from collections.abc import Callable

from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.store.connect import RedisClient

from helpers import FAST, WON, close_all
from waits import connect_client

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
