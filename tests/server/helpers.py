"""Shared pieces of the end-to-end tests: a node fixture and a race set-up."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.engine import GameRecord
from klondike_live.gateway.server import Node, running

from testdata import DATA

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())
"""A won draw-1 game; nodes started by `node` deal its seed to every race."""

FAST = {
    "countdown_seconds": 0.2,
    "tick_seconds": 0.05,
    "rate_per_second": 1000.0,
    "rate_burst": 1000,
}


@pytest.fixture
async def node(make_settings: Callable[..., Settings], redis: Any) -> AsyncIterator[Node]:
    """A server node on a free port, racing on the deal of the stored won game."""
    async with running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as started:
        yield started


async def started_race(
    node: Node,
    *names: str,
    spectators: tuple[str, ...] = (),
    variant: str = "draw=1",
    public: bool = False,
) -> tuple[str, list[Client], list[Client]]:
    """Connect racers and spectators, create a race, ready everyone, start, and wait
    until every racer has its board. The first racer is the host."""
    racers = [await Client.connect(node.ws_url, name=name) for name in names]
    watchers = [await Client.connect(node.ws_url, name=name) for name in spectators]
    room = await racers[0].create_race(variant, seats=len(racers), public=public)
    for racer in racers:
        await racer.join(room)
    for watcher in watchers:
        await watcher.join(room, "spectator")
    for racer in racers:
        await racer.ready(room)
    await racers[0].expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
    await racers[0].start(room)
    for racer in racers:
        await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
    for watcher in watchers:
        await watcher.expect(lambda m: m["t"] == "board" and m["seat"] == len(racers) - 1)
    return room, racers, watchers


async def close_all(*groups: list[Client]) -> None:
    for group in groups:
        for client in group:
            await client.close()
