"""The cost of acknowledged-move durability: move latency with and without WAIT.

A local Valkey Cluster of `--masters` masters with one replica each (`DevCluster`) and
two nodes on it: one with the default `wait_replicas` (-1: one replica, since the
masters have replicas in sync at start), so each batch of board writes ends with
`WAIT 1 <wait_timeout_ms>` and a move is acknowledged only once a replica has it; one
with `KLONDIKE_WAIT_REPLICAS=0`, which acknowledges as soon as the master has it.

The WAIT node plays twice each round: once with the replicas' links to their masters
as `DevCluster` leaves them (TCP_NODELAY, `store.replica_link`), once as Valkey opens
them (Nagle's algorithm on: "replica links as Valkey sets them"), the option switched
on the running replicas between rounds. Valkey's own choice costs a 40 ms stall about
once a second per replica (docs/benchmarks.md, *WAIT*).

For each racer count R of `--racers`: R solo racers per node, each sending a move every
`--interval` seconds (paced: this measures latency, not queueing), staggered over the
interval; a sample is the time from sending a move to receiving the racer's own diff
that acknowledges it. `--rounds` rounds of `--moves` moves per racer alternate between
the two nodes (after a warm-up); all racers live in this process and use one clock.
The masters' `INFO commandstats` show that only the WAIT node sends WAIT.

Then Valkey alone, no node: one redis-py client on one master sends a pipeline of
`SET` (a 128-byte value) with and without `WAIT 1 1000` (with the replica links both
ways), every `--interval` seconds, `--bare` times each in alternating blocks: what WAIT
itself costs on this machine.

    .venv/bin/python bench/bench_wait.py [--racers 1,20] [--moves 200] [--rounds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.clients import Racer, close_racers
from harness.measure import Shard, counters, counters_delta, shards_of
from harness.processes import FAST_RATE, Child, Harness, run_bench
from harness.report import code_version, machine, numbers, parser, percentile, table
from harness.workers import paced

WARMUP_MOVES = 20
STALL_MS = 20.0  # a reply slower than this counts as a stall


@dataclass
class Side:
    """One node and what its racers measured, over the rounds."""

    label: str
    node: Child
    nodelay: bool = True  # the replicas' links to their masters while this side plays
    samples: list[float] = field(default_factory=list)  # ms, send -> own diff
    moves: int = 0
    waits: float = 0.0  # WAIT commands the masters got while this side played
    evalsha: float = 0.0
    rounds: list[tuple[float, float]] = field(default_factory=list)  # (p50, p99) per round


async def play(racer: Racer, moves: int, interval: float, offset: float) -> list[float]:
    """`moves` paced moves; milliseconds from each send to its acknowledgement."""
    return [1000 * await racer.move() async for _ in paced(moves, interval, offset)]


async def measure(
    side: Side,
    racers: list[Racer],
    shards: list[Shard],
    args: argparse.Namespace,
    links: Callable[[bool], None],
) -> None:
    await asyncio.to_thread(links, side.nodelay)
    offsets = [i * args.interval / len(racers) for i in range(len(racers))]
    await asyncio.gather(
        *(play(r, WARMUP_MOVES, args.interval, o) for r, o in zip(racers, offsets, strict=True))
    )
    before = counters(shards)
    results = await asyncio.gather(
        *(play(r, args.moves, args.interval, o) for r, o in zip(racers, offsets, strict=True))
    )
    samples = [x for result in results for x in result]
    side.samples += samples
    side.moves += len(samples)
    for delta in counters_delta(before, counters(shards)).values():
        side.waits += delta.get("cmd:wait", 0.0)
        side.evalsha += delta.get("cmd:evalsha", 0.0)
    side.rounds.append((percentile(samples, 50), percentile(samples, 99)))


BARE_KINDS = ("SET + WAIT 1 1000", "SET + WAIT 1 1000, replica links as Valkey sets them", "SET")


def bare(
    shard: Shard, calls: int, interval: float, links: Callable[[bool], None]
) -> dict[str, list[float]]:
    """Milliseconds per pipeline of each of `BARE_KINDS`, paced, in blocks taking turns."""
    key = next(k for i in range(10_000) if shard.owns(k := f"bench:wait:{{{i}}}"))
    client = shard.client()
    out: dict[str, list[float]] = {kind: [] for kind in BARE_KINDS}
    try:
        for block in range(4 * len(BARE_KINDS)):
            kind = BARE_KINDS[block % len(BARE_KINDS)]
            wait = kind != "SET"
            links(kind != BARE_KINDS[1])
            for _ in range(calls // 4):
                started = time.perf_counter()
                pipe = client.pipeline(transaction=False)
                pipe.set(key, b"v" * 128)
                if wait:
                    pipe.execute_command("WAIT", 1, 1000)  # type: ignore[no-untyped-call]
                pipe.execute()
                out[kind].append((time.perf_counter() - started) * 1000)
                time.sleep(max(0.0, started + interval - time.perf_counter()))
    finally:
        links(True)
        client.close()
    return out


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    cluster = harness.cluster(args.masters, 1)
    shards = shards_of(cluster.url)
    wait_node = harness.node(cluster.url, "wait", FAST_RATE)
    nowait_node = harness.node(cluster.url, "nowait", {**FAST_RATE, "KLONDIKE_WAIT_REPLICAS": "0"})
    links = cluster.nodelay_replica_links
    rows: list[list[object]] = []
    round_rows: list[list[object]] = []
    for count in args.racers:
        sides = [
            Side("WAIT 1 (default)", wait_node),
            Side("WAIT 1, replica links as Valkey sets them", wait_node, nodelay=False),
            Side("no WAIT", nowait_node),
        ]
        # The WAIT node's racers play both WAIT sides.
        racers = {
            node.name: [await Racer.solo(node.ws_url, f"Racer {i}") for i in range(count)]
            for node in (wait_node, nowait_node)
        }
        try:
            for index in range(args.rounds):
                order = sides if index % 2 == 0 else sides[::-1]
                for side in order:
                    await measure(side, racers[side.node.name], shards, args, links)
        finally:
            await asyncio.to_thread(links, True)
            for group in racers.values():
                await close_racers(group)
        off = sides[-1]
        off50, off99 = percentile(off.samples, 50), percentile(off.samples, 99)
        for side in sides:
            p50, p99 = percentile(side.samples, 50), percentile(side.samples, 99)
            rows.append(
                [
                    count,
                    side.label,
                    len(side.samples),
                    p50,
                    percentile(side.samples, 90),
                    p99,
                    sum(1 for x in side.samples if x > STALL_MS),
                    p50 / off50,
                    p99 / off99,
                    side.waits / max(side.moves, 1),
                    side.evalsha / max(side.moves, 1),
                ]
            )
            print(
                f"R={count}: {side.label}: p50 {p50:.2f} ms p99 {p99:.2f} ms",
                file=sys.stderr,
                flush=True,
            )
        for index in range(args.rounds):
            (a50, a99), (n50, n99), (b50, b99) = (side.rounds[index] for side in sides)
            round_rows.append([count, index + 1, a50, n50, b50, a99, n99, b99])
    plain = await asyncio.to_thread(bare, shards[0], args.bare, args.interval, links)
    print(code_version())
    print(
        f"{machine()}; a cluster of {args.masters} masters with 1 replica each (AOF "
        f"everysec); a move every {args.interval * 1000:.0f} ms per racer, {args.rounds} "
        f"alternating rounds of {args.moves} moves per racer after {WARMUP_MOVES} warm-up; "
        "latency from sending a move to the racer's own diff acknowledging it"
    )
    print(
        table(
            [
                "racers",
                "node",
                "samples",
                "p50 ms",
                "p90 ms",
                "p99 ms",
                f"> {STALL_MS:.0f} ms",
                "p50 / no WAIT",
                "p99 / no WAIT",
                "WAIT per move",
                "EVALSHA per move",
            ],
            rows,
        )
    )
    print(
        "(WAIT and EVALSHA per move: commands the masters ran while that node played, "
        "over its moves: one WAIT per batch of board writes and master; EVALSHA also "
        "counts the timer scripts of both nodes' ticks)"
    )
    print()
    print(
        table(
            [
                "racers",
                "round",
                "WAIT p50",
                "Valkey's links p50",
                "no WAIT p50",
                "WAIT p99",
                "Valkey's links p99",
                "no WAIT p99",
            ],
            round_rows,
        )
    )
    print()
    print(
        f"Valkey alone: one client, a pipeline every {args.interval * 1000:.0f} ms on one "
        f"master, {args.bare} of each in alternating blocks"
    )
    bare_rows: list[list[object]] = []
    for kind in BARE_KINDS:
        samples = plain[kind]
        bare_rows.append(
            [
                kind,
                len(samples),
                percentile(samples, 50),
                percentile(samples, 90),
                percentile(samples, 99),
                max(samples),
                sum(1 for x in samples if x > STALL_MS),
            ]
        )
    print(
        table(
            ["pipeline", "calls", "p50 ms", "p90 ms", "p99 ms", "max ms", f"> {STALL_MS:.0f} ms"],
            bare_rows,
        )
    )
    return 0


def main() -> int:
    options = parser(__doc__, masters=3, moves=200, rounds=4, interval=0.02)
    options.add_argument("--racers", type=numbers, default=[1, 20], help="racers per node")
    options.add_argument("--bare", type=int, default=800, help="Valkey-alone pipelines of each")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
