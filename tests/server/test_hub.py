"""The hub's bus reader against a stand-in subscriber: no Redis, no sockets."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from klondike_live import keys
from klondike_live.gateway.hub import Hub, LocalRoom
from klondike_live.metrics import Metrics


class FakePubSub:
    """Enough of redis-py's `PubSub` for the hub: subscriptions are confirmed at once,
    messages are whatever the test puts on `inbox`."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def subscribe(self, *channels: str) -> None:
        for channel in channels:
            self.inbox.put_nowait({"type": "subscribe", "channel": channel, "data": 1})

    async def unsubscribe(self, *channels: str) -> None:
        pass

    async def listen(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            yield await self.inbox.get()

    async def aclose(self) -> None:
        pass


class FakeRedis:
    def __init__(self) -> None:
        self.bus = FakePubSub()

    def pubsub(self, **_options: Any) -> FakePubSub:
        return self.bus


async def test_stop_returns_when_a_hook_swallows_the_cancellation() -> None:
    """A bus hook whose library call swallows the cancellation (as redis-py may during
    shutdown) must not keep the reader listening, and the hub's stop waiting, forever."""
    redis = FakeRedis()
    hub = Hub(redis, Metrics(), "node-test")  # type: ignore[arg-type]
    await hub.start()
    room_id = "r" * 22
    await hub.enter(room_id)
    in_hook = asyncio.Event()

    async def on_room_frame(_local: LocalRoom, _frame: bytes) -> None:
        in_hook.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(60)

    hub.on_room_frame = on_room_frame
    redis.bus.inbox.put_nowait(
        {"type": "message", "channel": keys.channel(room_id), "data": b"L|frame"}
    )
    await asyncio.wait_for(in_hook.wait(), timeout=5)
    # Not `wait_for(hub.stop())`: its timeout would cancel the reader a second time.
    stopping = asyncio.create_task(hub.stop())
    done, _ = await asyncio.wait({stopping}, timeout=2)
    try:
        assert stopping in done, "the hub's stop still waits for its reader"
    finally:
        stopping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stopping
