"""Concurrent calls of one script, sent as pipelines: one round trip per batch and node.

    batcher = ScriptBatcher(client, script, nodes=NodeClients(url), replicas=1)
    reply = await batcher.call(keys, args)

Calls made while a batch is in flight wait for the next one, so an idle node sends
each call at once and a busy node amortises the round trip and the client's
per-command overhead over many calls. Calls keep their order per node. A batch is sent
even if a caller stops waiting, so a write that was handed over is never dropped.

On a Cluster a batch is split by the node that owns each call's slot (its first key;
every call stays inside one slot) and each node's part goes down that node's own
pipeline: no pipeline ever crosses nodes. A call refused with MOVED or ASK (its slot
moved) did not run: the slot map is refreshed and the call sent again.

With `replicas` > 0 each pipeline ends with `WAIT replicas timeout`, so a call is
answered only once its write reached that many replicas; when fewer acknowledge in
time while the master does have that many in sync, every call of that pipeline fails
with `NotReplicated` (the write is on the master, its durability unknown: callers treat
it like a lost connection). A master with fewer replicas in sync (a failover took its
replica away) acknowledges with what it has, and `degraded` counts those writes; it is
looked at again every `recheck_seconds`, and waited on again once its replicas are back.

With `replicas=AUTO` (-1) a write waits for one replica wherever its master has one in
sync: each master is asked (`INFO replication`) before the batcher's first write to it,
and a master without a replica is asked again every `recheck_seconds`, so one that gains
a replica later (still in its first sync when the node started, or attached after a
failover) is waited on from then on. `replicated` counts the calls answered once a
replica had them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any, Final, cast
from urllib.parse import quote

import hiredis
from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import AskError, MovedError, NoScriptError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from klondike_live.errors import LiveError
from klondike_live.store.connect import RedisClient, is_cluster, node_client, replicas_of
from klondike_live.store.redispy import (
    connection_options,
    give_back,
    read_replies,
    refresh_slots,
    retry_call,
    send_packed,
    take_connection,
)

log = logging.getLogger(__name__)

Call = tuple[Sequence[str | bytes], list[Any], "asyncio.Future[Any]"]


MAX_REDIRECTS: Final = 3

RECHECK_SECONDS: Final = 5.0
"""How often a master with too few replicas in sync is looked at again."""

AUTO: Final = -1
"""`replicas` for one replica wherever a master has one in sync (see the module
docstring)."""


def _answer(call: Call, result: Any) -> None:
    """Give a call's caller its reply, or raise its error there (unless it gave up)."""
    future = call[2]
    if future.done():
        return
    if isinstance(result, Exception):
        future.set_exception(result)
    else:
        future.set_result(result)


class NotReplicated(LiveError, RedisError):
    """A write reached the master but not enough replicas in time (see `WAIT`)."""


class NodeClients:
    """Pooled clients of a cluster's nodes, made on first use (reached like `url`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._clients: dict[str, Redis] = {}

    @classmethod
    def of(cls, cluster: RedisClient) -> NodeClients:
        """The node clients of `cluster`, reached with its own credentials and scheme."""
        options = connection_options(cluster)
        scheme = "rediss" if options.tls else "redis"
        user = quote(options.username or "", safe="")
        password = quote(options.password or "", safe="")
        credentials = f"{user}:{password}@" if user or password else ""
        return cls(f"{scheme}://{credentials}127.0.0.1:0")

    def get(self, name: str, host: str, port: int) -> Redis:
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = node_client(self.url, host, port, pooled=True)
        return client

    async def close(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


class ScriptBatcher:
    """Batches of one script (see the module docstring)."""

    def __init__(
        self,
        client: RedisClient,
        script: AsyncScript,
        *,
        nodes: NodeClients | None = None,
        replicas: int = 0,
        wait_timeout_ms: int = 1000,
        max_batch: int = 256,
        recheck_seconds: float = RECHECK_SECONDS,
    ) -> None:
        if is_cluster(client) and nodes is None:
            raise ValueError("a cluster's batcher needs its node clients")
        if replicas < AUTO:
            raise ValueError(f"replicas: expected {AUTO} (auto) or more, got {replicas}")
        self.client = client
        self.script = script
        self.nodes = nodes
        self.replicas = replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.max_batch = max_batch
        self.recheck_seconds = recheck_seconds
        self._queue: list[Call] = []
        self._runner: asyncio.Task[None] | None = None
        self.degraded = 0  # writes acknowledged while a master had too few replicas
        self.replicated = 0  # calls answered once the replicas waited for had them
        # Replicas a master should have in sync: one in auto mode.
        self._goal = 1 if replicas == AUTO else replicas
        # Masters' replicas in sync as last seen: (count, when). With a fixed number only
        # masters seen with fewer are listed (the others are taken to have enough); in
        # auto mode every master is, once asked.
        self._in_sync: dict[Redis, tuple[int, float]] = {}
        self._seen_replica = False  # auto mode: some master had a replica in sync

    async def call(self, keys: Sequence[str | bytes], args: list[Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((keys, args, future))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name="script-batcher")
        # A caller that stops waiting cancels only its future: the call stays queued.
        return await future

    async def _run(self) -> None:
        while self._queue:
            batch = self._queue[: self.max_batch]
            del self._queue[: self.max_batch]
            if not is_cluster(self.client):
                await self._settle(batch, self.client)  # type: ignore[arg-type]
                continue
            groups: dict[str, tuple[Redis, list[Call]]] = {}
            for call in batch:
                name, client = self._target(call)
                groups.setdefault(name, (client, []))[1].append(call)
            await asyncio.gather(*(self._settle(calls, node) for node, calls in groups.values()))

    def _target(self, call: Call) -> tuple[str, Redis]:
        """The name and client of the node that owns the call's slot (its first key)."""
        cluster: Any = self.client
        node = cluster.get_node_from_key(call[0][0])
        assert self.nodes is not None
        return node.name, self.nodes.get(node.name, node.host, node.port)

    async def _settle(self, calls: list[Call], client: Redis) -> None:
        """Send `calls` down one node's pipeline and answer each caller."""
        try:
            results = await self._send(client, calls)
        except Exception as exc:  # the whole pipeline failed: every caller hears why
            results = [exc] * len(calls)
            if is_cluster(self.client) and isinstance(exc, RedisConnectionError | OSError):
                # The node may have failed over: learn the slot map again, so that the
                # callers' retries go to the new master.
                await self._refresh_slots()
        redirected = []
        for call, result in zip(calls, results, strict=True):
            if isinstance(result, MovedError | AskError):
                redirected.append(call)
            else:
                _answer(call, result)
        if redirected:
            await self._redirect(redirected)

    async def _wanted(self, client: Redis) -> int:
        """Replicas a write to this master waits for: the configured number (one in auto
        mode), or fewer while it has fewer in sync (looked at again every
        `recheck_seconds`). In auto mode a master is asked before its first write; if it
        does not answer, the write fails as it would, rather than go out unwaited."""
        if not self._goal:
            return 0
        known = self._in_sync.get(client)
        if known is None:
            if self.replicas != AUTO:
                return self._goal
            count = await replicas_of(client)
            known = self._in_sync[client] = (count, time.monotonic())
            if count >= self._goal:
                self._seen_replica = True
            elif self._seen_replica:  # another master has one: this one lost its own
                self._short(count)
        count, checked = known
        if count >= self._goal:
            return self._goal
        if time.monotonic() - checked > self.recheck_seconds:
            with contextlib.suppress(RedisError, OSError):
                count = await replicas_of(client)
            self._in_sync[client] = (count, time.monotonic())
            if count >= self._goal:
                self._seen_replica = True
        return min(count, self._goal)

    async def _replicated(self, client: Redis, acknowledged: int) -> bool:
        """Whether `acknowledged` replicas are enough: the configured number, or as many
        as the master has in sync now (after a failover the new master may have none
        until the old one comes back: writes go on, counted in `degraded`)."""
        if acknowledged >= self._goal:
            return True
        try:
            online = await replicas_of(client)
        except (RedisError, OSError):
            return False
        if acknowledged >= online:
            self._in_sync[client] = (online, time.monotonic())
            self._short(online)
            return True
        return False

    def _short(self, online: int) -> None:
        """A write is acknowledged by a master with `online` replicas, fewer than wanted."""
        self.degraded += 1
        if self.degraded == 1 or self.degraded % 1000 == 0:
            log.warning(
                "a master has %d of %d replicas in sync: moves are acknowledged with"
                " fewer copies (%d writes so far)",
                online,
                self._goal,
                self.degraded,
            )

    async def _refresh_slots(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await refresh_slots(self.client)  # type: ignore[arg-type]

    async def _redirect(self, calls: list[Call]) -> None:
        """Calls whose slot moved did not run: send them to the slot's new owner."""
        for attempt in range(MAX_REDIRECTS):
            try:
                await refresh_slots(self.client)  # type: ignore[arg-type]
            except RedisError as exc:
                for call in calls:
                    if not call[2].done():
                        call[2].set_exception(exc)
                return
            again: list[Call] = []
            groups: dict[str, tuple[Redis, list[Call]]] = {}
            for call in calls:
                name, client = self._target(call)
                groups.setdefault(name, (client, []))[1].append(call)
            for client, part in groups.values():
                try:
                    results = await self._send(client, part)
                except Exception as exc:
                    results = [exc] * len(part)
                for call, result in zip(part, results, strict=True):
                    if isinstance(result, MovedError | AskError) and attempt + 1 < MAX_REDIRECTS:
                        again.append(call)
                    else:
                        _answer(call, result)
            if not again:
                return
            calls = again

    async def _send(self, client: Redis, calls: list[Call]) -> list[Any]:
        # EVALSHA directly: a Script object in a pipeline asks SCRIPT EXISTS first, an
        # extra round trip per batch. Calls refused with NOSCRIPT (the server lost its
        # scripts, e.g. after a restart or a failover) did not run: load the script on
        # that server and send them again.
        results: list[Any] = [None] * len(calls)
        pending = list(range(len(calls)))
        for attempt in range(2):
            sha = self.script.sha
            commands = [
                pack_command("EVALSHA", sha, len(calls[i][0]), *calls[i][0], *calls[i][1])
                for i in pending
            ]
            wanted = await self._wanted(client)
            if wanted:
                commands.append(pack_command("WAIT", wanted, self.wait_timeout_ms))
            replies = await exchange(client, commands)
            if wanted:
                acknowledged = replies.pop()
                if isinstance(acknowledged, int) and not await self._replicated(
                    client, acknowledged
                ):
                    failure = NotReplicated(
                        f"{acknowledged} of {wanted} replicas acknowledged the write"
                        f" within {self.wait_timeout_ms} ms"
                    )
                    replies = [failure if not isinstance(r, ResponseError) else r for r in replies]
                elif isinstance(acknowledged, int) and acknowledged >= wanted:
                    self.replicated += sum(1 for r in replies if not isinstance(r, Exception))
            for index, reply in zip(pending, replies, strict=True):
                results[index] = reply
            pending = [i for i in pending if isinstance(results[i], NoScriptError)]
            if not pending or attempt:
                break
            self.script.sha = await client.script_load(self.script.script)
        return results


def pack_command(*parts: str | bytes | int) -> bytes:
    """One command in the Redis protocol (RESP), from strings, bytes and integers
    (packed by hiredis, in C: this is every move's write); TypeError for anything else,
    a bool included."""
    # hiredis's stub types the tuple as one of a single item; it takes any number.
    packed: bytes = hiredis.pack_command(cast("tuple[str | bytes | int]", parts))
    return packed


async def exchange(client: Redis, commands: list[bytes]) -> list[Any]:
    """Send packed commands in one write on one of `client`'s pooled connections and
    read their replies, an error reply as its exception (as a pipeline without a
    transaction does, without its per-command machinery: this is every move's write).
    A lost connection is retried as the client's own commands are."""
    pool = client.connection_pool
    connection = await take_connection(pool)
    finished = False

    async def once() -> list[Any]:
        await send_packed(connection, b"".join(commands))
        # One read timeout for the batch, not one per reply (each is a timer handle
        # made and cancelled): the replies come together or not at all.
        try:
            async with asyncio.timeout(connection.socket_timeout):
                return await read_replies(connection, len(commands))
        except TimeoutError:
            raise RedisTimeoutError(f"no reply within {connection.socket_timeout} s") from None

    async def lost(error: Exception) -> None:
        await connection.disconnect()

    try:
        replies = await retry_call(connection, once, lost)
        finished = True
        return replies
    finally:
        if not finished:  # cancelled or failed mid-exchange: replies may be unread
            await connection.disconnect()
        await give_back(pool, connection)
