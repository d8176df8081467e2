"""Shared pieces of the end-to-end tests: a node fixture, a race set-up and a
`klondike-live serve` child process."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.engine import GameRecord
from klondike_live.gateway.server import Node, running
from klondike_live.store.connect import RedisClient

from racing import start_race
from testdata import DATA
from waits import connect_client, wait_for

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())
"""A won draw-1 game; nodes started by `node` deal its seed to every race."""

FAST = {
    "countdown_seconds": 0.2,
    "tick_seconds": 0.05,
    "rate_per_second": 1000.0,
    "rate_burst": 1000,
}


@pytest.fixture
async def node(make_settings: Callable[..., Settings], redis: RedisClient) -> AsyncIterator[Node]:
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
    racers = [await connect_client(node.ws_url, name=name) for name in names]
    watchers = [await connect_client(node.ws_url, name=name) for name in spectators]
    room = await start_race(racers, watchers, variant=variant, public=public)
    return room, racers, watchers


async def close_all(*groups: list[Client]) -> None:
    """Close every client of every group."""
    for group in groups:
        for client in group:
            await client.close()


class Served:
    """A `klondike-live serve` process: its HTTP root and websocket URLs."""

    def __init__(self, url: str, ws_url: str) -> None:
        self.url = url
        self.ws_url = ws_url


SERVE_ENV = {
    "KLONDIKE_POOL_TARGET": "0",
    "KLONDIKE_DAILY_PREPARE_SECONDS": "0",
    "KLONDIKE_RATE_PER_SECOND": "1000",
    "KLONDIKE_RATE_BURST": "1000",
    "KLONDIKE_TICK_SECONDS": str(FAST["tick_seconds"]),
}
"""The environment of every `serve_process` child: no background solver work, no rate
limit to speak of, fast ticks."""


@asynccontextmanager
async def serve_process(
    redis_url: str,
    data_dir: Path,
    secret: str,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> AsyncIterator[Served]:
    """`klondike-live serve` on a free port in a child process, on `redis_url` and
    `data_dir`, with this process's environment plus `KLONDIKE_SECRET`, `SERVE_ENV` and
    `env`, and the flags `args`. Yields its URLs once it printed its first line (within
    30 s); terminates it after."""
    child_env = {**os.environ, "KLONDIKE_SECRET": secret, **SERVE_ENV, **(env or {})}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "klondike_live.cli",
        "serve",
        "--port",
        "0",
        "--redis",
        redis_url,
        "--data-dir",
        str(data_dir),
        *args,
        env=child_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = (await wait_for(process.stdout.readline(), 30)).decode()
        assert line.startswith("Klondike Live on http://"), line
        yield Served(line.split()[3], line.split("(websocket ")[1].split(";")[0])
    finally:
        process.terminate()
        await wait_for(process.wait(), 30)
