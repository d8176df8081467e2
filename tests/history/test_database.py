"""The history database on SQLite and on PostgreSQL (real servers, no mocks): its schema
and migrations, adding games once, statistics by the reference rule, players' games
paged and filtered, head-to-head records, and the indexes those queries use."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, text

from klondike_live.history import Cursor, GameFilter, History, SchemaTooNew
from klondike_live.history.database import _game_row, _player_rows
from klondike_live.history.migrate import _config, head
from klondike_live.history.schema import game_players, games, metadata
from klondike_live.race.stats import fold, outcomes, summary

VARIANTS = ("draw=1 passes=1 f2t=no", "draw=3 passes=3 f2t=no")


@pytest.fixture
async def history(history_url: str) -> AsyncIterator[History]:
    """A fresh history database at this release's schema."""
    opened = History.open(history_url)
    await opened.upgrade()
    try:
        yield opened
    finally:
        await opened.close()


def game(
    room: str,
    ended_at: int,
    rows: list[tuple[str, str, int]],
    *,
    kind: str = "race",
    variant: str = VARIANTS[0],
    bots: frozenset[str] = frozenset(),
) -> bytes:
    """Stored results (msgpack, the shape `race.results.build_results` writes) of a
    finished game: `rows` are (user, status, rank) in seat order."""
    ranking: list[dict[str, Any]] = [
        {
            "seat": seat,
            "user": user,
            "name": user.title(),
            "bot": user in bots,
            "status": status,
            "rank": rank,
            "moves": 90 + seat,
            "found": 52 if status == "won" else 20,
            "time_ms": 200_000 + seat if status == "won" else None,
            "record": "",
            "times": [],
        }
        for seat, (user, status, rank) in enumerate(rows)
    ]
    payload: dict[str, Any] = {
        "gen": 1,
        "kind": kind,
        "certified": True,
        "public": True,
        "seed": "5eed",
        "commitment": "c0ffee",
        "deal": "",
        "variant": variant,
        "started_at": ended_at - 300_000,
        "ended_at": ended_at,
        "ranking": ranking,
        "from": 0,
    }
    if kind == "daily":
        payload["daily"] = {"date": "2026-12-01", "variant": variant, "ranked": True}
    packed: bytes = msgpack.packb(payload, use_bin_type=True)
    return packed


def _compare(connection: Connection) -> list[Any]:
    return list(compare_metadata(MigrationContext.configure(connection), metadata))


async def test_the_migrations_make_exactly_the_schema(history: History) -> None:
    """From an empty database the migrations reach this release's head, and the tables
    they made are those of `history.schema` (columns, types, keys, indexes)."""
    assert await history.upgrade() == head()  # a second upgrade: nothing to do
    async with history.engine.connect() as conn:
        assert await conn.run_sync(_compare) == []


async def test_a_database_newer_than_the_release_is_refused(history_url: str) -> None:
    """A database migrated by a newer release: upgrading (as a node starting) refuses,
    naming both revisions, and changes nothing."""
    opened = History.open(history_url)
    try:
        await opened.upgrade()
        async with opened.engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))
        with pytest.raises(SchemaTooNew, match="'0099_future', newer than this release"):
            await opened.upgrade()
    finally:
        await opened.close()


async def test_a_game_is_added_once_with_its_players(history: History) -> None:
    """Adding a game twice adds it once (the outbox may drain it twice); its results
    come back byte for byte; each seat is a row, bots included."""
    blob = game(
        "room-0001", 10_000, [("ann", "won", 1), ("b_1", "resigned", 2)], bots=frozenset({"b_1"})
    )
    assert await history.add_game("room-0001", blob, analysis=b"packed")
    assert not await history.add_game("room-0001", blob)
    assert await history.load_results("room-0001", 1) == blob
    assert await history.load_results("room-0001", 2) is None
    assert await history.count_games() == 1
    page = await history.games_of("b_1", GameFilter())
    assert [(g["room"], g["result"], g["kind"]) for g in page.games] == [
        ("room-0001", "lost", "race_machine")
    ]
    counters, _ = await history.stats("b_1")
    assert counters == {}  # a bot is no player


async def test_statistics_follow_the_reference_rule(history: History) -> None:
    """Random games give each player the counters `race.stats.fold` gives, whatever
    their order of arrival within a player's stream; the recent games are the newest."""
    rng = random.Random(7)
    expected: dict[str, dict[str, int]] = {}
    for index in range(60):
        users = rng.sample(["ann", "bob", "cat"], rng.choice([1, 2]))
        statuses = [rng.choice(["won", "resigned", "timeout"]) for _ in users]
        ranks = sorted(range(1, len(users) + 1), key=lambda r: rng.random())
        kind = "solo" if len(users) == 1 else "race"
        blob = game(
            f"room-{index:04d}",
            1_000_000 + index,
            list(zip(users, statuses, ranks, strict=True)),
            kind=kind,
            variant=rng.choice(VARIANTS),
        )
        assert await history.add_game(f"room-{index:04d}", blob)
        for outcome in outcomes(msgpack.unpackb(blob, raw=False)):
            expected[outcome.user] = fold(expected.get(outcome.user, {}), outcome)
    for user, counters in expected.items():
        stored, recent = await history.stats(user)
        assert summary(stored) == summary(counters), user
        assert [g["ended_at"] for g in recent] == sorted(
            (g["ended_at"] for g in recent), reverse=True
        )
        assert len(recent) == min(20, sum(c.played for c in summary(stored)))


async def test_a_player_s_games_are_paged_and_filtered(history: History) -> None:
    """Newest first, each game once across pages (cursor: end time, room, generation;
    games ending in the same millisecond included), narrowed by kind, variant, result and
    opponent; each game names the other players."""
    for index in range(25):
        rows = [("ann", "won" if index % 3 == 0 else "resigned", 1 + index % 2)]
        if index % 2:
            rows.append(("bob", "won", 1))
        if index % 5 == 0:
            rows.append(("cat", "timeout", 3))
        blob = game(
            f"room-{index:04d}",
            2_000_000 + index // 2,  # pairs of games end in the same millisecond
            rows,
            kind="race" if len(rows) > 1 else "solo",
            variant=VARIANTS[index % 2],
        )
        await history.add_game(f"room-{index:04d}", blob)
    seen: list[str] = []
    cursor: Cursor | None = None
    while True:
        page = await history.games_of("ann", GameFilter(), cursor=cursor, limit=7)
        seen += [g["room"] for g in page.games]
        if page.next is None:
            break
        cursor = Cursor.parse(str(page.next))
    assert len(seen) == 25 and len(set(seen)) == 25
    ends = [int(room[-4:]) // 2 for room in seen]
    assert ends == sorted(ends, reverse=True)

    async def rooms(only: GameFilter) -> set[int]:
        page = await history.games_of("ann", only, limit=100)
        return {int(g["room"][-4:]) for g in page.games}

    assert await rooms(GameFilter(kind="solo")) == {i for i in range(25) if i % 2 == 0 and i % 5}
    assert await rooms(GameFilter(variant=VARIANTS[1])) == {i for i in range(25) if i % 2}
    assert await rooms(GameFilter(opponent="cat")) == {i for i in range(25) if i % 5 == 0}
    assert await rooms(GameFilter(opponent="bob", kind="race")) == {i for i in range(25) if i % 2}
    solo_wins = {i for i in range(25) if i % 6 == 0}  # won solo games: index % 3 == 0, even
    assert await rooms(GameFilter(kind="solo", result="won")) == solo_wins - {0, 10, 20}
    (first,) = (await history.games_of("ann", GameFilter(opponent="cat"), limit=1)).games
    assert [o["user"] for o in first["opponents"]] == ["bob", "cat"] or [
        o["user"] for o in first["opponents"]
    ] == ["cat"]


async def test_head_to_head_counts_who_ranked_above(history: History) -> None:
    """Games two players played together: wins are games ranked above the other,
    losses below, the rest draws (a tie); the last time they played."""
    await history.add_game(
        "room-0001", game("room-0001", 100, [("ann", "won", 1), ("bob", "resigned", 2)])
    )
    await history.add_game(
        "room-0002", game("room-0002", 200, [("ann", "resigned", 2), ("bob", "won", 1)])
    )
    await history.add_game(
        "room-0003", game("room-0003", 300, [("ann", "won", 1), ("bob", "won", 1)])
    )
    await history.add_game(
        "room-0004",
        game("room-0004", 400, [("ann", "won", 1), ("cat", "resigned", 2), ("bob", "resigned", 3)]),
    )
    await history.add_game("room-0005", game("room-0005", 500, [("ann", "won", 1)], kind="solo"))
    assert await history.head_to_head("ann", "bob") == {
        "user": "ann",
        "opponent": "bob",
        "games": 4,
        "wins": 2,
        "losses": 1,
        "draws": 1,
        "last_played": 400,
    }
    none = await history.head_to_head("ann", "dan")
    assert (none["games"], none["wins"], none["last_played"]) == (0, 0, None)


async def test_the_players_queries_use_their_indexes(history: History) -> None:
    """A player's games (with and without filters) and head-to-head are index lookups,
    not scans of every game (shown by each backend's query plan; PostgreSQL is told to
    avoid sequential scans where it can, as these tables are tiny here)."""
    await history.add_game(
        "room-0001", game("room-0001", 100, [("ann", "won", 1), ("bob", "resigned", 2)])
    )
    queries = {
        "games": (
            "SELECT * FROM game_players WHERE user_id = 'ann' "
            "ORDER BY ended_at DESC, room_id DESC, gen DESC LIMIT 21"
        ),
        "kind": (
            "SELECT * FROM game_players WHERE user_id = 'ann' AND kind = 'race' "
            "AND variant = 'draw=1 passes=1 f2t=no' ORDER BY ended_at DESC LIMIT 21"
        ),
        "result": (
            "SELECT * FROM game_players WHERE user_id = 'ann' AND result = 'won' "
            "ORDER BY ended_at DESC LIMIT 21"
        ),
    }
    async with history.engine.connect() as conn:
        for name, query in queries.items():
            if history.dialect == "sqlite":
                plan = " ".join(
                    str(row[-1]) for row in await conn.execute(text(f"EXPLAIN QUERY PLAN {query}"))
                )
                assert "USING INDEX ix_game_players_user_id" in plan, (name, plan)
            else:
                await conn.execute(text("SET enable_seqscan = off"))
                plan = " ".join(str(row[0]) for row in await conn.execute(text(f"EXPLAIN {query}")))
                assert "ix_game_players_user_id" in plan, (name, plan)


def _upgrade_to(connection: Connection, revision: str) -> None:
    command.upgrade(_config(connection), revision)


async def test_each_release_s_database_is_brought_up_with_its_games(history_url: str) -> None:
    """A database of the first schema, holding a game, upgraded to this release's head:
    the game and its players are still there and served, and the schema is exactly
    `history.schema`'s."""
    opened = History.open(history_url)
    try:
        async with opened.engine.begin() as conn:
            await conn.run_sync(_upgrade_to, "0001_games")
        blob = game("room-0001", 100, [("ann", "won", 1), ("bob", "resigned", 2)])
        # This release's writers read later tables: the rows alone, as 0001 had them.
        results = msgpack.unpackb(blob, raw=False)
        async with opened.engine.begin() as conn:
            await conn.execute(games.insert().values(_game_row("room-0001", results, blob)))
            await conn.execute(game_players.insert(), _player_rows("room-0001", results))
        assert await opened.upgrade() == head() != "0001_games"
        assert await opened.load_results("room-0001", 1) == blob
        page = await opened.games_of("ann", GameFilter(opponent="bob"))
        assert [(g["room"], g["result"]) for g in page.games] == [("room-0001", "won")]
        async with opened.engine.connect() as conn:
            assert await conn.run_sync(_compare) == []
    finally:
        await opened.close()
