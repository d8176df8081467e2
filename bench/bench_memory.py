"""Server memory per idle spectator connection, against a bare `websockets` server.

A private Valkey and one node; a racer creates a solo game on it (so the room exists and
is racing). After a small warm-up batch (opened and closed, so lazily built code paths
and caches are not charged to the measured batch), the node's RSS (VmRSS from
/proc/<pid>/status) is read, N spectators connect (hello, join the room as spectator,
snapshot received) and stay idle, and the RSS is read again once it has settled. The
baseline is the same N idle connections to bench/broadcast_server.py (bare
`websockets` with the node's connection options), measured the same way in the same
run. Reported: RSS delta per connection in KiB, and the ratio.

With `--breakdown`, a third server - a node run in a child process of this script with
`tracemalloc` on (`running(settings)` from klondike_live.gateway.server, same code as
`klondike-live serve`) - gets the same N spectators, and the Python allocations they
added are listed by source file, to show where the memory goes.

    .venv/bin/python bench/bench_memory.py [--connections 1000] [--breakdown]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from harness.clients import Racer, close_all, open_spectators
from harness.processes import NO_CAPS, NO_SOLVER, Child, Harness, run_bench
from harness.report import code_version, machine, parser, table

TARGET = 1.05
"""The node's memory per idle spectator against bare websockets', at most."""


async def settle(child: Child, seconds: float) -> int:
    """RSS once it stops growing (read every 0.5 s, at most `seconds`)."""
    last = child.rss()
    for _ in range(int(seconds / 0.5)):
        await asyncio.sleep(0.5)
        now = child.rss()
        if abs(now - last) < 64:
            return now
        last = now
    return last


async def delta(
    child: Child, room: str | None, count: int, warmup: int, traced: bool = False
) -> tuple[int, int, str]:
    """(RSS before, RSS after) of `count` idle connections; with `traced`, the
    tracemalloc report of the traced node."""
    spectators, tasks = await open_spectators(child.ws_url, [room] * warmup)
    await asyncio.sleep(0.5)
    await close_all([s.conn for s in spectators], tasks)
    await asyncio.sleep(1.0)
    if traced:
        await asyncio.to_thread(child.command, "mark")
    before = await settle(child, 3)
    spectators, tasks = await open_spectators(child.ws_url, [room] * count)
    try:
        after = await settle(child, 5)
        report = await asyncio.to_thread(child.command, "report") if traced else ""
        return before, after, report
    finally:
        await close_all([s.conn for s in spectators], tasks)


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    url = harness.valkey()
    node = harness.node(url, "node")
    baseline = harness.script("baseline", "broadcast_server.py")
    racer = await Racer.solo(node.ws_url)
    rows: list[list[object]] = []
    ours = await delta(node, racer.room, args.connections, args.warmup)
    base = await delta(baseline, None, args.connections, args.warmup)
    per_ours = (ours[1] - ours[0]) / args.connections
    per_base = (base[1] - base[0]) / args.connections
    rows.append(
        ["node (hello + join as spectator)", ours[0], ours[1], per_ours, per_ours / per_base]
    )
    rows.append(["baseline: bare websockets server", base[0], base[1], per_base, 1.0])
    report = ""
    if args.breakdown:
        traced = harness.spawn(
            "traced",
            [sys.executable, __file__, "--serve-traced", url, str(harness.tmp / "traced")],
            {"KLONDIKE_SECRET": harness.secret},
        )
        racer2 = await Racer.solo(traced.ws_url)
        tr = await delta(traced, racer2.room, args.connections, args.warmup, traced=True)
        per_tr = (tr[1] - tr[0]) / args.connections
        rows.append(["node with tracemalloc on", tr[0], tr[1], per_tr, per_tr / per_base])
        report = tr[2]
        await racer2.conn.close()
    await racer.conn.close()
    print(
        f"{code_version()}\n{machine()}, {args.connections} idle connections, warm-up {args.warmup}"
    )
    print(
        table(["server", "RSS before KiB", "RSS after KiB", "KiB / connection", "x baseline"], rows)
    )
    print()
    ratio = per_ours / per_base
    print(
        f"target: <= {TARGET:g}x the bare websockets server's memory per connection; measured "
        f"{ratio:.2f}x, {per_ours:.1f} KiB against {per_base:.1f} "
        f"({'met' if ratio <= TARGET else 'missed'})"
    )
    if report:
        print()
        print("Python allocations added by the connections (tracemalloc, by file):")
        for line in report.split(";"):
            print(f"  {line}")
    return 0


# ---------------------------------------------------------------- traced node (child)


TOP = int(os.environ.get("BENCH_MEMORY_TOP", "12"))
"""Files listed by the breakdown (`BENCH_MEMORY_TOP=40` for a longer list)."""


def serve_traced(redis_url: str, data_dir: str) -> None:
    """A node with tracemalloc on; stdin: `mark` (a snapshot), `report` (growth since)."""
    import tracemalloc

    from klondike_live.config import Settings
    from klondike_live.gateway.server import running

    tracemalloc.start(1)
    # Like `Harness.node`: no background solver work, no connection caps.
    environ = {**os.environ, **NO_SOLVER, **NO_CAPS}
    settings = Settings.load(port=0, redis_url=redis_url, data_dir=Path(data_dir), environ=environ)

    async def run() -> None:
        mark = tracemalloc.take_snapshot()
        async with running(settings) as node:
            print(f"traced node on {node.url}", flush=True)
            while True:
                line = (await asyncio.to_thread(sys.stdin.readline)).strip()
                if not line:
                    return
                if line == "mark":
                    mark = tracemalloc.take_snapshot()
                    print("ok", flush=True)
                elif line == "report":
                    now = tracemalloc.take_snapshot()
                    stats = now.compare_to(mark, "filename")
                    total = sum(s.size_diff for s in stats)
                    parts = [f"total {total / 1024:,.0f} KiB"]
                    for stat in stats[:TOP]:
                        name = stat.traceback[0].filename
                        short = name.split("site-packages/")[-1].split("/server/")[-1]
                        size, blocks = stat.size_diff / 1024, stat.count_diff
                        parts.append(f"{size:9,.0f} KiB  {blocks:+8,} blocks  {short}")
                    print(";".join(parts), flush=True)

    asyncio.run(run())


def main() -> int:
    options = parser(__doc__)
    options.add_argument("--connections", type=int, default=1000, help="N idle spectators")
    options.add_argument("--warmup", type=int, default=50, help="connections opened first")
    options.add_argument("--breakdown", action="store_true", help="add a tracemalloc'd node")
    options.add_argument("--serve-traced", nargs=2, metavar=("REDIS_URL", "DATA_DIR"))
    args = options.parse_args()
    if args.serve_traced:
        serve_traced(*args.serve_traced)
        return 0
    return run_bench(bench, args)


if __name__ == "__main__":
    sys.exit(main())
