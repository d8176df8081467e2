"""End to end: races and solo games on certified deals from the pool, the fallback when
it is empty, `deal: "any"`, and the pool's refill and metrics in a running node."""

from __future__ import annotations

import secrets
import urllib.request
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from klondike_live.client import Client, Message
from klondike_live.config import Settings
from klondike_live.daily.certify import CertifiedDeal
from klondike_live.engine import UNLIMITED, Board, Variant
from klondike_live.gateway.server import Node, running
from klondike_live.solver import Budget, solve
from klondike_live.store.connect import RedisClient

from helpers import FAST, WON, close_all, node
from waits import connect_client, scaled

if TYPE_CHECKING:
    from conftest import WaitFor

__all__ = ["node"]  # the fixture, imported for pytest

EASY = Variant(draw=1, passes=UNLIMITED)  # pooled by default; nearly every deal is won
EASY_TEXT = str(EASY)


def certified(count: int) -> list[CertifiedDeal]:
    """Fresh random deals of EASY proven winnable in this process."""
    deals: list[CertifiedDeal] = []
    while len(deals) < count:
        seed = secrets.token_hex(16)
        result = solve(Board.from_seed(seed, EASY), Budget(nodes=20_000))
        if result.result == "solvable":
            deals.append(CertifiedDeal(seed, EASY, tuple(result.moves)))
    return deals


async def create(client: Client, kind: str, **fields: object) -> str:
    rid = client._new_id()
    message: Message = {"t": "create", "rid": rid, "kind": kind, "variant": EASY_TEXT, **fields}
    reply = await client.call(message, lambda m: m["t"] == "created" and m.get("rid") == rid)
    return str(reply["room"])


async def race(alice: Client, bob: Client, room: str) -> Message:
    """Both join (unless in the room) and get ready; the host starts; the countdown's
    room frame. In the lobby, `certified` says what the creator asked for."""
    for racer in (alice, bob):
        if not any(m["t"] == "room" and m["room"] == room for m in racer.received):
            lobby = await racer.join(room)
            assert lobby["state"] == "lobby"
        await racer.ready(room)
    await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
    await alice.start(room)
    counting = await alice.expect(lambda m: m["t"] == "room" and m["state"] == "countdown")
    for racer in (alice, bob):
        await racer.expect(lambda m: m["t"] == "board" and m["room"] == room)
    return counting


async def finish(alice: Client, bob: Client, room: str) -> Message:
    await alice.resign(room)
    await bob.resign(room)
    return await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)


async def test_races_take_certified_deals_from_the_pool_rematches_too(node: Node) -> None:
    """A race deals the oldest pooled deal of its variant at once; its rematch the next;
    each is marked certified and revealed at the end."""
    deals = certified(2)
    for deal in deals:
        assert await node.pool.add(deal)
    alice = await connect_client(node.ws_url, name="Alice")
    bob = await connect_client(node.ws_url, name="Bob")
    try:
        room = await create(alice, "race", seats=2)
        assert (await alice.join(room))["certified"] is True
        counting = await race(alice, bob, room)
        assert counting["certified"] is True
        assert await node.pool.size(EASY) == 1
        results = await finish(alice, bob, room)
        assert results["seed"] == deals[0].seed and results["certified"] is True
        await alice.rematch(room)
        await alice.expect(lambda m: m["t"] == "room" and m["state"] == "lobby" and m["gen"] == 2)
        for racer in (alice, bob):
            await racer.ready(room)
        await alice.expect(
            lambda m: (
                m["t"] == "room" and m["gen"] == 2 and all(s and s["ready"] for s in m["seats"])
            )
        )
        await alice.start(room)
        again = await alice.expect(lambda m: m["t"] == "room" and m["state"] == "countdown")
        assert again["certified"] is True and await node.pool.size(EASY) == 0
        for racer in (alice, bob):
            await racer.expect(lambda m: m["t"] == "board" and m.get("epoch") == 2)
        results = await finish(alice, bob, room)
        assert results["seed"] == deals[1].seed
    finally:
        await close_all([alice, bob])


async def test_an_empty_pool_falls_back_and_any_deal_skips_it(node: Node) -> None:
    """With the pool empty the game is dealt a random seed at once, marked uncertified;
    `deal: "any"` never takes a pooled deal; a refused start uses none up."""
    alice = await connect_client(node.ws_url, name="Alice")
    bob = await connect_client(node.ws_url, name="Bob")
    try:
        solo = await create(alice, "solo")
        state = await alice.join(solo)
        assert state["certified"] is False
        results_seed = WON.seed
        await alice.resign(solo)
        solo_results = await alice.expect(lambda m: m["t"] == "results" and m["room"] == solo)
        assert solo_results["seed"] == results_seed and solo_results["certified"] is False

        (deal,) = certified(1)
        assert await node.pool.add(deal)
        room = await create(alice, "race", seats=2, deal="any")
        assert (await alice.join(room))["certified"] is False
        await alice.start(room)  # nobody is ready: refused, and no deal is used up
        refusal = await alice.expect(lambda m: m["t"] == "error" and m.get("room") == room)
        assert refusal["code"] == "not_ready" and await node.pool.size(EASY) == 1
        counting = await race(alice, bob, room)
        assert counting["certified"] is False and await node.pool.size(EASY) == 1
        await finish(alice, bob, room)

        played = await create(alice, "solo")
        state = await alice.join(played)
        assert state["certified"] is True and await node.pool.size(EASY) == 0
        await alice.resign(played)
        done = await alice.expect(lambda m: m["t"] == "results" and m["room"] == played)
        assert done["seed"] == deal.seed
        unpooled = await create(alice, "solo", variant="draw=3 passes=2")
        assert (await alice.join(unpooled))["certified"] is False
    finally:
        await close_all([alice, bob])


async def test_a_node_refills_the_pool_and_reports_it(
    make_settings: Callable[..., Settings], redis: RedisClient, wait_for: WaitFor
) -> None:
    """The node's refill task certifies deals up to the target; the pool's metrics are
    on the node's `/metrics`; a taken deal is replaced."""
    settings = make_settings(**FAST, pool_target=2, pool_variants=(EASY,))
    async with running(settings) as node:
        await wait_for(lambda: node.pool.size(EASY), timeout=60)
        await wait_for(lambda: _ge(node.pool.size(EASY), 2), timeout=60)
        text = await _metrics(node)
        assert f'klondike_pool_deals{{variant="{EASY_TEXT}"}} 2.0' in text
        assert f'klondike_pool_certified_total{{variant="{EASY_TEXT}"}}' in text
        alice = await connect_client(node.ws_url, name="Alice")
        try:
            solo = await create(alice, "solo")
            assert (await alice.join(solo))["certified"] is True
            await wait_for(lambda: _ge(node.pool.size(EASY), 2), timeout=60)
        finally:
            await alice.close()


async def _ge(size: Awaitable[int], target: int) -> bool:
    return await size >= target


async def _metrics(node: Node) -> str:
    import asyncio

    def read() -> str:
        with urllib.request.urlopen(node.url + "metrics", timeout=scaled(5)) as response:
            body: bytes = response.read()
            return body.decode()

    return await asyncio.to_thread(read)
