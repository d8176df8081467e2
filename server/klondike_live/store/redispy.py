"""Every use of redis-py's private or undocumented API, in one module.

Checked against redis-py 8.2 (`pyproject.toml` pins `redis[hiredis]>=8.2,<9`). Each
function here has a test of its own against a real Valkey (tests/server/test_redispy.py),
so that an upgrade that renames or changes one of these calls fails there; nothing else
in the package names them (tests/architecture/test_layers.py checks). What each is for:

`take_connection`, `give_back`
    `ConnectionPool.get_connection()` (untyped; its arguments deprecated since 5.3) and
    `release()`: a batch of board writes holds one pooled connection for its one write
    and its replies (`store.batcher.exchange`). redis-py's `Pipeline` would cost 40% of
    the client CPU of a move's write.
`send_packed`, `read_replies`
    `AbstractConnection.send_packed_command` and `read_response(timeout=math.inf)`: the
    batch goes out as bytes packed once, and its replies are read under one timer for
    the whole batch (`math.inf`: no timer per reply; a timeout of `None` would mean the
    connection's `socket_timeout`, one timer made and cancelled per reply).
`retry_call`
    `AbstractConnection.retry.call_with_retry`: that exchange is retried as the client's
    own commands are, with the connection's retry policy.
`refresh_slots`
    `RedisCluster.nodes_manager.initialize()`: learn the cluster's slot map now (after a
    MOVED, a failover, a lost node), before the calls are sent again; the client
    otherwise learns it only when one of its own commands is redirected.
`message_reader`, `handle_reply`
    `PubSub.connection`, `read_response(timeout=math.inf, disconnect_on_error=False,
    push_request=True)` and `PubSub.handle_message`: the bus reads each message straight
    from its connection (`PubSub.listen` builds a dict per message behind a retry wrapper
    and a health check per read: most of the bus's cost on a busy node); only the rest
    (confirmations, PONGs) goes through `handle_message`, which keeps the client's record
    of its subscriptions.
`connection_options`, `server_address`
    `RedisCluster.connection_kwargs` and `ConnectionPool.connection_kwargs`: the
    credentials and transport a client was opened with, to reach a cluster's nodes the
    same way, and the address of a standalone server, to open its subscriber.
`pool_counts`
    `ConnectionPool._in_use_connections` and `_available_connections`: redis-py counts a
    pool's connections only there (the pool metrics).
`watch_connections`
    A subclass of the pool's `connection_class` overriding `connect_check_health`,
    `send_packed_command` and `read_response`, and the open connections' `__class__`
    swapped for it (seen through `is_connected`): the failure and reconnection metrics.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import redis.asyncio
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection, ConnectionPool, SSLConnection
from redis.exceptions import NoScriptError, RedisError, ResponseError

__all__ = [
    "Opened",
    "connection_options",
    "give_back",
    "handle_reply",
    "message_reader",
    "pool_counts",
    "read_replies",
    "refresh_slots",
    "retry_call",
    "send_packed",
    "server_address",
    "take_connection",
    "watch_connections",
]

T = TypeVar("T")


async def take_connection(pool: ConnectionPool) -> AbstractConnection:
    """A connected connection of `pool`, for the caller alone until `give_back`."""
    connection: AbstractConnection = await pool.get_connection()  # type: ignore[no-untyped-call]
    return connection


async def give_back(pool: ConnectionPool, connection: AbstractConnection) -> None:
    """Return a connection taken with `take_connection` to its pool."""
    await pool.release(connection)


async def send_packed(connection: AbstractConnection, data: bytes) -> None:
    """Write commands already packed in the Redis protocol, in one write."""
    await connection.send_packed_command(data)


async def read_replies(connection: AbstractConnection, count: int) -> list[Any]:
    """The next `count` replies of `connection`, an error reply as its exception
    (`ResponseError`, or its subclass such as `NoScriptError`), in order. No read
    timeout of its own: the caller bounds the whole read."""
    replies: list[Any] = []
    for _ in range(count):
        try:
            replies.append(await connection.read_response(timeout=math.inf))
        except ResponseError as error:
            replies.append(error)
    return replies


async def retry_call(
    connection: AbstractConnection,
    do: Callable[[], Awaitable[T]],
    failed: Callable[[Exception], Awaitable[None]],
) -> T:
    """`do()`, retried by the connection's retry policy (as the client's commands are);
    `failed(error)` runs after each failed attempt that is retried."""
    result: T = await connection.retry.call_with_retry(do, failed)
    return result


async def refresh_slots(cluster: RedisCluster) -> None:
    """Learn the cluster's slot map (and its nodes) from the cluster now."""
    await cluster.nodes_manager.initialize()


def message_reader(pubsub: PubSub) -> Callable[[], Awaitable[Any]] | None:
    """A reader of `pubsub`'s next reply, as the server sent it (a message is
    `[b"message" | b"smessage", channel, data]`: a list, or on RESP3 a push, which
    hiredis gives as a subclass of list), with no read timeout; None while the pub/sub
    has no connection (before its first subscription)."""
    connection = pubsub.connection
    if connection is None:
        return None
    return functools.partial(
        connection.read_response, timeout=math.inf, disconnect_on_error=False, push_request=True
    )


async def handle_reply(pubsub: PubSub, reply: Any) -> dict[str, Any] | None:
    """What `pubsub` makes of a reply read by `message_reader` (a confirmation updates
    its record of subscriptions): the message dict `PubSub.get_message` would give."""
    message: dict[str, Any] | None = await pubsub.handle_message(reply)  # type: ignore[no-untyped-call]
    return message


@dataclass(frozen=True, slots=True)
class Opened:
    """The credentials and transport of a client's connections."""

    username: str | None
    password: str | None
    tls: bool


def connection_options(client: redis.asyncio.Redis | RedisCluster) -> Opened:
    """The credentials and transport `client`'s connections are opened with."""
    options = (
        client.connection_kwargs
        if isinstance(client, RedisCluster)
        else client.connection_pool.connection_kwargs
    )
    return Opened(
        username=options.get("username"),
        password=options.get("password"),
        tls=issubclass(options.get("connection_class", object), SSLConnection),
    )


def server_address(client: redis.asyncio.Redis) -> tuple[str, int]:
    """The host and port a standalone client's connections are opened to."""
    options = client.connection_pool.connection_kwargs
    return str(options.get("host", "127.0.0.1")), int(options.get("port", 6379))


def pool_counts(pool: ConnectionPool) -> tuple[int, int]:
    """Connections of `pool`: (in use, idle)."""
    return len(pool._in_use_connections), len(pool._available_connections)


def watch_connections(
    pool: ConnectionPool, failed: Callable[[], None], reconnected: Callable[[], None]
) -> None:
    """Call `failed()` when a connection of `pool` fails (refused, lost, timed out, an
    error reply; not NOSCRIPT, which only makes redis-py load a script) and
    `reconnected()` when one connects again after it was connected. Connections already
    open are watched from now on too."""
    base: type[Any] = pool.connection_class
    watching = _watching(base, failed, reconnected)
    pool.connection_class = watching
    for connection in [*pool._available_connections, *pool._in_use_connections]:
        if type(connection) is base:
            connection.__class__ = watching
            if connection.is_connected:
                watching.seen.add(connection)


def _watching(
    base: type[Any], failed: Callable[[], None], reconnected: Callable[[], None]
) -> type[Any]:
    """A subclass of the connection class `base` that reports to the callbacks; its
    `seen` holds the connections that connected once (a further connect reconnects)."""
    seen: weakref.WeakSet[Any] = weakref.WeakSet()

    async def connect_check_health(self: Any, *args: Any, **kwargs: Any) -> None:
        fresh = not self.is_connected
        try:
            await base.connect_check_health(self, *args, **kwargs)
        except RedisError:
            failed()
            raise
        if fresh and self.is_connected:
            if self in seen:
                reconnected()
            seen.add(self)

    async def send_packed_command(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            await base.send_packed_command(self, *args, **kwargs)
        except RedisError:
            failed()
            raise

    async def read_response(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await base.read_response(self, *args, **kwargs)
        except NoScriptError:
            raise
        except RedisError:
            failed()
            raise

    return type(
        f"Watched{base.__name__}",
        (base,),
        {
            "__slots__": (),  # the same layout: an open connection can change class
            "seen": seen,
            "connect_check_health": connect_check_health,
            "send_packed_command": send_packed_command,
            "read_response": read_response,
        },
    )
