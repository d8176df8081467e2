"""A player in the history database as a whole: what a profile shows of it beyond its
games and statistics, what it may download of itself, and erasing it.

    records = PlayerRecords(history)
    since = await records.first_seen(user)          # its first game's end, or None
    name = await records.last_name(user)            # the name of its newest game
    states = await records.tournaments_of(user)     # kept tournaments it entered
    await records.erase(user)                       # an account deleted

Erasing a player (`erase`) is one transaction: its statistics, account, passkeys and
sessions are removed, and its follows and blocks both ways (who it followed or blocked,
and who followed or blocked it); in the games it played, the daily leaderboards it is
on and the tournaments it entered or organized, its user id becomes `deleted_id(user)`
and its name the empty text `DELETED_NAME` (no display name is empty: the client shows
it as "deleted player"), in the rows and in the stored results and states alike, so
that the other players' games, ranks and records stay whole. The same transaction
records its marker in `erased_players`, so that what reaches the database from Valkey
afterwards (a game the outbox still held, a day that closes, a tournament that ends) is
erased as it is written (`history.erasure`). Erasing again changes nothing.
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection

from klondike_live.history.database import History, HistoryError, reason
from klondike_live.history.erasure import (
    DELETED_NAME,
    DELETED_PREFIX,
    deleted_id,
    erased_blob,
    erased_tournament,
    erased_value,
    hold,
    is_deleted,
)
from klondike_live.history.schema import (
    accounts,
    blocks,
    daily_rows,
    erased_players,
    follows,
    game_players,
    games,
    passkeys,
    player_stats,
    sessions,
    tournaments,
)
from klondike_live.race.tournament import TournamentState

__all__ = [
    "DELETED_NAME",
    "DELETED_PREFIX",
    "PlayerRecords",
    "deleted_id",
    "erased_blob",
    "is_deleted",
]


class PlayerRecords:
    """A player's rows across the history database (see the module docstring)."""

    def __init__(self, history: History) -> None:
        self.history = history

    async def first_seen(self, user: str) -> int | None:
        """When its first kept game ended, or None."""
        rows = await self.history.rows(
            select(func.min(game_players.c.ended_at)).where(game_players.c.user_id == user)
        )
        value = rows[0][0] if rows else None
        return None if value is None else int(value)

    async def last_name(self, user: str) -> str | None:
        """The name it had in its newest kept game, or None."""
        rows = await self.history.rows(
            select(game_players.c.name)
            .where(game_players.c.user_id == user)
            .order_by(game_players.c.ended_at.desc())
            .limit(1)
        )
        return str(rows[0].name) if rows else None

    async def tournaments_of(self, user: str) -> list[TournamentState]:
        """The kept tournaments it entered, newest first."""
        rows = await self.history.rows(
            select(tournaments.c.state).order_by(tournaments.c.created_at.desc())
        )
        states = [TournamentState.from_blob(bytes(row.state)) for row in rows]
        return [state for state in states if state.entrant(user) is not None]

    async def account_row(self, user: str) -> dict[str, Any] | None:
        """Its account as stored, without the password's hash, or None."""
        rows = await self.history.rows(
            select(accounts.c.username, accounts.c.created_at, accounts.c.password).where(
                accounts.c.user_id == user
            )
        )
        if not rows:
            return None
        row = rows[0]
        return {
            "username": row.username,
            "created_at": int(row.created_at),
            "password": row.password is not None,
        }

    async def passkeys_of(self, user: str) -> list[dict[str, Any]]:
        """Its passkeys' public metadata (no key)."""
        rows = await self.history.rows(
            select(passkeys.c.credential_id, passkeys.c.sign_count, passkeys.c.created_at)
            .where(passkeys.c.user_id == user)
            .order_by(passkeys.c.created_at)
        )
        return [
            {"id": r.credential_id, "sign_count": int(r.sign_count), "created_at": r.created_at}
            for r in rows
        ]

    async def all_games(self, user: str) -> list[tuple[str, int]]:
        """Every kept game it played, newest first."""
        rows = await self.history.rows(
            select(game_players.c.room_id, game_players.c.gen)
            .where(game_players.c.user_id == user)
            .order_by(game_players.c.ended_at.desc(), game_players.c.room_id.desc())
        )
        return [(str(r.room_id), int(r.gen)) for r in rows]

    async def erase(self, user: str, now_ms: int | None = None) -> list[tuple[str, int, bytes]]:
        """Erase the player (module docstring); the games it played as kept, each with
        its results erased (what a cached copy of them is replaced with); `now_ms` when
        (default: this machine's clock)."""
        marker = deleted_id(user)
        at_ms = int(time.time() * 1000) if now_ms is None else now_ms
        try:
            async with self.history.engine.begin() as conn:
                await hold(conn, exclusive=True)
                await conn.execute(
                    self.history.insert(erased_players)
                    .values(marker=marker, erased_at=at_ms)
                    .on_conflict_do_nothing()
                )
                for table in (player_stats, sessions, passkeys, accounts):
                    await conn.execute(delete(table).where(table.c.user_id == user))
                await conn.execute(
                    delete(follows).where(
                        or_(follows.c.follower == user, follows.c.followed == user)
                    )
                )
                await conn.execute(
                    delete(blocks).where(or_(blocks.c.blocker == user, blocks.c.blocked == user))
                )
                played = await self._erase_games(conn, user)
                rows = await conn.execute(
                    select(daily_rows.c.date, daily_rows.c.variant, daily_rows.c.position)
                    .add_columns(daily_rows.c.entry)
                    .where(daily_rows.c.user_id == user)
                )
                for row in rows.all():
                    entry = erased_value(json.loads(row.entry), user, marker)
                    await conn.execute(
                        update(daily_rows)
                        .where(
                            daily_rows.c.date == row.date,
                            daily_rows.c.variant == row.variant,
                            daily_rows.c.position == row.position,
                        )
                        .values(user_id=marker, entry=json.dumps(entry, separators=(",", ":")))
                    )
                kept = await conn.execute(select(tournaments.c.id, tournaments.c.state))
                for row in kept.all():
                    state = TournamentState.from_blob(bytes(row.state))
                    erased = erased_tournament(state, user)
                    if erased == state:
                        continue
                    await conn.execute(
                        update(tournaments)
                        .where(tournaments.c.id == row.id)
                        .values(state=erased.to_blob())
                    )
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot erase a player: {reason(exc)}") from exc
        return played

    async def _erase_games(self, conn: AsyncConnection, user: str) -> list[tuple[str, int, bytes]]:
        found = await conn.execute(
            select(game_players.c.room_id, game_players.c.gen).where(game_players.c.user_id == user)
        )
        keys = [(str(r.room_id), int(r.gen)) for r in found.all()]
        erased = []
        for room_id, gen in keys:
            where = (games.c.room_id == room_id, games.c.gen == gen)
            blob = (await conn.execute(select(games.c.results).where(*where))).scalar_one()
            new = erased_blob(bytes(blob), user)
            await conn.execute(update(games).where(*where).values(results=new))
            erased.append((room_id, gen, new))
        await conn.execute(
            update(game_players)
            .where(game_players.c.user_id == user)
            .values(user_id=deleted_id(user), name=DELETED_NAME)
        )
        return erased
