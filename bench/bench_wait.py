"""The cost of acknowledged-move durability: move latency with and without WAIT.

A local Valkey Cluster of `--masters` masters with one replica each (`DevCluster`) and
two nodes on it: one with the default `wait_replicas` (-1: one replica, since the
masters have replicas in sync at start), so each batch of board writes ends with
`WAIT 1 <wait_timeout_ms>` and a move is acknowledged only once a replica has it; one
with `KLONDIKE_WAIT_REPLICAS=0`, which acknowledges as soon as the master has it.

For each racer count R of `--racers`: R solo racers per node, each sending a move every
`--interval` seconds (paced: this measures latency, not queueing), staggered over the
interval; a sample is the time from sending a move to receiving the racer's own diff
that acknowledges it. `--rounds` rounds of `--moves` moves per racer alternate between
the two nodes (after a warm-up); all racers live in this process and use one clock.
The masters' `INFO commandstats` show that only the WAIT node sends WAIT.

Then Valkey alone, no node: one redis-py client on one master sends a pipeline of
`SET` (a 128-byte value) with and without `WAIT 1 1000`, every `--interval` seconds,
`--bare` times each in alternating blocks: what WAIT itself costs on this machine.

    .venv/bin/python bench/bench_wait.py [--racers 1,20] [--moves 200] [--rounds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
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
    samples: list[float] = field(default_factory=list)  # ms, send -> own diff
    moves: int = 0
    waits: float = 0.0  # WAIT commands the masters got while this side played
    evalsha: float = 0.0
    rounds: list[tuple[float, float]] = field(default_factory=list)  # (p50, p99) per round


async def play(racer: Racer, moves: int, interval: float, offset: float) -> list[float]:
    """`moves` paced moves; milliseconds from each send to its acknowledgement."""
    return [1000 * await racer.move() async for _ in paced(moves, interval, offset)]


async def measure(
    side: Side, racers: list[Racer], shards: list[Shard], args: argparse.Namespace
) -> None:
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


def bare(shard: Shard, calls: int, interval: float) -> dict[bool, list[float]]:
    """Milliseconds per pipeline of SET (and WAIT 1 1000), paced, blocks alternating."""
    key = next(k for i in range(10_000) if shard.owns(k := f"bench:wait:{{{i}}}"))
    client = shard.client()
    out: dict[bool, list[float]] = {True: [], False: []}
    try:
        for block in range(8):
            wait = block % 2 == 0
            for _ in range(calls // 4):
                started = time.perf_counter()
                pipe = client.pipeline(transaction=False)
                pipe.set(key, b"v" * 128)
                if wait:
                    pipe.execute_command("WAIT", 1, 1000)  # type: ignore[no-untyped-call]
                pipe.execute()
                out[wait].append((time.perf_counter() - started) * 1000)
                time.sleep(max(0.0, started + interval - time.perf_counter()))
    finally:
        client.close()
    return out


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    cluster = harness.cluster(args.masters, 1)
    shards = shards_of(cluster.url)
    wait_node = harness.node(cluster.url, "wait", FAST_RATE)
    nowait_node = harness.node(cluster.url, "nowait", {**FAST_RATE, "KLONDIKE_WAIT_REPLICAS": "0"})
    rows: list[list[object]] = []
    round_rows: list[list[object]] = []
    for count in args.racers:
        sides = [Side("WAIT 1 (default)", wait_node), Side("no WAIT", nowait_node)]
        players = {
            side.label: [await Racer.solo(side.node.ws_url, f"Racer {i}") for i in range(count)]
            for side in sides
        }
        try:
            for index in range(args.rounds):
                order = sides if index % 2 == 0 else sides[::-1]
                for side in order:
                    await measure(side, players[side.label], shards, args)
        finally:
            for group in players.values():
                await close_racers(group)
        on, off = sides
        on50, on99 = percentile(on.samples, 50), percentile(on.samples, 99)
        off50, off99 = percentile(off.samples, 50), percentile(off.samples, 99)
        for side, p50, p99 in ((on, on50, on99), (off, off50, off99)):
            rows.append(
                [
                    count,
                    side.label,
                    len(side.samples),
                    p50,
                    percentile(side.samples, 90),
                    p99,
                    p50 / off50,
                    p99 / off99,
                    side.waits / max(side.moves, 1),
                    side.evalsha / max(side.moves, 1),
                ]
            )
        for index in range(args.rounds):
            (a50, a99), (b50, b99) = on.rounds[index], off.rounds[index]
            round_rows.append([count, index + 1, a50, b50, a50 / b50, a99, b99, a99 / b99])
        print(
            f"R={count}: WAIT p50 {on50:.2f} ms p99 {on99:.2f} ms; "
            f"no WAIT p50 {off50:.2f} ms p99 {off99:.2f} ms",
            file=sys.stderr,
            flush=True,
        )
    plain = await asyncio.to_thread(bare, shards[0], args.bare, args.interval)
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
                "no WAIT p50",
                "ratio",
                "WAIT p99",
                "no WAIT p99",
                "ratio",
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
    for wait in (True, False):
        samples = plain[wait]
        bare_rows.append(
            [
                "SET + WAIT 1 1000" if wait else "SET",
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
