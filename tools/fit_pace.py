"""Fit the bots' pace to people's: think time per move, measured on stored races.

Reads the newest finished public games of a server's history database (1,000 by
default, their stored results), takes every board played by a person (rows without
`bot`), and the
time between two successive moves of that board (`times`, the server's clock in ms
since the start; moves the server added in the same instant are left out, and gaps over
`--cap` seconds too: a player who left the table is not thinking). Fits a log-normal to
those gaps (mean and standard deviation of their logarithm) and prints it with the
level paces it gives (`bots/levels.py`: each level scales the human median, keeps the
human spread), ready to paste into `HUMAN`.

    .venv/bin/python tools/fit_pace.py --database URL [--games 1000] [--cap 60] [--min-moves 20]

`URL`: the node's `KLONDIKE_DATABASE_URL`, or `sqlite:///<data dir>/history.sqlite3`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import statistics

import msgpack

from klondike_live.bots.levels import LEVELS
from klondike_live.history import History


async def gaps_of_people(
    url: str, cap: float, min_moves: int, newest: int = 1000
) -> tuple[list[float], int, int]:
    """Inter-move gaps (seconds) of people's boards; games and boards used."""
    history = History.open(url)
    gaps: list[float] = []
    games = boards = 0
    try:
        for _room, _gen, data in await history.finished(newest):
            results = msgpack.unpackb(data, raw=False)
            used = False
            for row in results.get("ranking", []):
                times = row.get("times") or []
                if row.get("bot") or len(times) < min_moves:
                    continue
                steps = [(b - a) / 1000 for a, b in itertools.pairwise(times)]
                kept = [g for g in steps if 0 < g <= cap]
                if kept:
                    gaps.extend(kept)
                    boards += 1
                    used = True
            games += used
    finally:
        await history.close()
    return gaps, games, boards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="the server's history database URL")
    parser.add_argument("--games", type=int, default=1000, help="newest public games read")
    parser.add_argument("--cap", type=float, default=60.0, help="longest gap kept (s)")
    parser.add_argument("--min-moves", type=int, default=20, help="shortest board kept")
    args = parser.parse_args()
    gaps, games, boards = asyncio.run(
        gaps_of_people(args.database, args.cap, args.min_moves, args.games)
    )
    if len(gaps) < 100:
        print(f"only {len(gaps)} move gaps of people in {games} games: too few to fit")
        raise SystemExit(1)
    logs = [math.log(g) for g in gaps]
    mu, sigma = statistics.fmean(logs), statistics.stdev(logs)
    print(f"{len(gaps)} gaps from {boards} boards of people in {games} games")
    print(f"HUMAN = Pace(mu=math.log({math.exp(mu):.3f}), sigma={sigma:.3f})")
    print(
        f"median {math.exp(mu):.2f} s, p10 {statistics.quantiles(gaps, n=10)[0]:.2f} s,"
        f" p90 {statistics.quantiles(gaps, n=10)[-1]:.2f} s"
    )
    for level, spec in LEVELS.items():
        print(
            f"{level}: median {spec.factor * math.exp(mu):.2f} s with this fit"
            f" ({spec.factor}x the human median; {spec.pace.median:.2f} s now)"
        )


if __name__ == "__main__":
    main()
