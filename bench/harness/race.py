"""One race played to its end by the project's own Python client, for benchmarks that
measure what a finished race leaves behind (its Valkey keys, its history).

    async with finished_race(node.ws_url) as room:   # the results are out
        ...                                          # everyone still connected
    # everyone has left

A node of this process that replays it: `running(race_node_settings(...),
seed_source=lambda: str(WON.seed))`.

Two racers (Alice, Bob) and a spectator (Carol) race on the node's deal, which the
caller makes `WON`'s (`seed_source`): Alice plays its whole winning line, Bob the same
line but its last move, then resigns.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from harness.processes import ROOT
from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.engine import GameRecord

WON = GameRecord.parse((ROOT / "tests" / "data" / "won-draw1-seed31.txt").read_text())
"""The won game the race replays (106 moves, seed 31)."""


def race_node_settings(redis_url: str, data_dir: Path, **more: Any) -> Settings:
    """A node for the race: its own data directory (made here), no deal pool, no daily
    preparation, short countdown and ticks, no rate limit in the way of a scripted game;
    `more` sets the measure's own settings."""
    data_dir.mkdir(parents=True)
    return Settings(
        secret=b"bench-race-node-secret-0123456789abcdef0123",
        data_dir=data_dir,
        redis_url=redis_url,
        port=0,
        pool_target=0,
        daily_prepare_seconds=0.0,
        countdown_seconds=0.2,
        tick_seconds=0.05,
        rate_per_second=1000.0,
        rate_burst=1000,
        **more,
    )


@contextlib.asynccontextmanager
async def finished_race(node_url: str) -> AsyncIterator[str]:
    """The race's room, once its spectator has the results (see the module docstring)."""
    alice = await Client.connect(node_url, name="Alice")
    bob = await Client.connect(node_url, name="Bob")
    carol = await Client.connect(node_url, name="Carol")
    try:
        room = await alice.create_race("draw=1", seats=2)
        await alice.join(room)
        await bob.join(room)
        await carol.join(room, "spectator")
        await alice.ready(room)
        await bob.ready(room)
        await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "room" and m["state"] == "racing")
        moves = list(WON.moves)
        for index, token in enumerate(moves):
            if alice.own_board(room, 0).status == "playing":
                await alice.move(room, token)
            if index < len(moves) - 1 and bob.own_board(room, 1).status == "playing":
                await bob.move(room, token)
        await bob.resign(room)
        await carol.expect(lambda m: m["t"] == "results", timeout=30)
        yield room
    finally:
        for client in (alice, bob, carol):
            await client.close()
