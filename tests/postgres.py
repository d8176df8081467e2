"""A real PostgreSQL server for the tests: Debian's `postgresql` binaries, a cluster in a
temp dir on a free port, trust authentication on 127.0.0.1 only.

    with started_postgres() as url:        # postgresql://postgres@127.0.0.1:PORT/postgres
        db = fresh_database(url)           # a new empty database on it, its URL
        stop_postgres(url)                 # a restart: stopped (clients cut off) ...
        start_postgres(url)                # ... and started again, same port and data

`KLONDIKE_TEST_POSTGRES_URL` names a server to use instead (its role must be allowed to
create databases; it cannot be stopped and started). PostgreSQL will not run as root:
as root the cluster belongs to the `postgres` user the Debian package made, and its
commands run as that user.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg

from valkeys import free_port

__all__ = [
    "fresh_database",
    "postgres_bin",
    "start_postgres",
    "started_postgres",
    "stop_postgres",
]

_DATA_DIRS: dict[str, Path] = {}
"""The data directory of each server `started_postgres` runs, by URL."""


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=_version)
    return found[-1].parent if found else None


def _version(path: Path) -> int:
    part = path.parent.parent.name
    return int(part) if part.isdigit() else 0


def _as_owner(args: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


def _ctl(data: Path, *args: str) -> list[str]:
    bindir = postgres_bin()
    assert bindir is not None
    log = str(data.parent / "log")
    return _as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-l", log, *args])


@contextlib.contextmanager
def started_postgres() -> Iterator[str]:
    """A PostgreSQL server of its own (or the one `KLONDIKE_TEST_POSTGRES_URL` names)."""
    given = os.environ.get("KLONDIKE_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed: apt-get install -y postgresql")
    root = Path(tempfile.mkdtemp(prefix="klondike-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
    subprocess.run(_as_owner([*initdb, "-E", "UTF8"]), check=True, capture_output=True)
    port = free_port()
    # The options live in the data directory, so a restart keeps them. Durability is
    # not what these tests are about: no fsync.
    with (data / "postgresql.auto.conf").open("a") as conf:
        conf.write(
            f"listen_addresses = '127.0.0.1'\nport = {port}\n"
            f"unix_socket_directories = '{root}'\nfsync = off\nsynchronous_commit = off\n"
            "full_page_writes = off\nmax_connections = 200\n"
        )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    _DATA_DIRS[url] = data
    subprocess.run(_ctl(data, "-w", "-t", "60", "start"), check=True, capture_output=True)
    try:
        yield url
    finally:
        subprocess.run(_ctl(data, "-m", "immediate", "stop"), check=False, capture_output=True)
        del _DATA_DIRS[url]
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server at `server_url`; its URL. Callable from
    inside a running event loop (it runs its own, in a thread, for an instant)."""
    name = f"t_{secrets.token_hex(6)}"

    async def create() -> None:
        conn = await asyncpg.connect(server_url)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, create()).result()
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def stop_postgres(server_url: str) -> None:
    """Stop a server `started_postgres` started (fast shutdown: clients are cut off)."""
    data = _DATA_DIRS[server_url]
    subprocess.run(_ctl(data, "-m", "fast", "-w", "stop"), check=True, capture_output=True)


def start_postgres(server_url: str) -> None:
    """Start again a server `stop_postgres` stopped, on the same port and data."""
    data = _DATA_DIRS[server_url]
    subprocess.run(_ctl(data, "-w", "-t", "60", "start"), check=True, capture_output=True)
