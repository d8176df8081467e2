"""Baseline server of the fan-out and memory benchmarks: bare `websockets`, no protocol.

It accepts websocket connections on /ws (any path), holds them, and on command
broadcasts pre-encoded frames to all of them with `websockets.broadcast` (to all at once,
or group by group, as a node sends to each room's spectators), with the same
connection options as a Klondike Live node (no compression, max_queue 16, pings every
20 s; relay.py, the latency benchmark's baseline, shares them). Started by
bench_fanout.py and bench_memory.py, not by hand:

    .venv/bin/python bench/broadcast_server.py

It prints `baseline on http://127.0.0.1:PORT/` first, then answers one line per stdin
command:

    count                                   number of open connections
    run K INTERVAL DIFF_BYTES PROGRESS PROGRESS_BYTES [GROUP]
        broadcast K frames of DIFF_BYTES (msgpack maps `diff` with `off`/`moves` 1..K),
        one every INTERVAL seconds, and PROGRESS frames of PROGRESS_BYTES spread evenly
        among them (as many as the node sent in its run); with GROUP, the connections
        are held in groups of GROUP and each frame is one `broadcast()` call per group
        (default 0: one group of all); answers `done`
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import TypedDict

import msgpack
import websockets
from websockets.asyncio.server import ServerConnection, serve

from harness.workers import paced


class ServeOptions(TypedDict):
    """Keyword arguments of `serve`: the node's websocket options (gateway/server.py)."""

    compression: str | None
    max_size: int | None
    max_queue: int | None
    ping_interval: float | None
    ping_timeout: float | None
    close_timeout: float | None


OPTIONS: ServeOptions = {
    "compression": None,
    "max_size": 4096,
    "max_queue": 16,
    "ping_interval": 20,
    "ping_timeout": 20,
    "close_timeout": 2,
}


def sized(message: dict[str, object], size: int) -> bytes:
    """`message` padded with a `pad` field so that the encoded frame has `size` bytes."""
    base = len(msgpack.packb({**message, "pad": b""}, use_bin_type=True))
    pad = max(0, size - base)
    frame: bytes = msgpack.packb({**message, "pad": b"x" * pad}, use_bin_type=True)
    # The bin header grows by one byte past 255 and by two past 65535: trim to fit.
    while len(frame) > size and pad > 0:
        pad -= 1
        frame = msgpack.packb({**message, "pad": b"x" * pad}, use_bin_type=True)
    return frame


def holder(
    connections: set[ServerConnection],
) -> Callable[[ServerConnection], Awaitable[None]]:
    """A handler that keeps every connection in `connections` while it is open."""

    async def handler(connection: ServerConnection) -> None:
        connections.add(connection)
        try:
            await connection.wait_closed()
        finally:
            connections.discard(connection)

    return handler


async def commands(
    connections: set[ServerConnection],
    run: Callable[[list[str]], Awaitable[None]] | None = None,
) -> None:
    """Answer stdin until it closes: `count` with the number of connections, `run ...`
    (when `run` is given) with `done` once it ran."""
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        words = line.split()
        if words[:1] == ["count"]:
            print(len(connections), flush=True)
        elif words[:1] == ["run"] and run is not None:
            await run(words[1:])
            print("done", flush=True)
        elif words:
            print(f"unknown command {words[0]}", flush=True)


async def main() -> None:
    connections: set[ServerConnection] = set()

    async def run(words: list[str]) -> None:
        count, interval = int(words[0]), float(words[1])
        diff_bytes, progress, progress_bytes = int(words[2]), int(words[3]), int(words[4])
        groups = grouped(connections, int(words[5]) if len(words) > 5 else 0)
        await broadcast(groups, count, interval, diff_bytes, progress, progress_bytes)

    async with serve(holder(connections), "127.0.0.1", 0, **OPTIONS) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"baseline on http://127.0.0.1:{port}/", flush=True)
        await commands(connections, run)


def grouped(connections: set[ServerConnection], size: int) -> list[list[ServerConnection]]:
    """The open connections in groups of `size` (0: one group of all of them)."""
    members = list(connections)
    size = size or max(len(members), 1)
    return [members[start : start + size] for start in range(0, len(members), size)]


def to_groups(groups: list[list[ServerConnection]], frame: bytes) -> None:
    """`frame` to every group: one `broadcast()` call per group."""
    for group in groups:
        websockets.broadcast(group, frame)


async def broadcast(
    groups: list[list[ServerConnection]],
    count: int,
    interval: float,
    diff_bytes: int,
    progress_count: int,
    progress_bytes: int,
) -> None:
    """K (`count`) diff frames of `diff_bytes`, one every `interval` seconds, and
    `progress_count` progress frames of `progress_bytes` spread evenly among them, each
    sent to every group."""
    frames = [sized({"t": "diff", "off": i, "moves": i}, diff_bytes) for i in range(1, count + 1)]
    progress = sized({"t": "progress"}, progress_bytes)
    async for index in paced(count, interval):
        to_groups(groups, frames[index])
        # Progress frames spread evenly: after diff i when the running share steps up.
        if (index + 1) * progress_count // count > index * progress_count // count:
            to_groups(groups, progress)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
