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

`--rounds R` measures R windows (each after its warm-up) and adds them up. `--against
TREE` measures a second node on the same Valkey, run from another checkout's `server/`
(e.g. `git worktree add --detach /tmp/old <commit>`), in rounds that alternate with this
one's, each with its own racers: node CPU per move of the two in the same run, round by
round, which a shared machine's drift cannot fake. `--profile DIR` also records the node
with py-spy during its first round (each node; summary on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import redis.asyncio

from harness.clients import LoadGenerator
from harness.measure import CpuMeter
from harness.processes import FAST_RATE, Child, Harness, run_bench
from harness.profiling import profiler
from harness.report import code_version, commit_of, machine, parser, table

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
    url: str, seconds: float, tasks: int, batch: int, valkey: list[int]
) -> dict[str, tuple[float, float, float]]:
    """EVALSHA calls per second: serial, `tasks` concurrent, pipelined by `batch`; with
    the CPU microseconds per call of this (client) process and of Valkey."""
    client = redis.asyncio.Redis.from_url(url, max_connections=tasks + 8)
    try:
        sha = await client.script_load(BOARD_SCRIPT)
        out: dict[str, tuple[float, float, float]] = {}
        meter = CpuMeter({"client": [os.getpid()], "valkey": valkey})

        async def run(name: str, body: Callable[[float], Awaitable[int]]) -> None:
            deadline = time.monotonic() + seconds
            meter.start()
            calls = await body(deadline)
            meter.stop()
            per_call = {k: 1e6 * cpu / max(calls, 1) for k, cpu in meter.used.items()}
            out[name] = (calls / meter.wall, per_call["client"], per_call["valkey"])

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


@dataclass
class Subject:
    """A node measured in rounds, with what it used over all of them."""

    label: str
    node: Child
    load: LoadGenerator
    version: str
    moves: int = 0
    seconds: float = 0.0
    node_cpu: float = 0.0
    valkey_cpu: float = 0.0
    load_cpu: list[float] = field(default_factory=list)
    rounds: list[tuple[float, float]] = field(default_factory=list)  # (moves/s, node us)

    @property
    def rate(self) -> float:
        return self.moves / self.seconds if self.seconds else 0.0

    def us(self, cpu: float) -> float:
        return 1e6 * cpu / max(self.moves, 1)


async def measure(
    subject: Subject, args: argparse.Namespace, valkey: list[int], profile: bool
) -> None:
    """One round: warm-up, then `duration` seconds measured."""
    begin = time.monotonic() + args.warmup
    end = begin + args.duration
    played = asyncio.create_task(subject.load.round(begin, end))
    meter = CpuMeter({"node": [subject.node.pid], "valkey": valkey})
    await asyncio.sleep(max(0.0, begin - 0.6 - time.monotonic()))
    spy = profiler(args.profile if profile else None, subject.node.pid, subject.node.name)
    await meter.over(begin, end)
    if spy is not None:
        print(f"py-spy of {subject.label}:\n{spy.stop(30)}\n", file=sys.stderr)
    result = await played
    node_cpu = meter.used["node"]
    subject.moves += result.moves
    subject.seconds += args.duration
    subject.node_cpu += node_cpu
    subject.valkey_cpu += meter.used["valkey"]
    subject.load_cpu = [
        a + b for a, b in zip(subject.load_cpu or [0.0] * len(result.cpu), result.cpu, strict=True)
    ]
    subject.rounds.append((result.moves / args.duration, 1e6 * node_cpu / max(result.moves, 1)))


def subject(harness: Harness, url: str, args: argparse.Namespace, against: bool) -> Subject:
    """The node of this checkout, or (`against`) of `--against`, with its racers."""
    tree = args.against if against else None
    node = harness.node(url, "against" if against else "node", FAST_RATE, tree=tree)
    version = code_version(tree)
    label = f"node at {commit_of(version)}" if against else "node"
    return Subject(label, node, LoadGenerator([node.ws_url], args.racers, args.procs), version)


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    url = harness.valkey()
    valkey = harness.valkey_pids()
    subjects = [subject(harness, url, args, False)]
    if args.against is not None:
        subjects.append(subject(harness, url, args, True))
    try:
        for one in subjects:
            await one.load.open()
        for index in range(args.rounds):
            # Alternate which goes first, so that drift on a shared machine hits both.
            order = subjects if index % 2 == 0 else subjects[::-1]
            for one in order:
                await measure(one, args, valkey, args.profile is not None and index == 0)
    finally:
        for one in subjects:
            one.load.close()
    baselines = await redis_baselines(
        url, args.baseline_seconds, args.racers, args.pipeline, valkey
    )
    report(args, subjects, baselines)
    return 0


def report(
    args: argparse.Namespace,
    subjects: list[Subject],
    baselines: dict[str, tuple[float, float, float]],
) -> None:
    ours = subjects[0]
    print(ours.version)
    for subject in subjects[1:]:
        print(f"against: {subject.version}")
    rounds = f"{args.rounds} alternating rounds of " if args.rounds > 1 else ""
    print(
        f"{machine()}, {args.racers} racers in {args.procs} load process(es) per node, "
        f"{rounds}{args.duration:.0f} s measured after {args.warmup:.0f} s warm-up"
    )
    rows: list[list[object]] = []
    for subject in subjects:
        rows.append(
            [
                f"{subject.label}: moves acknowledged",
                subject.rate,
                ours.rate / subject.rate if subject.rate else float("nan"),
                subject.us(subject.node_cpu),
                subject.us(sum(subject.load_cpu)),
                subject.us(subject.valkey_cpu),
            ]
        )
    for name, (calls, client_us, valkey_us) in baselines.items():
        rows.append([f"baseline: {name}", calls, ours.rate / calls, "", client_us, valkey_us])
    headers = ["what", "per second", "node / this", "node us", "client us", "valkey us"]
    print(table(headers, rows))
    print("(us: CPU microseconds per move or per call, of the node, the client, Valkey)")
    if args.rounds > 1:
        print()
        round_rows: list[list[object]] = []
        for index in range(args.rounds):
            row: list[object] = [index + 1]
            for subject in subjects:
                row += list(subject.rounds[index])
            if len(subjects) > 1:
                row.append(subjects[0].rounds[index][1] / subjects[1].rounds[index][1])
            round_rows.append(row)
        headers = ["round"]
        for subject in subjects:
            headers += [f"{subject.label} moves/s", "node us/move"]
        if len(subjects) > 1:
            headers.append("us/move ratio")
        print(table(headers, round_rows))
        if len(subjects) > 1:
            ratios = sorted(r[-1] for r in round_rows if isinstance(r[-1], float))
            print(
                f"node CPU per move, {ours.label} / {subjects[1].label}: median "
                f"{statistics.median(ratios):.2f} over {len(ratios)} rounds "
                f"(range {ratios[0]:.2f}-{ratios[-1]:.2f})"
            )
    print()
    cpu_rows: list[list[object]] = []
    for subject in subjects:
        seconds = subject.seconds
        cpu_rows.append(
            [
                subject.label,
                subject.node_cpu,
                subject.node_cpu / seconds,
                subject.us(subject.node_cpu),
            ]
        )
        cpu_rows.append(
            [
                f"valkey (while {subject.label} ran)",
                subject.valkey_cpu,
                subject.valkey_cpu / seconds,
                subject.us(subject.valkey_cpu),
            ]
        )
        for index, cpu in enumerate(subject.load_cpu):
            cpu_rows.append(
                [
                    f"load generator {index + 1} ({subject.load.shares[index]} racers)",
                    cpu,
                    cpu / seconds,
                    subject.us(cpu),
                ]
            )
    print(table(["process", "cpu s", "cpu share", "cpu us / move"], cpu_rows))
    print()
    per_move = ours.node_cpu / max(ours.moves, 1)
    print(
        f"node CPU per move {1e6 * per_move:,.0f} us: with a core to itself the node would "
        f"do at most {1 / per_move:,.0f} moves/s (it got {ours.node_cpu / ours.seconds:.2f} "
        "of one)"
    )
    print(
        f"target: >= 5,000 moves/s on one node; measured {ours.rate:,.0f} moves/s "
        f"({'met' if ours.rate >= 5000 else 'missed'})"
    )
    saturated = [
        i + 1
        for subject in subjects
        for i, cpu in enumerate(subject.load_cpu)
        if cpu / subject.seconds > 0.9
    ]
    if saturated:
        print(
            f"load generator(s) {saturated} saturated their core: rerun with --procs "
            f"{args.procs + 1} to see the node's own limit"
        )
    else:
        print("load generator not saturated (each below 0.9 of a core)")


def main() -> int:
    options = parser(
        __doc__, rounds=1, duration=20.0, warmup=3.0, procs=1, against="once", profile="the node"
    )
    options.add_argument("--racers", type=int, default=100, help="concurrent solo games")
    options.add_argument("--baseline-seconds", type=float, default=5.0)
    options.add_argument("--pipeline", type=int, default=100, help="baseline pipeline batch")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
