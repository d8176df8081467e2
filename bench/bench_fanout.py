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
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from harness.clients import Racer, SpectatorPool
from harness.measure import CpuMeter, metric
from harness.processes import FAST_RATE, Child, Harness, run_bench
from harness.profiling import profiler
from harness.report import code_version, commit_of, machine, numbers, parser, table
from harness.workers import paced

TARGET = 1.1
"""Node B's CPU per delivered diff against `broadcast()` of the same frames, at most."""


@dataclass(frozen=True)
class Size:
    """One spectator count N of a run, with its pace: K moves, one every `interval` s."""

    count: int
    moves: int
    interval: float
    procs: int  # spectator worker processes

    @classmethod
    def of(cls, count: int, moves: int, interval: float | None, procs: int) -> Size:
        """40 us between moves per spectator (the load generator's processes read every
        frame in Python) when that is longer than 20 ms, or `interval`."""
        chosen = interval if interval is not None else max(0.02, count * 40e-6)
        return cls(count, moves, chosen, procs)

    @property
    def timeout(self) -> float:
        return 60 + self.moves * self.interval * 3


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


async def observe(
    pool: SpectatorPool,
    server: Child,
    size: Size,
    target: int,
    send: Callable[[], Awaitable[None]],
    folder: Path | None,
) -> Run:
    """The server's CPU from the first frame sent by `send()` until every spectator of
    the (open) pool has seen move count `target`; fails unless each got every diff, in
    order. `folder`: py-spy the server meanwhile."""
    await asyncio.sleep(1.0)  # joins settle (watcher counts, first progress)
    await pool.mark()
    meter = CpuMeter({"server": [server.pid], "load": pool.pids})
    spy = profiler(folder, server.pid, f"{server.name}-{size.count}")
    meter.start()
    started = time.perf_counter()
    await send()
    sending = time.perf_counter() - started
    got = await pool.wait(target, size.timeout)
    meter.stop()
    if spy is not None:
        print(f"py-spy of {server.name} at N={size.count}:\n{spy.stop()}\n", file=sys.stderr)
    check(got, size)
    return Run(
        meter.used["server"],
        meter.wall,
        got["diffs"],
        got["others"],
        got["diff_bytes"],
        got["other_bytes"],
        meter.used["load"],
        sending,
    )


def check(got: dict[str, int], size: Size) -> None:
    """Fail unless every spectator received every diff, in order."""
    count = size.count
    if got["late"]:
        raise RuntimeError(f"{got['late']} of {count} spectators missed diffs")
    if got["gaps"]:
        raise RuntimeError(f"{got['gaps']} offset gaps among {count} spectators")
    if got["diffs"] < size.moves * count:
        raise RuntimeError(f"only {got['diffs']} of {size.moves * count} diffs delivered")


async def measure_node(node_a: Child, node_b: Child, size: Size, folder: Path | None) -> Run:
    """A racer on node A, `size.count` spectators of its game on node B."""
    racer = await Racer.solo(node_a.ws_url)
    pool = SpectatorPool(node_b.ws_url, racer.room, size.count, size.procs)
    resyncs = metric(node_b.port, "klondike_resyncs_total")

    async def send() -> None:
        async for _ in paced(size.moves, size.interval):
            await racer.move()

    try:
        await pool.open()
        run = await observe(pool, node_b, size, racer.moves + size.moves, send, folder)
        resynced = metric(node_b.port, "klondike_resyncs_total") - resyncs
        if resynced:
            raise RuntimeError(f"{resynced:.0f} lagging spectators resynced (N={size.count})")
        return run
    finally:
        pool.close()
        await racer.conn.close()


async def measure_baseline(server: Child, size: Size, like: Run, folder: Path | None) -> Run:
    """`broadcast()` of frames the sizes of `like`'s to as many bare connections."""
    pool = SpectatorPool(server.ws_url, None, size.count, size.procs)
    progress = round(like.others / size.count)  # as many per spectator as the node sent
    command = f"run {size.moves} {size.interval} {like.diff_bytes} {progress} {like.other_bytes}"
    answer: list[asyncio.Task[str]] = []

    async def send() -> None:
        answer.append(asyncio.create_task(asyncio.to_thread(server.command, command, size.timeout)))

    try:
        await pool.open()
        held = int(await asyncio.to_thread(server.command, "count"))
        if held != size.count:
            raise RuntimeError(f"baseline holds {held} connections, expected {size.count}")
        run = await observe(pool, server, size, size.moves, send, folder)
        if await answer[0] != "done":
            raise RuntimeError("baseline server did not finish")
        return run
    finally:
        pool.close()


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    url = harness.valkey()
    node_a = harness.node(url, "node-a", FAST_RATE)
    node_b = harness.node(url, "node-b")
    server = harness.script("baseline", "broadcast_server.py")
    against = ""
    other: tuple[Child, Child] | None = None
    if args.against is not None:
        against = code_version(args.against)
        other = (
            harness.node(url, "against-a", FAST_RATE, tree=args.against),
            harness.node(url, "against-b", tree=args.against),
        )
    rows: list[list[object]] = []
    detail: list[list[object]] = []
    ratios: list[float] = []
    compared: list[list[object]] = []
    for count in args.sizes:
        size = Size.of(count, args.moves or max(20, min(1000, args.frames // count)),
                       args.interval, args.procs)  # fmt: skip
        mine: list[Run] = []
        bases: list[Run] = []
        theirs: list[Run] = []
        for _ in range(args.rounds):
            run = await measure_node(node_a, node_b, size, args.profile)
            mine.append(run)
            bases.append(await measure_baseline(server, size, run, args.profile))
            if other is not None:
                theirs.append(await measure_node(*other, size, None))
        ours, base = added(mine), added(bases)
        ratio = ours.per_diff_us() / base.per_diff_us()
        if theirs:
            old = added(theirs)
            compared.append(
                [
                    count,
                    ours.per_diff_us(),
                    old.per_diff_us(),
                    base.per_diff_us(),
                    ratio,
                    old.per_diff_us() / base.per_diff_us(),
                    ours.per_diff_us() / old.per_diff_us(),
                ]
            )
        ratios.append(ratio)
        rows.append(
            [
                count,
                size.moves,
                f"{size.interval * 1000:.0f}",
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
        f"{machine()}; racer on node A, spectators on node B; baseline: "
        f"websockets.broadcast() of pre-encoded frames{rounds}"
    )
    print(
        table(
            ["N", "K moves", "every ms", "diffs delivered", "node B us/diff",
             "broadcast us/diff", "ratio", "ratio per frame"],
            rows,
        )
    )  # fmt: skip
    print()
    print(
        table(
            ["N", "node B cpu s", "baseline cpu s", "node progress frames",
             "baseline progress frames", "bytes diff/progress", "s send/window/base",
             "node B cpu share", "load gen cpu share / proc"],
            detail,
        )
    )  # fmt: skip
    if compared:
        label = commit_of(against)
        print()
        print(f"the nodes of {label} in the same rounds (its node B, same spectators and pace)")
        print(
            table(
                ["N", "node B us/diff", f"{label} us/diff", "broadcast us/diff", "ratio",
                 f"{label} ratio", f"node / {label}"],
                compared,
            )
        )  # fmt: skip
    print()
    print("every spectator received every diff, offsets consecutive: yes")
    for count, ratio in zip(args.sizes, ratios, strict=True):
        verdict = "met" if ratio <= TARGET else "missed"
        print(f"target ratio <= {TARGET:g} at N={count}: {ratio:.2f} ({verdict})")
    return 0


def main() -> int:
    options = parser(
        __doc__, interval=None, procs=2, rounds=1, against="once", profile="node B and the baseline"
    )
    options.add_argument("--sizes", type=numbers, default=[100, 1000, 5000], help="counts N")
    options.add_argument("--moves", type=int, default=0, help="K (default: frames / N)")
    options.add_argument("--frames", type=int, default=250_000, help="K x N per size (sets K)")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
