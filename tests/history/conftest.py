"""History database tests: each runs on SQLite and on PostgreSQL (`history_url`).

The fixtures are in history_fixtures.py, which mypy checks (it cannot check a second
module named `conftest`).
"""

from __future__ import annotations

from history_fixtures import history_url, postgres_server

__all__ = ["history_url", "postgres_server"]
