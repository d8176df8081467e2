"""Running a node: one async context manager from start to an orderly stop.

    async with running(settings) as node:   # Redis (or embedded Valkey), hub, ticks, socket
        print(node.url)
        await stop_event.wait()
    # on exit: stop accepting, close clients with 4000 (reconnect), let in-flight
    # messages finish, stop the background tasks and the bus, close Redis, stop Valkey.

Background tasks of a node: the tick loop, the Redis latency probe, the outbox's drain
into the history database (`service.archive`; the database is opened, and its schema
brought up to date, before anything else is served), closed daily challenges to that
database (`DailyService.run_keep`), the certified deal pool's refill
(`pool_target` > 0), the daily preparation (today and the next `daily_days_ahead` days,
every `daily_prepare_seconds` > 0) and the garbage-collection policy (`gcpolicy`,
`gc_freeze_seconds` > 0).

A node on a shared Redis whose secret is to come from there (`secret_from_redis`)
fills it in right after connecting (`store.shared_secret`); `Node.settings` holds
it. Connections are capped per address and per account (`caps`).

`serve_forever(settings)` adds SIGTERM/SIGINT handling for the command line, and turns a
failed start into a one-line `startup.StartupError` naming the setting at fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from websockets.asyncio.server import Server, ServerConnection, serve

from klondike_live import eventloop, keys
from klondike_live.accounts import passwords
from klondike_live.bus.subscriber import Subscriber
from klondike_live.config import Settings
from klondike_live.daily.pool import DealPool, PoolMetrics
from klondike_live.embedded import EmbeddedValkey
from klondike_live.gateway.caps import ConnectionCaps
from klondike_live.gateway.http import WEBSOCKET_PATH, HttpRoutes
from klondike_live.gateway.session import LAG_BYTES, Session, broadcast
from klondike_live.gateway.startup import (
    describe_database,
    describe_keys,
    log_core,
    startup_error,
)
from klondike_live.gcpolicy import GcPolicy
from klondike_live.history import History
from klondike_live.metrics import Metrics
from klondike_live.protocol.codes import CloseCode
from klondike_live.service.daily import Clock, system_clock
from klondike_live.service.hub import Hub
from klondike_live.service.live import LiveService
from klondike_live.solver import Budget
from klondike_live.solver.worker import SolverSpares
from klondike_live.store import Store
from klondike_live.store.connect import (
    RedisEvents,
    count_events,
    open_redis,
    pool_usage,
    probe_redis_forever,
)
from klondike_live.store.pool import PoolStore
from klondike_live.store.shared_secret import with_shared_secret

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 5.0
"""Seconds in-flight messages get to finish during shutdown."""


class _Connection(ServerConnection):
    """A websocket connection whose socket transport dies without a reference cycle.

    CPython 3.11's socket transport keeps a bound method of itself (`_read_ready_cb`)
    after it is closed, so every closed connection would wait for a full collection
    to be freed: under the garbage-collection policy (`gcpolicy`) for a sweep. CPython
    3.12 drops it on close (python/cpython#100348); this does the same once the
    connection is lost, when the transport reads no more.
    """

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if sys.version_info < (3, 12) and hasattr(self.transport, "_read_ready_cb"):
            self.transport._read_ready_cb = None


@dataclass
class Node:
    """A running node: its address and its parts (for tests and tools)."""

    settings: Settings
    server: Server
    service: LiveService
    metrics: Metrics
    pool: DealPool
    sessions: set[Session]

    @property
    def port(self) -> int:
        sock = next(iter(self.server.sockets))
        return int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.port}/"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.settings.host}:{self.port}{WEBSOCKET_PATH}"


@contextlib.asynccontextmanager
async def running(
    settings: Settings,
    *,
    seed_source: Callable[[], str] | None = None,
    clock: Clock = system_clock,
    reuse_port: bool = False,
) -> AsyncIterator[Node]:
    """Start every part of a node; stop them all, in order, on exit.

    `seed_source` replaces the random secret seeds of games dealt without a certified
    deal (tests use it to race on deals with known solutions). `clock` is the node's
    notion of now (an aware datetime): the daily challenges' today comes from it.
    `reuse_port` lets other processes listen on the same port (`SO_REUSEPORT`: the
    kernel spreads new connections over them; see `gateway.workers`).
    """
    async with contextlib.AsyncExitStack() as stack:
        if settings.redis_url is None:
            url = await stack.enter_async_context(EmbeddedValkey(settings.data_dir))
        else:
            url = settings.redis_url
        redis = await open_redis(url)
        stack.push_async_callback(redis.aclose)
        metrics = Metrics(settings.node_id, loop=eventloop.running_loop())
        stack.enter_context(metrics.gc)
        await stack.enter_async_context(SolverSpares())
        count_events(redis, RedisEvents(metrics.redis_errors.inc, metrics.redis_reconnects.inc))
        if pool_usage(redis) is not None:
            metrics.watch_redis_pool(lambda: pool_usage(redis) or (0, 0))
        settings = await with_shared_secret(settings, redis)
        log.info(describe_keys(settings))
        log_core(log)
        history = History.open(settings.history_url)
        stack.push_async_callback(history.close)
        revision = await history.upgrade()
        log.info("history database %s at schema %s", describe_database(settings), revision)
        store = Store.from_settings(redis, settings, url=url)
        stack.push_async_callback(store.close)
        store.latency_observer = metrics.redis_latency.observe
        hub = Hub(broadcast, metrics, settings.node_id)
        stack.push_async_callback(hub.stop)
        pool = DealPool(
            PoolStore(redis, store.latency),
            settings.pool_variants,
            target=max(1, settings.pool_target),
            budget=Budget(settings.pool_budget_seconds, settings.pool_budget_nodes),
            metrics=PoolMetrics(metrics.registry),
        )
        service = LiveService(
            settings,
            store,
            history,
            hub,
            metrics,
            seed_source=seed_source,
            pool=pool,
            clock=clock,
        )
        # The subscriber opens its own connections (one per shard), which wait for
        # messages as long as it takes: no read timeout, TCP keepalive.
        subscriber = Subscriber(
            redis,
            url,
            service.on_bus_message,
            on_resubscribed=service.on_resubscribed,
            on_reconnect=metrics.bus_resubscribes.inc,
        )
        hub.attach(subscriber)
        await subscriber.start(
            keys.DAILY_UPDATES, keys.TOURNAMENT_UPDATES, keys.SESSIONS_ENDED, keys.FRIEND_NOTICES
        )
        stack.push_async_callback(subscriber.stop)
        gc_policy = GcPolicy(settings.gc_freeze_seconds, settings.gc_sweep_seconds, metrics.gc)
        if settings.gc_freeze_seconds > 0:
            gc_policy.settle()
        await service.sync_clock()
        stack.push_async_callback(service.daily.close)
        stack.push_async_callback(service.analyses.close)
        stack.push_async_callback(service.archive.close)
        background = [
            asyncio.create_task(service.run_ticks(), name="ticks"),
            asyncio.create_task(
                probe_redis_forever(redis, metrics.redis_latency.observe), name="probe"
            ),
            asyncio.create_task(service.archive.run(), name="archive"),
            asyncio.create_task(service.daily.run_keep(), name="daily-keep"),
            asyncio.create_task(service.quick.run(), name="quick-races"),
            asyncio.create_task(service.friends.run(), name="presence"),
        ]
        if settings.pool_target > 0 and settings.pool_variants:
            background.append(asyncio.create_task(pool.run_refill(), name="pool-refill"))
        if settings.gc_freeze_seconds > 0:
            background.append(asyncio.create_task(gc_policy.run(), name="gc-policy"))
        if settings.daily_prepare_seconds > 0:
            background.append(
                asyncio.create_task(service.daily.run_prepare(), name="daily-prepare")
            )
        stack.push_async_callback(_cancel, background)
        stack.push_async_callback(service.bots.stop)  # before the store and the bus close

        sessions: set[Session] = set()
        await passwords.warm()

        def signed_out(ended: set[str]) -> None:
            for session in list(sessions):
                gone = session.user and keys.ENDED_USER + session.user in ended
                if session.session_id in ended or gone:
                    session.close_soon(CloseCode.SIGNED_OUT, "signed out")

        service.accounts.on_ended = signed_out
        caps = ConnectionCaps(
            per_user=settings.max_connections_per_user,
            per_address=settings.max_connections_per_address,
        )

        def handler(connection: ServerConnection) -> Awaitable[None]:
            # The session's own coroutine, not one awaiting it: one frame fewer kept
            # per connection.
            return Session(connection, service, sessions, caps).run()

        server = await serve(
            handler,
            settings.host,
            settings.port,
            process_request=HttpRoutes(
                service,
                metrics,
                settings.node_id,
                settings.keys,
                bus_connected=lambda: subscriber.connected,
            ),
            create_connection=_Connection,
            reuse_port=reuse_port or None,
            max_size=settings.max_frame_bytes,
            write_limit=LAG_BYTES,
            compression=None,
            max_queue=16,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=2,
        )
        node = Node(settings, server, service, metrics, pool, sessions)
        log.info(
            "node %s listening on %s (event loop: %s)",
            settings.node_id,
            node.url,
            eventloop.running_loop(),
        )
        try:
            yield node
        finally:
            await _shutdown(server, sessions)


async def _shutdown(server: Server, sessions: set[Session]) -> None:
    """Stop accepting, tell every client to come back later, let handlers finish."""
    server.close(close_connections=False)
    for session in list(sessions):
        session.close_soon(CloseCode.SERVER_RESTART, "server restarting; reconnect")
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(server.wait_closed(), SHUTDOWN_GRACE)


async def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def serve_forever(
    settings: Settings,
    *,
    reuse_port: bool = False,
    on_started: Callable[[], None] | None = None,
    announce: bool = True,
) -> None:
    """Run a node until SIGTERM or SIGINT, printing where it listens unless not to
    `announce` it (a worker: its parent prints one line for all), and calling
    `on_started` once it does."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    started = False
    try:
        async with running(settings, reuse_port=reuse_port) as node:
            started = True
            store_line = "embedded Valkey" if settings.redis_url is None else "shared Redis"
            if announce:
                print(
                    f"Klondike Live on {node.url}  (websocket {node.ws_url}; {store_line})",
                    flush=True,
                )
            if on_started is not None:
                on_started()
            await stop.wait()
            if announce:
                print("shutting down", flush=True)
    except Exception as exc:
        failure = None if started else startup_error(settings, exc)
        if failure is None:
            raise
        raise failure from None
