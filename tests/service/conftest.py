"""Service tests: the live service driven through its API on a real Valkey, no sockets.

The fixtures (`service_settings`, `cluster`, `pair`) are in service_fixtures.py, which mypy
checks (it cannot check a second module named `conftest`). The leak auditor of the
server tests (tests/server/auditor.py) is imported from its folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

SERVER_TESTS = str(Path(__file__).resolve().parent.parent / "server")
if SERVER_TESTS not in sys.path:
    sys.path.append(SERVER_TESTS)

from service_fixtures import cluster, pair, service_settings  # noqa: E402 (needs the path)

__all__ = ["cluster", "pair", "service_settings"]
