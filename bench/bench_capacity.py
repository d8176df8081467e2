"""Capacity of one machine: how many spectators and races a node (or `--workers N`
nodes on one port) serves before a move takes over 100 ms to reach a spectator.

    .venv/bin/python bench/bench_capacity.py                       # one node
    .venv/bin/python bench/bench_capacity.py --workers 2           # one node per core
    .venv/bin/python bench/bench_capacity.py --soak 3600 --level 6000:300

Load (bench/capacity_load.py, in worker processes): races of 2 racers each making 2
moves per second (stock turns, paced: a racer's next move waits for its last one's
acknowledgement) for `--game-moves` (240) moves, then resigning, a rematch and the next
race in the same room; one timed spectator per race, and the other spectators as
raw-socket sinks spread evenly over the rooms (they stay from race to race). A room's
first race is cut short at a random point, so that race ends (results, rematches, the
archive) come spread over time as on a real server and every window holds its share of
them; `--together` plays every first race whole, so that the races of a level all end
at once, about every two minutes.

Levels step up (`--levels S:R,...`: S spectators in all, R races) on one node that
keeps running, so each level adds to the last; after `--warmup` seconds each level is
measured for `--window` seconds. The run stops after the first level whose p99 passes
`--limit` ms: the knee lies between it and the level before.

Per level: moves per second, move -> spectator latency p50 / p99 / max (send to the
timed spectator's receipt, one clock), moves sent late (a racer waited over half an
interval for its acknowledgement), CPU of the node (its workers summed), of Valkey and
of the load generator (in cores), the node's RSS, frames per second to the sinks and
the node's CPU per such frame (the moves' work included),
sinks the server closed, resyncs (viewers skipped as laggards, then given snapshots),
the longest garbage-collection pause and the most CPU time one collection took (upper
bounds from the node's `klondike_gc_pause_seconds` and `klondike_gc_cpu_seconds`
histograms: a pause longer than its CPU time waited for a core) and the races that
ended and started again.

The load generator shares the machine with the node. `--sink-nice 10` runs the sinks
at a lower priority, so that they take only the CPU the node leaves, as spectators on
other machines would (the racers and timed spectators keep the node's priority: their
clocks measure the latency). A sink that falls behind shows as a lagging viewer:
resyncs, or sinks the server closed.

`--pin` puts the node on cores of its own and everything else (Valkey, the load
generator, the sinks, this process) on the others (`taskset` for the node,
`os.sched_setaffinity` inherited by what this process starts): the node's figures are
then the node's, not the machine's. On two cores that is one core each; with `--workers
N` on a machine of more cores, the node's N workers share cores 0..N-1 (the kernel keeps
about one on each) and the others go to the load; at least one core is always left to it.

`--soak SECONDS` holds one level (`--level S:R`) for that long and prints the same row
every `--sample` seconds, then how the node's RSS moved: flat memory is the proof that
nothing accumulates.

The baseline of the run is its first level: the later levels' latency and CPU per move
are printed against it, as ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from dataclasses import dataclass

from capacity_load import GAME_MOVES, MOVE_INTERVAL, RaceWorker, SinkWorker
from harness.measure import CpuMeter, descendants, metrics_text, rss_kib, sample
from harness.processes import FAST_RATE, VENV_BIN, Harness, run_bench
from harness.report import code_version, parser, percentile, table
from harness.workers import Workers, split

NODE_ENV = {**FAST_RATE, "KLONDIKE_COUNTDOWN_SECONDS": "0"}
LIMIT_MS = 100.0  # a level holds while its move -> spectator p99 stays below
DEFAULT_LEVELS = "500:25,1000:50,2000:100,4000:200,6000:300,8000:400,10000:500,12000:600"


def node_metrics(port: int, workers: int) -> list[str]:
    """The /metrics text of every worker (they share the port: ask until each answered,
    told apart by the node label of `klondike_build_info`)."""
    seen: dict[str, str] = {}
    for _ in range(workers * 50):
        text = metrics_text(port)
        match = re.search(r'^klondike_build_info\{.*node="([^"]*)".*\} ', text, re.M)
        seen[match.group(1) if match else str(len(seen))] = text
        if len(seen) >= workers:
            return list(seen.values())
    raise RuntimeError(f"only {len(seen)} of {workers} workers answered /metrics")


def gc_buckets(texts: list[str], name: str = "klondike_gc_pause_seconds") -> dict[float, float]:
    """Cumulative count of generation 0-2 collections at or below each bucket bound of
    the histogram `name` (pauses, or the collector's CPU time)."""
    out: dict[float, float] = {}
    pattern = re.compile(rf'^{name}_bucket\{{generation="[012]",le="([^"]+)"\}} (\S+)$', re.M)
    for text in texts:
        for bound, count in pattern.findall(text):
            key = float("inf") if bound == "+Inf" else float(bound)
            out[key] = out.get(key, 0.0) + float(count)
    return out


def longest_pause_ms(before: dict[float, float], after: dict[float, float]) -> float:
    """An upper bound of the longest pause between two readings: the smallest bucket
    that holds every pause since (0 when there was none)."""
    total = after.get(float("inf"), 0.0) - before.get(float("inf"), 0.0)
    if total <= 0:
        return 0.0
    for bound in sorted(after):
        if after[bound] - before.get(bound, 0.0) >= total:
            return bound * 1000
    return float("inf")


@dataclass
class Row:
    spectators: int
    races: int
    moves_per_s: float
    p50: float
    p99: float
    worst: float
    late: int
    node_cpu: float
    valkey_cpu: float
    load_cpu: float
    rss_mib: float
    sink_fps: float
    sinks_closed: int
    resyncs: int
    gc_ms: float
    gc_cpu_ms: float
    rematches: int
    errors: list[str]

    @property
    def node_us_per_frame(self) -> float:
        """Node CPU per frame delivered to a sink, the moves' work included."""
        return self.node_cpu * 1e6 / self.sink_fps if self.sink_fps else float("nan")

    def cells(self) -> list[object]:
        return [
            f"{self.spectators:,} + {self.races}",
            self.moves_per_s,
            self.p50,
            self.p99,
            self.worst,
            self.late,
            self.node_cpu,
            self.valkey_cpu,
            self.load_cpu,
            self.rss_mib,
            self.sink_fps,
            self.node_us_per_frame,
            self.sinks_closed,
            self.resyncs,
            "-" if self.gc_ms == 0 else f"<= {self.gc_ms:g}",
            "-" if self.gc_cpu_ms == 0 else f"<= {self.gc_cpu_ms:g}",
            self.rematches,
        ]


HEADERS = [
    "spectators + races",
    "moves/s",
    "p50 ms",
    "p99 ms",
    "max ms",
    "late",
    "node cpu",
    "valkey cpu",
    "load cpu",
    "node rss MiB",
    "sink frames/s",
    "node µs/frame",
    "closed",
    "resyncs",
    "gc pause ms",
    "gc cpu ms",
    "rematches",
]


class Load:
    """The node under test and its load: races and sinks, grown level by level."""

    def __init__(self, harness: Harness, args: argparse.Namespace) -> None:
        self.harness = harness
        self.args = args
        self.rooms: list[str] = []
        self.sinks_per_room: list[int] = []
        self.sinks = 0
        self.join_retries = 0  # sinks' joins refused as retryable and sent again
        self.races: Workers | None = None
        self.sink_pool: Workers | None = None

    def start(self) -> None:
        workers = max(1, self.args.workers)
        command: list[str] = []
        if self.args.pin:
            node_cores, load_cores = split_cores(workers)
            # Valkey and the workers started below inherit this process's cores.
            os.sched_setaffinity(0, load_cores)
            cores = ",".join(map(str, node_cores))
            command = ["taskset", "-c", cores, str(VENV_BIN / "klondike-live")]
            print(
                f"pinned: node on core(s) {cores}; Valkey and the load on "
                f"{','.join(map(str, load_cores))}",
                flush=True,
            )
        valkey_url = self.harness.valkey()
        extra = ["--workers", str(self.args.workers)] if self.args.workers > 1 else []
        self.node = self.harness.node(valkey_url, env=NODE_ENV, args=extra, command=command)
        args = self.args
        race_args = (self.node.ws_url, args.game_moves, not args.together)
        self.races = Workers(RaceWorker, [race_args] * args.procs)
        sinks = [(self.node.ws_url,)] * args.sink_procs
        self.sink_pool = Workers(SinkWorker, sinks, nice=args.sink_nice)

    def node_pids(self) -> list[int]:
        return descendants(self.node.pid)

    async def grow(self, spectators: int, races: int) -> None:
        """Add races and sinks up to the level (spectators counts the timed ones)."""
        assert self.races is not None and self.sink_pool is not None
        new = races - len(self.rooms)
        if new > 0:
            added = await self.races.each([("add", n) for n in split(new, len(self.races))], 600)
            for part in added:
                self.rooms += part
                self.sinks_per_room += [0] * len(part)
        wanted = split(max(0, spectators - len(self.rooms)), len(self.rooms))
        rooms: list[str] = []
        for index, room in enumerate(self.rooms):
            more = wanted[index] - self.sinks_per_room[index]
            if more > 0:
                rooms += [room] * more
                self.sinks_per_room[index] += more
        if rooms:
            procs = len(self.sink_pool)
            calls = [("add", rooms[i::procs]) for i in range(procs)]
            for opened, retries in await self.sink_pool.each(calls, 900):
                self.sinks += opened
                self.join_retries += retries

    async def measure(self, seconds: float) -> Row:
        assert self.races is not None and self.sink_pool is not None
        workers = max(1, self.args.workers)
        pids = self.node_pids()
        meter = CpuMeter(
            {
                "node": pids,
                "valkey": self.harness.valkey_pids(),
                "load": self.races.pids + self.sink_pool.pids,
            }
        )
        texts0 = await asyncio.to_thread(node_metrics, self.node.port, workers)
        meter.start()
        race_answers, sink_answers = await asyncio.gather(
            self.races.call("window", seconds, timeout=seconds + 120),
            self.sink_pool.call("window", seconds, timeout=seconds + 120),
        )
        meter.stop()
        wall = meter.wall
        texts1 = await asyncio.to_thread(node_metrics, self.node.port, workers)
        samples = sorted(s for answer in race_answers for s in answer[0])
        sent = sum(answer[1] for answer in race_answers)
        late = sum(answer[2] for answer in race_answers)
        errors = [e for answer in race_answers for e in answer[3]]
        rematches = sum(answer[4] for answer in race_answers)
        frames = sum(answer[0] for answer in sink_answers)
        closed = sum(answer[1] for answer in sink_answers)
        name = "klondike_resyncs_total"
        resyncs = sample(texts1, name) - sample(texts0, name)
        return Row(
            spectators=self.sinks + len(self.rooms),
            races=len(self.rooms),
            moves_per_s=sent / wall,
            p50=percentile(samples, 50),
            p99=percentile(samples, 99),
            worst=samples[-1] if samples else float("nan"),
            late=late,
            node_cpu=meter.share("node"),
            valkey_cpu=meter.share("valkey"),
            load_cpu=meter.share("load"),
            rss_mib=sum(rss_kib(p) for p in pids) / 1024,
            sink_fps=frames / wall,
            sinks_closed=closed,
            resyncs=int(resyncs),
            gc_ms=longest_pause_ms(gc_buckets(texts0), gc_buckets(texts1)),
            gc_cpu_ms=longest_pause_ms(
                gc_buckets(texts0, "klondike_gc_cpu_seconds"),
                gc_buckets(texts1, "klondike_gc_cpu_seconds"),
            ),
            rematches=rematches,
            errors=errors,
        )

    def close(self) -> None:
        for pool in (self.races, self.sink_pool):
            if pool is not None:
                pool.close()


def split_cores(workers: int) -> tuple[list[int], list[int]]:
    """The node's cores (one per worker) and the load's (the rest, at least one)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < workers + 1:
        raise SystemExit(
            f"--pin: {workers} node core(s) and one for the load need "
            f"{workers + 1} cores; this process may use {len(cores)}"
        )
    return cores[:workers], cores[workers:]


def parse_level(text: str) -> tuple[int, int]:
    spectators, races = text.split(":")
    return int(spectators), int(races)


async def knee(harness: Harness, args: argparse.Namespace) -> int:
    levels = [parse_level(t) for t in args.levels.split(",")]
    load = Load(harness, args)
    load.start()
    print(
        f"capacity at {code_version()}: {max(1, args.workers)} worker(s); races of 2 racers at "
        f"{1 / MOVE_INTERVAL:g} moves/s each, a timed spectator per race, the rest sinks; "
        f"warm-up {args.warmup:g} s, window {args.window:g} s, limit p99 {LIMIT_MS:g} ms",
        flush=True,
    )
    rows: list[Row] = []
    try:
        for spectators, races in levels:
            began = time.monotonic()
            await load.grow(spectators, races)
            print(
                f"  ({spectators:,} + {races} set up in {time.monotonic() - began:.0f} s; "
                f"{load.join_retries} sink joins sent again so far)",
                flush=True,
            )
            await asyncio.sleep(args.warmup)
            row = await load.measure(args.window)
            rows.append(row)
            print(table(HEADERS, [r.cells() for r in rows]).splitlines()[-1], flush=True)
            for error in sorted(set(row.errors))[:5]:
                print(f"  error: {error}", flush=True)
            if row.p99 > LIMIT_MS:
                break
    finally:
        load.close()
    print()
    print(table(HEADERS, [r.cells() for r in rows]))
    under = [r for r in rows if r.p99 <= LIMIT_MS]
    if under:
        best = under[-1]
        print(
            f"\nknee: {best.spectators:,} spectators + {best.races} races held p99 "
            f"{best.p99:.1f} ms at {best.node_cpu:.2f} node cores "
            f"({best.node_us_per_frame:.1f} µs of node CPU per frame delivered)"
            + (
                f"; {rows[-1].spectators:,} + {rows[-1].races} passed {LIMIT_MS:g} ms"
                if rows[-1].p99 > LIMIT_MS
                else "; the last level was still under the limit"
            )
        )
    base = rows[0]
    print("\nagainst the first level (the run's baseline):")
    for row in rows[1:]:
        per_move = row.node_cpu / row.moves_per_s if row.moves_per_s else float("nan")
        base_per_move = base.node_cpu / base.moves_per_s if base.moves_per_s else float("nan")
        print(
            f"  {row.spectators:,} + {row.races}: p50 {row.p50 / base.p50:.2f}x, "
            f"p99 {row.p99 / base.p99:.2f}x, node CPU per move {per_move / base_per_move:.2f}x"
        )
    return 0


async def soak(harness: Harness, args: argparse.Namespace) -> int:
    spectators, races = parse_level(args.level)
    load = Load(harness, args)
    load.start()
    print(
        f"soak at {code_version()}: {spectators:,} spectators + {races} races for "
        f"{args.soak:g} s, a row every {args.sample:g} s",
        flush=True,
    )
    rows: list[Row] = []
    try:
        await load.grow(spectators, races)
        await asyncio.sleep(args.warmup)
        print(table(["minute", *HEADERS], [["0", *HEADERS]]).splitlines()[0], flush=True)
        ends = time.monotonic() + args.soak
        while time.monotonic() < ends:
            row = await load.measure(min(args.sample, max(1.0, ends - time.monotonic())))
            rows.append(row)
            minute = f"{len(rows) * args.sample / 60:.0f}"
            line = table(["minute", *HEADERS], [[minute, *row.cells()]]).splitlines()[-1]
            print(line, flush=True)
    finally:
        load.close()
    print()
    print(table(["window", *HEADERS], [[i + 1, *r.cells()] for i, r in enumerate(rows)]))
    if len(rows) >= 4:
        quarter = max(1, len(rows) // 4)
        first = sum(r.rss_mib for r in rows[:quarter]) / quarter
        last = sum(r.rss_mib for r in rows[-quarter:]) / quarter
        print(
            f"\nnode RSS: first quarter {first:.1f} MiB, last quarter {last:.1f} MiB "
            f"({last / first:.3f}x); p99 over the windows: max "
            f"{max(r.p99 for r in rows):.1f} ms; longest GC pause "
            f"<= {max(r.gc_ms for r in rows):g} ms (the collector's CPU in one collection "
            f"<= {max(r.gc_cpu_ms for r in rows):g} ms)"
        )
    return 0


def main() -> int:
    options = parser(__doc__, window=20.0, warmup=5.0, procs=2, sink_procs=2)
    options.add_argument("--workers", type=int, default=1, help="`serve --workers N`")
    options.add_argument("--levels", default=DEFAULT_LEVELS, help="S:R,S:R,... (S: timed too)")
    options.add_argument("--game-moves", type=int, default=GAME_MOVES, help="per racer a race")
    options.add_argument("--sink-nice", type=int, default=0, help="the sinks' nice (10: yield)")
    options.add_argument("--pin", action="store_true", help="the node on cores of its own")
    options.add_argument("--together", action="store_true", help="a level's races all end at once")
    options.add_argument("--soak", type=float, default=0.0, help="seconds at --level")
    options.add_argument("--level", default="6000:300", help="S:R, the level of --soak")
    options.add_argument("--sample", type=float, default=60.0, help="soak: seconds per row")
    args = options.parse_args()
    return run_bench(soak if args.soak > 0 else knee, args)


if __name__ == "__main__":
    sys.exit(main())
