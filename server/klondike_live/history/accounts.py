"""Accounts in the history database: usernames, password hashes, passkeys, sessions.

    records = AccountRecords(history)
    made = await records.create(user, "Ann", key, password_hash, passkey, now_ms)
    account = await records.by_username(key)           # an `Account`, or None
    await records.add_session(Session(...))
    alive = await records.session_alive(sid, now_ms)   # its `SessionRow`, or None
    ended = await records.end_sessions(user, keep=None)

An account is keyed by the user id the guest had (`accounts.user_id`); making one is
one transaction that either creates the account with its first credential or changes
nothing (`AccountTaken`: the username's key or the user id is taken already). Errors
of the database are `HistoryError`, as for the rest of `History`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlalchemy import ColumnElement, and_, delete, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from klondike_live.accounts.passkeys import NewPasskey
from klondike_live.errors import LiveError
from klondike_live.history.database import History, HistoryError, reason
from klondike_live.history.schema import accounts, passkeys, sessions

__all__ = ["Account", "AccountRecords", "AccountTaken", "SessionRow", "StoredPasskey"]

MAX_SESSIONS: Final = 50
"""The most sessions an account lists (its newest)."""


class AccountTaken(LiveError):
    """The username (by key) or the user id has an account already."""

    def __init__(self, which: str) -> None:
        super().__init__(f"{which} is taken")
        self.which = which  # "username" or "user"


@dataclass(frozen=True, slots=True)
class Account:
    user_id: str
    username: str
    password: str | None  # argon2id hash
    owner: str | None = None  # a bot account's owner (user id); None for a person


@dataclass(frozen=True, slots=True)
class StoredPasskey:
    credential_id: str
    user_id: str
    public_key: bytes
    sign_count: int


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A signed-in device: the session a token names (`sid`)."""

    id: str
    user_id: str
    method: str
    agent: str
    created_at: int
    expires_at: int

    def wire(self) -> dict[str, str | int]:
        """The session as the HTTP API shows it to its player (nothing secret)."""
        return {
            "id": self.id,
            "method": self.method,
            "agent": self.agent,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
        }


class AccountRecords:
    """The account tables of a history database (see the module docstring)."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.engine = history.engine

    async def create(
        self,
        user_id: str,
        username: str,
        key: str,
        password: str | None,
        passkey: NewPasskey | None,
        now_ms: int,
    ) -> None:
        """Make `user_id` an account with this username and first credential, in one
        transaction; `AccountTaken` when the username's key or the user is taken."""
        try:
            async with self.engine.begin() as conn:
                taken = (
                    await conn.execute(
                        select(accounts.c.user_id, accounts.c.username_key).where(
                            (accounts.c.user_id == user_id) | (accounts.c.username_key == key)
                        )
                    )
                ).first()
                if taken is not None:
                    raise AccountTaken("user" if taken.user_id == user_id else "username")
                await conn.execute(
                    accounts.insert().values(
                        user_id=user_id,
                        username=username,
                        username_key=key,
                        password=password,
                        created_at=now_ms,
                    )
                )
                if passkey is not None:
                    await conn.execute(
                        passkeys.insert().values(
                            credential_id=passkey.credential_id,
                            user_id=user_id,
                            public_key=passkey.public_key,
                            sign_count=passkey.sign_count,
                            created_at=now_ms,
                        )
                    )
        except IntegrityError:
            # Another node made an account of this username or user meanwhile.
            raise AccountTaken("username") from None
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot create an account: {reason(exc)}") from exc

    async def _account(self, where: ColumnElement[bool]) -> Account | None:
        rows = await self.history.rows(
            select(
                accounts.c.user_id, accounts.c.username, accounts.c.password, accounts.c.owner
            ).where(where)
        )
        if not rows:
            return None
        row = rows[0]
        return Account(row.user_id, row.username, row.password, row.owner)

    async def by_username(self, key: str) -> Account | None:
        """The account of a username key, or None."""
        return await self._account(accounts.c.username_key == key)

    async def by_user(self, user_id: str) -> Account | None:
        """The account of a user id, or None (a guest)."""
        return await self._account(accounts.c.user_id == user_id)

    async def set_password(self, user_id: str, password: str) -> None:
        """Store a new hash of the account's password (a rehash at sign-in)."""
        await self._write(
            update(accounts).where(accounts.c.user_id == user_id).values(password=password),
            "store a password",
        )

    async def passkey(self, credential_id: str) -> StoredPasskey | None:
        """A stored passkey by its credential id, or None."""
        rows = await self.history.rows(
            select(passkeys).where(passkeys.c.credential_id == credential_id)
        )
        if not rows:
            return None
        row = rows[0]
        return StoredPasskey(row.credential_id, row.user_id, row.public_key, row.sign_count)

    async def passkeys_of(self, user_id: str) -> list[str]:
        """The credential ids of an account's passkeys."""
        rows = await self.history.rows(
            select(passkeys.c.credential_id).where(passkeys.c.user_id == user_id)
        )
        return [row.credential_id for row in rows]

    async def count_use(self, credential_id: str, sign_count: int) -> None:
        """A passkey signed in: its new signature counter."""
        await self._write(
            update(passkeys)
            .where(passkeys.c.credential_id == credential_id)
            .values(sign_count=sign_count),
            "count a passkey's use",
        )

    async def add_session(self, row: SessionRow) -> None:
        await self._write(
            sessions.insert().values(
                id=row.id,
                user_id=row.user_id,
                method=row.method,
                agent=row.agent,
                created_at=row.created_at,
                expires_at=row.expires_at,
            ),
            "add a session",
        )

    async def session_alive(self, sid: str, now_ms: int) -> SessionRow | None:
        """A session that exists and has not expired, else None."""
        rows = await self.history.rows(
            select(sessions).where(and_(sessions.c.id == sid, sessions.c.expires_at > now_ms))
        )
        if not rows:
            return None
        r = rows[0]
        return SessionRow(r.id, r.user_id, r.method, r.agent, r.created_at, r.expires_at)

    async def sessions_of(self, user_id: str, now_ms: int) -> list[SessionRow]:
        """The account's sessions that have not expired, newest first."""
        rows = await self.history.rows(
            select(sessions)
            .where(and_(sessions.c.user_id == user_id, sessions.c.expires_at > now_ms))
            .order_by(sessions.c.created_at.desc(), sessions.c.id)
            .limit(MAX_SESSIONS)
        )
        return [
            SessionRow(r.id, r.user_id, r.method, r.agent, r.created_at, r.expires_at) for r in rows
        ]

    async def end_sessions(self, user_id: str, only: str | None = None) -> list[str]:
        """End the account's sessions (or only the one of id `only`); their ids."""
        where = sessions.c.user_id == user_id
        if only is not None:
            where = and_(where, sessions.c.id == only)
        try:
            async with self.engine.begin() as conn:
                ids = [r.id for r in await conn.execute(select(sessions.c.id).where(where))]
                if ids:
                    await conn.execute(delete(sessions).where(sessions.c.id.in_(ids)))
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot end sessions: {reason(exc)}") from exc
        return ids

    async def _write(self, statement: object, what: str) -> None:
        try:
            async with self.engine.begin() as conn:
                await conn.execute(statement)  # type: ignore[call-overload]
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot {what}: {reason(exc)}") from exc
