"""Move throughput of one server node: moves per second it validates, stores and publishes.

One node (its rate limit lifted with KLONDIKE_RATE_PER_SECOND / KLONDIKE_RATE_BURST)
and a private Valkey. `--racers` solo games on that node, each racer on its own raw
websocket sending its next move (`D` until the stock is empty, then `R`) as soon as the
previous one is acknowledged: a closed loop, so the node is saturated. The load
generator runs in `--procs` worker processes; the table shows each process's CPU share
(1.00 = one core busy) so a saturated load generator is visible.

Baselines, measured in the same run against the same Valkey: a Lua script doing the
Redis work of one move as the node's board-event script does it (checks of seq,
connection and status, list push, hash writes, two stream appends, three publishes;
a frozen copy here, so the baseline does not move while the server changes) called
with EVALSHA from one redis-py asyncio client - one command per await; the same from
`--racers` concurrent tasks on one connection pool; and pipelined in batches of
`--pipeline`.
The ratios say how close the node is to Redis's own round-trip limits.

    .venv/bin/python bench/bench_throughput.py [--racers 100] [--duration 20] [--procs 1]

`--profile DIR` also records the node with py-spy while measuring (summary on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.process
import os
import sys
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Literal

import redis.asyncio

from serverbench import (
    FAST_RATE,
    Harness,
    Profiler,
    Racer,
    code_version,
    cpu_seconds,
    table,
)

# ---------------------------------------------------------------- load generator

# A load generator's pipe: it reports ("ready", racers), then ("done", moves counted, CPU
# seconds) or ("failed", error, 0.0); it is sent ("go", window start, window end).
Report = (
    tuple[Literal["ready"], int]
    | tuple[Literal["done"], int, float]
    | tuple[Literal["failed"], str, float]
)
Go = tuple[Literal["go"], float, float]


def worker(url: str, racers: int, pipe: Connection[Report, Go]) -> None:
    """A load-generator process: `racers` closed-loop solo players."""
    asyncio.run(_worker(url, racers, pipe))


async def _worker(url: str, count: int, pipe: Connection[Report, Go]) -> None:
    players: list[Racer] = []
    for start in range(0, count, 20):
        players += await asyncio.gather(
            *(Racer.solo(url, f"Racer {i}") for i in range(start, min(count, start + 20)))
        )
    pipe.send(("ready", len(players)))
    _, begin, end = pipe.recv()  # ("go", monotonic start, monotonic end of the window)
    counted = [0]
    stop_at = end + 0.2

    async def play(racer: Racer) -> None:
        clock = time.monotonic
        while True:
            await racer.move()
            now = clock()
            if begin <= now < end:
                counted[0] += 1
            elif now >= stop_at:
                return

    loop_pid = os.getpid()

    async def meter() -> tuple[float, float]:
        await asyncio.sleep(max(0.0, begin - time.monotonic()))
        cpu0 = cpu_seconds(loop_pid)
        await asyncio.sleep(max(0.0, end - time.monotonic()))
        return cpu0, cpu_seconds(loop_pid)

    metered = asyncio.create_task(meter())
    try:
        await asyncio.gather(*(play(r) for r in players))
        cpu0, cpu1 = await metered
        pipe.send(("done", counted[0], cpu1 - cpu0))
    except Exception as exc:
        pipe.send(("failed", repr(exc), 0.0))
    finally:
        await asyncio.gather(*(r.conn.close() for r in players), return_exceptions=True)


# ---------------------------------------------------------------- Redis baselines

BOARD_SCRIPT = """
-- A frozen copy of the work of the node's board-event script for one move:
-- KEYS: board hash, moves list, own stream, spectator stream, channel, connection key
-- ARGV: 1 expected seq, 2 connection id, 3 stream maxlen, 4 offset, 5 own frame,
--       6 spectator frame, 7 progress note, 8 move token, then field/value pairs
local seq = redis.call('HGET', KEYS[1], 'seq')
if seq ~= ARGV[1] then return {'stale', seq} end
if redis.call('GET', KEYS[6]) ~= ARGV[2] then return {'replaced'} end
if redis.call('HGET', KEYS[1], 'status') ~= 'playing' then return {'done'} end
local t = redis.call('TIME')
redis.call('RPUSH', KEYS[2], ARGV[8])
local args = {}
for i = 9, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(args))
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], ARGV[4] .. '-0', 'f', ARGV[5])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[3], ARGV[4] .. '-0', 'f', ARGV[6])
redis.call('PUBLISH', KEYS[5], 'O0|' .. ARGV[5])
redis.call('PUBLISH', KEYS[5], 'S0|' .. ARGV[6])
redis.call('PUBLISH', KEYS[5], ARGV[7])
return {'ok', t[1]}
"""
FIELDS = ("own_offset", "spec_offset", "spec_mask", "seen", "found", "down", "moves", "last_id")
OWN_FRAME = b"\x8b" + b"o" * 190  # sizes of a typical own / spectator diff frame
SPEC_FRAME = b"\x8a" + b"s" * 127
PROGRESS = b"P|\x96\x00\x00\x15\xcd\x01\x00\xa7playing\xcf" + b"\x00" * 8
Arg = int | str | bytes  # an argument of EVALSHA


class BoardScript:
    """Calls of BOARD_SCRIPT on one prepared board (its own keys), seq by seq."""

    def __init__(self, client: redis.asyncio.Redis, room: str) -> None:
        self.client = client
        self.seq = 0
        tag = "{bench:" + room + "}"
        self.keys = [f"{tag}:b", f"{tag}:m", f"{tag}:so", f"{tag}:ss", f"{tag}:ev", f"{tag}:c"]
        self.sha = ""

    async def prepare(self, sha: str) -> None:
        self.sha = sha
        await self.client.hset(self.keys[0], mapping={"seq": 0, "status": "playing"})
        await self.client.set(self.keys[5], "conn-bench")

    def args(self) -> list[Arg]:
        seq = self.seq
        self.seq += 1
        mask = str((1 << 40) + seq)
        values: list[int | str] = [seq + 1, seq + 1, seq + 1, mask, mask, 0, 21, seq, seq]
        out: list[Arg] = [seq, "conn-bench", 1000, seq + 1, OWN_FRAME, SPEC_FRAME, PROGRESS, "D"]
        for name, value in zip(("seq", *FIELDS), values, strict=True):
            out += [name, value]
        return out

    async def call(self) -> None:
        reply = await self.client.evalsha(self.sha, len(self.keys), *self.keys, *self.args())
        if reply[0] != b"ok":
            raise RuntimeError(f"baseline script refused: {reply}")


async def redis_baselines(
    url: str, seconds: float, tasks: int, batch: int, valkey_pid: int | None
) -> dict[str, tuple[float, float, float]]:
    """EVALSHA calls per second: serial, `tasks` concurrent, pipelined by `batch`; with
    the CPU microseconds per call of this (client) process and of Valkey."""
    client = redis.asyncio.Redis.from_url(url, max_connections=tasks + 8)
    try:
        sha = await client.script_load(BOARD_SCRIPT)
        out: dict[str, tuple[float, float, float]] = {}
        me = os.getpid()

        async def run(name: str, body: Callable[[float], Awaitable[int]]) -> None:
            deadline = time.monotonic() + seconds
            cpu0 = cpu_seconds(me)
            valkey0 = cpu_seconds(valkey_pid) if valkey_pid else 0.0
            start = time.perf_counter()
            calls = await body(deadline)
            wall = time.perf_counter() - start
            client_us = 1e6 * (cpu_seconds(me) - cpu0) / max(calls, 1)
            valkey_us = (
                1e6 * (cpu_seconds(valkey_pid) - valkey0) / max(calls, 1) if valkey_pid else 0.0
            )
            out[name] = (calls / wall, client_us, valkey_us)

        async def serial(deadline: float) -> int:
            board = BoardScript(client, "benchSerial00")
            await board.prepare(sha)
            calls = 0
            while time.monotonic() < deadline:
                await board.call()
                calls += 1
            return calls

        async def concurrent(deadline: float) -> int:
            boards = [BoardScript(client, f"benchConc{i:04d}") for i in range(tasks)]
            for board in boards:
                await board.prepare(sha)

            async def loop(board: BoardScript) -> int:
                calls = 0
                while time.monotonic() < deadline:
                    await board.call()
                    calls += 1
                return calls

            return sum(await asyncio.gather(*(loop(b) for b in boards)))

        async def pipelined(deadline: float) -> int:
            board = BoardScript(client, "benchPipe000")
            await board.prepare(sha)
            calls = 0
            while time.monotonic() < deadline:
                pipe = client.pipeline(transaction=False)
                for _ in range(batch):
                    pipe.evalsha(sha, len(board.keys), *board.keys, *board.args())
                replies = await pipe.execute()
                if any(r[0] != b"ok" for r in replies):
                    raise RuntimeError("baseline pipeline refused")
                calls += batch
            return calls

        await run("EVALSHA board script, 1 client, 1 per await", serial)
        await run(f"EVALSHA board script, {tasks} tasks on a pool", concurrent)
        await run(f"EVALSHA board script, pipelined x{batch}", pipelined)
        return out
    finally:
        await client.aclose()


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", type=int, default=100, help="concurrent solo games")
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--procs", type=int, default=1, help="load-generator processes")
    parser.add_argument("--baseline-seconds", type=float, default=5.0)
    parser.add_argument("--pipeline", type=int, default=100, help="baseline pipeline batch")
    parser.add_argument(
        "--profile", type=Path, default=None, help="directory: py-spy the node while measuring"
    )
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")
    workers: list[multiprocessing.process.BaseProcess] = []
    pipes: list[Connection[Go, Report]] = []
    with Harness() as harness:
        try:
            url = harness.valkey()
            node = harness.node(url, "node", FAST_RATE)
            valkey_pid = harness.valkey_pid()
            share = [
                args.racers // args.procs + (i < args.racers % args.procs)
                for i in range(args.procs)
            ]
            for count in share:
                ours, theirs = context.Pipe()
                proc = context.Process(
                    target=worker, args=(node.ws_url, count, theirs), daemon=True
                )
                proc.start()
                workers.append(proc)
                pipes.append(ours)
            for pipe in pipes:
                if not pipe.poll(120):
                    raise RuntimeError("load generator did not get ready in 120 s")
                status = pipe.recv()
                if status[0] != "ready":
                    raise RuntimeError(f"load generator failed: {status}")
            begin = time.monotonic() + args.warmup
            end = begin + args.duration
            for pipe in pipes:
                pipe.send(("go", begin, end))
            profiler = None
            if args.profile is not None:
                time.sleep(max(0.0, begin - 0.6 - time.monotonic()))
                profiler = Profiler(node.pid, args.profile / "node-throughput.txt")
            time.sleep(max(0.0, begin - time.monotonic()))
            node0 = node.cpu()
            valkey0 = cpu_seconds(valkey_pid) if valkey_pid else 0.0
            time.sleep(max(0.0, end - time.monotonic()))
            node_cpu = node.cpu() - node0
            valkey_cpu = (cpu_seconds(valkey_pid) - valkey0) if valkey_pid else 0.0
            if profiler is not None:
                print(f"py-spy of the node:\n{profiler.stop()}\n", file=sys.stderr)
            results: list[Report] = [
                pipe.recv() if pipe.poll(60) else ("failed", "no answer in time", 0.0)
                for pipe in pipes
            ]
            failed = [r for r in results if r[0] != "done"]
            if failed:
                print(f"load generator failed: {failed}", file=sys.stderr)
                print(harness.log_errors("node"), file=sys.stderr)
                return 1
            done = [r for r in results if r[0] == "done"]  # all of them
            moves = sum(r[1] for r in done)
            rate = moves / args.duration
            baselines = asyncio.run(
                redis_baselines(url, args.baseline_seconds, args.racers, args.pipeline, valkey_pid)
            )
        except RuntimeError as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            print(harness.log_errors("node"), file=sys.stderr)
            return 1
        finally:
            for worker_proc in workers:
                worker_proc.join(timeout=10)
                if worker_proc.is_alive():
                    worker_proc.terminate()
                    worker_proc.join(5)

    print(
        f"{code_version()}\nPython {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"{args.racers} racers "
        f"in {args.procs} load process(es), {args.duration:.0f} s measured after "
        f"{args.warmup:.0f} s warm-up"
    )
    rows: list[list[object]] = [
        [
            "node: moves acknowledged",
            rate,
            1.0,
            1e6 * node_cpu / max(moves, 1),
            sum(1e6 * r[2] for r in done) / max(moves, 1),
            1e6 * valkey_cpu / max(moves, 1),
        ],
    ]
    for name, (calls, client_us, valkey_us) in baselines.items():
        rows.append([f"baseline: {name}", calls, rate / calls, "", client_us, valkey_us])
    headers = ["what", "per second", "node / this", "node us", "client us", "valkey us"]
    print(table(headers, rows))
    print("(us: CPU microseconds per move or per call, of the node, the client, Valkey)")
    print()
    cpu_rows: list[list[object]] = [
        ["node", node_cpu, node_cpu / args.duration, 1e6 * node_cpu / max(moves, 1)],
        ["valkey", valkey_cpu, valkey_cpu / args.duration, 1e6 * valkey_cpu / max(moves, 1)],
    ]
    for index, result in enumerate(done):
        cpu = result[2]
        cpu_rows.append(
            [
                f"load generator {index + 1} ({share[index]} racers)",
                cpu,
                cpu / args.duration,
                1e6 * cpu / max(moves, 1),
            ]
        )
    print(table(["process", "cpu s", "cpu share", "cpu us / move"], cpu_rows))
    saturated = [i + 1 for i, r in enumerate(done) if r[2] / args.duration > 0.9]
    print()
    per_move = node_cpu / max(moves, 1)
    print(
        f"node CPU per move {1e6 * per_move:,.0f} us: with a core to itself the node would "
        f"do at most {1 / per_move:,.0f} moves/s (it got {node_cpu / args.duration:.2f} of one)"
    )
    print(
        f"target: >= 5,000 moves/s on one node; measured {rate:,.0f} moves/s "
        f"({'met' if rate >= 5000 else 'missed'})"
    )
    if saturated:
        print(
            f"load generator(s) {saturated} saturated their core: rerun with --procs "
            f"{args.procs + 1} to see the node's own limit"
        )
    else:
        print("load generator not saturated (each below 0.9 of a core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
