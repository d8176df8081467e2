"""Fixtures of the history database tests.

postgres_server (session)
    The URL of a PostgreSQL server of the session (`tests/postgres.py`: Debian's
    binaries in a temp dir, or `KLONDIKE_TEST_POSTGRES_URL`), started the first time a
    test asks for it.

history_url (per test, parametrized "sqlite" and "postgresql")
    An empty history database: a SQLite file in the test's temp dir, or a fresh
    database on `postgres_server`. Nothing is created in it (no schema).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from postgres import fresh_database, started_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server for the session."""
    with started_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty history database on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.sqlite3'}"
    server: str = request.getfixturevalue("postgres_server")
    return asyncio.run(fresh_database(server))
