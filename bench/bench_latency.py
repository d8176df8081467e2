"""Move-to-spectator latency across two nodes, against a minimal publish/subscribe relay.

Topology: a private Valkey; the racer of a solo game on node A, N spectators of that
room on node B. The racer sends a move every `--interval` seconds (20 ms: paced, so
this measures latency, not queueing) and waits for its `ack`; each spectator stamps the
arrival of each move's diff. A sample is arrival - send, both read from the same clock
(the racer and the spectators live in this process), for every (move, spectator).
Node and relay runs alternate, `--rounds` times per N, and their samples are pooled.

Baseline, same run, same N and pacing: bench/relay.py - process 1 takes each frame from a
websocket client and PUBLISHes it to the same Valkey, process 2 is subscribed and
`websockets.broadcast()`s it to its N spectators; no game logic, frames of the size of
node B's spectator diffs. Reported: p50 and p99 per N, and node / relay ratios.

    .venv/bin/python bench/bench_latency.py [--spectators 1,100] [--moves 300] [--rounds 3]

`--against TREE` (repeatable) adds the two nodes of another checkout's `server/` (e.g.
`git worktree add --detach /tmp/old <commit>`) to the same Valkey and the same
alternating rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import redis.asyncio
from websockets.asyncio.client import ClientConnection

from broadcast_server import sized
from klondike_live import keys
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
    run_bench,
    send_command,
    table,
    unpack,
    wait_all,
)

WARMUP_MOVES = 20
RELAY_CHANNEL = "bench:relay"


class BusTap:
    """An independent subscriber on the Valkey channel: when each move's spectator
    frame was published (splits the latency into sender side and receiver side).

    Room channels are sharded channels (the node's scripts SPUBLISH them, and so does
    the relay), so the tap listens with SSUBSCRIBE. With `header`, a message is a bus
    header (`S<seat>:<epoch>:<offset>|`, see `bus.messages`) then the frame."""

    def __init__(self, url: str, channel: str, header: bool) -> None:
        self.url = url
        self.channel = channel
        self.header = header  # messages carry the bus's routing header
        self.stamps: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.client = redis.asyncio.Redis.from_url(self.url)
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        await self.pubsub.ssubscribe(self.channel)
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            message = await self.pubsub.get_message(timeout=1.0)
            if message is None or message["type"] != "smessage":
                continue
            at = time.perf_counter()
            data: bytes = message["data"]
            if self.header:
                if not data.startswith(b"S"):
                    continue
                data = data[data.index(b"|") + 1 :]
            moves = int(unpack(data).get("moves", -1))
            self.stamps.setdefault(moves, at)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.pubsub.aclose()  # type: ignore[no-untyped-call]
        await self.client.aclose()


@dataclass
class Result:
    """Latency samples in ms: end to end, sender side (send to publish seen on the bus),
    receiver side (publish seen to spectator), and send to ack (nodes only)."""

    total: list[float]
    to_bus: list[float]
    from_bus: list[float]
    ack: list[float]

    def add(self, other: Result) -> None:
        self.total += other.total
        self.to_bus += other.to_bus
        self.from_bus += other.from_bus
        self.ack += other.ack


def split(
    spectators: list[Spectator], sent: dict[int, float], tap: BusTap, acks: list[float]
) -> Result:
    to_bus = [(tap.stamps[m] - at) * 1000 for m, at in sent.items() if m in tap.stamps]
    from_bus = []
    for spectator in spectators:
        assert spectator.stamps is not None
        for moves in sent:
            if moves in tap.stamps and moves in spectator.stamps:
                from_bus.append((spectator.stamps[moves] - tap.stamps[moves]) * 1000)
    return Result(samples(spectators, sent), to_bus, from_bus, acks)


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


async def paced(
    count: int, interval: float, send: Callable[[], Awaitable[tuple[int, float]]]
) -> dict[int, float]:
    """Call `send()` every `interval` seconds; it returns the move number it sent."""
    sent: dict[int, float] = {}
    start = time.perf_counter()
    for index in range(count):
        delay = start + index * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        number, at = await send()
        sent[number] = at
    return sent


async def measure_node(
    url: str, node_a: Child, node_b: Child, count: int, moves: int, interval: float
) -> tuple[Result, int]:
    racer = await Racer.solo(node_a.ws_url)
    spectators, tasks = await open_spectators(node_b.ws_url, racer.room, count, stamps=True)
    tap = BusTap(url, keys.spectator_channel(racer.room), header=True)
    await tap.start()
    acks: list[float] = []
    try:
        await asyncio.sleep(0.5)

        async def send() -> tuple[int, float]:
            move_id, frame = racer.next_frame()
            number = racer.moves
            at = time.perf_counter()
            await racer.conn.send(frame)
            await racer.wait_ack(move_id)
            acks.append((time.perf_counter() - at) * 1000)
            return number, at

        await paced(WARMUP_MOVES, interval, send)
        acks.clear()
        sent = await paced(moves, interval, send)
        if not await wait_all(spectators, max(sent), 30):
            raise RuntimeError(f"spectators missed diffs (N={count})")
        if sum(s.gaps for s in spectators):
            raise RuntimeError("diff offsets with gaps")
        return split(spectators, sent, tap, acks), spectators[0].diff_bytes
    finally:
        await tap.stop()
        await close_all([s.conn for s in spectators] + [racer.conn], tasks)


async def measure_relay(
    url: str, ingest: Child, fanout: Child, count: int, moves: int, interval: float, size: int
) -> Result:
    spectators, tasks = await open_spectators(fanout.ws_url, None, count, stamps=True)
    sender: ClientConnection = await raw_connect(ingest.ws_url)
    tap = BusTap(url, RELAY_CHANNEL, header=False)
    await tap.start()
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
        return split(spectators, sent, tap, [])
    finally:
        await tap.stop()
        await close_all([s.conn for s in spectators] + [sender], tasks)


async def bench(args: argparse.Namespace, harness: Harness) -> int:
    url = harness.valkey()
    node_a = harness.node(url, "node-a", FAST_RATE)
    node_b = harness.node(url, "node-b")
    ingest = harness.script("relay-ingest", "relay.py", "ingest", url, RELAY_CHANNEL)
    fanout = harness.script("relay-fanout", "relay.py", "fanout", url, RELAY_CHANNEL)
    others: list[tuple[str, Child, Child]] = []
    against: list[str] = []
    for index, tree in enumerate(args.against):
        env = {"PYTHONPATH": str(tree.resolve() / "server")}
        against.append(code_version(tree.resolve()))
        label = against[-1].removeprefix("server code: ").split()[0]
        others.append(
            (
                f"node at {label}",
                harness.node(url, f"against{index}-a", {**FAST_RATE, **env}),
                harness.node(url, f"against{index}-b", env),
            )
        )
    rows: list[list[object]] = []
    parts: list[list[object]] = []
    verdicts = []
    for count in args.spectators:
        ours = Result([], [], [], [])
        relay = Result([], [], [], [])
        theirs = [Result([], [], [], []) for _ in others]
        for _ in range(args.rounds):  # alternate, so drift on a shared machine hits all
            got, size = await measure_node(url, node_a, node_b, count, args.moves, args.interval)
            ours.add(got)
            relay.add(
                await measure_relay(url, ingest, fanout, count, args.moves, args.interval, size)
            )
            for (_, other_a, other_b), result in zip(others, theirs, strict=True):
                got, _ = await measure_node(url, other_a, other_b, count, args.moves, args.interval)
                result.add(got)
        p50, p99 = percentile(ours.total, 50), percentile(ours.total, 99)
        r50, r99 = percentile(relay.total, 50), percentile(relay.total, 99)
        ratios = [p50 / r50, p99 / r99]
        rows.append(["node A -> Valkey -> node B", count, len(ours.total), p50, p99, *ratios])
        for (label, _, _), result in zip(others, theirs, strict=True):
            o50, o99 = percentile(result.total, 50), percentile(result.total, 99)
            rows.append([label, count, len(result.total), o50, o99, o50 / r50, o99 / r99])
        rows.append(["relay (publish/subscribe)", count, len(relay.total), r50, r99, 1.0, 1.0])
        verdicts.append((count, p50 / r50, p99 / r99))
        named = [("node", ours)] + [(o[0], r) for o, r in zip(others, theirs, strict=True)]
        for name, result in [*named, ("relay", relay)]:
            parts.append(
                [
                    name,
                    count,
                    percentile(result.to_bus, 50),
                    percentile(result.to_bus, 99),
                    percentile(result.from_bus, 50),
                    percentile(result.from_bus, 99),
                    percentile(result.ack, 50) if result.ack else float("nan"),
                ]
            )
    print(code_version())
    for line in against:
        print(f"against: {line}")
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        "a move every "
        f"{args.interval * 1000:.0f} ms, {args.rounds} rounds of {args.moves} moves after "
        f"{WARMUP_MOVES} warm-up; "
        "latency from the racer's send to each spectator's receipt"
    )
    print(table(["path", "N", "samples", "p50 ms", "p99 ms", "p50 / relay", "p99 / relay"], rows))
    print()
    print("where the time goes: an extra subscriber on the Valkey channel stamps each publish")
    print(
        table(
            [
                "path",
                "N",
                "send->bus p50",
                "send->bus p99",
                "bus->spectator p50",
                "bus->spectator p99",
                "send->ack p50",
            ],
            parts,
        )
    )
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
    parser.add_argument("--moves", type=int, default=300, help="measured moves per round")
    parser.add_argument("--rounds", type=int, default=3, help="node/relay rounds per N")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between moves")
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        help="a work tree of another commit (repeatable): its two nodes are measured too, "
        "in the same alternating rounds (an older tree's publishes may not be seen by the "
        "bus tap)",
    )
    args = parser.parse_args()
    return run_bench(lambda harness: bench(args, harness), ("node-a", "node-b", "against0-a"))


if __name__ == "__main__":
    sys.exit(main())
