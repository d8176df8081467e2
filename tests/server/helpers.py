"""Shared pieces of the end-to-end tests: a node fixture, a race set-up and a
`klondike-live serve` child process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
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
    """A `klondike-live serve` child process: its HTTP root and websocket URLs, the
    process, and the file its stderr goes to."""

    def __init__(
        self, url: str, ws_url: str, process: asyncio.subprocess.Process, log: Path
    ) -> None:
        self.url = url
        self.ws_url = ws_url
        self.process = process
        self.log = log

    def kill(self) -> None:
        """SIGKILL, as a machine's sudden end: no graceful stop."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGKILL)


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
    secret: str | None,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> AsyncIterator[Served]:
    """`klondike-live serve` on a free port in a child process, on `redis_url` and
    `data_dir`, with this process's environment plus `KLONDIKE_SECRET` (none at all when
    `secret` is None), `SERVE_ENV` and `env`, and the flags `args`; its stderr in
    `data_dir`/serve.log. Yields it once it printed its first line (within 30 s);
    terminates it after (or reaps it, once killed)."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("KLONDIKE_SECRET")}
    secrets = {} if secret is None else {"KLONDIKE_SECRET": secret}
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    log = data_dir / "serve.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "klondike_live.cli", "serve", "--port", "0", "--redis", redis_url),
            *("--data-dir", str(data_dir), *args),
            env={**inherited, **secrets, **SERVE_ENV, **(env or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    try:
        assert process.stdout is not None
        line = (await wait_for(process.stdout.readline(), 30)).decode()
        assert line.startswith("Klondike Live on http://"), (line, log.read_text())
        ws_url = line.split("(websocket ")[1].split(";")[0]
        yield Served(line.split()[3], ws_url, process, log)
    finally:
        if process.returncode is None:
            process.terminate()
        await wait_for(process.wait(), 30)
