"""Each use of redis-py's private API (`klondike_live.store.redispy`) against a real
Valkey: an upgrade of redis-py that renames or changes one of them fails here.

The calls that need a cluster run on the session's cluster under `KLONDIKE_TEST_CLUSTER=1`,
otherwise on a one-master cluster started for this module."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from redis import asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError, SlotNotCoveredError

from klondike_live.store.batcher import pack_command
from klondike_live.store.connect import RedisClient
from klondike_live.store.devcluster import DevCluster
from klondike_live.store.redispy import (
    Opened,
    connection_options,
    give_back,
    handle_reply,
    message_reader,
    pool_counts,
    read_replies,
    refresh_slots,
    retry_call,
    send_packed,
    server_address,
    take_connection,
    watch_connections,
)

if TYPE_CHECKING:
    from conftest import WaitFor

KEY = "kl:test:{redispy}"


def server_of(client: RedisClient, key: str = KEY) -> str:
    """The URL of the server that holds `key` (a cluster's node, or the server)."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        assert node is not None
        return f"redis://{node.host}:{node.port}"
    host, port = server_address(client)
    return f"redis://{host}:{port}"


@pytest.fixture
async def server(redis: RedisClient) -> AsyncIterator[aioredis.Redis]:
    """A plain client of the server that holds `KEY`, flushed by the `redis` fixture."""
    client = aioredis.Redis.from_url(server_of(redis))
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture(scope="module")
def cluster_url(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Valkey Cluster's seed URL: the session's, or a one-master cluster started here."""
    if os.environ.get("KLONDIKE_TEST_CLUSTER", "").strip() not in ("", "0"):
        yield valkey_url
        return
    directory: Path = tmp_path_factory.mktemp("redispy-cluster")
    with DevCluster(directory, masters=1, replicas=0) as cluster:
        yield cluster.url


@pytest.mark.parametrize("pool_class", [aioredis.ConnectionPool, aioredis.BlockingConnectionPool])
async def test_take_connection_lends_a_connected_connection_until_given_back(
    server: aioredis.Redis, pool_class: type[aioredis.ConnectionPool]
) -> None:
    pool = pool_class.from_url(server_of(server))
    try:
        first = await take_connection(pool)
        second = await take_connection(pool)
        assert isinstance(first, AbstractConnection) and first is not second
        assert first.is_connected and second.is_connected
        await give_back(pool, first)
        await give_back(pool, second)
        again = await take_connection(pool)
        assert again in (first, second)  # reused, not a third connection
        await give_back(pool, again)
    finally:
        await pool.aclose()


async def test_pool_counts_says_in_use_and_idle(server: aioredis.Redis) -> None:
    pool = aioredis.BlockingConnectionPool.from_url(server_of(server))
    try:
        assert pool_counts(pool) == (0, 0)
        first = await take_connection(pool)
        second = await take_connection(pool)
        assert pool_counts(pool) == (2, 0)
        await give_back(pool, first)
        assert pool_counts(pool) == (1, 1)
        await give_back(pool, second)
        assert pool_counts(pool) == (0, 2)
    finally:
        await pool.aclose()


async def test_send_packed_then_read_replies_in_order_errors_as_exceptions(
    server: aioredis.Redis,
) -> None:
    pool = server.connection_pool
    connection = await take_connection(pool)
    try:
        commands = [
            pack_command("SET", KEY, "v"),
            pack_command("ECHO", b"\x00bytes"),
            pack_command("NO-SUCH-COMMAND"),
            pack_command("EVALSHA", "0" * 40, 0),
            pack_command("GET", KEY),
        ]
        await send_packed(connection, b"".join(commands))
        replies = await read_replies(connection, len(commands))
        assert replies[:2] == [b"OK", b"\x00bytes"]  # raw replies, not parsed
        assert type(replies[2]) is ResponseError
        assert isinstance(replies[3], NoScriptError)
        assert replies[4] == b"v"
        # Nothing is left unread: the connection answers the next command.
        await send_packed(connection, pack_command("PING"))
        assert await read_replies(connection, 1) == [b"PONG"]
    finally:
        await give_back(pool, connection)


async def test_read_replies_has_no_read_timeout_of_its_own(redis: RedisClient) -> None:
    """The connection's `socket_timeout` does not cut a read short (`math.inf`)."""
    client = aioredis.Redis.from_url(server_of(redis), socket_timeout=0.05)
    try:
        connection = await take_connection(client.connection_pool)
        started = time.monotonic()
        await send_packed(connection, pack_command("BLPOP", KEY, "0.3"))
        assert await read_replies(connection, 1) == [None]
        assert time.monotonic() - started >= 0.25  # blocked well past socket_timeout
        await give_back(client.connection_pool, connection)
    finally:
        await client.aclose()


async def test_retry_call_retries_as_the_connections_policy_says(
    server: aioredis.Redis,
) -> None:
    client = aioredis.Redis.from_url(
        server_of(server), retry=Retry(NoBackoff(), retries=2), retry_on_error=[]
    )
    pool = client.connection_pool
    connection = await take_connection(pool)
    attempts: list[int] = []
    failures: list[Exception] = []

    async def flaky() -> str:
        attempts.append(len(attempts))
        if len(attempts) < 3:
            raise RedisConnectionError("lost")
        return "done"

    async def failed(error: Exception) -> None:
        failures.append(error)

    async def broken() -> str:
        raise RedisConnectionError("always")

    try:
        assert await retry_call(connection, flaky, failed) == "done"
        assert len(attempts) == 3 and len(failures) == 2
        with pytest.raises(RedisConnectionError):
            await retry_call(connection, broken, failed)
        assert len(failures) == 2 + 3  # one per attempt, the last one included
    finally:
        await give_back(pool, connection)
        await client.aclose()


async def test_refresh_slots_learns_the_slot_map(cluster_url: str) -> None:
    cluster = RedisCluster.from_url(cluster_url)
    try:
        with pytest.raises(SlotNotCoveredError):
            cluster.get_node_from_key(KEY)  # nothing known yet
        await refresh_slots(cluster)
        node = cluster.get_node_from_key(KEY)
        assert node in cluster.get_primaries()
    finally:
        await cluster.aclose()


async def test_message_reader_reads_messages_as_sent_and_handle_reply_the_rest(
    redis: RedisClient, server: aioredis.Redis, wait_for: WaitFor
) -> None:
    subscriber = aioredis.Redis.from_url(server_of(redis), socket_timeout=0.05)
    pubsub = subscriber.pubsub(ignore_subscribe_messages=False)
    try:
        assert message_reader(pubsub) is None  # no connection before a subscription
        await pubsub.ssubscribe(KEY)
        await pubsub.subscribe("kl:test:classic")
        read = message_reader(pubsub)
        assert read is not None
        confirmed = [await handle_reply(pubsub, await wait_for(read())) for _ in range(2)]
        assert [(m["type"], m["channel"]) for m in confirmed if m is not None] == [
            ("ssubscribe", KEY.encode()),
            ("subscribe", b"kl:test:classic"),
        ]
        assert pubsub.subscribed
        assert await server.spublish(KEY, b"\x00move") == 1
        assert await server.publish("kl:test:classic", b"daily") >= 1
        moved, daily = await wait_for(read()), await wait_for(read())
        # Lists (on RESP3, hiredis's pushes: a subclass of list, so `type(x) is list`
        # would not take them for messages).
        assert isinstance(moved, list) and isinstance(daily, list)
        assert moved == [b"smessage", KEY.encode(), b"\x00move"]
        assert daily == [b"message", b"kl:test:classic", b"daily"]
        await pubsub.ping()
        pong = await handle_reply(pubsub, await wait_for(read()))
        assert pong is not None and pong["type"] == "pong"
    finally:
        await pubsub.aclose()
        await subscriber.aclose()


def test_connection_options_are_those_a_client_was_opened_with() -> None:
    standalone = aioredis.Redis.from_url("redis://user:secret@127.0.0.1:7001/0")
    assert connection_options(standalone) == Opened("user", "secret", tls=False)
    assert server_address(standalone) == ("127.0.0.1", 7001)
    cluster = RedisCluster.from_url("rediss://user:secret@127.0.0.1:7002")  # not connected
    assert connection_options(cluster) == Opened("user", "secret", tls=True)
    assert connection_options(aioredis.Redis.from_url("redis://127.0.0.1:7003")) == Opened(
        None, None, tls=False
    )


async def test_watch_connections_reports_failures_and_reconnections(
    server: aioredis.Redis, wait_for: WaitFor
) -> None:
    client = aioredis.Redis.from_url(
        server_of(server),
        retry=Retry(NoBackoff(), retries=1),
        retry_on_error=[RedisConnectionError],
    )
    failures: list[int] = []
    reconnections: list[int] = []
    try:
        own_id = await client.client_id()  # a connection open before watching starts
        watch_connections(
            client.connection_pool,
            lambda: failures.append(1),
            lambda: reconnections.append(1),
        )
        with pytest.raises(ResponseError):
            await client.execute_command("NO-SUCH-COMMAND")  # type: ignore[no-untyped-call]
        assert failures == [1]
        with pytest.raises(NoScriptError):
            await client.evalsha("0" * 40, 0)
        assert failures == [1]  # NOSCRIPT is not a failure: redis-py loads the script
        await server.client_kill_filter(_id=str(own_id))
        assert await client.ping()  # lost, connected again, retried
        assert reconnections == [1]
        assert len(failures) == 2
    finally:
        await client.aclose()


def test_pack_command_writes_resp_and_refuses_other_types() -> None:
    """A command is packed as RESP bulk strings (text as UTF-8, integers in decimal);
    what Redis cannot take as an argument, a bool or None, raises TypeError."""
    assert pack_command("SET", b"k\x00", "é", -3) == (
        b"*4\r\n$3\r\nSET\r\n$2\r\nk\x00\r\n$2\r\n\xc3\xa9\r\n$2\r\n-3\r\n"
    )
    for bad in (True, None):
        with pytest.raises(TypeError):
            pack_command("SET", "k", bad)  # type: ignore[arg-type]
