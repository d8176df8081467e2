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
import multiprocessing
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

import redis.asyncio
from websockets.asyncio.client import ClientConnection

from broadcast_server import sized
from harness import (
    FAST_RATE,
    Child,
    Harness,
    Racer,
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
from klondike_live import keys

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


Stamps = dict[int, float]
"""When one spectator first saw each board move count (time.perf_counter: on Linux the
system-wide monotonic clock, so stamps from different processes compare)."""


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


class Watchers:
    """Spectators read in their own processes (`procs` of them, the spectators split
    evenly), so that reading them adds nothing to the sender's process and the racer's
    process does not read them: each process stamps arrivals, the benchmark collects
    the stamps after the moves."""

    def __init__(self, url: str, room: str | None, count: int, procs: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.procs: list[SpawnProcess] = []
        self.pipes: list[Connection[Any, Any]] = []
        for share in [count // procs + (i < count % procs) for i in range(procs)]:
            if share:
                ours, theirs = context.Pipe()
                proc = context.Process(
                    target=_watch_worker, args=(url, room, share, theirs), daemon=True
                )
                proc.start()
                self.procs.append(proc)
                self.pipes.append(ours)

    async def _all(self, command: tuple[Any, ...] | None, timeout: float) -> list[Any]:
        def ask(pipe: Connection[Any, Any]) -> Any:
            if command is not None:
                pipe.send(command)
            if not pipe.poll(timeout):
                raise RuntimeError(f"a spectator process gave no answer in {timeout:.0f} s")
            answer = pipe.recv()
            if answer[0] == "failed":
                raise RuntimeError(f"a spectator process failed: {answer[1]}")
            return answer

        return list(await asyncio.gather(*(asyncio.to_thread(ask, p) for p in self.pipes)))

    async def ready(self) -> None:
        await self._all(None, 120)

    async def collect(self, target: int, timeout: float) -> tuple[list[Stamps], int]:
        """Every spectator's stamps once each saw move count `target` (or the timeout);
        the size of the last diff frame."""
        answers = await self._all(("collect", target, timeout), timeout + 30)
        stamps = [seen for answer in answers for seen in answer[1]]
        if sum(answer[2] for answer in answers):
            raise RuntimeError("diff offsets with gaps")
        return stamps, max(answer[3] for answer in answers)

    def close(self) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("close",))
        for proc in self.procs:
            proc.join(10)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)


def _watch_worker(url: str, room: str | None, count: int, pipe: Connection[Any, Any]) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_watch_main(url, room, count, pipe))


async def _watch_main(url: str, room: str | None, count: int, pipe: Connection[Any, Any]) -> None:
    try:
        spectators, tasks = await open_spectators(url, room, count, stamps=True)
    except Exception as exc:
        pipe.send(("failed", repr(exc)))
        return
    pipe.send(("ready",))
    try:
        while True:
            command = await asyncio.to_thread(pipe.recv)
            if command[0] != "collect":
                return
            await wait_all(spectators, command[1], command[2])
            stamps = [dict(s.stamps or {}) for s in spectators]
            gaps = sum(s.gaps for s in spectators)
            pipe.send(("stamps", stamps, gaps, max(s.diff_bytes for s in spectators)))
    finally:
        await close_all([s.conn for s in spectators], tasks)


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
    url: str, node_a: Child, node_b: Child, count: int, args: argparse.Namespace
) -> tuple[Result, int]:
    racer = await Racer.solo(node_a.ws_url)
    watchers = Watchers(node_b.ws_url, racer.room, count, min(count, args.procs))
    tap = BusTap(url, keys.spectator_channel(racer.room), header=True)
    await tap.start()
    acks: list[float] = []
    try:
        await watchers.ready()
        await asyncio.sleep(0.5)

        async def send() -> tuple[int, float]:
            move_id, frame = racer.next_frame()
            number = racer.moves
            at = time.perf_counter()
            await racer.conn.send(frame)
            await racer.wait_ack(move_id)
            acks.append((time.perf_counter() - at) * 1000)
            return number, at

        await paced(WARMUP_MOVES, args.interval, send)
        acks.clear()
        sent = await paced(args.moves, args.interval, send)
        stamps, size = await watchers.collect(max(sent), 30)
        return split(stamps, sent, tap, acks), size
    finally:
        await tap.stop()
        watchers.close()
        await racer.conn.close()


async def measure_relay(
    url: str, ingest: Child, fanout: Child, count: int, args: argparse.Namespace, size: int
) -> Result:
    watchers = Watchers(fanout.ws_url, None, count, min(count, args.procs))
    sender: ClientConnection = await raw_connect(ingest.ws_url)
    tap = BusTap(url, RELAY_CHANNEL, header=False)
    await tap.start()
    try:
        await watchers.ready()
        await asyncio.sleep(0.5)
        held = int(await asyncio.to_thread(send_command, fanout, "count"))
        if held != count:
            raise RuntimeError(f"relay holds {held} spectators, expected {count}")
        frames = [
            sized({"t": "diff", "off": i, "moves": i}, size)
            for i in range(1, WARMUP_MOVES + args.moves + 1)
        ]
        position = [0]

        async def send() -> tuple[int, float]:
            position[0] += 1
            at = time.perf_counter()
            await sender.send(frames[position[0] - 1])
            return position[0], at

        await paced(WARMUP_MOVES, args.interval, send)
        sent = await paced(args.moves, args.interval, send)
        stamps, _ = await watchers.collect(max(sent), 30)
        return split(stamps, sent, tap, [])
    finally:
        await tap.stop()
        watchers.close()
        await sender.close()


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
        met = "met" if q50 <= 1.2 and q99 <= 1.2 else "missed"
        print(
            f"target within 1.2x of the relay at N={count}: p50 {q50:.2f}x, p99 {q99:.2f}x ({met})"
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
    parser.add_argument("--rounds", type=int, default=5, help="node/relay rounds per N")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between moves")
    parser.add_argument(
        "--procs", type=int, default=2, help="processes reading the spectators (at most N)"
    )
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
