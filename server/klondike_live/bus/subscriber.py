"""The node's one pub/sub connection: subscriptions and the task that reads them.

    subscriber = Subscriber(redis, on_message)
    await subscriber.start(keys.DAILY_UPDATES)   # channels every node always listens to
    await subscriber.subscribe(channel)          # returns once Redis confirmed it
    await subscriber.unsubscribe(channel)
    await subscriber.stop()

Every message is handed to `on_message(channel, data)` in the order it arrived; a hook
that fails is logged and the reader goes on. This module knows nothing of rooms or
frames: `bus.messages` decodes what it reads, the live service routes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from klondike_live.tasks import cancel_requested

log = logging.getLogger(__name__)

OnMessage = Callable[[str, bytes], Awaitable[None]]
"""Called with each message's channel and data."""

SUBSCRIBE_TIMEOUT = 10.0
"""Seconds a subscription may take to be confirmed before the caller gives up."""


class Subscriber:
    """One pub/sub connection and its reader task (see the module docstring)."""

    def __init__(self, redis: Redis, on_message: OnMessage) -> None:
        self._pubsub: PubSub = redis.pubsub(ignore_subscribe_messages=False)
        self._on_message = on_message
        self._channels: set[str] = set()
        self._confirmations: dict[str, asyncio.Future[None]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self, *channels: str) -> None:
        """Subscribe to `channels` and start reading (a subscription must exist before
        the reader listens)."""
        self._channels.update(channels)
        await self._pubsub.subscribe(*channels)
        self._reader = asyncio.create_task(self._read(), name="bus-reader")

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    async def subscribe(self, channel: str) -> None:
        """Listen to `channel`; returns once Redis confirmed the subscription."""
        waiting = self._confirmations.get(channel)
        if channel not in self._channels:
            self._channels.add(channel)
            waiting = asyncio.get_running_loop().create_future()
            self._confirmations[channel] = waiting
            await self._pubsub.subscribe(channel)
        if waiting is not None:
            await asyncio.wait_for(asyncio.shield(waiting), timeout=SUBSCRIBE_TIMEOUT)

    async def unsubscribe(self, channel: str) -> None:
        if channel in self._channels:
            self._channels.discard(channel)
            self._confirmations.pop(channel, None)
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(channel)

    async def _read(self) -> None:
        while not cancel_requested():
            try:
                async for message in self._pubsub.listen():
                    await self._dispatch(message)
                    if cancel_requested():
                        # Swallowed by a library call of a hook (redis-py does, during
                        # shutdown): listening on would wait for a message that never
                        # comes, and the node's stop with it.
                        raise asyncio.CancelledError
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bus read failed; retrying")
                await asyncio.sleep(0.5)
        raise asyncio.CancelledError

    async def _dispatch(self, message: dict[str, Any]) -> None:
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        kind = message["type"]
        if kind == "subscribe":
            waiting = self._confirmations.pop(channel, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)
            return
        if kind != "message":
            return
        try:
            await self._on_message(channel, message["data"])
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("handling a bus message on %s failed", channel)
