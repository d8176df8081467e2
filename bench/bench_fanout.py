"""Fan-out cost: server CPU per diff delivered to N spectators, against `broadcast()`.

Topology: a private Valkey; node A holds the racer of a solo game (`draw=1
passes=unlimited`, moves `D` until the stock is empty, then `R`); node B holds N
spectators of that room (raw websockets: hello, join as spectator), read by `--procs`
worker processes (the racer stays in this process, so reading frames never delays it).
The racer sends K moves, one every `--interval` seconds (default: scaled with N so the
load generator keeps up), waiting for each acknowledgement. Node B's CPU (utime+stime
from /proc) is read from just before the first move until every spectator has received
the K-th diff, and divided by the K x N diffs delivered. Every spectator must receive
every diff, with consecutive offsets, and none may be resynced as lagging: otherwise
the run fails (exit 1).

Baseline, same run, same N, same pacing: bench/broadcast_server.py, a bare `websockets`
server holding N connections that calls `websockets.broadcast(connections, frame)` K
times with pre-encoded frames of the size node B delivered, plus as many frames of the
size of node B's `progress` frames (sent per 0.2 s tick while a board changes) as node
B sent each spectator in its run, spread evenly: the same traffic, frame for frame.
Its CPU is read the same way over the same kind of window.

    .venv/bin/python bench/bench_fanout.py [--sizes 100,1000,5000] [--frames 250000]

`--rounds R` measures each size R times (node, baseline, in turn) and adds them up;
`--against TREE` also measures the two nodes of another checkout's `server/` (e.g. `git
worktree add --detach /tmp/old <commit>`) in the same rounds.

`--profile DIR` also records node B and the baseline server with py-spy while measuring
(it adds a little CPU to each: use it to see where the time goes, not for the table).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness import (
    FAST_RATE,
    Child,
    CpuMeter,
    Harness,
    Profiler,
    Racer,
    SpectatorPool,
    code_version,
    metric,
    run_bench,
    send_command,
    table,
)

TARGET = 1.1
"""Node B's CPU per delivered diff against `broadcast()` of the same frames, at most."""


@dataclass
class Run:
    """One measured fan-out: CPU seconds of the server and what the clients received."""

    cpu: float
    wall: float
    diffs: int
    others: int
    diff_bytes: int
    other_bytes: int
    bench_cpu: float
    sending: float = 0.0  # seconds the K moves took to send (pacing kept if ~K x interval)

    def per_diff_us(self) -> float:
        return 1e6 * self.cpu / max(self.diffs, 1)

    def per_frame_us(self) -> float:
        return 1e6 * self.cpu / max(self.diffs + self.others, 1)


def added(runs: list[Run]) -> Run:
    """Runs of one size added up (frame sizes: the last run's)."""
    return Run(
        sum(r.cpu for r in runs),
        sum(r.wall for r in runs),
        sum(r.diffs for r in runs),
        sum(r.others for r in runs),
        runs[-1].diff_bytes,
        runs[-1].other_bytes,
        sum(r.bench_cpu for r in runs),
        sum(r.sending for r in runs),
    )


def interval_for(count: int, chosen: float | None) -> float:
    """Seconds between moves: 20 ms, or 40 us per spectator (the load generator's
    processes read every frame in Python) when that is longer."""
    return chosen if chosen is not None else max(0.02, count * 40e-6)


async def measure_node(
    node_a: Child,
    node_b: Child,
    count: int,
    moves: int,
    interval: float,
    timeout: float,
    procs: int,
    profile: Path | None,
) -> Run:
    racer = await Racer.solo(node_a.ws_url)
    pool = SpectatorPool()
    try:
        await pool.start(node_b.ws_url, racer.room, count, procs)
        await asyncio.sleep(1.0)  # joins settle (watcher counts, first progress)
        await pool.mark()
        target = racer.moves + moves
        meter = CpuMeter({"node": node_b.pid})
        profiler = Profiler(node_b.pid, profile / f"node-b-{count}.txt") if profile else None
        resyncs0 = metric(node_b.port, "klondike_resyncs_total")
        load0 = pool.cpu()
        meter.start()
        start = time.perf_counter()
        for index in range(moves):
            delay = start + index * interval - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await racer.move()
        sending = time.perf_counter() - start
        got = await pool.wait(target, timeout)
        meter.stop()
        load = pool.cpu() - load0
        if profiler is not None:
            print(f"py-spy of node B at N={count}:\n{profiler.stop()}\n", file=sys.stderr)
        resyncs = metric(node_b.port, "klondike_resyncs_total") - resyncs0
        check(got, moves, count, resyncs)
        return Run(
            meter.used["node"],
            meter.wall,
            got["diffs"],
            got["others"],
            got["diff_bytes"],
            got["other_bytes"],
            load,
            sending,
        )
    finally:
        await pool.close()
        await racer.conn.close()


def check(got: dict[str, int], moves: int, count: int, resyncs: float = 0) -> None:
    """Fail unless every spectator received every diff, in order."""
    if got["late"]:
        raise RuntimeError(f"{got['late']} of {count} spectators missed diffs")
    if got["gaps"]:
        raise RuntimeError(f"{got['gaps']} offset gaps among {count} spectators")
    if got["diffs"] < moves * count:
        raise RuntimeError(f"only {got['diffs']} of {moves * count} diffs delivered")
    if resyncs:
        raise RuntimeError(f"{resyncs:.0f} lagging spectators were resynced (N={count})")


async def measure_baseline(
    server: Child,
    count: int,
    moves: int,
    interval: float,
    like: Run,
    timeout: float,
    procs: int,
    profile: Path | None,
) -> Run:
    pool = SpectatorPool()
    try:
        await pool.start(server.ws_url, None, count, procs)
        await asyncio.sleep(1.0)
        held = int(await asyncio.to_thread(send_command, server, "count"))
        if held != count:
            raise RuntimeError(f"baseline holds {held} connections, expected {count}")
        await pool.mark()
        meter = CpuMeter({"server": server.pid})
        profiler = Profiler(server.pid, profile / f"baseline-{count}.txt") if profile else None
        load0 = pool.cpu()
        meter.start()
        progress = round(like.others / count)  # as many per spectator as the node sent
        command = f"run {moves} {interval} {like.diff_bytes} {progress} {like.other_bytes}"
        answer = asyncio.create_task(asyncio.to_thread(send_command, server, command, timeout))
        got = await pool.wait(moves, timeout)
        meter.stop()
        load = pool.cpu() - load0
        if profiler is not None:
            print(f"py-spy of the baseline at N={count}:\n{profiler.stop()}\n", file=sys.stderr)
        if (await answer) != "done":
            raise RuntimeError("baseline server did not finish")
        check(got, moves, count)
        return Run(
            meter.used["server"],
            meter.wall,
            got["diffs"],
            got["others"],
            got["diff_bytes"],
            got["other_bytes"],
            load,
            meter.wall,
        )
    finally:
        await pool.close()


async def bench(args: argparse.Namespace, harness: Harness) -> int:
    url = harness.valkey()
    node_a = harness.node(url, "node-a", FAST_RATE)
    node_b = harness.node(url, "node-b")
    server = harness.script("baseline", "broadcast_server.py")
    against = ""
    other: tuple[Child, Child] | None = None
    if args.against is not None:
        tree = args.against.resolve()
        env = {"PYTHONPATH": str(tree / "server")}
        against = code_version(tree)
        other = (
            harness.node(url, "against-a", {**FAST_RATE, **env}),
            harness.node(url, "against-b", env),
        )
    rows: list[list[object]] = []
    detail: list[list[object]] = []
    ratios: list[float] = []
    compared: list[list[object]] = []
    for count in args.sizes:
        moves = args.moves or max(20, min(1000, args.frames // count))
        interval = interval_for(count, args.interval)
        timeout = 60 + moves * interval * 3
        mine: list[Run] = []
        bases: list[Run] = []
        theirs: list[Run] = []
        for _ in range(args.rounds):
            run = await measure_node(
                node_a, node_b, count, moves, interval, timeout, args.procs, args.profile
            )
            mine.append(run)
            bases.append(
                await measure_baseline(
                    server, count, moves, interval, run, timeout, args.procs, args.profile
                )
            )
            if other is not None:
                theirs.append(
                    await measure_node(
                        other[0], other[1], count, moves, interval, timeout, args.procs, None
                    )
                )
        ours, base = added(mine), added(bases)
        if theirs:
            old = added(theirs)
            compared.append(
                [
                    count,
                    ours.per_diff_us(),
                    old.per_diff_us(),
                    base.per_diff_us(),
                    ours.per_diff_us() / base.per_diff_us(),
                    old.per_diff_us() / base.per_diff_us(),
                    ours.per_diff_us() / old.per_diff_us(),
                ]
            )
        ratio = ours.per_diff_us() / base.per_diff_us()
        ratios.append(ratio)
        rows.append(
            [
                count,
                moves,
                f"{interval * 1000:.0f}",
                ours.diffs,
                ours.per_diff_us(),
                base.per_diff_us(),
                ratio,
                ours.per_frame_us() / base.per_frame_us(),
            ]
        )
        detail.append(
            [
                count,
                ours.cpu,
                base.cpu,
                ours.others,
                base.others,
                f"{ours.diff_bytes}/{ours.other_bytes}",
                f"{ours.sending:.1f}/{ours.wall:.1f}/{base.wall:.1f}",
                ours.cpu / ours.wall,
                ours.bench_cpu / ours.wall / args.procs,
            ]
        )
        print(
            f"N={count}: node {ours.per_diff_us():.2f} us/diff, "
            f"broadcast() {base.per_diff_us():.2f} us/diff",
            file=sys.stderr,
            flush=True,
        )
    print(code_version())
    if against:
        print(f"against: {against}")
    rounds = f"; {args.rounds} rounds per N, added up" if args.rounds > 1 else ""
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} cores; racer on node A, "
        "spectators on node B; baseline: websockets.broadcast() of pre-encoded frames"
        f"{rounds}"
    )
    print(
        table(
            [
                "N",
                "K moves",
                "every ms",
                "diffs delivered",
                "node B us/diff",
                "broadcast us/diff",
                "ratio",
                "ratio per frame",
            ],
            rows,
        )
    )
    print()
    print(
        table(
            [
                "N",
                "node B cpu s",
                "baseline cpu s",
                "node progress frames",
                "baseline progress frames",
                "bytes diff/progress",
                "s send/window/base",
                "node B cpu share",
                "load gen cpu share / proc",
            ],
            detail,
        )
    )
    if compared:
        label = against.removeprefix("server code: ").split()[0]
        print()
        print(f"the nodes of {label} in the same rounds (its node B, same spectators and pace)")
        print(
            table(
                [
                    "N",
                    "node B us/diff",
                    f"{label} us/diff",
                    "broadcast us/diff",
                    "ratio",
                    f"{label} ratio",
                    f"node / {label}",
                ],
                compared,
            )
        )
    print()
    print("every spectator received every diff, offsets consecutive: yes")
    for count, ratio in zip(args.sizes, ratios, strict=True):
        verdict = "met" if ratio <= TARGET else "missed"
        print(f"target ratio <= {TARGET:g} at N={count}: {ratio:.2f} ({verdict})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[100, 1000, 5000],
        help="spectator counts N, comma-separated",
    )
    parser.add_argument("--moves", type=int, default=0, help="K (default: frames / N)")
    parser.add_argument(
        "--frames", type=int, default=250_000, help="K x N to aim for per size (sets K)"
    )
    parser.add_argument("--interval", type=float, default=None, help="seconds between moves")
    parser.add_argument("--procs", type=int, default=2, help="spectator worker processes")
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds per N (node, baseline, other node)"
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="a work tree of another commit: its two nodes are measured too, with the same "
        "spectators and pace, in the same rounds",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="directory: py-spy node B while measuring, print a summary to stderr",
    )
    args = parser.parse_args()
    return run_bench(lambda harness: bench(args, harness), ("node-a", "node-b", "against-b"))


if __name__ == "__main__":
    sys.exit(main())
