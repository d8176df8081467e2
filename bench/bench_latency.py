"""Move-to-spectator latency across two nodes, against a minimal publish/subscribe relay.

Topology: a private Valkey; the racer of a solo game on node A, N spectators of that
room on node B. The racer sends a move every `--interval` seconds (20 ms: paced, so
this measures latency, not queueing) and waits for its `ack`; each spectator stamps the
arrival of each move's diff. A sample is arrival - send, both read from the same clock
(the racer and the spectators live in this process), for every (move, spectator).

Baseline, same run, same N and pacing: bench/relay.py - process 1 takes each frame from a
websocket client and PUBLISHes it to the same Valkey, process 2 is subscribed and
`websockets.broadcast()`s it to its N spectators; no game logic, frames of the size of
node B's spectator diffs. Reported: p50 and p99 per N, and node / relay ratios.

    .venv/bin/python bench/bench_latency.py [--spectators 1,100] [--moves 400] [--interval 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from websockets.asyncio.client import ClientConnection

from broadcast_server import sized
from serverbench import (
    FAST_RATE,
    Child,
    Harness,
    Racer,
    Spectator,
    close_all,
    code_version,
    open_spectators,
    percentile,
    raw_connect,
    send_command,
    table,
    wait_all,
)

WARMUP_MOVES = 20


def samples(spectators: list[Spectator], sent: dict[int, float]) -> list[float]:
    """Milliseconds from send to arrival, per (move, spectator)."""
    out = []
    for spectator in spectators:
        assert spectator.stamps is not None
        for moves, at in sent.items():
            arrived = spectator.stamps.get(moves)
            if arrived is None:
                raise RuntimeError(f"a spectator missed the diff of move {moves}")
            out.append((arrived - at) * 1000)
    return out


async def paced(count: int, interval: float, send: object) -> dict[int, float]:
    """Call `send()` every `interval` seconds; it returns the move number it sent."""
    sent: dict[int, float] = {}
    start = time.perf_counter()
    for index in range(count):
        delay = start + index * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        number, at = await send()  # type: ignore[operator]
        sent[number] = at
    return sent


async def measure_node(
    node_a: Child, node_b: Child, count: int, moves: int, interval: float
) -> tuple[list[float], int]:
    racer = await Racer.solo(node_a.ws_url)
    spectators, tasks = await open_spectators(node_b.ws_url, racer.room, count, stamps=True)
    try:
        await asyncio.sleep(0.5)

        async def send() -> tuple[int, float]:
            move_id, frame = racer.next_frame()
            number = racer.moves
            at = time.perf_counter()
            await racer.conn.send(frame)
            await racer.wait_ack(move_id)
            return number, at

        await paced(WARMUP_MOVES, interval, send)
        sent = await paced(moves, interval, send)
        if not await wait_all(spectators, max(sent), 30):
            raise RuntimeError(f"spectators missed diffs (N={count})")
        if sum(s.gaps for s in spectators):
            raise RuntimeError("diff offsets with gaps")
        return samples(spectators, sent), spectators[0].diff_bytes
    finally:
        await close_all([s.conn for s in spectators] + [racer.conn], tasks)


async def measure_relay(
    ingest: Child, fanout: Child, count: int, moves: int, interval: float, size: int
) -> list[float]:
    spectators, tasks = await open_spectators(fanout.ws_url, None, count, stamps=True)
    sender: ClientConnection = await raw_connect(ingest.ws_url)
    try:
        await asyncio.sleep(0.5)
        held = int(await asyncio.to_thread(send_command, fanout, "count"))
        if held != count:
            raise RuntimeError(f"relay holds {held} spectators, expected {count}")
        frames = [
            sized({"t": "diff", "off": i, "moves": i}, size)
            for i in range(1, WARMUP_MOVES + moves + 1)
        ]
        position = [0]

        async def send() -> tuple[int, float]:
            position[0] += 1
            at = time.perf_counter()
            await sender.send(frames[position[0] - 1])
            return position[0], at

        await paced(WARMUP_MOVES, interval, send)
        sent = await paced(moves, interval, send)
        if not await wait_all(spectators, max(sent), 30):
            raise RuntimeError(f"relay spectators missed frames (N={count})")
        return samples(spectators, sent)
    finally:
        await close_all([s.conn for s in spectators] + [sender], tasks)


async def bench(args: argparse.Namespace, harness: Harness) -> int:
    url = harness.valkey()
    node_a = harness.node(url, "node-a", FAST_RATE)
    node_b = harness.node(url, "node-b")
    ingest = harness.script("relay-ingest", "relay.py", "ingest", url, "bench:relay")
    fanout = harness.script("relay-fanout", "relay.py", "fanout", url, "bench:relay")
    rows: list[list[object]] = []
    verdicts = []
    for count in args.spectators:
        ours, size = await measure_node(node_a, node_b, count, args.moves, args.interval)
        relay = await measure_relay(ingest, fanout, count, args.moves, args.interval, size)
        p50, p99 = percentile(ours, 50), percentile(ours, 99)
        r50, r99 = percentile(relay, 50), percentile(relay, 99)
        rows.append(
            ["node A -> Valkey -> node B", count, len(ours), p50, p99, p50 / r50, p99 / r99]
        )
        rows.append(["relay (publish/subscribe)", count, len(relay), r50, r99, 1.0, 1.0])
        verdicts.append((count, p50 / r50, p99 / r99))
    print(
        f"{code_version()}\nPython {sys.version.split()[0]}, {os.cpu_count()} cores, a move every "
        f"{args.interval * 1000:.0f} ms, {args.moves} moves after {WARMUP_MOVES} warm-up; "
        "latency from the racer's send to each spectator's receipt"
    )
    print(table(["path", "N", "samples", "p50 ms", "p99 ms", "p50 / relay", "p99 / relay"], rows))
    print()
    for count, q50, q99 in verdicts:
        met = "met" if q50 <= 1.5 and q99 <= 1.5 else "missed"
        print(
            f"target within 1.5x of the relay at N={count}: p50 {q50:.2f}x, p99 {q99:.2f}x ({met})"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spectators",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[1, 100],
        help="spectator counts N, comma-separated",
    )
    parser.add_argument("--moves", type=int, default=400, help="measured moves per N")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between moves")
    args = parser.parse_args()
    with Harness() as harness:
        try:
            return asyncio.run(bench(args, harness))
        except RuntimeError as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            for name in ("node-a", "node-b"):
                errors = harness.log_errors(name)
                if errors:
                    print(f"{name} log:\n{errors}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
