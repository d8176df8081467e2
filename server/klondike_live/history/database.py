"""The history database: finished games, their analyses and players' statistics.

    history = History.open("sqlite:///var/lib/klondike/history.sqlite3")
    await history.upgrade()                          # the schema, on start
    added = await history.add_game(room_id, blob)    # True once per game (idempotent)
    blob = await history.load_results(room_id, gen)  # the stored results, or None
    counters, recent = await history.stats(user)
    page = await history.games_of(user, GameFilter(kind="race"), cursor=None, limit=20)
    record = await history.head_to_head(user, other)
    await history.close()

SQLite (the default: a file in the data directory, write-ahead log, nothing to run) or
PostgreSQL (what every node of a shared Redis uses), through SQLAlchemy Core's async
engine (`aiosqlite`, `asyncpg`); one schema (`history.schema`), one set of queries.

A game arrives as its stored results (`race.results.build_results`, msgpack), the key
the live service drains from its outbox (`service.archive`): `add_game` writes the game,
a row per seat and each human player's statistics (`race.stats.fold`) in one
transaction, and does nothing for a game it has already (room and generation are the
key), so a game drained twice counts once. A player whose account was deleted before its
game got here is erased from it as it is written (`history.erasure`).

Errors of the database (unreachable, refused, timed out) are raised as `HistoryError`;
callers on the live path never wait on this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgpack
from sqlalchemy import (
    Row,
    and_,
    case,
    event,
    false,
    func,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from klondike_live.errors import LiveError
from klondike_live.history import erasure, migrate
from klondike_live.history.schema import game_players, games, player_stats, tournaments
from klondike_live.race.stats import (
    COUNTERS,
    RECENT_GAMES,
    GameOutcome,
    fold,
    outcomes,
    stats_kind,
    won_by,
)
from klondike_live.race.tournament import TournamentState
from klondike_live.store.records import pack_analysis, unpack_analysis

__all__ = [
    "Cursor",
    "GameFilter",
    "GamesPage",
    "History",
    "HistoryError",
    "KeptGame",
    "database_url",
]

UNRANKED: Final = "unranked"
"""The statistics kind of a game that counts for nothing (a daily game played again)."""

MAX_PAGE: Final = 100
"""The most games one page of a player's games holds."""


class HistoryError(LiveError):
    """The history database could not answer (unreachable, refused, or a bad URL)."""


def database_url(url: str) -> URL:
    """The SQLAlchemy async URL of a `sqlite:///PATH` or `postgresql://...` URL."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise HistoryError("expected sqlite:///PATH or postgresql://USER@HOST/DB") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise HistoryError("a SQLite history database needs a file: sqlite:///PATH")
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg")
    raise HistoryError(f"expected sqlite:///PATH or postgresql://..., got {backend}://")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Each SQLite connection: write-ahead log (readers never wait for the writer),
    foreign keys on, and a wait instead of an error while another process writes."""
    cursor = dbapi_connection.cursor()
    for pragma in (
        "journal_mode=WAL",
        "synchronous=NORMAL",
        "foreign_keys=ON",
        "busy_timeout=10000",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Which of a player's games a page lists (None: any)."""

    kind: str | None = None  # a statistics kind: solo, race, race_machine, daily, unranked
    variant: str | None = None
    result: str | None = None  # won or lost
    opponent: str | None = None  # a user id that played in the same game


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page of a player's games continues: below this game, newest first."""

    ended_at: int
    room_id: str
    gen: int

    def __str__(self) -> str:
        return f"{self.ended_at}.{self.gen}.{self.room_id}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """A cursor from its text; ValueError for anything else."""
        ended, gen, room_id = text.split(".", 2)
        if not (ended.isdigit() and gen.isdigit() and room_id):
            raise ValueError(f"not a cursor: {text!r}")
        return cls(int(ended), room_id, int(gen))


@dataclass(frozen=True, slots=True)
class KeptGame:
    """What `History.keep_game` did: whether the game was added, and its results as
    kept (erased of deleted accounts) or, when it was there already, as given."""

    added: bool
    blob: bytes


@dataclass(frozen=True, slots=True)
class GamesPage:
    """One page of a player's games, newest first, and where the next one starts."""

    games: list[dict[str, Any]]
    next: Cursor | None


def _game_row(room_id: str, results: Mapping[str, Any], blob: bytes) -> dict[str, Any]:
    daily = results.get("daily") or {}
    return {
        "room_id": room_id,
        "gen": int(results["gen"]),
        "kind": str(results.get("kind", "race")),
        "variant": str(results["variant"]),
        "public": bool(results.get("public", False)),
        "certified": bool(results.get("certified", False)),
        "daily_date": daily.get("date"),
        "ranked": bool(daily.get("ranked", False)),
        "seed": str(results["seed"]),
        "commitment": str(results.get("commitment") or ""),
        "started_at": int(results.get("started_at") or 0),
        "ended_at": int(results["ended_at"]),
        "players": len(results["ranking"]),
        "results": blob,
    }


def _player_rows(room_id: str, results: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = stats_kind(results)
    rows = []
    for row in results["ranking"]:
        won = won_by(kind, row)
        time_ms = row.get("time_ms")
        rows.append(
            {
                "room_id": room_id,
                "gen": int(results["gen"]),
                "seat": int(row["seat"]),
                "user_id": str(row["user"]),
                "name": str(row["name"]),
                "bot": bool(row.get("bot", False)),
                "kind": str(kind) if kind is not None else UNRANKED,
                "variant": str(results["variant"]),
                "status": str(row["status"]),
                "result": "won" if won else "lost",
                "rank": int(row["rank"]),
                "found": int(row["found"]),
                "moves": int(row["moves"]),
                "time_ms": None if time_ms is None else int(time_ms),
                "ended_at": int(results["ended_at"]),
            }
        )
    return rows


_STATS_COLUMNS: Final = {
    "played": player_stats.c.played,
    "won": player_stats.c.won,
    "best_ms": player_stats.c.best_ms,
    "fewest": player_stats.c.fewest,
    "streak": player_stats.c.streak,
    "best_streak": player_stats.c.best_streak,
}
assert set(_STATS_COLUMNS) == set(COUNTERS)


def _counters(row: Row[Any] | Mapping[str, Any], category: str) -> dict[str, int]:
    """A `player_stats` row as `race.stats` counters (`<counter>|<kind>|<variant>`)."""
    values = row if isinstance(row, Mapping) else row._mapping
    return {
        f"{name}|{category}": int(values[name]) for name in COUNTERS if values[name] is not None
    }


def _line(row: Row[Any]) -> dict[str, Any]:
    """A player's game as the games page and the recent games show it."""
    return {
        "room": row.room_id,
        "gen": row.gen,
        "kind": row.kind,
        "variant": row.variant,
        "status": row.status,
        "won": row.result == "won",
        "result": row.result,
        "rank": row.rank,
        "players": row.players,
        "time_ms": row.time_ms,
        "moves": row.moves,
        "found": row.found,
        "ended_at": row.ended_at,
    }


class History:
    """The history database of a node (see the module docstring)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name

    @classmethod
    def open(cls, url: str, *, pool_size: int = 5) -> History:
        """An engine on the database at `url` (nothing is connected yet)."""
        async_url = database_url(url)
        if async_url.get_backend_name() == "sqlite":
            assert async_url.database is not None  # `database_url` saw to it
            Path(async_url.database).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            engine = create_async_engine(async_url)
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        else:
            engine = create_async_engine(
                async_url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                pool_timeout=10,
                connect_args={"timeout": 10, "command_timeout": 30},
            )
        return cls(engine)

    async def close(self) -> None:
        await self.engine.dispose()

    async def upgrade(self) -> str:
        """Bring the schema to this release's (see `history.migrate`); its revision."""
        try:
            return await migrate.upgrade(self.engine)
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot reach the history database: {reason(exc)}") from exc

    async def ping(self) -> bool:
        """Whether the database answers a trivial query."""
        try:
            async with self.engine.connect() as conn:
                await conn.execute(select(1))
        except (SQLAlchemyError, OSError):
            return False
        return True

    # ------------------------------------------------------------ writing

    async def add_game(self, room_id: str, blob: bytes, *, analysis: bytes | None = None) -> bool:
        """Add a finished game from its stored results (msgpack) and analysis (as
        `Store.save_analysis` keeps it): the game, its players and their statistics, in
        one transaction; False when it is there already (then nothing changes)."""
        return (await self.keep_game(room_id, blob, analysis=analysis)).added

    async def keep_game(
        self, room_id: str, blob: bytes, *, analysis: bytes | None = None
    ) -> KeptGame:
        """`add_game`, and the results as kept: a player whose account was deleted
        (`history.erasure`) is erased from them in the same transaction, and counted in
        no statistics."""
        results: dict[str, Any] = msgpack.unpackb(blob, raw=False)
        row = _game_row(room_id, results, blob) | {"analysis": analysis}
        try:
            async with self.engine.begin() as conn:
                await erasure.hold(conn, exclusive=False)
                added = await conn.execute(self.insert(games).values(row).on_conflict_do_nothing())
                if added.rowcount != 1:
                    return KeptGame(False, blob)
                users = [str(r["user"]) for r in results["ranking"]]
                erased = await self._erased_results(conn, room_id, row["gen"], blob, users)
                if erased is not blob:
                    blob, results = erased, msgpack.unpackb(erased, raw=False)
                await conn.execute(self.insert(game_players), _player_rows(room_id, results))
                for outcome in outcomes(results):
                    if not erasure.is_deleted(outcome.user):
                        await self._count(conn, outcome)
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot add game {room_id}: {reason(exc)}") from exc
        return KeptGame(True, blob)

    async def _erased_results(
        self, conn: AsyncConnection, room_id: str, gen: int, blob: bytes, users: list[str]
    ) -> bytes:
        """The results of a game this transaction just inserted, with those of `users`
        whose accounts were deleted erased (`history.erasure`) and written over the
        inserted ones; `blob` itself when there are none."""
        gone = await erasure.erased_among(conn, users)
        if not gone:
            return blob
        for user in sorted(gone):
            blob = erasure.erased_blob(blob, user)
        await conn.execute(
            update(games).where(games.c.room_id == room_id, games.c.gen == gen).values(results=blob)
        )
        return blob

    def insert(self, table: Any) -> Any:
        """The dialect's INSERT (for ON CONFLICT)."""
        return (postgresql if self.dialect == "postgresql" else sqlite).insert(table)

    async def _count(self, conn: AsyncConnection, outcome: GameOutcome) -> None:
        """One more game in the player's statistics of its category (`race.stats.fold`)."""
        key = {"user_id": outcome.user, "kind": str(outcome.kind), "variant": outcome.variant}
        zero = dict.fromkeys(("played", "won", "streak", "best_streak"), 0)
        fresh = self.insert(player_stats).values(**key, **zero)
        await conn.execute(fresh.on_conflict_do_nothing())
        where = and_(*(player_stats.c[k] == v for k, v in key.items()))
        row = (
            await conn.execute(select(*_STATS_COLUMNS.values()).where(where).with_for_update())
        ).one()
        category = outcome.category
        after = fold(_counters(row, category), outcome)
        values = {name: after.get(f"{name}|{category}") for name in COUNTERS}
        await conn.execute(update(player_stats).where(where).values(**values))

    async def save_analysis(self, room_id: str, gen: int, data: bytes) -> bool:
        """Keep a game's analysis (msgpack; stored compressed, `records.pack_analysis`);
        False when the game is not in the database (yet)."""
        packed = pack_analysis(data)
        try:
            async with self.engine.begin() as conn:
                done = await conn.execute(
                    update(games)
                    .where(games.c.room_id == room_id, games.c.gen == gen)
                    .values(analysis=packed)
                )
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot save the analysis of {room_id}: {reason(exc)}") from exc
        return bool(done.rowcount)

    # ------------------------------------------------------------ reading

    async def rows(self, query: Any) -> Sequence[Row[Any]]:
        """Every row `query` reads (`HistoryError` when the database fails)."""
        try:
            async with self.engine.connect() as conn:
                return (await conn.execute(query)).all()
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"the history database failed: {reason(exc)}") from exc

    async def load_results(self, room_id: str, gen: int) -> bytes | None:
        """A finished game's stored results, or None when it is not here."""
        rows = await self.rows(
            select(games.c.results).where(games.c.room_id == room_id, games.c.gen == gen)
        )
        return bytes(rows[0].results) if rows else None

    async def load_analysis(self, room_id: str, gen: int) -> bytes | None:
        """A game's analysis as `Store.load_analysis` gives it (decompressed), or None."""
        rows = await self.rows(
            select(games.c.analysis).where(games.c.room_id == room_id, games.c.gen == gen)
        )
        if not rows or rows[0].analysis is None:
            return None
        return unpack_analysis(bytes(rows[0].analysis))

    async def has_game(self, room_id: str, gen: int) -> bool:
        rows = await self.rows(
            select(games.c.gen).where(games.c.room_id == room_id, games.c.gen == gen)
        )
        return bool(rows)

    async def finished(self, limit: int = 50) -> list[tuple[str, int, bytes]]:
        """The newest finished public games: room, generation and stored results."""
        rows = await self.rows(
            select(games.c.room_id, games.c.gen, games.c.results)
            .where(games.c.public.is_(True))
            .order_by(games.c.ended_at.desc())
            .limit(limit)
        )
        return [(r.room_id, r.gen, bytes(r.results)) for r in rows]

    async def stats(self, user: str) -> tuple[dict[str, int], list[dict[str, Any]]]:
        """The player's statistics as `race.stats` counters, and its latest games."""
        rows = await self.rows(select(player_stats).where(player_stats.c.user_id == user))
        counters: dict[str, int] = {}
        for row in rows:
            counters |= _counters(row, f"{row.kind}|{row.variant}")
        page = await self.games_of(user, GameFilter(), limit=RECENT_GAMES, counted_only=True)
        return counters, page.games

    async def games_of(
        self,
        user: str,
        only: GameFilter,
        *,
        cursor: Cursor | None = None,
        limit: int = 20,
        counted_only: bool = False,
    ) -> GamesPage:
        """One page of the player's games, newest first, below `cursor`; each with its
        other players (name, rank, bot)."""
        limit = max(1, min(limit, MAX_PAGE))
        mine = game_players.alias("mine")
        conditions = [mine.c.user_id == user]
        for column, value in (
            (mine.c.kind, only.kind),
            (mine.c.variant, only.variant),
            (mine.c.result, only.result),
        ):
            if value is not None:
                conditions.append(column == value)
        if counted_only:
            conditions.append(mine.c.kind != UNRANKED)
        if only.opponent is not None and only.opponent != user:
            # The opponent's games first (its index), then the player's among them.
            other = game_players.alias("other")
            conditions.append(
                tuple_(mine.c.room_id, mine.c.gen).in_(
                    select(other.c.room_id, other.c.gen).where(other.c.user_id == only.opponent)
                )
            )
        elif only.opponent is not None:
            conditions.append(false())  # nobody plays against themselves
        if cursor is not None:
            conditions.append(
                tuple_(mine.c.ended_at, mine.c.room_id, mine.c.gen)
                < tuple_(cursor.ended_at, cursor.room_id, cursor.gen)
            )
        query = (
            select(mine, games.c.players)
            .join(games, and_(games.c.room_id == mine.c.room_id, games.c.gen == mine.c.gen))
            .where(*conditions)
            .order_by(mine.c.ended_at.desc(), mine.c.room_id.desc(), mine.c.gen.desc())
            .limit(limit + 1)
        )
        rows = list(await self.rows(query))
        more = len(rows) > limit
        rows = rows[:limit]
        lines = [_line(row) for row in rows]
        if lines:
            await self._add_opponents(lines, user)
        last = rows[-1] if more else None
        return GamesPage(
            lines, Cursor(last.ended_at, last.room_id, last.gen) if last is not None else None
        )

    async def _add_opponents(self, lines: list[dict[str, Any]], user: str) -> None:
        """Each game's other players, in rank order (one query for the page)."""
        keys = [(line["room"], line["gen"]) for line in lines]
        rows = await self.rows(
            select(
                game_players.c.room_id,
                game_players.c.gen,
                game_players.c.user_id,
                game_players.c.name,
                game_players.c.rank,
                game_players.c.bot,
            )
            # SQLite uses no index for a list of row values: the rooms alone narrow it
            # to the primary key (docs/benchmarks.md, *History database*).
            .where(game_players.c.room_id.in_(sorted({room for room, _ in keys})))
            .where(tuple_(game_players.c.room_id, game_players.c.gen).in_(keys))
            .where(game_players.c.user_id != user)
            .order_by(game_players.c.rank, game_players.c.seat)
        )
        by_game: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for row in rows:
            by_game.setdefault((row.room_id, row.gen), []).append(
                {"user": row.user_id, "name": row.name, "rank": row.rank, "bot": row.bot}
            )
        for line in lines:
            line["opponents"] = by_game.get((line["room"], line["gen"]), [])

    async def head_to_head(self, user: str, other: str) -> dict[str, Any]:
        """Every game `user` and `other` played together: games, wins (ranked above the
        other), losses (below), draws, and when they last played."""
        mine = game_players.alias("mine")
        theirs = game_players.alias("theirs")
        query = (
            select(
                func.count().label("games"),
                func.coalesce(func.sum(case((mine.c.rank < theirs.c.rank, 1), else_=0)), 0).label(
                    "wins"
                ),
                func.coalesce(func.sum(case((mine.c.rank > theirs.c.rank, 1), else_=0)), 0).label(
                    "losses"
                ),
                func.max(mine.c.ended_at).label("last"),
            )
            .select_from(mine)
            .join(
                theirs,
                and_(
                    theirs.c.room_id == mine.c.room_id,
                    theirs.c.gen == mine.c.gen,
                    theirs.c.seat != mine.c.seat,
                ),
            )
            .where(mine.c.user_id == user, theirs.c.user_id == other)
        )
        (row,) = await self.rows(query)
        played, wins, losses = int(row.games), int(row.wins), int(row.losses)
        return {
            "user": user,
            "opponent": other,
            "games": played,
            "wins": wins,
            "losses": losses,
            "draws": played - wins - losses,
            "last_played": row.last,
        }

    async def add_tournament(self, state: TournamentState) -> bool:
        """Keep a tournament that is over; False when it is kept already (a tournament
        over never changes). An entrant or organizer whose account was deleted
        (`history.erasure`) is erased from it in the same transaction."""
        row = {
            "id": state.id,
            "name": state.name,
            "format": str(state.format),
            "public": state.public_listing,
            "phase": str(state.phase),
            "created_at": state.created_ms,
            "ended_at": state.ended_ms,
            "state": state.to_blob(),
        }
        users = {state.organizer, *state.removed, *(e.user for e in state.entrants)}
        users.update(r.user for h in state.heats for r in h.results)
        try:
            async with self.engine.begin() as conn:
                await erasure.hold(conn, exclusive=False)
                done = await conn.execute(
                    self.insert(tournaments).values(row).on_conflict_do_nothing()
                )
                gone = await erasure.erased_among(conn, users) if done.rowcount == 1 else set()
                if gone:
                    for user in sorted(gone):
                        state = erasure.erased_tournament(state, user)
                    await conn.execute(
                        update(tournaments)
                        .where(tournaments.c.id == state.id)
                        .values(state=state.to_blob())
                    )
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot keep tournament {row['id']}: {reason(exc)}") from exc
        return done.rowcount == 1

    async def load_tournament(self, tournament_id: str) -> bytes | None:
        """A kept tournament's stored state, or None."""
        rows = await self.rows(select(tournaments.c.state).where(tournaments.c.id == tournament_id))
        return bytes(rows[0].state) if rows else None

    async def listed_tournaments(self, limit: int) -> list[bytes]:
        """The newest kept public tournaments' states, by creation, newest first."""
        rows = await self.rows(
            select(tournaments.c.state)
            .where(tournaments.c.public.is_(True))
            .order_by(tournaments.c.created_at.desc())
            .limit(limit)
        )
        return [bytes(row.state) for row in rows]

    async def count_games(self) -> int:
        (row,) = await self.rows(select(func.count()).select_from(games))
        return int(row[0])

    # ------------------------------------------------------------ importing and purging

    async def add_uncounted_games(
        self, found: Sequence[tuple[str, bytes, bytes | None]]
    ) -> list[bool | None]:
        """Add finished games (room, stored results, analysis as stored) with their
        players but without counting them in anyone's statistics, in one transaction:
        games of releases before this database, whose players' counters arrive as they
        were (`import_counters`); a deleted account's seat is erased (`history.erasure`).
        Per game: True added, False the database had it (then nothing of it changes),
        None its results could not be read (left out)."""
        rows: list[tuple[dict[str, Any], list[dict[str, Any]]] | None] = []
        for room_id, blob, analysis in found:
            try:
                results = msgpack.unpackb(blob, raw=False)
                game = _game_row(room_id, results, blob) | {"analysis": analysis}
                rows.append((game, _player_rows(room_id, results)))
            except (ValueError, KeyError, TypeError, AttributeError):
                rows.append(None)
        added: list[bool | None] = []
        try:
            async with self.engine.begin() as conn:
                await erasure.hold(conn, exclusive=False)
                for row in rows:
                    if row is None:
                        added.append(None)
                        continue
                    game, players = row
                    done = await conn.execute(
                        self.insert(games).values(game).on_conflict_do_nothing()
                    )
                    added.append(done.rowcount == 1)
                    if done.rowcount == 1 and players:
                        room_id, blob = game["room_id"], game["results"]
                        users = [str(p["user_id"]) for p in players]
                        erased = await self._erased_results(conn, room_id, game["gen"], blob, users)
                        if erased is not blob:
                            players = _player_rows(room_id, msgpack.unpackb(erased, raw=False))
                        await conn.execute(self.insert(game_players), players)
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot add games: {reason(exc)}") from exc
        return added

    async def import_counters(self, user: str, counters: Mapping[str, int]) -> int:
        """Keep a player's statistics as an earlier release counted them (`race.stats`
        counters, `<counter>|<kind>|<variant>`), for each category where the database has
        none for the player (a category it has is left as it is, so importing twice
        changes nothing); how many categories were written. None for a deleted account
        (`history.erasure`)."""
        from klondike_live.race.stats import summary

        rows = [
            {
                "user_id": user,
                "kind": category.kind,
                "variant": category.variant,
                "played": category.played,
                "won": category.won,
                "best_ms": category.best_ms,
                "fewest": category.fewest_moves,
                "streak": category.streak,
                "best_streak": category.best_streak,
            }
            for category in summary(counters)
        ]
        written = 0
        try:
            async with self.engine.begin() as conn:
                await erasure.hold(conn, exclusive=False)
                for row in rows:
                    done = await conn.execute(
                        self.insert(player_stats).values(row).on_conflict_do_nothing()
                    )
                    written += done.rowcount == 1
                if await erasure.erased_among(conn, [user]):
                    # A deleted account: nothing of it is kept (the rows just written go).
                    await conn.execute(player_stats.delete().where(player_stats.c.user_id == user))
                    written = 0
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot import the statistics of {user}: {reason(exc)}") from exc
        return written

    async def purge(
        self, before_ms: int, *, kind: str | None = None, dry_run: bool = False, batch: int = 500
    ) -> tuple[int, int]:
        """Delete the finished games that ended before `before_ms` (only those of a room
        kind, `solo`, `race` or `daily`, with `kind`) and their players' rows, `batch`
        games a transaction; players' statistics stay as they are. How many games and
        players' rows went, or with `dry_run` would go (nothing is deleted)."""
        where = [games.c.ended_at < before_ms]
        if kind is not None:
            where.append(games.c.kind == kind)
        if dry_run:
            (row,) = await self.rows(
                select(
                    func.count().label("games"),
                    func.coalesce(func.sum(games.c.players), 0).label("players"),
                ).where(*where)
            )
            return int(row.games), int(row.players)
        gone_games = gone_players = 0
        try:
            while True:
                async with self.engine.begin() as conn:
                    found = (
                        await conn.execute(
                            select(games.c.room_id, games.c.gen).where(*where).limit(batch)
                        )
                    ).all()
                    if not found:
                        break
                    pairs = [(row.room_id, row.gen) for row in found]
                    players = await conn.execute(
                        game_players.delete().where(
                            tuple_(game_players.c.room_id, game_players.c.gen).in_(pairs)
                        )
                    )
                    deleted = await conn.execute(
                        games.delete().where(tuple_(games.c.room_id, games.c.gen).in_(pairs))
                    )
                gone_players += players.rowcount
                gone_games += deleted.rowcount
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot purge games: {reason(exc)}") from exc
        return gone_games, gone_players


def reason(exc: BaseException) -> str:
    """A database error in one line, without the SQL or its parameters."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
