"""Two server processes sharing one Valkey: the same race seen through either node."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.store.connect import RedisClient

from auditor import Truth, audit
from helpers import FAST, WON, close_all, serve_process
from waits import connect_client

if TYPE_CHECKING:
    from conftest import WaitFor


@pytest.fixture
async def second_node(
    valkey_url: str, tmp_path: Path, redis: RedisClient, make_settings: Callable[..., Settings]
) -> AsyncIterator[str]:
    """`klondike-live serve` in its own process on the same Valkey; yields its ws URL."""
    secret = make_settings().secret.decode()
    countdown = {"KLONDIKE_COUNTDOWN_SECONDS": str(FAST["countdown_seconds"])}
    async with serve_process(valkey_url, tmp_path / "node-b", secret, countdown) as served:
        yield served.ws_url


async def test_racer_and_spectator_on_different_processes_see_the_same_events(
    make_settings: Callable[..., Settings],
    second_node: str,
    wait_for: WaitFor,
) -> None:
    """Racers and spectators spread over two processes get the same events in the same
    order, and nobody sees a card they may not know."""
    async with running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as node_a:
        alice = await connect_client(node_a.ws_url, name="Alice")
        dave = await connect_client(node_a.ws_url, name="Dave")
        bob = await connect_client(second_node, name="Bob")
        carol = await connect_client(second_node, name="Carol")
        try:
            room = await alice.create_race("draw=1", seats=2)
            await alice.join(room)
            await bob.join(room)
            await carol.join(room, "spectator")
            await dave.join(room, "spectator")
            await alice.ready(room)
            await bob.ready(room)
            await alice.expect(
                lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"])
            )
            await alice.start(room)
            for racer in (alice, bob):
                await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
            moves = list(WON.moves)
            for token in moves[:40]:
                await alice.move(room, token)
                await bob.move(room, token)
            await bob.resign(room)
            await alice.resign(room)
            results = {}
            for client in (alice, bob, carol, dave):
                results[client.name] = await client.expect(lambda m: m["t"] == "results")
            assert results["Carol"] == results["Dave"] == results["Alice"] == results["Bob"]

            def board_events(client: Client) -> list[tuple[int, int, str]]:
                return [
                    (m["seat"], m["off"], repr(m["d"]))
                    for m in client.received
                    if m["t"] == "diff" and m["audience"] == "spectator"
                ]

            def resigned(client: Client) -> set[int]:
                return {
                    m["seat"]
                    for m in client.received
                    if m["t"] == "diff" and m["audience"] == "spectator"
                    and m["status"] == "resigned"
                }  # fmt: skip

            def both_saw_the_same_events_to_the_end() -> bool:
                # Spectator frames travel on their own channel, so they may follow the
                # results, and the boards are revealed after both resignations: wait
                # until both spectators have both resignations and the same events.
                return resigned(carol) == resigned(dave) == {0, 1} and board_events(
                    carol
                ) == board_events(dave)

            await wait_for(both_saw_the_same_events_to_the_end)
            assert len(board_events(carol)) >= 80
            truth = Truth.from_results(results["Carol"])
            audit(alice.received, truth, role="racer", seat=0)
            audit(bob.received, truth, role="racer", seat=1)
            audit(carol.received, truth, role="spectator")
            audit(dave.received, truth, role="spectator")
        finally:
            await close_all([alice, bob, carol, dave])
