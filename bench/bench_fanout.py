"""Fan-out cost: server CPU per diff delivered to N spectators, against `broadcast()`.

Topology: a private Valkey; node A holds the racer of a solo game (`draw=1
passes=unlimited`, moves `D` until the stock is empty, then `R`); node B holds N
spectators of that room (raw websockets: hello, join as spectator), read by `--procs`
worker processes (the racers stay in this process, so reading frames never delays them).
The racer sends K moves, one every `--interval` seconds (default: 40 us per spectator,
at least 20 ms, so that the load generator keeps up), waiting for each acknowledgement.
Node B's CPU (utime+stime from /proc) is read from just before the first move until
every spectator has received the K-th diff of its room, and divided by the K x N diffs
delivered. Every spectator must receive every diff of its room and no other, with
consecutive offsets, and none may be resynced as lagging: otherwise the run fails
(exit 1).

`--room-size S` spreads the N spectators over N/S rooms of S (N must be a multiple of
S), each with a solo racer of its own on node A (all of them in this process). Every
racer sends its K moves at the same pace, racer i `i / (N/S)` of an interval after the
first, so that node A sees a steady stream of moves rather than bursts; the default
interval keeps its rule on N, so node B delivers N / interval diffs a second in rooms as
in one room. Without `--room-size`, S = N: one room, one racer.

Baseline, same run, same N, same pacing: bench/broadcast_server.py, a bare `websockets`
server holding N connections in groups of S (one group of N without `--room-size`) that
per paced step calls `websockets.broadcast(group, frame)` once per group (N/S calls,
each to S connections), K steps, with pre-encoded frames of the size node B delivered,
plus as many frames of the size of node B's `progress` frames (sent per 0.2 s tick
while a board changes) as node B sent each spectator in its run, spread evenly: the
same traffic, frame for frame. Its CPU is read the same way over the same kind of
window. The targets: node B at most 1.1x the baseline in one room, 1.5x in rooms.

    .venv/bin/python bench/bench_fanout.py [--sizes 100,1000,5000] [--frames 250000]
    .venv/bin/python bench/bench_fanout.py --sizes 1000 --room-size 20

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

from harness.clients import Racer, SpectatorPool, close_racers
from harness.measure import CpuMeter, metric
from harness.processes import FAST_RATE, Child, Harness, run_bench
from harness.profiling import profiler
from harness.report import code_version, commit_of, machine, numbers, parser, table
from harness.workers import paced

TARGET = 1.1
"""Node B's CPU per delivered diff in one room against `broadcast()` of the same frames
to all of its spectators, at most."""
ROOMS_TARGET = 1.5
"""Node B's CPU per delivered diff in rooms of S (`--room-size`) against `broadcast()` of
the same frames to the same connections in groups of S, at most."""


@dataclass(frozen=True)
class Size:
    """One spectator count N of a run in rooms of `room` spectators (N: one room), with
    its pace: K moves per room, one every `interval` s."""

    count: int
    room: int
    moves: int
    interval: float
    procs: int  # spectator worker processes

    @classmethod
    def of(cls, count: int, moves: int, interval: float | None, procs: int, room: int = 0) -> Size:
        """40 us between moves per spectator (the load generator's processes read every
        frame in Python) when that is longer than 20 ms, or `interval`; `room` 0: one
        room of all `count`."""
        chosen = interval if interval is not None else max(0.02, count * 40e-6)
        return cls(count, room or count, moves, chosen, procs)

    @property
    def rooms(self) -> int:
        return self.count // self.room

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
    the (open) pool has seen move count `target` of its room; fails unless each got every
    diff of its room, in order. `folder`: py-spy the server meanwhile."""
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
    """Fail unless every spectator received every diff of its room and no other, in
    order."""
    count = size.count
    if got["late"]:
        raise RuntimeError(f"{got['late']} of {count} spectators missed diffs")
    if got["gaps"]:
        raise RuntimeError(f"{got['gaps']} offset gaps among {count} spectators")
    if got["strays"]:
        raise RuntimeError(f"{got['strays']} diffs of another room among {count} spectators")
    if got["diffs"] < size.moves * count:
        raise RuntimeError(f"only {got['diffs']} of {size.moves * count} diffs delivered")


def start_moves(racers: list[Racer]) -> int:
    """The move count at which every racer's board starts (fresh solo games: the same)."""
    counts = {racer.moves for racer in racers}
    if len(counts) != 1:
        raise RuntimeError(f"the racers' boards start at different move counts: {counts}")
    return counts.pop()


async def play(racers: list[Racer], size: Size) -> None:
    """Each racer's K moves at the pace, racer i `i / len(racers)` of an interval after
    the first: node A sees a steady stream of moves rather than bursts."""

    async def one(index: int, racer: Racer) -> None:
        async for _ in paced(size.moves, size.interval, index * size.interval / len(racers)):
            await racer.move()

    await asyncio.gather(*(one(index, racer) for index, racer in enumerate(racers)))


async def measure_node(node_a: Child, node_b: Child, size: Size, folder: Path | None) -> Run:
    """A solo racer per room on node A, `size.room` spectators of each room on node B."""
    names = [f"Racer {index}" for index in range(size.rooms)]
    racers = list(await asyncio.gather(*(Racer.solo(node_a.ws_url, name) for name in names)))
    rooms = [racer.room for racer in racers for _ in range(size.room)]
    pool = SpectatorPool(node_b.ws_url, rooms, size.procs)
    resyncs = metric(node_b.port, "klondike_resyncs_total")
    try:
        await pool.open()
        target = start_moves(racers) + size.moves
        run = await observe(pool, node_b, size, target, lambda: play(racers, size), folder)
        resynced = metric(node_b.port, "klondike_resyncs_total") - resyncs
        if resynced:
            raise RuntimeError(f"{resynced:.0f} lagging spectators resynced (N={size.count})")
        return run
    finally:
        pool.close()
        await close_racers(racers)


async def measure_baseline(server: Child, size: Size, like: Run, folder: Path | None) -> Run:
    """`broadcast()` of frames the sizes of `like`'s to as many bare connections, in
    groups of a room's spectators."""
    pool = SpectatorPool(server.ws_url, [None] * size.count, size.procs)
    progress = round(like.others / size.count)  # as many per spectator as the node sent
    frames = f"{like.diff_bytes} {progress} {like.other_bytes}"
    command = f"run {size.moves} {size.interval} {frames} {size.room}"
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


async def measure_size(
    size: Size,
    nodes: tuple[Child, Child],
    server: Child,
    other: tuple[Child, Child] | None,
    args: argparse.Namespace,
) -> tuple[Run, Run, Run | None]:
    """Node B's, the baseline's and (`--against`) the other nodes' runs of one size, each
    added up over the rounds (node, baseline, other nodes, in turn)."""
    mine: list[Run] = []
    bases: list[Run] = []
    theirs: list[Run] = []
    for _ in range(args.rounds):
        run = await measure_node(*nodes, size, args.profile)
        mine.append(run)
        bases.append(await measure_baseline(server, size, run, args.profile))
        if other is not None:
            theirs.append(await measure_node(*other, size, None))
    return added(mine), added(bases), added(theirs) if theirs else None


def in_rooms(room_size: int) -> str:
    """` in rooms of S` with `--room-size S`, else nothing."""
    return f" in rooms of {room_size}" if room_size else ""


def scene(room_size: int) -> str:
    """Who is where and what the baseline does, for the report's header."""
    if not room_size:
        return (
            "racer on node A, spectators on node B; baseline: "
            "websockets.broadcast() of pre-encoded frames"
        )
    return (
        f"rooms of {room_size}: a solo racer per room on node A, their moves spread evenly "
        f"over the interval, each room's {room_size} spectators on node B; baseline: "
        f"websockets.broadcast() of pre-encoded frames to groups of {room_size}"
    )


def verdicts(sizes: list[int], ratios: list[float], room_size: int) -> list[str]:
    """A line per N: its ratio against the target (`ROOMS_TARGET` in rooms)."""
    limit = ROOMS_TARGET if room_size else TARGET
    return [
        f"target ratio <= {limit:g}{in_rooms(room_size)} at N={count}: {ratio:.2f} "
        f"({'met' if ratio <= limit else 'missed'})"
        for count, ratio in zip(sizes, ratios, strict=True)
    ]


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    url = harness.valkey()
    nodes = (harness.node(url, "node-a", FAST_RATE), harness.node(url, "node-b"))
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
        moves = args.moves or max(20, min(1000, args.frames // count))
        size = Size.of(count, moves, args.interval, args.procs, args.room_size)
        ours, base, old = await measure_size(size, nodes, server, other, args)
        ratio = ours.per_diff_us() / base.per_diff_us()
        if old is not None:
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
            f"N={count}{in_rooms(args.room_size)}: node {ours.per_diff_us():.2f} us/diff, "
            f"broadcast() {base.per_diff_us():.2f} us/diff",
            file=sys.stderr,
            flush=True,
        )
    print(code_version())
    if against:
        print(f"against: {against}")
    rounds = f"; {args.rounds} rounds per N, added up" if args.rounds > 1 else ""
    print(f"{machine()}; {scene(args.room_size)}{rounds}")
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
    print("\n".join(verdicts(args.sizes, ratios, args.room_size)))
    return 0


def rooms_error(sizes: list[int], room_size: int) -> str:
    """Why `--room-size` does not fit `--sizes` (every N a multiple of S), or nothing."""
    if room_size < 0:
        return f"--room-size {room_size}: give a room's spectator count S, or 0 for one room"
    odd = [count for count in sizes if room_size and count % room_size]
    if odd:
        listed = ", ".join(f"N={count}" for count in odd)
        return (
            f"--room-size {room_size}: {listed} is not a multiple of {room_size} "
            "(each N is spread over N/S rooms of S spectators)"
        )
    return ""


def main() -> int:
    options = parser(
        __doc__, interval=None, procs=2, rounds=1, against="once", profile="node B and the baseline"
    )
    options.add_argument("--sizes", type=numbers, default=[100, 1000, 5000], help="counts N")
    options.add_argument("--moves", type=int, default=0, help="K (default: frames / N)")
    options.add_argument("--frames", type=int, default=250_000, help="K x N per size (sets K)")
    options.add_argument(
        "--room-size",
        type=int,
        default=0,
        help="S: N/S rooms of S spectators, a racer each (default 0: one room of N)",
    )
    args = options.parse_args()
    error = rooms_error(args.sizes, args.room_size)
    if error:
        options.error(error)
    return run_bench(bench, args)


if __name__ == "__main__":
    sys.exit(main())
