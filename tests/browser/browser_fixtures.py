"""Fixtures of the browser tests: real headless Chromium against a real `klondike-live serve`.

The server runs as its own process on a free port, on the test Valkey; Chromium is
Debian's `/usr/bin/chromium` (`.ci/run` installs it), driven by Playwright. Pages fail
their test on any uncaught script error. Screenshots go to a temporary directory, or to
docs/screenshots/ with `KLONDIKE_SCREENSHOTS=docs` (`make screenshots`).

pytest finds these fixtures in tests/browser/conftest.py, which imports them from here:
mypy checks this module, while it cannot check a second module named `conftest` beside
tests/conftest.py.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from live_server import ServerProcess
from pages import EXPECT_MS, Pages, Screenshot, settle
from waits import scaled

CHROMIUM = os.environ.get("KLONDIKE_CHROMIUM", "/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
# `make screenshots` refreshes the committed ones; other runs keep theirs out of the tree.
SCREENSHOTS_TO_DOCS = os.environ.get("KLONDIKE_SCREENSHOTS") == "docs"


SERVER_OUTPUT = pytest.StashKey[tuple[ServerProcess, int]]()
"""The server a test's pages talk to, and its output line when the test started."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed browser test's report carries the server's output of that test: a race
    that never ended shows the error that ended its check."""
    report = yield
    started = item.stash.get(SERVER_OUTPUT, None)
    if report.failed and started is not None:
        server, line = started
        report.sections.append(("server output", server.output_since(line) or "(none)"))
    return report


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server node for the module's tests."""
    process = ServerProcess(valkey_url, tmp_path_factory.mktemp("serve"))
    yield process
    process.stop()


# Module scope: sync Playwright runs an event loop of its own in this thread while it is
# started, which pytest-asyncio's tests in other directories must not find running.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    # An `expect` that names no timeout waits Playwright's 5 s, on the tests' clock.
    expect.set_options(timeout=scaled(EXPECT_MS))
    with sync_playwright() as instance:
        yield instance


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
    yield browser
    browser.close()


@pytest.fixture
def pages(
    browser: Browser, server: ServerProcess, request: pytest.FixtureRequest
) -> Iterator[Pages]:
    """Browser pages on the test server; the test fails on any uncaught page error, and
    its failure report shows what the server logged meanwhile."""
    request.node.stash[SERVER_OUTPUT] = (server, len(server.output))
    opened = Pages(browser, server.url)
    yield opened
    opened.close()
    assert not opened.errors, f"script errors: {opened.errors}"


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/screenshots/ under `make screenshots`, a temporary directory otherwise."""
    if SCREENSHOTS_TO_DOCS:
        return ROOT / "docs" / "screenshots"
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def screenshot(screenshot_dir: Path) -> Screenshot:
    """Save a screenshot as <screenshot_dir>/<name>.jpg."""

    def save(page: Page, name: str, *, full_page: bool = False) -> None:
        save_screenshot(screenshot_dir, page, name, full_page=full_page)

    return save


def save_screenshot(directory: Path, page: Page, name: str, *, full_page: bool = False) -> None:
    """Save a screenshot of `page` as <directory>/<name>.jpg (for a module's fixture,
    which cannot use the per-test `screenshot`)."""
    directory.mkdir(parents=True, exist_ok=True)
    settle(page)  # an endless pulse (a hint) moves nothing
    path = directory / f"{name}.jpg"
    page.screenshot(path=str(path), full_page=full_page, type="jpeg", quality=82)
    assert path.stat().st_size > 10_000, f"{name}: an empty-looking screenshot"
