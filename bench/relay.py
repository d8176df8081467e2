"""Baseline of the latency benchmark: a minimal two-process relay, no game logic.

    ingest:  websocket client --frame--> process 1 --SPUBLISH--> Valkey channel
    fanout:  Valkey channel --subscriber--> process 2 --websockets.broadcast()--> spectators

Both use the node's own Redis client setup (`open_redis`) and the node's websocket
options; the channel is a sharded one, like a room's (the node's scripts SPUBLISH, its
subscriber SSUBSCRIBEs on a connection of its own and reads with `PubSub.listen`).
Started by bench_latency.py, not by hand:

    .venv/bin/python bench/relay.py ingest REDIS_URL CHANNEL
    .venv/bin/python bench/relay.py fanout REDIS_URL CHANNEL

Each prints `relay <role> on http://127.0.0.1:PORT/` first; the fanout process answers
the stdin command `count` with the number of connected spectators.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from urllib.parse import urlsplit

import websockets
from websockets.asyncio.server import ServerConnection, serve

from broadcast_server import OPTIONS, commands, holder
from klondike_live.store.connect import node_client, open_redis


async def ingest(redis_url: str, channel: str) -> None:
    redis = await open_redis(redis_url)

    async def handler(connection: ServerConnection) -> None:
        async for frame in connection:
            await redis.spublish(channel, frame)

    try:
        async with serve(handler, "127.0.0.1", 0, **OPTIONS) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            print(f"relay ingest on http://127.0.0.1:{port}/", flush=True)
            await commands(set())
    finally:
        await redis.aclose()


async def fanout(redis_url: str, channel: str) -> None:
    redis = await open_redis(redis_url)
    # Like the node's subscriber: a connection of its own, no read timeout.
    address = urlsplit(redis_url)
    listener = node_client(redis_url, address.hostname or "127.0.0.1", address.port or 6379)
    pubsub = listener.pubsub(ignore_subscribe_messages=True)
    await pubsub.ssubscribe(channel)
    connections: set[ServerConnection] = set()

    async def read() -> None:
        async for message in pubsub.listen():
            if message["type"] == "smessage":
                websockets.broadcast(connections, message["data"])

    reader = asyncio.create_task(read())
    try:
        async with serve(holder(connections), "127.0.0.1", 0, **OPTIONS) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            print(f"relay fanout on http://127.0.0.1:{port}/", flush=True)
            await commands(connections)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        await pubsub.aclose()
        await listener.aclose()
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["ingest", "fanout"])
    parser.add_argument("redis_url")
    parser.add_argument("channel")
    args = parser.parse_args()
    run = ingest if args.role == "ingest" else fanout
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(args.redis_url, args.channel))


if __name__ == "__main__":
    main()
