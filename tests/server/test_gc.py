"""The garbage-collection policy: pauses are measured, the heap is frozen and swept on
schedule, and connections die without reference cycles (the policy's premise: what
dies frozen waits for a sweep)."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import CollectorRegistry

from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.gcpolicy import YOUNG_THRESHOLDS, GcPauses, GcPolicy

from helpers import FAST
from waits import scaled, wait_for

VIEWERS = """
import asyncio, sys
from klondike_live.client import Client

async def main(url: str, count: int, expect_timeout: float) -> None:
    def connect_client(url: str, name: str):
        return Client.connect(url, name=name, expect_timeout=expect_timeout)

    host = await connect_client(url, name="host")
    room = await host.create_solo()
    await host.join(room)
    viewers = []
    for i in range(count):
        viewers.append(await connect_client(url, name=f"viewer {i}"))
        await viewers[-1].join(room, role="spectator")
    await host.move(room, "D")
    print("watching", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    for client in [*viewers, host]:
        await client.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
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


def test_a_collections_cpu_time_is_counted_within_its_pause() -> None:
    """`klondike_gc_cpu_seconds` holds the collector's own CPU time: some for a
    collection with work to do, never more than the pause it was part of."""
    registry = CollectorRegistry()
    survivors = [[index] for index in range(200_000)]  # tracked objects to walk
    with GcPauses(registry):
        gc.collect(2)
    del survivors
    labels = {"generation": "2"}
    cpu = registry.get_sample_value("klondike_gc_cpu_seconds_sum", labels)
    wall = registry.get_sample_value("klondike_gc_pause_seconds_sum", labels)
    assert registry.get_sample_value("klondike_gc_cpu_seconds_count", labels) == 1
    assert cpu is not None and wall is not None
    assert 0 < cpu <= wall + 1e-4, (cpu, wall)


async def test_the_policy_freezes_and_sweeps_on_schedule() -> None:
    registry = CollectorRegistry()
    with GcPauses(registry) as pauses:
        policy = GcPolicy(freeze_seconds=0.02, sweep_seconds=0.1, pauses=pauses)
        task = asyncio.create_task(policy.run())
        try:
            await wait_for(lambda: gc.get_freeze_count() > 0)  # start-up's objects are frozen

            def swept() -> bool:
                return (registry.get_sample_value("klondike_gc_sweeps_total") or 0) >= 1

            await wait_for(lambda: swept() and pauses_of(registry, "sweep") >= 1)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert (registry.get_sample_value("klondike_gc_sweeps_total") or 0) >= 1
        assert pauses_of(registry, "sweep") >= 1
    assert gc.get_freeze_count() == 0  # the heap is thawed when the policy stops


async def test_the_policy_keeps_automatic_collections_young() -> None:
    """While it runs, generation 1 is collected more often than by default and
    generation 2 never automatically; CPython's thresholds come back when it stops."""
    before = gc.get_threshold()
    policy = GcPolicy(freeze_seconds=3600, sweep_seconds=0)
    task = asyncio.create_task(policy.run())
    try:
        await asyncio.sleep(0.01)
        young0, young1, old = gc.get_threshold()
        assert (young0, young1) == YOUNG_THRESHOLDS and young1 < before[1]
        registry = CollectorRegistry()
        with GcPauses(registry):
            for _ in range(200_000):  # plenty of young collections, each with survivors
                kept.append([])
        assert pauses_of(registry, "1") >= 1 and pauses_of(registry, "2") == 0
        assert old >= 1 << 30
    finally:
        kept.clear()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert gc.get_threshold() == before


kept: list[list[int]] = []


def test_no_policy_when_freezing_is_off() -> None:
    policy = GcPolicy(freeze_seconds=0, sweep_seconds=0)
    asyncio.run(policy.run())
    assert gc.get_freeze_count() == 0


async def test_connections_that_close_after_a_freeze_leave_no_cycles(
    make_settings: Callable[..., Settings], collector_off: None
) -> None:
    """200 spectators (in another process, so that only the node's objects count) join,
    the heap is frozen, then they all leave: once the garbage made meanwhile is
    collected, thawing the heap finds (almost) nothing more, so no closed connection
    waits for a sweep."""
    # All from one address, at once: no per-address cap.
    settings = make_settings(**FAST, max_connections_per_address=0)
    connections = 200

    async with running(settings) as node:

        async def viewers(count: int) -> asyncio.subprocess.Process:
            process = await asyncio.create_subprocess_exec(
                *(sys.executable, "-c", VIEWERS, node.ws_url, str(count), str(scaled(10))),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert process.stdout is not None
            line = await wait_for(process.stdout.readline(), 120)
            assert line == b"watching\n", line + await process.stderr.read()  # type: ignore[union-attr]
            return process

        async def leave(process: asyncio.subprocess.Process) -> None:
            _, stderr = await process.communicate(b"go\n")
            assert process.returncode == 0, stderr.decode()
            await wait_for(lambda: not node.sessions, 10)  # the node closed every session

        await leave(await viewers(10))  # warm up: scripts loaded, caches filled
        watching = await viewers(connections)
        gc.collect()
        gc.freeze()
        try:
            await leave(watching)
            await asyncio.sleep(scaled(0.2))  # a pause: the closed sessions' last callbacks run
            gc.collect()  # what died young: requests' own garbage, freed by any collection
        finally:
            gc.unfreeze()
        gc.set_debug(gc.DEBUG_SAVEALL)  # keep what it finds, to name it on failure
        try:
            found = gc.collect()
            kinds = Counter(type(thing).__name__ for thing in gc.garbage).most_common(8)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    # A closed connection that died in a cycle leaves six objects (1,200 here); what may
    # remain is not per connection (e.g. a Redis connection the client pool replaced).
    assert found < connections, f"{found} objects in cycles after {connections}: {kinds}"
