"""Connections to Redis/Valkey: opening one, probing its latency, the store's error.

    redis = await open_redis(url)                        # checked with a PING
    task = asyncio.create_task(probe_redis_forever(redis, histogram.observe))
    await ping(redis)                                    # health checks: 0.5 s at most
    count_events(redis, RedisEvents(errors.inc, reconnects.inc))   # metrics
    in_use, idle = pool_usage(redis) or (0, 0)
    try: ... except StoreError: ...                      # any failure of a store call

Code outside `klondike_live.store` holds a client only to hand it to the store's classes
(`Store`, `DailyStore`, `PoolStore`) and to close it; it catches
`StoreError` (redis-py's `RedisError` under the store's name, so it catches every
redis-py error) instead of importing redis.

This module must never log a password (URLs are shown through `redact_url`), and never
spell a key name or run a command other than PING.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from klondike_live.config import redact_url
from klondike_live.store.redispy import pool_counts, watch_connections
from klondike_live.tasks import cancel_requested

__all__ = [
    "HEALTH_TIMEOUT_SECONDS",
    "SOCKET_TIMEOUT_SECONDS",
    "RedisClient",
    "RedisEvents",
    "StoreError",
    "count_events",
    "open_redis",
    "ping",
    "pool_usage",
    "probe_redis_forever",
    "redis_latency_probe",
    "text",
]

log = logging.getLogger(__name__)

RedisClient: TypeAlias = redis.asyncio.Redis | RedisCluster
"""A connected client (bytes in and out), as `open_redis` returns it: a plain client
for a standalone server, a cluster client (routing each command by its key's slot) for
a Redis/Valkey Cluster."""

StoreError: TypeAlias = RedisError
"""What a failed store call raises: redis-py's root error (connection lost, timeout,
refused command); `except StoreError` catches them all."""

MAX_CONNECTIONS: Final = 48
CLUSTER_MAX_CONNECTIONS: Final = 512
SOCKET_TIMEOUT_SECONDS: Final = 10.0  # blocking reads (XREAD BLOCK) must block for less
CONNECT_TIMEOUT_SECONDS: Final = 2.0
HEALTH_CHECK_INTERVAL_SECONDS: Final = 15
HEALTH_TIMEOUT_SECONDS: Final = 0.5
"""How long a health check waits for PING: a stalled Redis makes the node unready."""


async def open_redis(
    url: str, *, socket_timeout: float | None = SOCKET_TIMEOUT_SECONDS
) -> RedisClient:
    """A connected client for `url` (bytes in and out), checked with a PING.

    `url` names a standalone server or any node of a cluster: cluster mode is detected
    (`INFO cluster`), and then a cluster client is returned, seeded from that node.
    Reads time out after `socket_timeout` seconds (None: never), so blocking commands
    must block for less. Connection errors are retried with backoff. Raises redis's
    `ConnectionError` (a `StoreError`) naming the URL without its password if the
    server is unreachable.
    """
    client = await _open_standalone(url, socket_timeout)
    try:
        info = await client.info("cluster")
    except BaseException:
        await client.aclose()
        raise
    if not info.get("cluster_enabled"):
        return client
    await client.aclose()
    # A cluster client's pools do not queue for a free connection: a burst beyond the
    # limit would fail at once, so each node's pool is larger than a standalone one.
    options = _client_options(socket_timeout) | {"max_connections": CLUSTER_MAX_CONNECTIONS}
    cluster = RedisCluster.from_url(url, require_full_coverage=False, **options)
    try:
        await cluster.initialize()
        await cluster.ping()
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        await cluster.aclose()
        raise RedisConnectionError(
            f"cannot reach the cluster at {redact_url(url)}: {exc}"
        ) from None
    except BaseException:
        await cluster.aclose()
        raise
    return cluster


def _client_options(socket_timeout: float | None) -> dict[str, Any]:
    """What every command client of the store is opened with, standalone or cluster:
    bytes, bounded reads, a bounded pool, and connection errors retried with backoff."""
    return {
        "decode_responses": False,
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
        "socket_keepalive": True,
        "max_connections": MAX_CONNECTIONS,
        "retry": Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=3),
        "retry_on_error": [RedisConnectionError, RedisTimeoutError],
    }


def text(value: bytes | str) -> str:
    """A reply's string: our clients answer bytes (`decode_responses` is off)."""
    return value.decode() if isinstance(value, bytes) else value


def is_cluster(client: RedisClient) -> bool:
    """Whether `client` speaks to a cluster."""
    return isinstance(client, RedisCluster)


def node_client(url: str, host: str, port: int, *, pooled: bool = False) -> redis.asyncio.Redis:
    """A client of one server (a cluster node) reached like `url` (same scheme,
    credentials and options).

    `pooled`: a pool of connections for commands, with read timeouts (a node's share of
    the batched board writes). Otherwise one connection with no read timeout that is
    never retried behind the caller's back: a subscriber must notice every reconnection
    to catch up.
    """
    parts = urlsplit(url)
    credentials, _, _ = parts.netloc.rpartition("@")
    netloc = f"{credentials}@{host}:{port}" if credentials else f"{host}:{port}"
    # Never retried here: a failed write is answered at once (the client retries it
    # with its id), and a retry could only wait for a node that failed over.
    return redis.asyncio.Redis.from_url(
        urlunsplit(parts._replace(netloc=netloc)),
        decode_responses=False,
        max_connections=MAX_CONNECTIONS if pooled else None,
        socket_timeout=SOCKET_TIMEOUT_SECONDS if pooled else None,
        socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
        socket_keepalive=True,
        retry=Retry(NoBackoff(), retries=0),
    )


async def replicas_of(client: RedisClient) -> int:
    """The fewest replicas in sync with any master (0 for a server without any)."""
    if isinstance(client, RedisCluster):
        infos = await client.info("replication", target_nodes=RedisCluster.PRIMARIES)
        return min((_online(info) for info in infos.values()), default=0)
    return _online(await client.info("replication"))


def _online(info: dict[str, object]) -> int:
    """Replicas of one master's `INFO replication` whose link is up."""
    return sum(
        1
        for key, value in info.items()
        if key.startswith("slave") and isinstance(value, dict) and value.get("state") == "online"
    )


async def _open_standalone(url: str, socket_timeout: float | None) -> redis.asyncio.Redis:
    # A blocking pool: under a burst, commands wait for a free connection (a few dozen
    # suffice; board writes are pipelined) instead of failing with "Too many connections".
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url,
        timeout=socket_timeout,
        health_check_interval=HEALTH_CHECK_INTERVAL_SECONDS,
        **_client_options(socket_timeout),
    )
    client = redis.asyncio.Redis.from_pool(pool)
    try:
        await client.ping()
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        await client.aclose()
        raise RedisConnectionError(f"cannot reach Redis at {redact_url(url)}: {exc}") from None
    except BaseException:
        await client.aclose()
        raise
    return client


async def ping(client: RedisClient, timeout: float = HEALTH_TIMEOUT_SECONDS) -> None:
    """One PING answered within `timeout` seconds; raises (a `StoreError`, `OSError`
    or `TimeoutError`) when the server does not answer in time, a stalled one too."""
    async with asyncio.timeout(timeout):
        await client.ping()


async def redis_latency_probe(client: RedisClient) -> float:
    """Seconds one PING round trip takes."""
    started = time.perf_counter()
    await client.ping()
    return time.perf_counter() - started


async def probe_redis_forever(
    client: RedisClient,
    observe: Callable[[float], None],
    *,
    interval: float = 5.0,
) -> None:
    """Measure PING latency every `interval` seconds and pass it to `observe`.

    Runs until cancelled; a failed probe is logged once per outage and retried.
    """
    failing = False
    while not cancel_requested():
        try:
            observe(await redis_latency_probe(client))
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            if not failing:
                log.warning("Redis latency probe failed: %s", exc)
            failing = True
        else:
            if failing:
                log.info("Redis latency probe recovered")
            failing = False
        await asyncio.sleep(interval)
    raise asyncio.CancelledError


@dataclass(frozen=True, slots=True)
class RedisEvents:
    """What `count_events` reports: a failed operation, a connection opened again."""

    error: Callable[[], None]
    reconnect: Callable[[], None]


def count_events(client: RedisClient, events: RedisEvents) -> None:
    """Report the failures and reconnections of `client`'s command connections.

    A failure is a refused or lost connection, a timeout or an error reply (but the
    NOSCRIPT reply, which only makes redis-py load a script); a reconnection is a
    connection of the pool connecting again after it was lost. The pool's connections
    already open are counted from now on too. Standalone clients only (a cluster
    client's node connections are not counted).
    """
    if isinstance(client, RedisCluster):
        return
    watch_connections(client.connection_pool, events.error, events.reconnect)


def pool_usage(client: RedisClient) -> tuple[int, int] | None:
    """Connections of a standalone client's pool (in use, idle); None for a cluster."""
    if isinstance(client, RedisCluster):
        return None
    return pool_counts(client.connection_pool)
