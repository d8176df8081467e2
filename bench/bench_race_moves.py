"""Node CPU per race move of every kind, against stock turns in solo games, same node.

    .venv/bin/python bench/bench_race_moves.py [--races 20] [--duration 10] [--rounds 5]
        [--against TREE] [--profile DIR [--profile-node a|b]]

Topology: a private Valkey and two nodes (bench/race_node.py: `serve` dealing races
from one seed). On node A, `--races` races of two racers, each racer replaying the
recorded won game tests/data/won-draw1-seed31.txt move by move (closed loop: the next
move once the last one's own diff came back): tableau moves, waste moves, stock
draws, moves home, cards turned over, runs moved, a win; then the results, a
rematch, ready, start, and the same game again. Each race has one spectator on node
B, so every move also crosses the bus and is masked for spectators there. Racers and
spectators live in worker processes.

Baseline, same node, same run: `2 x --races` solo racers turning the stock
(`harness.clients.LoadGenerator`, the throughput benchmark's load). Race rounds and
stock-turn rounds alternate `--rounds` times; while one plays the other is idle.
Reported per kind: moves per second, node A's CPU per move (what the racer's node
pays: validating, the board script, the own diff, the spectator diff published), node
B's CPU per move (what a remote spectator's node pays), and the race / stock ratio of
each round pair; medians over the rounds. With `--against TREE` (a checkout of other
server code, e.g. `git worktree add --detach /tmp/old <commit>`), a second pair of nodes
runs that code on the same Valkey, with races of its own, and plays a race round after
each round of this code's: node A's and node B's CPU per race move of the two codes,
round by round. Last, the part of a race move that does no I/O, in this process: the
two racers' `LiveBoard`s replay the record in turn (the engine's check and move, both
audiences' views, diffs and frames, the progress, and the other board's spectator
refresh when their shared knowledge grew), as node A's writers do; with `--against`,
also each code's replay in child processes, alternating four times. `--profile DIR`
runs py-spy on node A (`--profile-node b`: node B) during the first race round
(`.venv/bin/pip install py-spy`) and prints where its CPU went.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from harness.clients import LoadGenerator, expect, pack, race_room, start_race_now, unpack
from harness.measure import CpuMeter
from harness.processes import BENCH_DIR, FAST_RATE, ROOT, Child, Harness, run_bench
from harness.profiling import profiler
from harness.report import code_version, commit_of, parser, server_root, table
from harness.workers import Workers, split
from klondike_live.engine import Board, Deal, Move, Variant
from klondike_live.race.live_board import LiveBoard

RECORD = ROOT / "tests" / "data" / "won-draw1-seed31.txt"


def recorded() -> tuple[str, str, list[str]]:
    """(seed, variant, move tokens) of the recorded won game."""
    fields: dict[str, str] = {}
    for line in RECORD.read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields["seed"], fields["variant"], fields["moves"].split()


class ReplayRace:
    """Two racers replaying the record in one room, and its spectator on another node."""

    def __init__(self, racers: list[ClientConnection], watcher: ClientConnection, room: str):
        self.racers = racers
        self.watcher = watcher
        self.room = room
        self.next_id = [1, 1]
        self.gen = 1

    @classmethod
    async def create(cls, url_a: str, url_b: str, variant: str) -> ReplayRace:
        room, racers, watcher = await race_room(url_a, url_b, variant, deal="any")
        race = cls(racers, watcher, room)
        await race.start()
        return race

    async def start(self) -> None:
        """Ready both racers, start, and note the move ids to go on from."""
        boards = await start_race_now(self.room, self.racers)
        self.next_id = [int(board.get("last_id", 0)) + 1 for board in boards]

    async def play(self, seat: int, token: str) -> bool:
        """One move, acknowledged; whether the board still plays (the server ends a board
        as won once every card is face up, before the record's last moves home)."""
        conn = self.racers[seat]
        move_id = self.next_id[seat]
        self.next_id[seat] += 1
        await conn.send(pack({"t": "move", "room": self.room, "id": move_id, "m": token}))
        while True:
            message = unpack(await asyncio.wait_for(conn.recv(), 30))
            if message["t"] == "error":
                raise RuntimeError(f"move {token} refused: {message}")
            if message["t"] == "diff" and message.get("id") == move_id:
                return bool(message.get("status", "playing") == "playing")

    async def rematch(self) -> None:
        """After both won: results, a rematch, and the next race started."""
        host = self.racers[0]
        await expect(host, lambda m: m["t"] == "results", 60)
        await host.send(pack({"t": "rematch", "room": self.room}))
        self.gen += 1
        await expect(host, lambda m: m["t"] == "room" and m.get("state") == "lobby", 60)
        await self.start()


class Replay:
    """Where each racer is in the record; rounds of play until a deadline."""

    def __init__(self, rooms: list[ReplayRace], moves: list[str]) -> None:
        self.rooms = rooms
        self.moves = moves
        self.at = {(id(r), seat): 0 for r in rooms for seat in (0, 1)}
        self.counted = 0

    async def go(self, ends: float) -> int:
        """Play every room until `ends`; the moves acknowledged meanwhile."""
        self.counted = 0
        await asyncio.gather(*(self._room(r, ends) for r in self.rooms))
        return self.counted

    async def _racer(self, race: ReplayRace, seat: int, ends: float) -> None:
        key = (id(race), seat)
        while time.monotonic() < ends and self.at[key] < len(self.moves):
            playing = await race.play(seat, self.moves[self.at[key]])
            self.at[key] = self.at[key] + 1 if playing else len(self.moves)
            self.counted += 1

    async def _room(self, race: ReplayRace, ends: float) -> None:
        done = len(self.moves)
        while time.monotonic() < ends:
            await asyncio.gather(self._racer(race, 0, ends), self._racer(race, 1, ends))
            if self.at[(id(race), 0)] == self.at[(id(race), 1)] == done:
                await race.rematch()
                self.at[(id(race), 0)] = self.at[(id(race), 1)] = 0


class ReplayWorker:
    """Race replayers of one worker process: `races` races of two racers on node A and
    their spectators on node B."""

    def __init__(self, url_a: str, url_b: str, races: int) -> None:
        self.url_a, self.url_b, self.races = url_a, url_b, races
        self.rooms: list[ReplayRace] = []
        self.seen = [0]  # frames the spectators received
        self.drains: list[asyncio.Task[None]] = []

    async def open(self) -> None:
        _, variant, moves = recorded()
        for _ in range(self.races):
            self.rooms.append(await ReplayRace.create(self.url_a, self.url_b, variant))
        self.drains = [asyncio.create_task(self._drain(r.watcher)) for r in self.rooms]
        self.replay = Replay(self.rooms, moves)

    async def _drain(self, conn: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for _ in conn:
                self.seen[0] += 1

    async def go(self, seconds: float) -> tuple[int, int]:
        """Play for `seconds`: moves acknowledged, frames the spectators got."""
        before = self.seen[0]
        counted = await self.replay.go(time.monotonic() + seconds)
        return counted, self.seen[0] - before

    async def stop(self) -> None:
        for task in self.drains:
            task.cancel()
        conns = [c for r in self.rooms for c in (*r.racers, r.watcher)]
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)


class Replayers(Workers):
    """Race replayers in worker processes."""

    def __init__(self, url_a: str, url_b: str, races: int, procs: int) -> None:
        super().__init__(ReplayWorker, [(url_a, url_b, n) for n in split(races, procs)])

    async def go(self, seconds: float) -> tuple[int, int]:
        """Play for `seconds`; (moves acknowledged, frames the spectators got)."""
        answers = await self.call("go", seconds, timeout=seconds + 120)
        return sum(a[0] for a in answers), sum(a[1] for a in answers)


def board_work(repeat: int = 100) -> tuple[float, float]:
    """The writers' in-memory work per race move, replayed here: (µs per move, spectator
    refreshes per move), best of `repeat` replays of the record by two racers in turn."""
    seed, variant_text, tokens = recorded()
    variant = Variant.parse(variant_text)
    moves = [Move.parse(token) for token in tokens]
    best = float("inf")
    refreshes = played = 0
    for _ in range(repeat):
        boards = [
            LiveBoard("bench", seat, 1, Board(Deal.from_seed(seed), variant), race=True)
            for seat in (0, 1)
        ]
        seats = {board.seat: board.knowledge() for board in boards}
        refreshes = played = 0
        started = time.perf_counter()
        for move_id, move in enumerate(moves, 1):
            for board, other in ((boards[0], boards[1]), (boards[1], boards[0])):
                if board.board.is_won():  # won by auto-completion before the record's end
                    continue
                board.apply_move(move, move_id, seats)
                board.confirm()
                played += 1
                seats[board.seat] = board.knowledge()
                if other.apply_refresh(seats) is not None:
                    other.confirm()
                    refreshes += 1
        best = min(best, (time.perf_counter() - started) / played * 1e6)
    return best, refreshes / played


def start_node(harness: Harness, url: str, name: str, seed: str, tree: Path | None = None) -> Child:
    """A race node on `url` running this checkout's server, or that of `tree`."""
    command = [sys.executable, str(BENCH_DIR / "race_node.py"), seed]
    env = {**FAST_RATE, "KLONDIKE_COUNTDOWN_SECONDS": "0"}
    return harness.node(url, name, env, tree=tree, command=command)


async def race_round(
    replayers: Replayers, node_a: Child, node_b: Child, seconds: float
) -> tuple[float, float, float, float]:
    """One round of race moves: (moves/s, node A µs per move, node B µs per move,
    spectator frames/s)."""
    meter = CpuMeter({"a": [node_a.pid], "b": [node_b.pid]})
    meter.start()
    moves, frames = await replayers.go(seconds)
    meter.stop()
    return (
        moves / meter.wall,
        meter.used["a"] / moves * 1e6,
        meter.used["b"] / moves * 1e6,
        frames / meter.wall,
    )


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    seed, _, moves = recorded()
    url = harness.valkey()
    node_a = start_node(harness, url, "node-a", seed)
    node_b = start_node(harness, url, "node-b", seed)
    replayers = Replayers(node_a.ws_url, node_b.ws_url, args.races, args.procs)
    old: tuple[Child, Child, Replayers] | None = None
    old_version = ""
    if args.against is not None:
        old_version = commit_of(code_version(args.against))
        old_a = start_node(harness, url, "old-a", seed, args.against)
        old_b = start_node(harness, url, "old-b", seed, args.against)
        old = (old_a, old_b, Replayers(old_a.ws_url, old_b.ws_url, args.races, args.procs))
    solo = LoadGenerator([node_a.ws_url], 2 * args.races, args.procs)
    try:
        await replayers.call("open")
        if old is not None:
            await old[2].call("open")
        await solo.open()
        print(
            f"race moves at {code_version()}: {args.races} races (2 racers on node A, a "
            f"spectator on node B) replaying {RECORD.name} ({len(moves)} moves, seed {seed}) "
            f"against {2 * args.races} solo stock turners on node A; {args.rounds} rounds of "
            f"{args.duration:g} s each"
            + (f"; a race round of the nodes at {old_version} after each" if old else ""),
            flush=True,
        )
        await replayers.go(2.0)  # warm-up
        if old is not None:
            await old[2].go(2.0)
        rows: list[list[object]] = []
        old_rows: list[list[object]] = []
        profile = ""
        ratios_a: list[float] = []
        for index in range(args.rounds):
            profiled = node_a if args.profile_node == "a" else node_b
            spy = profiler(args.profile if index == 0 else None, profiled.pid, profiled.name)
            rate, race_a, race_b, frames = await race_round(
                replayers, node_a, node_b, args.duration
            )
            if spy is not None:
                profile = spy.stop(top=30)
            begin = time.monotonic() + 1.0  # a second of warm-up, played, not counted
            meter = CpuMeter({"a": [node_a.pid]})
            _, stock = await asyncio.gather(
                meter.over(begin, begin + args.duration), solo.round(begin, begin + args.duration)
            )
            stock_a = meter.used["a"] / stock.moves * 1e6
            ratios_a.append(race_a / stock_a)
            rows.append(
                [
                    index + 1,
                    rate,
                    race_a,
                    race_b,
                    frames,
                    stock.moves / args.duration,
                    stock_a,
                    race_a / stock_a,
                ]
            )
            print("  ".join(str(c) for c in rows[-1]), flush=True)
            if old is not None:
                _, old_a_us, old_b_us, _ = await race_round(old[2], old[0], old[1], args.duration)
                old_rows.append(
                    [
                        index + 1,
                        race_a,
                        old_a_us,
                        race_a / old_a_us,
                        race_b,
                        old_b_us,
                        race_b / old_b_us,
                    ]
                )
                print("  ".join(str(c) for c in old_rows[-1]), flush=True)
    finally:
        replayers.close()
        if old is not None:
            old[2].close()
        solo.close()
    print()
    headers = [
        "round",
        "race moves/s",
        "node A µs/race move",
        "node B µs/race move",
        "spectator frames/s",
        "stock turns/s",
        "node A µs/stock turn",
        "race / stock",
    ]
    print(table(headers, rows))
    if profile:
        print(f"\nnode {args.profile_node.upper()} in race round 1 (py-spy):\n{profile}")
    median = [statistics.median(float(str(r[i])) for r in rows) for i in (2, 3, 6)]
    print(
        f"\nmedians: node A {median[0]:.0f} µs per race move, node B {median[1]:.0f} µs per "
        f"race move (its spectator), node A {median[2]:.0f} µs per stock turn; race / stock "
        f"{statistics.median(ratios_a):.2f}x"
    )
    if old_rows:
        print(f"\nthe nodes at {old_version} in race rounds of their own, after each of these")
        headers = [
            "round",
            "node A µs",
            f"{old_version} A µs",
            "A ratio",
            "node B µs",
            f"{old_version} B µs",
            "B ratio",
        ]
        print(table(headers, old_rows))
        ratio_a = statistics.median(float(str(r[3])) for r in old_rows)
        ratio_b = statistics.median(float(str(r[6])) for r in old_rows)
        print(
            f"node CPU per race move, this code / {old_version}, medians: node A "
            f"{ratio_a:.2f}x, node B {ratio_b:.2f}x"
        )
    work, refreshes = board_work()
    print(
        f"the writers' in-memory work, replayed in this process: {work:.1f} µs per race move "
        f"({work / median[0]:.0%} of node A's CPU per race move); {refreshes:.2f} spectator "
        f"refreshes of the other board per move"
    )
    if args.against is not None:
        ours, theirs = await asyncio.to_thread(replays, server_root(), args.against.resolve())
        print(
            f"the writers' in-memory work replayed by each code in child processes, "
            f"alternating, {len(ours)} times: this code {statistics.median(ours):.1f} µs per "
            f"race move ({', '.join(f'{w:.1f}' for w in ours)}), {old_version} "
            f"{statistics.median(theirs):.1f} ({', '.join(f'{w:.1f}' for w in theirs)}); "
            f"ratio of medians {statistics.median(ours) / statistics.median(theirs):.2f}x"
        )
    return 0


def replays(this: Path, other: Path, times: int = 4) -> tuple[list[float], list[float]]:
    """`board_work()` of this checkout's server and of `other`'s, each in a child process
    with that `server/` first on its path, alternating `times` times."""
    runs: dict[Path, list[float]] = {this: [], other: []}
    for _ in range(times):
        for tree, out in runs.items():
            child = subprocess.run(
                [sys.executable, "-c", "import bench_race_moves as b; print(b.board_work()[0])"],
                cwd=BENCH_DIR,
                env={**os.environ, "PYTHONPATH": str(tree / "server")},
                capture_output=True,
                text=True,
                check=True,
            )
            out.append(float(child.stdout.strip()))
    return runs[this], runs[other]


def main() -> int:
    options = parser(__doc__, duration=10.0, rounds=5, procs=1, against="once", profile="a node")
    options.add_argument("--races", type=int, default=20)
    options.add_argument("--profile-node", choices=("a", "b"), default="a", help="which node")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
