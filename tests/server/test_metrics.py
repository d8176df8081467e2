"""Prometheus metrics: names, private registries and the exposition text."""

from __future__ import annotations

import asyncio
import os
import platform
import urllib.request
from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from klondike_live import __version__
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.metrics import Metrics
from klondike_live.store.connect import (
    RedisClient,
    RedisEvents,
    StoreError,
    count_events,
    open_redis,
)

from helpers import FAST, WON, close_all, started_race
from waits import scaled


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, _ = metrics.render()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_render_exposes_every_metric_with_prefix() -> None:
    """render() lists all our metrics, each named klondike_*, beside prometheus-client's
    process and Python metrics, with the Prometheus content type."""
    body, content_type = Metrics().render()
    assert content_type.startswith("text/plain; version=")
    assert content_type.endswith("charset=utf-8")
    families = text_string_to_metric_families(body.decode())
    # prometheus_client also exposes a `<counter>_created` timestamp per counter.
    names = {family.name for family in families if not family.name.endswith("_created")}
    ours = {name for name in names if name.startswith("klondike_")}
    assert ours == {
        "klondike_connections",
        "klondike_rooms",
        "klondike_moves",
        "klondike_frames_out",
        "klondike_resyncs",
        "klondike_snapshots",
        "klondike_reactions",
        "klondike_reaction_counts",
        "klondike_rate_limit_closes",
        "klondike_errors",
        "klondike_redis_latency_seconds",
        "klondike_move_latency_seconds",
        "klondike_fanout_seconds",
        "klondike_redis_errors",
        "klondike_redis_reconnects",
        "klondike_bus_resubscribes",
        "klondike_connections_refused",
        "klondike_redis_pool_connections",
        "klondike_history_up",
        "klondike_outbox_games",
        "klondike_history_games",
        "klondike_history_errors",
        "klondike_gc_pause_seconds",
        "klondike_gc_cpu_seconds",
        "klondike_gc_sweeps",
        "klondike_gc_frozen_objects",
        "klondike_build_info",
    }
    assert {"process_resident_memory_bytes", "process_cpu_seconds", "python_info"} <= names
    assert all(n.startswith(("klondike_", "process_", "python_")) for n in names), names


def test_build_info_names_version_python_node_and_loop() -> None:
    """klondike_build_info carries the server's version, the Python version, the
    node's id (workers behind one port are told apart by it) and its event loop."""
    values = samples(Metrics("node-a-1", loop="uvloop"))
    (labels,) = [dict(k[1]) for k in values if k[0] == "klondike_build_info"]
    assert labels == {
        "version": __version__,
        "python": platform.python_version(),
        "node": "node-a-1",
        "loop": "uvloop",
    }


def test_counts_and_gauges_show_in_output() -> None:
    """Incremented counters, set gauges and labelled errors appear with their values."""
    metrics = Metrics()
    metrics.connections.inc(3)
    metrics.connections.dec()
    metrics.rooms.set(5)
    metrics.moves.inc(7)
    metrics.frames_out.inc(2)
    metrics.resyncs.inc()
    metrics.rate_limit_closes.inc()
    metrics.error("illegal_move")
    metrics.error("illegal_move")
    metrics.errors.labels(code="bad_frame").inc()
    values = samples(metrics)
    assert values[("klondike_connections", ())] == 2
    assert values[("klondike_rooms", ())] == 5
    assert values[("klondike_moves_total", ())] == 7
    assert values[("klondike_frames_out_total", ())] == 2
    assert values[("klondike_resyncs_total", ())] == 1
    assert values[("klondike_rate_limit_closes_total", ())] == 1
    assert values[("klondike_errors_total", (("code", "illegal_move"),))] == 2
    assert values[("klondike_errors_total", (("code", "bad_frame"),))] == 1


def test_redis_latency_buckets_cover_submillisecond_to_100ms() -> None:
    """A 50 µs and a 30 ms observation land in distinct buckets between 0.1 ms and 100 ms."""
    metrics = Metrics()
    metrics.redis_latency.observe(0.00005)
    metrics.redis_latency.observe(0.03)
    values = samples(metrics)
    bucket = "klondike_redis_latency_seconds_bucket"
    assert values[(bucket, (("le", "0.0001"),))] == 1
    assert values[(bucket, (("le", "0.025"),))] == 1
    assert values[(bucket, (("le", "0.05"),))] == 2
    assert values[(bucket, (("le", "0.1"),))] == 2
    assert values[("klondike_redis_latency_seconds_count", ())] == 2


def test_instances_do_not_share_values() -> None:
    """Each Metrics has its own registry: two servers in one process count separately."""
    first, second = Metrics(), Metrics()
    first.moves.inc(4)
    assert samples(second)[("klondike_moves_total", ())] == 0
    assert samples(first)[("klondike_moves_total", ())] == 4


STANDALONE_ONLY = pytest.mark.skipif(
    os.environ.get("KLONDIKE_TEST_CLUSTER", "") not in ("", "0"),
    reason="counts the connections of a standalone client's pool (a cluster client's node"
    " connections are not counted: docs/operations.md)",
)


@STANDALONE_ONLY
async def test_redis_errors_and_reconnects_are_counted(valkey_url: str, redis: RedisClient) -> None:
    """An error reply counts as a Redis error; a connection the server killed counts an
    error, and as a reconnection once the client opened it again (retrying the command)."""
    metrics = Metrics()
    client = await open_redis(valkey_url)
    try:
        count_events(client, RedisEvents(metrics.redis_errors.inc, metrics.redis_reconnects.inc))
        await client.set(b"k", b"v")
        with pytest.raises(StoreError):
            await client.execute_command("NO-SUCH-COMMAND")
        assert samples(metrics)[("klondike_redis_errors_total", ())] == 1
        await redis.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        # The killed connection fails the read; the client connects again and retries.
        assert await client.get(b"k") == b"v"
        values = samples(metrics)
        assert values[("klondike_redis_errors_total", ())] >= 2
        assert values[("klondike_redis_reconnects_total", ())] == 1
    finally:
        await client.aclose()


@STANDALONE_ONLY
async def test_node_metrics_endpoint_exposes_operator_metrics(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A node's /metrics has the move latency of a move played, the Redis pool, error and
    reconnect counters, pub/sub resubscribes, refusals, build info and process metrics."""
    async with running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as node:
        room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
        await alice.move(room, WON.moves[0])
        await close_all([alice, bob])
        body = await asyncio.to_thread(_get, node.url + "metrics")
    values = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }
    assert values[("klondike_move_latency_seconds_count", ())] >= 1
    assert ("klondike_fanout_seconds_count", ()) in values
    assert values[("klondike_move_latency_seconds_bucket", (("le", "+Inf"),))] >= 1
    in_use = values[("klondike_redis_pool_connections", (("state", "in_use"),))]
    idle = values[("klondike_redis_pool_connections", (("state", "idle"),))]
    assert in_use + idle >= 1  # at least the connection that served the move
    for name in (
        "klondike_redis_errors_total",
        "klondike_redis_reconnects_total",
        "klondike_bus_resubscribes_total",
        "process_resident_memory_bytes",
    ):
        assert (name, ()) in values, name
    assert any(name == "klondike_build_info" for name, _ in values)
    assert any(name == "python_info" for name, _ in values)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=scaled(10)) as response:
        text: str = response.read().decode()
        return text
