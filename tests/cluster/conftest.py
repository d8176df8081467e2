"""Cluster tests: a real Valkey Cluster of 3 masters with one replica each.

The fixtures (`cluster`, `make_cluster_settings`) are in cluster_fixtures.py
(type-checked there: mypy cannot check a second module named `conftest`, so this file
only imports them for pytest, which finds them here). The leak auditor of the server
tests (tests/server/auditor.py) is imported from its folder.
"""

import sys
from pathlib import Path

import pytest

SERVER_TESTS = str(Path(__file__).resolve().parent.parent / "server")
if SERVER_TESTS not in sys.path:
    sys.path.append(SERVER_TESTS)

# Failed asserts in the fixtures explain themselves as they would in this file.
pytest.register_assert_rewrite("cluster_fixtures")

from cluster_fixtures import cluster, make_cluster_settings  # noqa: E402, F401
