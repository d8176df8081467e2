"""Browser tests: real headless Chromium against a real `klondike-live serve`.

The fixtures are in browser_fixtures.py (type-checked there: mypy cannot check a second
module named `conftest`, so this file only imports them for pytest, which finds them here).
"""

import pytest

# Failed asserts in the fixtures explain themselves as they would in this file.
pytest.register_assert_rewrite("browser_fixtures")

from browser_fixtures import (  # noqa: E402, F401
    browser,
    pages,
    playwright,
    pytest_runtest_makereport,
    screenshot,
    screenshot_dir,
    server,
)
