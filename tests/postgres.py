"""A real PostgreSQL server for the tests: Debian's `postgresql` binaries, a cluster in a
temp dir on a free port, trust authentication on 127.0.0.1 only.

    with started_postgres() as url:        # postgresql://postgres@127.0.0.1:PORT/postgres
        db = await fresh_database(url)     # a new empty database on it, its URL

`KLONDIKE_TEST_POSTGRES_URL` names a server to use instead (its role must be allowed to
create databases). PostgreSQL will not run as root: as root the cluster belongs to the
`postgres` user the Debian package made, and its commands run as that user.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from valkeys import free_port

__all__ = ["fresh_database", "postgres_bin", "started_postgres"]


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
    port = free_port()
    subprocess.run(
        _as_owner(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
            ]
        ),
        check=True,
        capture_output=True,
    )
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    subprocess.run(
        _as_owner(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


async def fresh_database(server_url: str) -> str:
    """A new, empty database on the server at `server_url`; its URL."""
    import asyncpg  # the driver the history database uses

    name = f"t_{secrets.token_hex(6)}"
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return server_url.rsplit("/", 1)[0] + f"/{name}"
