"""Throughput and fan-out on a Valkey Cluster against a standalone Valkey, in one run.

Two stores side by side: a standalone Valkey (with the append-only file of a cluster
node, `DURABLE`) and a local Valkey Cluster of `--masters` masters without replicas
(`DevCluster`, so that no `WAIT` mixes in: a node waits for replicas only when the
masters have some). Each gets `max(--nodes)` nodes (`klondike-live serve`, which
detects the cluster from its URL).

Throughput, for each node count n of `--nodes`: `--racers` closed-loop solo racers per
node (as in bench_throughput.py), spread over n nodes of one store, then as many on the
other store's n nodes; `--rounds` rounds that alternate between the stores. Per store:
moves per second (and per node), node CPU per move, Valkey CPU per move over its
servers, the commands its servers processed per move (those run inside scripts
included; by command from `INFO commandstats`), bytes they sent per move; per
shard of the cluster: the racers' rooms whose slot it owns, the moves made in them,
its SPUBLISH calls per such move, and the pub/sub messages it sent over the cluster
bus (`CLUSTER INFO` `cluster_stats_messages_publish*`: none for sharded channels
without replicas). After the rounds, `PUBSUB SHARDNUMSUB` of every room channel on
every master shows that only the owner has subscribers; then a control: classic
`PUBLISH`es on one master are copied over the bus to every other master.

Fan-out: a racer on node 1 of a store and `--spectators` spectators of its room on node
2 (bench_fanout.py's measurement: node 2's CPU per diff delivered, every diff checked),
alternating between the stores; a new room each round, so the cluster rounds land on
whichever shard owns it.

    .venv/bin/python bench/bench_cluster.py [--nodes 1,2,3] [--racers 50] [--rounds 3]
        [--duration 6] [--spectators 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field

import redis

from bench_fanout import Run, Size, measure_node
from harness.clients import LoadGenerator
from harness.measure import CpuMeter, Shard, counters, counters_delta, shards_of
from harness.processes import DURABLE, FAST_RATE, Child, Harness, run_bench
from harness.report import code_version, machine, numbers, parser, table
from klondike_live import keys

CONTROL = 1000  # classic PUBLISHes of the control
SPECTATOR_PROCS = 2  # processes reading the fan-out's spectators


@dataclass
class Store:
    """One store under test: its URL, servers and nodes."""

    name: str
    url: str
    shards: list[Shard]
    nodes: list[Child]


@dataclass
class Tally:
    """What one store did at one node count, added up over the rounds."""

    store: Store
    count: int  # nodes used
    racers: int
    seconds: float = 0.0
    moves: int = 0
    per_node: list[int] = field(default_factory=list)
    per_room: dict[str, int] = field(default_factory=dict)
    node_cpu: float = 0.0
    load_cpu: float = 0.0
    shards: dict[int, dict[str, float]] = field(default_factory=dict)  # port -> deltas
    rounds: list[float] = field(default_factory=list)  # node us per move, per round

    def add(self, port: int, delta: dict[str, float]) -> None:
        total = self.shards.setdefault(port, {})
        for key, value in delta.items():
            total[key] = total.get(key, 0.0) + value

    def total(self, key: str) -> float:
        return sum(d.get(key, 0.0) for d in self.shards.values())

    def per_move(self, value: float) -> float:
        return value / max(self.moves, 1)


async def throughput_round(
    tally: Tally, load: LoadGenerator, warmup: float, duration: float
) -> None:
    store = tally.store
    nodes = store.nodes[: tally.count]
    begin = time.monotonic() + warmup
    end = begin + duration
    played = asyncio.create_task(load.round(begin, end))
    meter = CpuMeter({"nodes": [n.pid for n in nodes]})
    await asyncio.sleep(max(0.0, begin - time.monotonic()))
    before = counters(store.shards)
    await meter.over(begin, end)
    cpu = meter.used["nodes"]
    deltas = counters_delta(before, counters(store.shards))
    result = await played
    tally.seconds += duration
    tally.moves += result.moves
    previous = tally.per_node or [0] * tally.count
    tally.per_node = [a + b for a, b in zip(previous, result.per_node, strict=True)]
    for room, moves in result.per_room.items():
        tally.per_room[room] = tally.per_room.get(room, 0) + moves
    tally.node_cpu += cpu
    tally.load_cpu += sum(result.cpu)
    for port, delta in deltas.items():
        tally.add(port, delta)
    tally.rounds.append(1e6 * cpu / max(result.moves, 1))


def subscribers(store: Store, rooms: list[str]) -> dict[int, tuple[int, int, int, int]]:
    """Per master: (its rooms, of them with a subscriber here, other shards' rooms, of
    them with a subscriber here), by PUBSUB SHARDNUMSUB of each room's channel."""
    out = {}
    for shard in store.shards:
        client = shard.client()
        try:
            own = [r for r in rooms if shard.owns(keys.channel(r))]
            other = [r for r in rooms if not shard.owns(keys.channel(r))]

            def heard(group: list[str], client: redis.Redis = client) -> int:
                if not group:
                    return 0
                names = [keys.channel(r) for r in group]
                reply = client.execute_command("PUBSUB", "SHARDNUMSUB", *names)  # type: ignore[no-untyped-call]
                counts = reply[1::2]
                return sum(1 for c in counts if int(c) > 0)

            out[shard.port] = (len(own), heard(own), len(other), heard(other))
        finally:
            client.close()
    return out


def classic_control(store: Store, messages: int, size: int) -> dict[int, dict[str, float]]:
    """Classic PUBLISHes on the first master: what the cluster bus carried."""
    before = counters(store.shards)
    client = store.shards[0].client()
    try:
        payload = b"x" * size
        for start in range(0, messages, 100):
            pipe = client.pipeline(transaction=False)
            for _ in range(min(100, messages - start)):
                pipe.publish("bench:classic", payload)
            pipe.execute()
    finally:
        client.close()
    time.sleep(0.5)  # the bus delivers asynchronously
    return counters_delta(before, counters(store.shards))


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    most = max(args.nodes)
    standalone_url = harness.valkey(DURABLE)
    cluster = harness.cluster(args.masters, 0)
    stores = []
    for name, url in (("standalone", standalone_url), ("cluster", cluster.url)):
        prefix = "s" if name == "standalone" else "c"
        nodes = [harness.node(url, f"{prefix}{i + 1}", FAST_RATE) for i in range(most)]
        stores.append(Store(name, url, shards_of(url), nodes))
    standalone, clustered = stores
    print(f"{code_version()}", file=sys.stderr, flush=True)

    tallies: dict[tuple[str, int], Tally] = {}
    checks: dict[int, dict[int, tuple[int, int, int, int]]] = {}
    for count in args.nodes:
        loads: dict[str, LoadGenerator] = {}
        try:
            for store in stores:
                urls = [n.ws_url for n in store.nodes[:count]]
                loads[store.name] = LoadGenerator(urls, args.racers * count, args.procs)
                await loads[store.name].open()
                tallies[store.name, count] = Tally(store, count, args.racers * count)
            for index in range(args.rounds):
                order = stores if index % 2 == 0 else stores[::-1]
                for store in order:
                    await throughput_round(
                        tallies[store.name, count], loads[store.name], args.warmup, args.duration
                    )
            checks[count] = subscribers(clustered, list(tallies["cluster", count].per_room))
        finally:
            for load in loads.values():
                load.close()
        s, c = tallies["standalone", count], tallies["cluster", count]
        print(
            f"n={count}: standalone {s.moves / s.seconds:,.0f} moves/s "
            f"{1e6 * s.per_move(s.node_cpu):.0f} us/move; cluster {c.moves / c.seconds:,.0f} "
            f"moves/s {1e6 * c.per_move(c.node_cpu):.0f} us/move",
            file=sys.stderr,
            flush=True,
        )

    control = classic_control(clustered, CONTROL, 200)

    fanout: dict[str, list[Run]] = {"standalone": [], "cluster": []}
    if args.spectators:
        size = Size.of(args.spectators, args.fanout_moves, None, SPECTATOR_PROCS)
        for index in range(args.rounds):
            order = stores if index % 2 == 0 else stores[::-1]
            for store in order:
                run = await measure_node(store.nodes[0], store.nodes[1 % most], size, None)
                fanout[store.name].append(run)

    report(args, standalone, clustered, tallies, checks, control, fanout)
    return 0


def report(
    args: argparse.Namespace,
    standalone: Store,
    clustered: Store,
    tallies: dict[tuple[str, int], Tally],
    checks: dict[int, dict[int, tuple[int, int, int, int]]],
    control: dict[int, dict[str, float]],
    fanout: dict[str, list[Run]],
) -> None:
    print(code_version())
    print(
        f"{machine()}; standalone Valkey (AOF "
        f"everysec) vs a cluster of {args.masters} masters, no replicas (AOF everysec); "
        f"{args.racers} closed-loop racers per node, {args.rounds} alternating rounds of "
        f"{args.duration:.0f} s after {args.warmup:.0f} s warm-up"
    )
    print()
    print("Throughput")
    rows: list[list[object]] = []
    for count in args.nodes:
        base = tallies["standalone", count]
        for name in ("standalone", "cluster"):
            t = tallies[name, count]
            rate = t.moves / t.seconds
            rows.append(
                [
                    name,
                    count,
                    t.racers,
                    rate,
                    rate / count,
                    1e6 * t.per_move(t.node_cpu),
                    (t.node_cpu / t.seconds) / count,
                    1e6 * t.per_move(t.total("cpu")),
                    t.per_move(t.total("commands")),
                    t.per_move(t.total("cmd:evalsha")),
                    t.per_move(t.total("net_out")),
                    statistics.median(t.rounds) / statistics.median(base.rounds),
                ]
            )
    print(
        table(
            [
                "store",
                "nodes",
                "racers",
                "moves/s",
                "per node",
                "node us/move",
                "node cpu share",
                "valkey us/move",
                "cmds/move",
                "EVALSHA/move",
                "bytes out/move",
                "node us vs standalone",
            ],
            rows,
        )
    )
    print(
        "(node us/move: CPU of all the store's nodes per move; node cpu share: per node, "
        "1.00 = a core; valkey: all its servers; cmds: commands its servers ran, those "
        "inside scripts included (INFO stats total_commands_processed; the nodes' ticks "
        "and probes too); EVALSHA: board scripts; last column: median of the rounds' node "
        "us/move over the standalone's)"
    )

    count = max(args.nodes)
    stores = ("standalone", "cluster")
    print()
    print(f"Commands per move at {count} node(s), INFO commandstats over all servers")
    names: dict[str, None] = {}
    for name in ("standalone", "cluster"):
        t = tallies[name, count]
        for deltas in t.shards.values():
            for key, value in sorted(deltas.items(), key=lambda kv: -kv[1]):
                if key.startswith("cmd:") and value / max(t.moves, 1) >= 0.005:
                    names.setdefault(key)
    per_move = {
        key: [tallies[n, count].per_move(tallies[n, count].total(key)) for n in stores]
        for key in names
    }
    cmd_rows: list[list[object]] = [
        [key.removeprefix("cmd:"), *values]
        for key, values in sorted(per_move.items(), key=lambda kv: -kv[1][1])
    ]
    print(table(["command", *stores], cmd_rows))

    for count in args.nodes:
        t = tallies["cluster", count]
        print()
        print(f"Cluster shards at {count} node(s): where the board events went")
        shard_rows: list[list[object]] = []
        for shard in clustered.shards:
            delta = t.shards[shard.port]
            rooms = [r for r in t.per_room if shard.owns(keys.channel(r))]
            moves = sum(t.per_room[r] for r in rooms)
            own, heard_own, other, heard_other = checks[count][shard.port]
            spublish = delta.get("cmd:spublish", 0.0)
            shard_rows.append(
                [
                    shard.port,
                    shard.slots,
                    len(rooms),
                    moves / max(t.moves, 1),
                    spublish / max(t.total("cmd:spublish"), 1),
                    spublish / max(moves, 1),
                    delta.get("commands", 0.0) / t.seconds,
                    delta.get("cmd:evalsha", 0.0) / t.seconds,
                    delta.get("cpu", 0.0) / t.seconds,
                    f"{heard_own}/{own}",
                    f"{heard_other}/{other}",
                    sum(v for k, v in delta.items() if k.startswith("bus:")),
                ]
            )
        print(
            table(
                [
                    "master",
                    "slots",
                    "rooms",
                    "share of moves",
                    "share of SPUBLISH",
                    "SPUBLISH/move",
                    "cmds/s",
                    "EVALSHA/s",
                    "cpu share",
                    "own rooms heard",
                    "others' heard",
                    "bus pub msgs",
                ],
                shard_rows,
            )
        )
    print(
        "(rooms: the racers' rooms whose slot the master owns; SPUBLISH/move: per move made "
        "in those rooms; own rooms heard: room channels of its own rooms with a subscriber "
        "on it (PUBSUB SHARDNUMSUB); others' heard: the other rooms' channels with a "
        "subscriber on it; bus pub msgs: publish messages it sent and received over the "
        "cluster bus during the rounds)"
    )

    print()
    print(f"Control: {CONTROL} classic PUBLISHes of 200 bytes on master {clustered.shards[0].port}")
    control_rows = []
    for shard in clustered.shards:
        delta = control[shard.port]
        control_rows.append(
            [
                shard.port,
                delta.get("cmd:publish", 0.0),
                delta.get("bus:publish_sent", 0.0),
                delta.get("bus:publish_received", 0.0),
            ]
        )
    print(
        table(
            [
                "master",
                "PUBLISH calls",
                "bus publish sent",
                "bus publish received",
            ],
            control_rows,
        )
    )

    if fanout["standalone"]:
        print()
        print(
            f"Fan-out: racer on node 1, {args.spectators} spectators on node 2, "
            f"{args.fanout_moves} moves a round, {args.rounds} alternating rounds"
        )
        fan_rows: list[list[object]] = []
        for index in range(len(fanout["standalone"])):
            s, c = fanout["standalone"][index], fanout["cluster"][index]
            fan_rows.append(
                [
                    index + 1,
                    s.diffs,
                    s.per_diff_us(),
                    c.diffs,
                    c.per_diff_us(),
                    c.per_diff_us() / s.per_diff_us(),
                ]
            )
        s_us = (
            sum(r.cpu for r in fanout["standalone"])
            * 1e6
            / sum(r.diffs for r in fanout["standalone"])
        )
        c_us = sum(r.cpu for r in fanout["cluster"]) * 1e6 / sum(r.diffs for r in fanout["cluster"])
        fan_rows.append(
            [
                "all",
                sum(r.diffs for r in fanout["standalone"]),
                s_us,
                sum(r.diffs for r in fanout["cluster"]),
                c_us,
                c_us / s_us,
            ]
        )
        print(
            table(
                [
                    "round",
                    "standalone diffs",
                    "node 2 us/diff",
                    "cluster diffs",
                    "node 2 us/diff",
                    "cluster / standalone",
                ],
                fan_rows,
            )
        )
        print("every spectator received every diff, offsets consecutive: yes")


def main() -> int:
    options = parser(__doc__, masters=3, rounds=3, duration=6.0, warmup=2.0, procs=1)
    options.add_argument("--nodes", type=numbers, default=[1, 2, 3], help="node counts")
    options.add_argument("--racers", type=int, default=50, help="closed-loop racers per node")
    options.add_argument("--spectators", type=int, default=1000, help="fan-out N (0: none)")
    options.add_argument("--fanout-moves", type=int, default=100, help="fan-out moves a round")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
