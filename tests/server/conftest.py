"""Server tests: every test client's race frames go through the leak auditor.

The fixtures (`leak_audit`, `make_settings`, `clock`, `daily_node`) are in
server_fixtures.py (type-checked there: mypy cannot check a second module named
`conftest`, so this file only imports them for pytest, which finds them here).
"""

import pytest

# Failed asserts in the fixtures explain themselves as they would in this file.
pytest.register_assert_rewrite("server_fixtures")

from server_fixtures import (  # noqa: E402, F401
    clock,
    daily_node,
    leak_audit,
    make_settings,
)
