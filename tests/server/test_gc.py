"""The garbage-collection policy: pauses are measured, the heap is frozen and swept on
schedule, and connections die without reference cycles (the policy's premise: what
dies frozen waits for a sweep)."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import CollectorRegistry

from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.gcpolicy import GcPauses, GcPolicy

from helpers import FAST

CHURN = """
import asyncio, sys
from klondike_live.client import Client

async def main(url: str, count: int) -> None:
    host = await Client.connect(url, name="host")
    room = await host.create_solo()
    await host.join(room)
    for i in range(count):
        client = await Client.connect(url, name=f"viewer {i}")
        await client.join(room, role="spectator")
        await client.close()
    await host.move(room, "D")
    await host.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Automatic collection off for the test (so garbage waits to be counted)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def pauses_of(registry: CollectorRegistry, generation: str) -> float:
    """How many pauses of `generation` the registry's histogram has seen."""
    value = registry.get_sample_value("klondike_gc_pause_seconds_count", {"generation": generation})
    return value or 0.0


def test_pauses_are_timed_by_generation() -> None:
    registry = CollectorRegistry()
    with GcPauses(registry):
        gc.collect(0)
        gc.collect(2)
    assert pauses_of(registry, "0") >= 1
    assert pauses_of(registry, "2") == 1
    gc.collect(2)  # after exit: no longer counted
    assert pauses_of(registry, "2") == 1


async def test_the_policy_freezes_and_sweeps_on_schedule() -> None:
    registry = CollectorRegistry()
    with GcPauses(registry) as pauses:
        policy = GcPolicy(freeze_seconds=0.02, sweep_seconds=0.1, pauses=pauses)
        task = asyncio.create_task(policy.run())
        try:
            await asyncio.sleep(0.05)
            assert gc.get_freeze_count() > 0  # start-up's objects are frozen
            await asyncio.sleep(0.3)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert (registry.get_sample_value("klondike_gc_sweeps_total") or 0) >= 1
        assert pauses_of(registry, "sweep") >= 1
    assert gc.get_freeze_count() == 0  # the heap is thawed when the policy stops


def test_no_policy_when_freezing_is_off() -> None:
    policy = GcPolicy(freeze_seconds=0, sweep_seconds=0)
    asyncio.run(policy.run())
    assert gc.get_freeze_count() == 0


async def test_closed_connections_leave_no_cyclic_garbage(
    make_settings: Callable[..., Settings], collector_off: None
) -> None:
    """200 spectators come and go (from another process, so that only the node's
    garbage is counted): what a full collection then finds is not per connection."""
    settings = make_settings(**FAST)

    async def churn(url: str, count: int) -> None:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHURN, url, str(count), stderr=subprocess.PIPE
        )
        _, stderr = await process.communicate()
        assert process.returncode == 0, stderr.decode()

    async with running(settings) as node:
        await churn(node.ws_url, 10)  # warm up: scripts loaded, caches filled
        await asyncio.sleep(0.3)
        gc.collect()
        connections = 200
        await churn(node.ws_url, connections)
        for _ in range(100):  # every session has ended
            if not node.sessions:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        found = gc.collect()
    assert found < connections // 4, f"{found} objects in cycles after {connections} connections"
