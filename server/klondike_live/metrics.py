"""Prometheus metrics of one server process, in a registry of its own.

`Metrics()` owns a private `CollectorRegistry`, so tests and several servers in one
process never share counters; `render()` gives the body and content type for the
`/metrics` endpoint. Every name of ours starts with `klondike_`; the registry also
holds prometheus-client's standard process, platform and garbage-collector metrics
(`process_*`, `python_*`).

This module must never label a metric with anything unbounded (user ids, room ids,
names, addresses): only small fixed sets (error codes, refusal reasons, pool states).
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from typing import Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from klondike_live import __version__
from klondike_live.gcpolicy import GcPauses

__all__ = ["FANOUT_BUCKETS", "MOVE_LATENCY_BUCKETS", "REDIS_LATENCY_BUCKETS", "Metrics"]

# Handing one frame to hundreds of sockets takes well under a millisecond.
FANOUT_BUCKETS: Final = (0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05)

# Loopback Redis answers in tens of microseconds; a loaded or remote one in
# milliseconds; anything near 100 ms is already a problem worth seeing.
REDIS_LATENCY_BUCKETS: Final = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
)

# A move is acknowledged after one Redis round trip (two on a replicated Cluster):
# about a millisecond on loopback, tens on a busy or remote Redis.
MOVE_LATENCY_BUCKETS: Final = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
)


class Metrics:
    """The server's counters, gauges and histograms (see docs/operations.md)."""

    def __init__(self, node: str = "", loop: str = "") -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.connections = Gauge(
            "klondike_connections", "Open websocket connections on this node.", registry=registry
        )
        self.rooms = Gauge("klondike_rooms", "Active rooms on this node.", registry=registry)
        self.moves = Counter("klondike_moves", "Moves applied on this node.", registry=registry)
        self.frames_out = Counter(
            "klondike_frames_out", "Websocket frames sent to clients.", registry=registry
        )
        self.resyncs = Counter(
            "klondike_resyncs",
            "Snapshots sent to a viewer instead of a backlog of events.",
            registry=registry,
        )
        self.snapshots = Counter(
            "klondike_snapshots",
            "Board snapshots sent to viewers: on a join, at a race's start, or as resyncs.",
            registry=registry,
        )
        self.reactions = Counter(
            "klondike_reactions",
            "Reactions this node's connections sent (accepted ones).",
            registry=registry,
        )
        self.reaction_counts = Counter(
            "klondike_reaction_counts",
            "Reaction counts this node published on the bus (one per room a second at most).",
            registry=registry,
        )
        self.rate_limit_closes = Counter(
            "klondike_rate_limit_closes",
            "Connections closed for flooding or repeated errors.",
            registry=registry,
        )
        self.errors = Counter(
            "klondike_errors",
            "Error replies sent to clients, by error code.",
            ["code"],
            registry=registry,
        )
        self.redis_latency = Histogram(
            "klondike_redis_latency_seconds",
            "Round-trip time of Redis commands and PING probes, in seconds.",
            buckets=REDIS_LATENCY_BUCKETS,
            registry=registry,
        )
        self.move_latency = Histogram(
            "klondike_move_latency_seconds",
            "Time from a move's frame received to its answer sent (ack or error), in seconds.",
            buckets=MOVE_LATENCY_BUCKETS,
            registry=registry,
        )
        self.fanout_latency = Histogram(
            "klondike_fanout_seconds",
            "Time from a board frame read from the bus to its broadcast to this node's"
            " viewers, in seconds.",
            buckets=FANOUT_BUCKETS,
            registry=registry,
        )
        self.redis_errors = Counter(
            "klondike_redis_errors",
            "Failed Redis operations: refused or lost connections, timeouts, error replies.",
            registry=registry,
        )
        self.redis_reconnects = Counter(
            "klondike_redis_reconnects",
            "Connections to Redis opened again after they had been lost.",
            registry=registry,
        )
        self.bus_resubscribes = Counter(
            "klondike_bus_resubscribes",
            "Pub/sub subscriptions made again after a connection loss or a slot move.",
            registry=registry,
        )
        self.connections_refused = Counter(
            "klondike_connections_refused",
            "Websocket connections closed at once for a connection cap, by reason.",
            ["reason"],
            registry=registry,
        )
        self.redis_pool = Gauge(
            "klondike_redis_pool_connections",
            "Connections of the node's Redis command pool, by state (in_use, idle).",
            ["state"],
            registry=registry,
        )
        self.history_up = Gauge(
            "klondike_history_up",
            "1 while the history database answers this node, 0 after it failed.",
            registry=registry,
        )
        self.outbox_games = Gauge(
            "klondike_outbox_games",
            "Finished games waiting in the outbox for the history database (all nodes').",
            registry=registry,
        )
        self.history_games = Counter(
            "klondike_history_games",
            "Finished games this node wrote to the history database.",
            registry=registry,
        )
        self.history_errors = Counter(
            "klondike_history_errors",
            "Failed writes or reads of the history database.",
            registry=registry,
        )
        self.gc = GcPauses(registry)
        Info(
            "klondike_build",
            "Version of the server and of Python, the node's id and its event loop.",
            registry=registry,
        ).info(
            {
                "version": __version__,
                "python": platform.python_version(),
                "node": node,
                "loop": loop,
            }
        )
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        if GC_COLLECTOR is not None:  # absent where the interpreter has no gc stats
            GCCollector(registry=registry)

    def watch_redis_pool(self, usage: Callable[[], tuple[int, int]]) -> None:
        """Report `usage()` (in use, idle) at every scrape as the pool gauge."""
        self.redis_pool.labels(state="in_use").set_function(lambda: usage()[0])
        self.redis_pool.labels(state="idle").set_function(lambda: usage()[1])

    def error(self, code: str) -> None:
        """Count one error reply with the stable error `code`."""
        self.errors.labels(code=code).inc()

    def render(self) -> tuple[bytes, str]:
        """The exposition text of every metric and its HTTP content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
