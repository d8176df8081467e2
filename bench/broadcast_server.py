"""Baseline server of the fan-out and memory benchmarks: bare `websockets`, no protocol.

It accepts websocket connections on /ws (any path), holds them, and on command
broadcasts pre-encoded frames to all of them with `websockets.broadcast`, with the same
connection options as a Klondike Live node (no compression, max_queue 16, pings every
20 s). Started by bench_fanout.py and bench_memory.py, not by hand:

    .venv/bin/python bench/broadcast_server.py

It prints `baseline on http://127.0.0.1:PORT/` first, then answers one line per stdin
command:

    count                                   number of open connections
    run K INTERVAL DIFF_BYTES PROGRESS PROGRESS_BYTES
        broadcast K frames of DIFF_BYTES (msgpack maps `diff` with `off`/`moves` 1..K),
        one every INTERVAL seconds, and PROGRESS frames of PROGRESS_BYTES spread evenly
        among them (as many as the node sent in its run); answers `done`
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

import msgpack
import websockets
from websockets.asyncio.server import ServerConnection, serve


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


async def main() -> None:
    connections: set[ServerConnection] = set()

    async def handler(connection: ServerConnection) -> None:
        connections.add(connection)
        try:
            await connection.wait_closed()
        finally:
            connections.discard(connection)

    async with serve(
        handler,
        "127.0.0.1",
        0,
        compression=None,
        max_size=4096,
        max_queue=16,
        ping_interval=20,
        ping_timeout=20,
        close_timeout=2,
    ) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"baseline on http://127.0.0.1:{port}/", flush=True)
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return
            words = line.split()
            if not words:
                continue
            if words[0] == "count":
                print(len(connections), flush=True)
            elif words[0] == "run":
                count, interval = int(words[1]), float(words[2])
                diff_bytes, progress, progress_bytes = int(words[3]), int(words[4]), int(words[5])
                await run(connections, count, interval, diff_bytes, progress, progress_bytes)
                print("done", flush=True)
            else:
                print(f"unknown command {words[0]}", flush=True)


async def run(
    connections: set[ServerConnection],
    count: int,
    interval: float,
    diff_bytes: int,
    progress_count: int,
    progress_bytes: int,
) -> None:
    frames = [sized({"t": "diff", "off": i, "moves": i}, diff_bytes) for i in range(1, count + 1)]
    progress = sized({"t": "progress"}, progress_bytes)
    start = time.perf_counter()
    for index, frame in enumerate(frames):
        delay = start + index * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        websockets.broadcast(connections, frame)
        # Progress frames spread evenly: after diff i when the running share steps up.
        if (index + 1) * progress_count // count > index * progress_count // count:
            websockets.broadcast(connections, progress)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
