"""Bot accounts in the history database: accounts that another account owns.

    records = BotRecords(history)
    await records.create(owner, bot_user, "AnnBot", key, first_token, now_ms, limit=5)
    bots = await records.of(owner)               # `BotRow`s, oldest first
    bot = await records.owned(owner, bot_user)   # its `BotRow`, or None
    await records.replace_token(bot_user, token_row)  # the ids of the tokens it ended
    await records.delete(bot_user)

A bot account is an `accounts` row with an `owner` and no credential (nobody signs in
as it); each of its tokens is a `sessions` row of method `bot` whose id is the token's
`sid`, so a token ends as a session does (`service.accounts.Accounts.check` refuses
it). Only the token's id is stored, never the token. Errors of the database are
`HistoryError`; a taken username is `AccountTaken`, a full owner `TooManyBots`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, delete, func, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from klondike_live.errors import LiveError
from klondike_live.history.accounts import AccountTaken, SessionRow
from klondike_live.history.database import History, HistoryError, reason
from klondike_live.history.schema import accounts, sessions

__all__ = ["BOT_METHOD", "BotRecords", "BotRow", "TooManyBots"]

BOT_METHOD = "bot"
"""The `sessions.method` of a bot account's token."""


class TooManyBots(LiveError):
    """The owner has as many bot accounts as it may."""


@dataclass(frozen=True, slots=True)
class BotRow:
    """A bot account as its owner lists it: `token_at` is when its current token was
    issued (None: it has none)."""

    user_id: str
    username: str
    created_at: int
    token_at: int | None


class BotRecords:
    """The bot accounts of a history database (see the module docstring)."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.engine = history.engine

    async def create(
        self,
        owner: str,
        user_id: str,
        username: str,
        key: str,
        token: SessionRow,
        now_ms: int,
        *,
        limit: int,
    ) -> None:
        """Make a bot account of `owner` with its first token, in one transaction;
        `TooManyBots` when the owner has `limit` already, `AccountTaken` when the
        username's key is taken (by a person or a bot)."""
        try:
            async with self.engine.begin() as conn:
                count = (
                    await conn.execute(
                        select(func.count()).select_from(accounts).where(accounts.c.owner == owner)
                    )
                ).scalar_one()
                if count >= limit:
                    raise TooManyBots(f"an account may own {limit} bots")
                taken = (
                    await conn.execute(
                        select(accounts.c.user_id).where(
                            (accounts.c.username_key == key) | (accounts.c.user_id == user_id)
                        )
                    )
                ).first()
                if taken is not None:
                    raise AccountTaken("username")
                await conn.execute(
                    accounts.insert().values(
                        user_id=user_id,
                        username=username,
                        username_key=key,
                        password=None,
                        created_at=now_ms,
                        owner=owner,
                    )
                )
                await conn.execute(sessions.insert().values(**_session_values(token)))
        except IntegrityError:
            raise AccountTaken("username") from None
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot create a bot account: {reason(exc)}") from exc

    async def of(self, owner: str, bot: str | None = None) -> list[BotRow]:
        """The owner's bot accounts (or only the one `bot`), oldest first."""
        where = accounts.c.owner == owner
        if bot is not None:
            where = and_(where, accounts.c.user_id == bot)
        latest = (
            select(sessions.c.user_id, func.max(sessions.c.created_at).label("token_at"))
            .where(sessions.c.method == BOT_METHOD)
            .group_by(sessions.c.user_id)
            .subquery()
        )
        rows = await self.history.rows(
            select(
                accounts.c.user_id, accounts.c.username, accounts.c.created_at, latest.c.token_at
            )
            .select_from(accounts.outerjoin(latest, latest.c.user_id == accounts.c.user_id))
            .where(where)
            .order_by(accounts.c.created_at, accounts.c.user_id)
        )
        return [BotRow(r.user_id, r.username, r.created_at, r.token_at) for r in rows]

    async def owned(self, owner: str, bot: str) -> BotRow | None:
        """The bot account `bot` if `owner` owns it, else None."""
        rows = await self.of(owner, bot)
        return rows[0] if rows else None

    async def replace_token(self, bot: str, token: SessionRow) -> list[str]:
        """Store the bot's new token and end its others, in one transaction; the ids
        of the tokens ended (the caller ends their live keys and connections)."""
        try:
            async with self.engine.begin() as conn:
                old = [
                    r.id
                    for r in await conn.execute(
                        select(sessions.c.id).where(sessions.c.user_id == bot)
                    )
                ]
                if old:
                    await conn.execute(delete(sessions).where(sessions.c.id.in_(old)))
                await conn.execute(sessions.insert().values(**_session_values(token)))
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot issue a bot token: {reason(exc)}") from exc
        return old

    async def delete(self, bot: str) -> None:
        """Remove a bot account's row (its token rows go with it); its games stay."""
        try:
            async with self.engine.begin() as conn:
                await conn.execute(delete(sessions).where(sessions.c.user_id == bot))
                await conn.execute(delete(accounts).where(accounts.c.user_id == bot))
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot delete a bot account: {reason(exc)}") from exc


def _session_values(row: SessionRow) -> dict[str, object]:
    return {
        "id": row.id,
        "user_id": row.user_id,
        "method": row.method,
        "agent": row.agent,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
    }
