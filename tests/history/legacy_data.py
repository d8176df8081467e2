"""Valkey as a release before the history database left it: finished games' results
hashes and players' statistics hashes, written the way that release wrote them.

    asyncio.run(fill_legacy(valkey_url))    # FLUSHALL, then LEGACY_GAMES and their counters

The results are built like `race.results.build_results`' payload (the fields the history
database reads, and a record-like extra), msgpack in the hash's `data` field; the
counters are `race.stats.fold` over every game each player finished, including one whose
results had already expired (`EXPIRED`), as the old release's script counted them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final

import msgpack

from klondike_live import keys
from klondike_live.embedded import open_redis
from klondike_live.engine import Variant
from klondike_live.protocol.kinds import TournamentFormat
from klondike_live.race.stats import GameOutcome, StatsKind, fold, outcomes
from klondike_live.race.tournament import NewTournament, TournamentState, new_tournament
from klondike_live.store.records import pack_analysis

VARIANT: Final = "draw=1 passes=1 f2t=no"
DRAW3: Final = "draw=3 passes=3 f2t=no"


def ms(text: str) -> int:
    """Milliseconds since the epoch of an ISO date and time (UTC)."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def seat(
    number: int,
    user: str,
    status: str,
    rank: int,
    moves: int,
    found: int,
    time_ms: int | None = None,
    *,
    bot: bool = False,
) -> dict[str, Any]:
    """One ranking row, as `build_results` writes it."""
    return {
        "seat": number,
        "user": user,
        "name": user.capitalize(),
        "bot": bot,
        "status": status,
        "moves": moves,
        "found": found,
        "found_ms": 1000 * found,
        "end_ms": time_ms,
        "times": [],
        "record": "klondike-game 1",
        "rank": rank,
        "time_ms": time_ms,
    }


@dataclass(frozen=True)
class LegacyGame:
    room: str
    gen: int
    results: dict[str, Any]
    analysis: bytes | None = None

    @property
    def key(self) -> str:
        return keys.results(self.room, self.gen)

    @property
    def blob(self) -> bytes:
        packed: bytes = msgpack.packb(self.results, use_bin_type=True)
        return packed


def game(
    room: str,
    gen: int,
    ended: str,
    ranking: list[dict[str, Any]],
    *,
    kind: str = "race",
    variant: str = VARIANT,
    daily: dict[str, Any] | None = None,
    analysis: bytes | None = None,
) -> LegacyGame:
    results: dict[str, Any] = {
        "gen": gen,
        "kind": kind,
        "certified": True,
        "public": False,
        "seed": f"{room}-{gen}",
        "commitment": "c0ffee",
        "deal": "deal text",
        "variant": variant,
        "started_at": ms(ended) - 300_000,
        "ended_at": ms(ended),
        "ranking": ranking,
        "from": 0,
    }
    if daily is not None:
        results["daily"] = daily
    return LegacyGame(room, gen, results, analysis)


ANALYSIS: Final = msgpack.packb({"boards": {"0": [["W", 12]]}}, use_bin_type=True)

LEGACY_GAMES: Final = (
    game(
        "raceAAAA01",
        1,
        "2026-01-10T12:00:00",
        [seat(0, "alice", "won", 1, 90, 52, 120_000), seat(1, "bob", "playing", 2, 70, 20)],
        analysis=pack_analysis(ANALYSIS),
    ),
    game(
        "raceAAAA01",
        2,
        "2026-01-10T13:00:00",
        [seat(1, "bob", "won", 1, 85, 52, 110_000), seat(0, "alice", "timeout", 2, 60, 18)],
    ),
    game(
        "soloBBBB01",
        1,
        "2025-12-11T09:00:00",
        [seat(0, "alice", "won", 1, 101, 52, 200_000)],
        kind="solo",
        variant=DRAW3,
    ),
    game(
        "botsCCCC01",
        1,
        "2025-12-20T18:30:00",
        [
            seat(0, "carol", "won", 1, 95, 52, 150_000),
            seat(1, "bot-easy", "playing", 2, 40, 10, bot=True),
        ],
    ),
    game(
        "dailyDDD01",
        1,
        "2026-01-09T08:00:00",
        [seat(0, "alice", "resigned", 1, 30, 5)],
        kind="daily",
        daily={"date": "2026-01-09", "variant": VARIANT, "ranked": True},
    ),
)
"""Games whose results the old release still held (their players' counters count them)."""

EXPIRED: Final = GameOutcome("alice", StatsKind.SOLO, DRAW3, won=False, time_ms=None, moves=12)
"""A game alice played before the others, whose results expired: counted, not importable."""

WAITING: Final = game(
    "waitEEEE01",
    1,
    "2026-02-01T10:00:00",
    [seat(0, "alice", "won", 1, 80, 52, 90_000), seat(1, "bob", "playing", 2, 50, 30)],
)
"""A game of this release, waiting in the outbox: the nodes add and count it."""

JUNK_KEY: Final = keys.results("junkFFFF01", 1)
"""A results hash whose data is no game."""


def legacy_counters() -> dict[str, dict[str, int]]:
    """Each player's counters as the old release kept them: every game it finished, in
    the order they ended (the expired game first)."""
    out: dict[str, dict[str, int]] = {"alice": fold({}, EXPIRED)}
    for one in sorted(LEGACY_GAMES, key=lambda g: g.results["ended_at"]):
        for outcome in outcomes(one.results):
            out[outcome.user] = fold(out.get(outcome.user, {}), outcome)
    return out


def stats_key(user: str) -> str:
    return f"{keys.PREFIX}:{{u:{user}}}:stats"


def one_heat_cup(
    tournament_id: str, name: str, organizer: str, organizer_name: str, today: date
) -> TournamentState:
    """A public draw-1 tournament of one heat, made at 1 s, registration until 11 s."""
    wanted = NewTournament(
        name=name,
        format=TournamentFormat.HEATS,
        variants=(Variant.parse("draw=1"),),
        public=True,
        cap=10,
        opens_ms=1_000,
        closes_ms=11_000,
        start_ms=21_000,
        heats=1,
        pause_s=60,
        time_limit_s=600,
    )
    deals = (("seed0", f"{0:064x}", True),)
    return new_tournament(tournament_id, wanted, deals, organizer, organizer_name, 1_000, today)


def legacy_tournaments() -> tuple[TournamentState, TournamentState]:
    """Two tournaments of the old release: one cancelled (over: imported), one to come
    (left to the nodes)."""
    to_come = one_heat_cup("oldcup-0002", "Old cup", "org", "Org", date(2029, 12, 31))
    cancelled = dataclasses.replace(to_come, id="oldcup-0001").cancel("org", 5_000)
    return cancelled, to_come


async def fill_legacy(url: str) -> None:
    """Empty the Valkey at `url`, then write the old release's keys (and one game of
    this release waiting in the outbox)."""
    redis = await open_redis(url)
    try:
        await redis.flushall()
        for one in LEGACY_GAMES:
            fields = {"data": one.blob}
            if one.analysis is not None:
                fields["analysis"] = one.analysis
            await redis.hset(one.key, mapping=fields)  # type: ignore[arg-type]
        for user, counters in legacy_counters().items():
            await redis.hset(stats_key(user), mapping=counters)  # type: ignore[arg-type]
            await redis.zadd(f"{keys.PREFIX}:{{u:{user}}}:recent", {"x:1": 1})
        await redis.hset(WAITING.key, mapping={"data": WAITING.blob})
        await redis.zadd(keys.OUTBOX, {f"{WAITING.room}|{WAITING.gen}": 0})
        await redis.hset(JUNK_KEY, mapping={"data": b"\xc1 not a game"})
        for state in legacy_tournaments():
            await redis.hset(
                keys.tournament(state.id), mapping={"state": state.to_blob(), "rev": 1}
            )
    finally:
        await redis.aclose()
