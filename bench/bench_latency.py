"""Move-to-spectator latency across two nodes, against a minimal publish/subscribe relay.

Topology: a private Valkey; the racer of a solo game on node A, N spectators of that
room on node B. The racer sends a move every `--interval` seconds (20 ms: paced, so
this measures latency, not queueing) and waits for its `ack`; each spectator stamps the
arrival of each move's diff. The spectators are read in their own processes (`--procs`,
at most N; one at N = 1), never by the racer's: a sample is arrival - send, both read
from the system-wide monotonic clock, for every (move, spectator). Node and relay runs
alternate, `--rounds` times per N, and their samples are pooled.

Baseline, same run, same N and pacing: bench/relay.py - process 1 takes each frame from a
websocket client and PUBLISHes it to the same Valkey, process 2 is subscribed and
`websockets.broadcast()`s it to its N spectators; no game logic, frames of the size of
node B's spectator diffs. Reported: p50 and p99 per N, and node / relay ratios.

    .venv/bin/python bench/bench_latency.py [--spectators 1,100] [--moves 300] [--rounds 5]

`--against TREE` (repeatable) adds the two nodes of another checkout's `server/` (e.g.
`git worktree add --detach /tmp/old <commit>`) to the same Valkey and the same
alternating rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio

from broadcast_server import sized
from harness.clients import Racer, SpectatorPool, Stamps, raw_connect, unpack
from harness.processes import FAST_RATE, Child, Harness, run_bench
from harness.report import code_version, commit_of, machine, numbers, parser, percentile, table
from harness.workers import paced
from klondike_live import keys

WARMUP_MOVES = 20
RELAY_CHANNEL = "bench:relay"


class BusTap:
    """An independent subscriber on the Valkey channel: when each move's spectator
    frame was published (splits the latency into sender side and receiver side).

    Room channels are sharded channels (the node's scripts SPUBLISH them, and so does
    the relay), so the tap listens with SSUBSCRIBE. With `header`, a message is a bus
    header then the frame: a move's spectator frame comes in a progress note
    (`P<node>:...|`, see `bus.messages`), a refresh's as `S<seat>:<epoch>:<offset>|`."""

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
                if data[:1] not in (b"P", b"S"):
                    continue
                data = data[data.index(b"|") + 1 :]
            moves = int(unpack(data).get("moves", -1))
            self.stamps.setdefault(moves, at)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.pubsub.aclose()
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


def split(stamps: list[Stamps], sent: dict[int, float], tap: BusTap, acks: list[float]) -> Result:
    to_bus = [(tap.stamps[m] - at) * 1000 for m, at in sent.items() if m in tap.stamps]
    from_bus = []
    for seen in stamps:
        for moves in sent:
            if moves in tap.stamps and moves in seen:
                from_bus.append((seen[moves] - tap.stamps[moves]) * 1000)
    return Result(samples(stamps, sent), to_bus, from_bus, acks)


def samples(stamps: list[Stamps], sent: dict[int, float]) -> list[float]:
    """Milliseconds from send to arrival, per (move, spectator)."""
    out = []
    for seen in stamps:
        for moves, at in sent.items():
            arrived = seen.get(moves)
            if arrived is None:
                raise RuntimeError(f"a spectator missed the diff of move {moves}")
            out.append((arrived - at) * 1000)
    return out


async def measure(
    url: str,
    pool: SpectatorPool,
    channel: str,
    header: bool,
    args: argparse.Namespace,
    send: Callable[[], Awaitable[int]],
) -> tuple[Result, int]:
    """`send()` (a move, or a frame for the relay; it returns the move count its diff
    carries) every `--interval` seconds: warm-up moves, then `--moves` measured, each
    stamped on the bus by a tap of `channel` and by every spectator of the open pool;
    the size of the last diff frame."""
    tap = BusTap(url, channel, header)
    await tap.start()
    try:
        await asyncio.sleep(0.5)
        sent: dict[int, float] = {}
        acks: list[float] = []
        async for index in paced(WARMUP_MOVES + args.moves, args.interval):
            at = time.perf_counter()
            number = await send()
            if index >= WARMUP_MOVES:
                sent[number] = at
                acks.append((time.perf_counter() - at) * 1000)
        got = await pool.wait(max(sent), 30)
        if got["gaps"]:
            raise RuntimeError("diff offsets with gaps")
        return split(await pool.stamps(), sent, tap, acks), got["diff_bytes"]
    finally:
        await tap.stop()


async def measure_node(
    url: str, node_a: Child, node_b: Child, count: int, args: argparse.Namespace
) -> tuple[Result, int]:
    """The racer on node A, `count` spectators on node B; the size of their diffs."""
    racer = await Racer.solo(node_a.ws_url)
    pool = SpectatorPool(node_b.ws_url, [racer.room] * count, args.procs, stamps=True)

    async def send() -> int:
        await racer.move()
        return racer.moves

    try:
        await pool.open()
        return await measure(url, pool, keys.channel(racer.room), True, args, send)
    finally:
        pool.close()
        await racer.conn.close()


async def measure_relay(
    url: str, ingest: Child, fanout: Child, count: int, args: argparse.Namespace, size: int
) -> Result:
    """Frames of `size` bytes through the relay to `count` spectators."""
    pool = SpectatorPool(fanout.ws_url, [None] * count, args.procs, stamps=True)
    sender = await raw_connect(ingest.ws_url)
    moves = range(1, WARMUP_MOVES + args.moves + 1)
    frames = [sized({"t": "diff", "off": i, "moves": i}, size) for i in moves]
    position = iter(moves)

    async def send() -> int:
        number = next(position)
        await sender.send(frames[number - 1])
        return number

    try:
        await pool.open()
        held = int(await asyncio.to_thread(fanout.command, "count"))
        if held != count:
            raise RuntimeError(f"relay holds {held} spectators, expected {count}")
        result, _ = await measure(url, pool, RELAY_CHANNEL, False, args, send)
        result.ack = []  # a frame sent to the relay is not acknowledged
        return result
    finally:
        pool.close()
        await sender.close()


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    url = harness.valkey()
    node_a = harness.node(url, "node-a", FAST_RATE)
    node_b = harness.node(url, "node-b")
    ingest = harness.script("relay-ingest", "relay.py", "ingest", url, RELAY_CHANNEL)
    fanout = harness.script("relay-fanout", "relay.py", "fanout", url, RELAY_CHANNEL)
    others: list[tuple[str, Child, Child]] = []
    against: list[str] = []
    for index, tree in enumerate(args.against):
        against.append(code_version(tree))
        others.append(
            (
                f"node at {commit_of(against[-1])}",
                harness.node(url, f"against{index}-a", FAST_RATE, tree=tree),
                harness.node(url, f"against{index}-b", tree=tree),
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
            got, size = await measure_node(url, node_a, node_b, count, args)
            ours.add(got)
            relay.add(await measure_relay(url, ingest, fanout, count, args, size))
            for (_, other_a, other_b), result in zip(others, theirs, strict=True):
                got, _ = await measure_node(url, other_a, other_b, count, args)
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
        f"{machine()}, a move every {args.interval * 1000:.0f} ms, {args.rounds} rounds of "
        f"{args.moves} moves after {WARMUP_MOVES} warm-up; "
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
        met = "met" if q50 <= 1.2 and q99 <= 1.2 else "missed"
        print(
            f"target within 1.2x of the relay at N={count}: p50 {q50:.2f}x, p99 {q99:.2f}x ({met})"
        )
    return 0


def main() -> int:
    options = parser(__doc__, moves=300, rounds=5, interval=0.02, procs=2, against="repeat")
    options.add_argument("--spectators", type=numbers, default=[1, 100], help="counts N")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
