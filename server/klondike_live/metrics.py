"""Prometheus metrics of one server process, in a registry of its own.

`Metrics()` owns a private `CollectorRegistry`, so tests and several servers in one
process never share counters; `render()` gives the body and content type for the
`/metrics` endpoint. Every name starts with `klondike_`.

This module must never label a metric with anything unbounded (user ids, room ids,
names): only the small fixed set of error codes.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

__all__ = ["REDIS_LATENCY_BUCKETS", "Metrics"]

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


class Metrics:
    """The server's counters, gauges and histograms (see docs/operations.md)."""

    def __init__(self) -> None:
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

    def error(self, code: str) -> None:
        """Count one error reply with the stable error `code`."""
        self.errors.labels(code=code).inc()

    def render(self) -> tuple[bytes, str]:
        """The exposition text of every metric and its HTTP content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
