"""The node's pub/sub connections: sharded subscriptions, their readers, and recovery.

    subscriber = Subscriber(client, url, on_message, on_resubscribed=...)
    await subscriber.start(keys.DAILY_UPDATES)   # classic channels, always listened to
    await subscriber.subscribe(channel)          # sharded; returns once Redis confirmed it
    await subscriber.unsubscribe(channel)
    await subscriber.stop()

Room channels are **sharded** channels (SSUBSCRIBE; the scripts SPUBLISH them): on a
Cluster a message travels only to the shard that owns the channel's slot, which is the
room's slot. The subscriber keeps one connection per shard that owns a channel it
listens to (a standalone server is one shard), each with its own reader task; the
classic channels (daily updates, rare) are listened to on one of them.

Every reconnection is noticed: a shard's connection is never retried behind the
subscriber's back. After a connection loss, a failover, or a slot moving to another
node (the server then unsubscribes the channel itself), the subscriber finds each
channel's owner again, subscribes there, and once Redis confirmed it calls
`on_resubscribed(channels)`: whatever was published meanwhile was missed, and the live
service catches its viewers up from the streams.

Messages are handed to `on_message(channel, data)` in the order each shard delivers
them; a hook that fails is logged and the reader goes on. This module knows nothing of
rooms or frames: `bus.messages` decodes what it reads, the live service routes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from klondike_live.store.connect import RedisClient, is_cluster, node_client
from klondike_live.store.redispy import (
    handle_reply,
    message_reader,
    refresh_slots,
    server_address,
)
from klondike_live.tasks import TaskGroup, cancel_requested

log = logging.getLogger(__name__)

OnMessage = Callable[[str, bytes], Awaitable[None]]
"""Called with each message's channel and data."""

OnResubscribed = Callable[[set[str]], Awaitable[None]]
"""Called with the channels subscribed again after a gap (messages may be missing)."""

SUBSCRIBE_TIMEOUT: Final = 10.0
"""Seconds a subscription may take to be confirmed before the caller gives up."""

BACKOFF: Final = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""Pauses between reconnection attempts of one shard (the last one repeats)."""

HEARTBEAT: Final = 5.0
"""Seconds of silence after which a shard's connection is sent a PING; a connection
that stays silent as long again is taken for stalled (a frozen server, a dead link) and
opened anew, which also finds each channel's owner again."""

STANDALONE: Final = "standalone"

_DATA: Final = (b"smessage", b"message", "smessage", "message")


async def _as_read(reply: Any) -> Any:
    """The pub/sub connection's push handler: the push itself, for `_listen`."""
    return reply


"""The first element of a reply that carries a channel's message (bytes, or text on a
client that decodes replies)."""


class _Shard:
    """One connection to one server and the channels it carries."""

    def __init__(self, name: str, client: Redis) -> None:
        self.name = name
        self.client = client
        self.channels: set[str] = set()
        self.classic: tuple[str, ...] = ()
        self.pubsub: PubSub | None = None
        self.confirmations: dict[str, asyncio.Future[None]] = {}
        self.task: asyncio.Task[None] | None = None
        self.connected = False
        # Channels subscribed again after a gap (a reconnection, or moved here from
        # another node) whose confirmation is awaited; each is handed to
        # `on_resubscribed` as soon as it is confirmed, before any of its messages.
        self.catch_up: set[str] = set()
        self.heard = time.monotonic()  # when the connection last delivered anything


class Subscriber:
    """The node's sharded subscriptions (see the module docstring)."""

    def __init__(
        self,
        client: RedisClient,
        url: str,
        on_message: OnMessage,
        *,
        on_resubscribed: OnResubscribed | None = None,
        on_reconnect: Callable[[], None] | None = None,
        heartbeat: float = HEARTBEAT,
    ) -> None:
        self._heartbeat = heartbeat
        self._client = client
        self._url = url
        self._on_message = on_message
        self._on_resubscribed = on_resubscribed
        self._on_reconnect = on_reconnect
        self._shards: dict[str, _Shard] = {}
        self._owner: dict[str, str] = {}  # channel -> shard name
        self._classic: tuple[str, ...] = ()
        self._stopping = False
        self._tasks = TaskGroup()

    @property
    def connected(self) -> bool:
        """Every shard the subscriber listens to is connected."""
        return bool(self._shards) and all(s.connected for s in self._shards.values())

    async def start(self, *classic: str) -> None:
        """Listen to the classic `channels` (on one shard) and start reading."""
        self._classic = classic
        shard = self._shard_for(None)
        shard.classic = classic
        for channel in classic:
            shard.confirmations[f"classic:{channel}"] = asyncio.get_running_loop().create_future()
        self._run(shard)
        await self._wait_confirmed(shard, [f"classic:{c}" for c in classic])

    async def stop(self) -> None:
        self._stopping = True
        tasks = [s.task for s in self._shards.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._tasks.cancel()
        for shard in self._shards.values():
            with contextlib.suppress(Exception):
                await shard.client.aclose()

    async def subscribe(self, channel: str) -> None:
        """Listen to the sharded `channel`; returns once Redis confirmed it (or raises
        a redis `ConnectionError` after `SUBSCRIBE_TIMEOUT` seconds)."""
        name = self._owner.get(channel)
        shard = self._shards.get(name) if name is not None else None
        if shard is None:
            shard = self._shard_for(channel)
            self._owner[channel] = shard.name
        if channel not in shard.channels:
            shard.channels.add(channel)
            shard.confirmations[channel] = asyncio.get_running_loop().create_future()
            if shard.task is None:
                self._run(shard)
            elif shard.pubsub is not None and shard.connected:
                with contextlib.suppress(RedisError, OSError):
                    await shard.pubsub.ssubscribe(channel)
        await self._wait_confirmed(shard, [channel])

    async def unsubscribe(self, channel: str) -> None:
        name = self._owner.pop(channel, None)
        shard = self._shards.get(name) if name is not None else None
        if shard is None or channel not in shard.channels:
            return
        shard.channels.discard(channel)
        shard.confirmations.pop(channel, None)
        if shard.pubsub is not None and shard.connected:
            with contextlib.suppress(RedisError, OSError):
                await shard.pubsub.sunsubscribe(channel)

    # ------------------------------------------------------------ shards

    def _shard_for(self, channel: str | None) -> _Shard:
        """The shard that owns `channel` (None: the one for classic channels)."""
        if not is_cluster(self._client):
            host, port = self._standalone_address()
            name = STANDALONE
        else:
            cluster: Any = self._client
            node = (
                cluster.get_node_from_key(channel)
                if channel is not None
                else cluster.get_random_primary_node()
                if not self._shards
                else None
            )
            if node is None:  # classic channels stay on the shard they started on
                return next(iter(self._shards.values()))
            return self._new_shard(node)
        shard = self._shards.get(name)
        if shard is None:
            shard = self._shards[name] = _Shard(name, node_client(self._url, host, port))
        return shard

    def _new_shard(self, node: Any) -> _Shard:
        """The shard of a cluster node (made on first use)."""
        shard = self._shards.get(node.name)
        if shard is None:
            client = node_client(self._url, node.host, node.port)
            shard = self._shards[node.name] = _Shard(node.name, client)
        return shard

    def _standalone_address(self) -> tuple[str, int]:
        return server_address(self._client)  # type: ignore[arg-type]

    def _run(self, shard: _Shard) -> None:
        shard.task = asyncio.create_task(self._read(shard), name=f"bus-{shard.name}")

    async def _wait_confirmed(self, shard: _Shard, channels: list[str]) -> None:
        waiting = [shard.confirmations[c] for c in channels if c in shard.confirmations]
        if not waiting:
            return
        try:
            await asyncio.wait_for(
                asyncio.shield(asyncio.gather(*waiting)), timeout=SUBSCRIBE_TIMEOUT
            )
        except TimeoutError:
            raise RedisConnectionError(
                f"the bus could not subscribe within {SUBSCRIBE_TIMEOUT:g} s"
            ) from None

    # ------------------------------------------------------------ readers

    async def _read(self, shard: _Shard) -> None:
        attempt = 0
        first = True
        watchdog: asyncio.Task[None] | None = None
        while not self._stopping and not cancel_requested():
            # Pushes (RESP3) reach `_listen` as read: the client's own push handler
            # would look up and call a logger for each message first.
            pubsub = shard.client.pubsub(
                ignore_subscribe_messages=False, push_handler_func=_as_read
            )
            shard.pubsub = pubsub
            try:
                if not first:
                    shard.catch_up |= shard.channels
                if shard.classic:
                    await pubsub.subscribe(*shard.classic)
                # One SSUBSCRIBE per channel: a cluster refuses channels of several slots.
                # Channels added while these are sent are subscribed too: until the shard
                # counts as connected, `subscribe` leaves that to this loop.
                done: set[str] = set()
                while pending := shard.channels - done:
                    for channel in sorted(pending):
                        await pubsub.ssubscribe(channel)
                        done.add(channel)
                shard.connected = True
                attempt = 0
                watchdog = asyncio.create_task(self._watch(shard, pubsub), name="bus-watchdog")
                await self._listen(shard, pubsub)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                if self._stopping:
                    return
                log.warning("bus connection to %s lost: %s", shard.name, exc)
            finally:
                shard.connected = False
                if watchdog is not None:
                    watchdog.cancel()
                    watchdog = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            first = False
            if self._on_reconnect is not None:
                self._on_reconnect()
            await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            attempt += 1
            await self._rehome(shard)
            if not shard.channels and not shard.classic:
                # Every channel moved to other nodes: this connection is no longer needed.
                self._shards.pop(shard.name, None)
                shard.task = None
                with contextlib.suppress(Exception):
                    await shard.client.aclose()
                return
        raise asyncio.CancelledError

    async def _listen(self, shard: _Shard, pubsub: PubSub) -> None:
        """Read the connection until it fails or nothing is subscribed on it any more.

        Every message of a room is read here, so its messages are taken straight from
        the connection's replies and handed over; only the rest (confirmations, PONGs)
        goes through `handle_reply`, which keeps the client's own record of its
        subscriptions. (`PubSub.listen` would build a dict for each message, behind a
        retry wrapper and a health check per read: most of the bus's cost on a node
        whose spectators see every move.)"""
        read = message_reader(pubsub)
        while read is not None and pubsub.subscribed:
            reply = await read()
            shard.heard = time.monotonic()
            # A list, or on RESP3 (redis-py's default) a push: hiredis's
            # `PushNotification`, a subclass of list.
            if isinstance(reply, list) and len(reply) == 3 and reply[0] in _DATA:
                channel = reply[1]
                await self._deliver(
                    channel.decode() if type(channel) is bytes else channel, reply[2]
                )
            else:
                message = await handle_reply(pubsub, reply)
                if message is not None:
                    await self._dispatch(shard, message)
            if cancel_requested():
                # Swallowed by a library call of a hook (redis-py does, during
                # shutdown): listening on would wait for a message that never comes,
                # and the node's stop with it.
                raise asyncio.CancelledError

    async def _watch(self, shard: _Shard, pubsub: PubSub) -> None:
        """PING a silent connection; drop one that leaves the PING unanswered for a
        whole heartbeat (see `HEARTBEAT`)."""
        shard.heard = time.monotonic()  # a fresh connection starts heard
        pinged_at: float | None = None
        while True:
            await asyncio.sleep(self._heartbeat)
            now = time.monotonic()
            if pinged_at is not None and shard.heard < pinged_at:
                log.warning(
                    "bus connection to %s did not answer a PING within %.1f s: anew",
                    shard.name,
                    now - pinged_at,
                )
                shard.connected = False
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                return
            pinged_at = None
            if now - shard.heard >= self._heartbeat:
                pinged_at = now
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.ping()

    async def _rehome(self, shard: _Shard) -> None:
        """On a cluster, move each channel of `shard` to the node that owns it now."""
        if not is_cluster(self._client):
            return
        cluster: Any = self._client
        with contextlib.suppress(RedisError, OSError):
            await refresh_slots(cluster)
        primaries = {node.name for node in cluster.get_primaries()}
        if shard.classic and shard.name not in primaries and primaries:
            # Its node failed over or left: the classic channels go to a current master.
            target = (
                next(s for name, s in self._shards.items() if name in primaries)
                if any(name in primaries for name in self._shards)
                else self._new_shard(cluster.get_random_primary_node())
            )
            target.classic, shard.classic = shard.classic, ()
            if target.task is None:
                self._run(target)
            elif target.pubsub is not None and target.connected:
                with contextlib.suppress(RedisError, OSError):
                    await target.pubsub.subscribe(*target.classic)
        for channel in sorted(shard.channels):
            owner = self._shard_for(channel)
            if owner is shard:
                continue
            shard.channels.discard(channel)
            future = shard.confirmations.pop(channel, None)
            self._owner[channel] = owner.name
            owner.channels.add(channel)
            if future is not None and not future.done():
                owner.confirmations[channel] = future
            # Whatever was published on its new node before it listens there is missed:
            # once confirmed there, its rooms catch up.
            owner.catch_up.add(channel)
            if owner.task is None:
                self._run(owner)
            elif owner.pubsub is not None and owner.connected:
                with contextlib.suppress(RedisError, OSError):
                    await owner.pubsub.ssubscribe(channel)

    async def _dispatch(self, shard: _Shard, message: dict[str, Any]) -> None:
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        kind = message["type"]
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind in ("ssubscribe", "subscribe"):
            key = channel if kind == "ssubscribe" else f"classic:{channel}"
            waiting = shard.confirmations.get(key)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)
            if kind == "ssubscribe" and channel in shard.catch_up:
                shard.catch_up.discard(channel)
                # Told before this reader hands over any message of the channel: the
                # service holds its viewers' frames until they are caught up, so no
                # frame published after the gap reaches a viewer ahead of its snapshot.
                await self._resubscribed({channel})
            return
        if kind == "sunsubscribe" and channel in shard.channels:
            # The server dropped it: its slot moved to another node.
            self._spawn(self._moved(shard, channel))
            return
        if kind in ("smessage", "message"):
            await self._deliver(channel, message["data"])

    async def _deliver(self, channel: str, data: bytes) -> None:
        try:
            await self._on_message(channel, data)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("handling a bus message on %s failed", channel)

    async def _moved(self, shard: _Shard, channel: str) -> None:
        await self._rehome(shard)
        if channel in shard.channels and shard.pubsub is not None:
            with contextlib.suppress(RedisError, OSError):
                await shard.pubsub.ssubscribe(channel)

    async def _resubscribed(self, channels: set[str]) -> None:
        if self._on_resubscribed is None or not channels:
            return
        try:
            await self._on_resubscribed(channels)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("catching up after a gap on %s failed", sorted(channels))

    def _spawn(self, coro: Awaitable[None]) -> None:
        self._tasks.spawn(coro, "bus-recovery")
