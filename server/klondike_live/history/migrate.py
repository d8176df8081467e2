"""The history database's schema versions: where a database stands, and bringing it up.

    await upgrade(engine)             # to the newest revision this code knows (on start)
    where = await revision(engine)    # "0001_games", or None for an empty database
    await check(engine)               # SchemaTooNew when the database is ahead of the code

Migrations are Alembic revisions in `history/migrations/versions/`, run on a connection
of the node's own engine (SQLite or PostgreSQL). A database whose revision this code
does not know was migrated by a newer release: a node refuses to start on it
(`SchemaTooNew`, one line) rather than write rows an older schema does not expect.
Several nodes may start at once: on PostgreSQL the upgrade holds an advisory lock; on
SQLite (whose nodes share one machine) a lock file beside the database, taken before
the node's first connection (which turns on the write-ahead log of a new database).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from klondike_live.errors import LiveError

__all__ = ["MigrationError", "SchemaTooNew", "check", "head", "revision", "upgrade"]

log = logging.getLogger(__name__)
# Alembic says each step at INFO ("Context impl SQLiteImpl."): this module says what
# changed instead.
logging.getLogger("alembic").setLevel(logging.WARNING)

MIGRATIONS: Final = Path(__file__).resolve().parent / "migrations"

UPGRADE_LOCK: Final = 0x6B6C5F6869737401
"""The PostgreSQL advisory lock nodes take to migrate one at a time ("kl_hist" + 1)."""


class MigrationError(LiveError):
    """The history database could not be brought to this code's schema."""


class SchemaTooNew(MigrationError):
    """The history database was migrated by a newer release than this node."""


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    """The migrations (read once per process)."""
    return ScriptDirectory.from_config(_config())


def head() -> str:
    """The newest revision this code knows."""
    heads = _scripts().get_heads()
    if len(heads) != 1:  # pragma: no cover - a branched history is a packaging bug
        raise MigrationError(f"the migrations have {len(heads)} heads: {heads}")
    return heads[0]


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def _known(where: str | None) -> bool:
    if where is None:
        return True
    try:
        return _scripts().get_revision(where) is not None
    except CommandError:
        return False


def _too_new(where: str) -> SchemaTooNew:
    return SchemaTooNew(
        f"the history database is at schema revision {where!r}, newer than this release "
        f"knows (its newest is {head()!r}): run a newer klondike-live"
    )


async def revision(engine: AsyncEngine) -> str | None:
    """The database's revision (None: no schema yet)."""
    async with engine.connect() as conn:
        return await conn.run_sync(_current)


async def check(engine: AsyncEngine) -> str | None:
    """The database's revision; `SchemaTooNew` when this code does not know it."""
    where = await revision(engine)
    if where is not None and not _known(where):
        raise _too_new(where)
    return where


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK})
    where = _current(connection)
    if where == head():
        return
    if where is not None and not _known(where):
        raise _too_new(where)
    command.upgrade(_config(connection), "head")


async def upgrade(engine: AsyncEngine) -> str:
    """Bring the database to this code's newest revision (nothing to do when it is
    there already); its revision after. `SchemaTooNew` when it is ahead of the code."""
    # On SQLite the lock is held from the first connection on: a new database's first
    # connection turns on its write-ahead log, which two processes cannot do at once.
    async with _file_lock(engine):
        before = await check(engine)
        if before != head():
            try:
                async with engine.begin() as conn:
                    await conn.run_sync(_upgrade)
            except (SQLAlchemyError, CommandError) as exc:
                raise MigrationError(f"cannot migrate the history database: {exc}") from exc
        where = await check(engine)
    if where != before:
        log.info("history database migrated from %s to %s", before or "nothing", where)
    assert where is not None
    return where


@contextlib.asynccontextmanager
async def _file_lock(engine: AsyncEngine) -> AsyncIterator[None]:
    """For a SQLite database, an exclusive lock on `<database>.lock` (waited for in a
    thread); nothing for another database."""
    path = engine.url.database
    if engine.dialect.name != "sqlite" or not path:
        yield
        return
    with Path(f"{path}.lock").open("a") as lock:
        await asyncio.to_thread(fcntl.flock, lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
