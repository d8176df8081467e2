"""The service tier's harness: live service nodes on the test Valkey, clients in memory.

    cluster = await Cluster.start(valkey_url, settings_for, seed_source)   # node 0
    await cluster.add_node()                                               # node 1
    conn = cluster.connect("u1", node=0)         # a client said hello on node 0
    code = await cluster.request(conn, msg.Join(room, Role.RACER))   # None, or the refusal
    await cluster.disconnect(conn)               # its socket closed
    await cluster.fire_timers(11_000)            # run what falls due in 11 s
    await cluster.stop()

A node is what `gateway.server.running` builds minus the websocket server and its
background loops: its own Redis client, `Store`, `Hub`, `LiveService` and bus
`Subscriber` (which opens its own pub/sub connection). Its
clients are `MemoryConnection`s: each keeps every frame it was sent, decoded, can be
made to lag (the hub then skips it until it drains) and records a `close_soon`, after
which the "transport" tells the service it disconnected, as a closed socket would.

Requests, disconnections and ticks return once the nodes settled: every node handled
every bus message sent so far (a barrier message through its subscriber) and every
task the nodes started is done. Then every frame that arrived meanwhile is checked
(`Cluster.check`, see service_checks.py): no card its viewer may not know, no gap or
repeat in its board stream. Time moves only by hand: timers fall due when a test moves
the nodes' clocks on (`rooms.clock_offset_ms`) while a node ticks.

Fixtures:

service_settings
    Settings of service node `index` (`make_settings`, node id `n<index>`): countdown
    0, a 10 s grace that passes only when a test moves the clocks.

cluster (async)
    One node on a flushed test Valkey, dealing `SEED` to every race; stopped after the
    test, once it settled and its last frames were checked.

The state machine builds its clusters itself with the same classes.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgpack
import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.bus.subscriber import Subscriber
from klondike_live.config import Settings
from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.history import History
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind
from klondike_live.service.connection import Connection
from klondike_live.service.daily import Clock, system_clock
from klondike_live.service.hub import Hub
from klondike_live.service.live import LiveService
from klondike_live.service.timers import BUCKETS_PER_TICK
from klondike_live.store import Store
from klondike_live.store.connect import RedisClient, open_redis

from service_checks import RaceNow, Streams, check_frame, race_now
from waits import wait_for

SEED = "5eed0000c0ffee00d15ea5e0000b0a7d"
"""The deal of every race of the `cluster` fixture (32 hex, like a real seed)."""

GRACE_SECONDS = 10.0
"""A racer's grace period on the test nodes: it only passes when a test moves the clocks."""

SETTLE_ROUNDS = 50
"""Rounds of barrier, then waiting for the nodes' tasks, before `settle` gives up."""

SETTLE_SECONDS = 5.0
"""How long `settle` waits for one barrier, or for the tasks of one round."""

SERVICE_SETTINGS: dict[str, Any] = {
    "countdown_seconds": 0.0,
    "grace_seconds": GRACE_SECONDS,
}
"""Settings of every service node (beyond `make_settings`'s)."""


class SettingsFactory(Protocol):
    """`make_settings` of tests/conftest.py."""

    def __call__(self, **overrides: Any) -> Settings: ...


# ------------------------------------------------------------ connections


class MemoryConnection:
    """A client of the live service held in memory (a `service.connection.Connection`).

    `frames` holds every frame it was sent, `received` the same decoded; a closed
    connection takes no more frames. `lag()` makes the hub skip it until `drain()` (its
    buffer is full: what is sent to it directly still queues there, in order).
    """

    def __init__(
        self,
        user: str,
        name: str,
        node: int,
        *,
        on_close: Callable[[MemoryConnection], None] | None = None,
    ) -> None:
        self._conn_id = secrets.token_urlsafe(12)
        self._user = user
        self._name = name
        self.node = node
        self.frames: list[bytes] = []
        self.received: list[dict[str, Any]] = []
        self.closed: tuple[CloseCode, str] | None = None
        self._lagging = False
        self._wake = asyncio.Event()
        self._on_close = on_close

    def __repr__(self) -> str:
        return f"<MemoryConnection {self._user} {self._conn_id} on node {self.node}>"

    @property
    def conn_id(self) -> str:
        return self._conn_id

    @property
    def user(self) -> str:
        return self._user

    @property
    def name(self) -> str:
        return self._name

    def rename(self, name: str) -> None:
        self._name = name

    def deliver(self, frame: bytes) -> None:
        """Take one frame (what the socket would write); dropped once closed."""
        if self.closed is not None:
            return
        self.frames.append(frame)
        self.received.append(msgpack.unpackb(frame, raw=False))

    async def send(self, frame: bytes) -> None:
        self.deliver(frame)

    def close_soon(self, code: CloseCode, reason: str) -> None:
        if self.closed is not None:
            return
        self.closed = (code, reason)
        self._wake.set()
        if self._on_close is not None:
            self._on_close(self)

    def lagging(self) -> bool:
        return self._lagging

    async def drained(self) -> bool:
        while self._lagging and self.closed is None:
            self._wake.clear()
            await self._wake.wait()
        return self.closed is None

    def lag(self) -> None:
        """Its send buffer is full from now on (until `drain`)."""
        self._lagging = True

    def drain(self) -> None:
        """Its send buffer emptied."""
        self._lagging = False
        self._wake.set()

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        """The decoded frames of one `t`, in order."""
        return [m for m in self.received if m.get("t") == kind]


def broadcast(connections: Sequence[Connection], frame: bytes) -> None:
    """The transport's fan-out: hand the frame to every connection, awaiting none."""
    for conn in connections:
        assert isinstance(conn, MemoryConnection), conn
        conn.deliver(frame)


# ------------------------------------------------------------ nodes


class Barrier:
    """A test channel on a node's subscriber: a message sent on it comes back once every
    bus message published before it was handled (the subscriber hands them over in order)."""

    def __init__(self, channel: str, service: LiveService) -> None:
        self.channel = channel
        self.service = service
        self.waiting: list[asyncio.Future[None]] = []

    async def on_bus(self, channel: str, data: bytes) -> None:
        """The subscriber's hook: barrier messages here, the rest to the service."""
        if channel != self.channel:
            await self.service.on_bus_message(channel, data)
            return
        waiting, self.waiting = self.waiting, []
        for arrived in waiting:
            if not arrived.done():
                arrived.set_result(None)

    async def cross(self, redis: RedisClient) -> None:
        arrived = asyncio.get_running_loop().create_future()
        self.waiting.append(arrived)
        await redis.publish(self.channel, b"")
        await wait_for(arrived, SETTLE_SECONDS)


@dataclass
class ServiceNode:
    """One node's parts, as `gateway.server.running` wires them (no websocket server)."""

    index: int
    settings: Settings
    redis: RedisClient
    store: Store
    history: History
    hub: Hub
    service: LiveService
    subscriber: Subscriber
    barrier: Barrier
    background: set[asyncio.Task[Any]] = field(default_factory=set)

    async def stop(self) -> None:
        await self.hub.stop()
        await self.subscriber.stop()
        await self.service.daily.close()
        await self.service.archive.close()
        await self.history.close()
        await self.store.close()
        await self.redis.aclose()


async def start_node(
    index: int,
    url: str,
    settings: Settings,
    seed_source: Callable[[], str],
    clock: Clock = system_clock,
) -> ServiceNode:
    """A node on `url`, wired as `gateway.server.running` does (no websocket server, no
    background loops: tests tick by hand). Its subscriber also listens to the node's
    barrier channel."""
    before = asyncio.all_tasks()
    redis = await open_redis(url)
    metrics = Metrics()
    store = Store.from_settings(redis, settings, url=url)
    history = History.open(settings.history_url)
    await history.upgrade()
    hub = Hub(broadcast, metrics, settings.node_id)
    service = LiveService(
        settings, store, history, hub, metrics, seed_source=seed_source, clock=clock
    )
    barrier = Barrier(f"test:barrier:{settings.node_id}", service)
    subscriber = Subscriber(redis, url, barrier.on_bus, on_resubscribed=service.on_resubscribed)
    hub.attach(subscriber)
    await subscriber.start(
        keys.DAILY_UPDATES, keys.TOURNAMENT_UPDATES, keys.FRIEND_NOTICES, barrier.channel
    )
    await service.sync_clock()
    node = ServiceNode(index, settings, redis, store, history, hub, service, subscriber, barrier)
    node.background = asyncio.all_tasks() - before
    return node


# ------------------------------------------------------------ the cluster


class Cluster:
    """One or two nodes on one Valkey, their clients, and a way to let them settle."""

    def __init__(
        self,
        url: str,
        settings_for: Callable[[int], Settings],
        seed_source: Callable[[], str],
        clock: Clock = system_clock,
    ) -> None:
        self.url = url
        self.clock = clock
        self.settings_for = settings_for
        self.seed_source = seed_source
        self.nodes: list[ServiceNode] = []
        self.connections: list[MemoryConnection] = []
        # What each connection is in each room, by its last join that was not refused.
        self.roles: dict[tuple[str, str], Role] = {}
        self.streams: dict[str, Streams] = {}
        self.checks = 0  # frames checked so far
        self._checked: dict[str, int] = {}
        self._baseline: set[asyncio.Task[Any]] = set()
        self._closing: set[asyncio.Task[None]] = set()
        self._gone: set[str] = set()

    @classmethod
    async def start(
        cls,
        url: str,
        settings_for: Callable[[int], Settings],
        seed_source: Callable[[], str],
        clock: Clock = system_clock,
    ) -> Cluster:
        """Nodes whose daily part reads `clock` (today is its UTC date)."""
        cluster = cls(url, settings_for, seed_source, clock)
        cluster._baseline = set(asyncio.all_tasks())
        await cluster.add_node()
        return cluster

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls,
        url: str,
        settings_for: Callable[[int], Settings],
        seed_source: Callable[[], str],
        clock: Clock = system_clock,
        *,
        nodes: int = 1,
    ) -> AsyncIterator[Cluster]:
        """`nodes` nodes (`start`, then `add_node`) for a block (a fixture's body): after
        it they settle (every frame checked), then stop."""
        started = await cls.start(url, settings_for, seed_source, clock)
        try:
            for _ in range(nodes - 1):
                await started.add_node()
            yield started
            await started.settle()
        finally:
            await started.stop()

    async def add_node(self) -> ServiceNode:
        """Start one more node; its clock reads as far on as the others'."""
        index = len(self.nodes)
        node = await start_node(
            index, self.url, self.settings_for(index), self.seed_source, self.clock
        )
        self._baseline |= node.background
        if self.nodes:
            node.service.rooms.clock_offset_ms = self.nodes[0].service.rooms.clock_offset_ms
        self.nodes.append(node)
        return node

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.settle(check=False)
        for node in self.nodes:
            await node.stop()

    # ------------------------------------------------------------ clients

    def connect(self, user: str, node: int = 0, name: str | None = None) -> MemoryConnection:
        """A client of `user` said hello on `node`."""
        conn = MemoryConnection(user, name or user.title(), node, on_close=self._closed)
        self.connections.append(conn)
        self.streams[conn.conn_id] = Streams()
        self.nodes[node].service.connected(conn)
        return conn

    def _closed(self, conn: MemoryConnection) -> None:
        """`close_soon`: the socket closes, and the session tells its service."""
        task = asyncio.get_running_loop().create_task(self._disconnect(conn))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _disconnect(self, conn: MemoryConnection) -> None:
        if conn.conn_id in self._gone:
            return
        self._gone.add(conn.conn_id)
        if conn.closed is None:
            conn.closed = (CloseCode.NORMAL, "client left")
        await self.nodes[conn.node].service.disconnected(conn)

    async def disconnect(self, conn: MemoryConnection) -> None:
        """The client goes away: its connection closes, the nodes settle."""
        await self._disconnect(conn)
        await self.settle()

    def gone(self, conn: MemoryConnection) -> bool:
        """The service was told this connection closed."""
        return conn.conn_id in self._gone

    async def request(
        self, conn: MemoryConnection, message: msg.ServiceRequest, *, settle: bool = True
    ) -> ErrorCode | None:
        """Hand one request to the connection's service as the gateway does (a refusal
        becomes an `error` frame on the connection); the code of the error it got, or
        None. The
        nodes settle after it, and what arrived meanwhile is checked."""
        if isinstance(message, msg.Join) and message.since:
            audience = "own" if message.role is Role.RACER else "spectator"
            self.streams[conn.conn_id].resume(message.room, audience, message.since)
        code = None
        first = len(conn.received)
        try:
            await self.nodes[conn.node].service.handle(conn, message)
            # Some refusals are sent by the service itself (an illegal move's reason).
            errors = [m for m in conn.received[first:] if m.get("t") == "error"]
            if errors:
                code = ErrorCode(errors[0]["code"])
        except Refusal as exc:
            await conn.send(outgoing.Error.answering(message, exc.code, exc.message).encode())
            code = exc.code
        if code is None and isinstance(message, msg.Join):
            self.roles[(conn.conn_id, message.room)] = message.role
        if code is None and isinstance(message, msg.Leave):
            self.roles.pop((conn.conn_id, message.room), None)
        if settle:
            await self.settle()
        return code

    async def create_race(self, host: MemoryConnection, seats: int, **options: Any) -> str:
        """The host creates a race room (holding seat 0 of it); the room's id."""
        create = msg.Create(
            rid=1,
            kind=RoomKind.RACE,
            variant=Variant.parse(options.get("variant", "draw=1")),
            seats=seats,
            time_limit=options.get("time_limit", 0),
            public=False,
            bots=options.get("bots", False),
            best_of=options.get("best_of", 1),
        )
        code = await self.request(host, create)
        assert code is None, code
        room = host.of_kind("created")[-1]["room"]
        assert isinstance(room, str)
        return room

    def role(self, conn: MemoryConnection, room: str) -> Role | None:
        return self.roles.get((conn.conn_id, room))

    # ------------------------------------------------------------ settling and checking

    async def settle(self, *, check: bool = True) -> None:
        """Wait until nothing is in flight: every node handled every bus message sent so
        far, and every task the nodes started is done (a lagging client's resync waits
        for it to drain, so those are left waiting). Then check what arrived."""
        current = asyncio.current_task()
        busy: list[asyncio.Task[Any]] = []
        for _ in range(SETTLE_ROUNDS):
            for node in self.nodes:
                await node.barrier.cross(node.redis)
            waiting = {f"resync-{c.conn_id}" for c in self.connections if c.lagging()}
            busy = [
                task
                for task in asyncio.all_tasks()
                if task is not current
                and task not in self._baseline
                and not task.done()
                and task.get_name() not in waiting
            ]
            if not busy:
                break
            _, pending = await asyncio.wait(busy, timeout=SETTLE_SECONDS)
            if pending:
                raise AssertionError(f"still running after {SETTLE_SECONDS:g} s: {pending}")
        else:
            raise AssertionError(f"the nodes did not settle: {busy}")
        if check:
            await self.check()

    async def check(self) -> None:
        """Check every frame that arrived since the last check: its board stream
        continues, and it shows no card its viewer may not know
        (see service_checks.py)."""
        store = self.nodes[0].store
        races: dict[str, RaceNow | None] = {}
        for conn in self.connections:
            first = self._checked.get(conn.conn_id, 0)
            self._checked[conn.conn_id] = len(conn.received)
            streams = self.streams[conn.conn_id]
            fresh: dict[str, list[tuple[int, dict[str, Any]]]] = {}
            for index in range(first, len(conn.received)):
                message = conn.received[index]
                streams.feed(message, f"{conn!r} frame {index} ({message.get('t')})")
                room = message.get("room")
                if isinstance(room, str):
                    fresh.setdefault(room, []).append((index, message))
            for room, frames in fresh.items():
                if room not in races:
                    races[room] = await race_now(store, room)
                now = races[room]
                if now is None:
                    continue
                self.checks += len(frames)
                seat = None
                if self.role(conn, room) is Role.RACER:
                    seat = now.state.seat_of(conn.user)
                for index, message in frames:
                    where = f"{conn!r} frame {index} ({message.get('t')})"
                    check_frame(message, where, now, seat=seat)

    # ------------------------------------------------------------ time

    def advance(self, ms: int) -> None:
        """Every node's clock reads `ms` later from now on."""
        for node in self.nodes:
            node.service.rooms.clock_offset_ms += ms

    async def tick(self, node: int = 0) -> None:
        """One tick of one node (due timers, progress, spectator counts), settled."""
        await self.nodes[node].service.timers.tick()
        await self.settle()

    async def fire_timers(self, ms: int, node: int = 0) -> None:
        """Run the timers due `ms` from now: every node's clock reads `ms` later while
        one node ticks once per group of timer buckets it polls (so it polled them all),
        and the nodes settle; then the clocks read true again. (Redis's clock, which the
        store's scripts read, does not move: a node clock left ahead of it would make
        every later timer due early.)"""
        self.advance(ms)
        try:
            for _ in range(-(-keys.TIMER_BUCKETS // BUCKETS_PER_TICK)):
                await self.tick(node)
        finally:
            self.advance(-ms)

    async def race(self, room: str) -> RaceNow:
        """The room's current race as stored."""
        now = await race_now(self.nodes[0].store, room)
        assert now is not None, f"no room {room}"
        return now


# ------------------------------------------------------------ fixtures


@pytest.fixture
def service_settings(make_settings: SettingsFactory) -> Callable[[int], Settings]:
    """Settings of service node `index` (node ids "n0", "n1", ...)."""

    def make(index: int) -> Settings:
        return make_settings(**SERVICE_SETTINGS, node_id=f"n{index}")

    return make


@pytest.fixture
async def cluster(
    valkey_url: str, redis: Redis, service_settings: Callable[[int], Settings]
) -> AsyncIterator[Cluster]:
    """One node on a flushed Valkey (`redis` flushes it), dealing `SEED` to every race."""
    async with Cluster.running(valkey_url, service_settings, lambda: SEED) as started:
        yield started


@pytest.fixture
async def pair(
    valkey_url: str, redis: Redis, service_settings: Callable[[int], Settings]
) -> AsyncIterator[Cluster]:
    """Two nodes on one Valkey (`redis` flushes it), dealing `SEED` to every race."""
    async with Cluster.running(valkey_url, service_settings, lambda: SEED, nodes=2) as started:
        yield started
