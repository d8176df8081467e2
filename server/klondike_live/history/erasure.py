"""Erasing a deleted account's user id and name from what the history database keeps,
and from what reaches it later.

    marker = deleted_id(user)                  # "deleted.<20 hex>": the seat it keeps
    blob = erased_blob(results, user)          # stored results with `user` erased
    state = erased_tournament(state, user)     # a tournament with `user` erased
    async with history.engine.begin() as conn:
        await hold(conn, exclusive=False)      # every writer of what came from Valkey
        gone = await erased_among(conn, users) # those of `users` that were erased

An erased player's user id becomes `deleted_id(user)` and its name the empty text
`DELETED_NAME` (no display name is empty: the client shows it as "deleted player").
`erased_players` keeps each erased player's marker, never its user id
(`history.players.PlayerRecords.erase` writes it in its transaction), so that whatever
reaches the database after the deletion from Valkey (a game the outbox held, a closed
day's leaderboard, a tournament that ends) is erased the same way, in the transaction
that writes it, and no statistics are counted for it.

No window: on PostgreSQL, erasing holds an exclusive transaction-level advisory lock
(`ERASURE_LOCK`) and every such writer a shared one, so a writer either commits before
the erasure starts (which then finds its rows) or sees the erased player. On SQLite a
transaction holds the database's one write lock from its first write: every such writer
writes before it reads `erased_players`, and so does the erasure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Final

import msgpack
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from klondike_live.history.schema import erased_players
from klondike_live.race.tournament import TournamentState

__all__ = [
    "DELETED_NAME",
    "DELETED_PREFIX",
    "ERASURE_LOCK",
    "deleted_id",
    "erased_among",
    "erased_blob",
    "erased_tournament",
    "erased_value",
    "hold",
    "is_deleted",
]

DELETED_NAME: Final = ""
"""The name an erased player has in others' games (no display name is empty)."""
DELETED_PREFIX: Final = "deleted."
"""How an erased player's user id starts (no user id `auth` issues does)."""

ERASURE_LOCK: Final = 0x6B6C5F6572617365
"""The PostgreSQL advisory lock erasing takes exclusively, and writers of what came from
Valkey shared ("kl_erase")."""

_CHUNK: Final = 1000
"""User ids one query of `erased_among` asks about (a day may have many players)."""


def deleted_id(user: str) -> str:
    """The stable id an erased player has in the games it played."""
    return DELETED_PREFIX + hashlib.sha256(user.encode()).hexdigest()[:20]


def is_deleted(user: str) -> bool:
    return user.startswith(DELETED_PREFIX)


def erased_value(value: Any, user: str, marker: str) -> Any:
    """`value` with `user` replaced by `marker` wherever it appears as a text, a key
    or a mapping's `user`, and that mapping's `name` (and `organizer_name` beside an
    `organizer`) by `DELETED_NAME`."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        mine = any(value.get(k) == user for k in ("user", "organizer"))
        for key, item in value.items():
            new_key = marker if key == user else key
            if mine and key in ("name", "organizer_name"):
                out[new_key] = DELETED_NAME
            else:
                out[new_key] = erased_value(item, user, marker)
        return out
    if isinstance(value, list | tuple):
        return [erased_value(item, user, marker) for item in value]
    if value == user:
        return marker
    return value


def erased_blob(blob: bytes, user: str) -> bytes:
    """A game's stored results (msgpack) with `user` erased."""
    data = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    packed: bytes = msgpack.packb(erased_value(data, user, deleted_id(user)), use_bin_type=True)
    return packed


def erased_tournament(state: TournamentState, user: str) -> TournamentState:
    """A tournament with `user` erased (`TournamentState.erased`)."""
    return state.erased(user, deleted_id(user), DELETED_NAME)


async def hold(conn: AsyncConnection, *, exclusive: bool) -> None:
    """On PostgreSQL, the erasure lock for this transaction (see the module docstring):
    `exclusive` for erasing, shared for a writer of what came from Valkey."""
    if conn.dialect.name != "postgresql":
        return
    function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    await conn.execute(text(f"SELECT {function}(:key)"), {"key": ERASURE_LOCK})


async def erased_among(conn: AsyncConnection, users: Iterable[str]) -> set[str]:
    """Those of `users` that were erased (read in the caller's transaction, after its
    first write: see the module docstring)."""
    by_marker = {deleted_id(u): u for u in users if not is_deleted(u)}
    wanted = sorted(by_marker)
    found: set[str] = set()
    for start in range(0, len(wanted), _CHUNK):
        rows = await conn.execute(
            select(erased_players.c.marker).where(
                erased_players.c.marker.in_(wanted[start : start + _CHUNK])
            )
        )
        found.update(by_marker[str(row.marker)] for row in rows.all())
    return found
