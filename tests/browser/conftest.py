"""Browser tests: real headless Chromium against a real `klondike-live serve`.

The server runs as its own process on a free port, on the test Valkey; Chromium is
Debian's `/usr/bin/chromium` (`.ci/run` installs it), driven by Playwright. Pages fail
their test on any uncaught script error. Screenshots go to docs/screenshots/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

CHROMIUM = os.environ.get("KLONDIKE_CHROMIUM", "/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
READY_LINE = re.compile(r"Klondike Live on (http://\S+/)")


class ServerProcess:
    """`klondike-live serve` on a free port; its output is kept for failure reports."""

    def __init__(self, valkey_url: str, data_dir: Path) -> None:
        command = [
            str(Path(sys.executable).with_name("klondike-live")),
            "serve",
            "--port",
            "0",
            "--redis",
            valkey_url,
            "--data-dir",
            str(data_dir),
        ]
        self.output: list[str] = []
        self.url = ""
        self.ready = threading.Event()
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(30) or not self.url:
            self.stop()
            raise RuntimeError("server did not start:\n" + "".join(self.output))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            match = READY_LINE.search(line)
            if match and not self.url:
                self.url = match.group(1)
                self.ready.set()
        self.ready.set()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server node for the module's tests."""
    process = ServerProcess(valkey_url, tmp_path_factory.mktemp("serve"))
    yield process
    process.stop()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    with sync_playwright() as instance:
        yield instance


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
    yield browser
    browser.close()


# Records every card identity a page ever draws (data-card of face-up cards), with the
# board it was drawn on, so tests can check what a viewer was shown over time.
RECORD_CARDS = """
window.__cards = {};
const record = () => {
  for (const node of document.querySelectorAll('.card[data-card]:not([data-card=""])')) {
    const board = node.closest('[data-testid]')?.dataset.testid ?? '';
    (window.__cards[board] ??= new Set()).add(Number(node.dataset.card));
  }
};
new MutationObserver(record).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-card']});
"""


class Pages:
    """Opens browser contexts (one per user) and checks them for script errors."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.contexts: list[BrowserContext] = []
        self.errors: list[str] = []

    def open(
        self, path: str = "", *, name: str = "", viewport: dict[str, int] | None = None
    ) -> Page:
        mobile = viewport == PHONE
        context = self.browser.new_context(
            viewport=viewport or DESKTOP,
            base_url=self.base_url,
            has_touch=mobile,
            is_mobile=mobile,
            device_scale_factor=2 if mobile else 1,
        )
        if name:
            context.add_init_script(f"localStorage.setItem('klondike.name', {name!r});")
        context.add_init_script(RECORD_CARDS)
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: self.errors.append(f"{name or 'page'}: {error}"))
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(path or "/")
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def pages(browser: Browser, server: ServerProcess) -> Iterator[Pages]:
    """Browser pages on the test server; the test fails on any uncaught page error."""
    opened = Pages(browser, server.url)
    yield opened
    opened.close()
    assert not opened.errors, f"script errors: {opened.errors}"


def cards_drawn(page: Page, board: str) -> set[int]:
    """Every card identity the page has drawn on a board (data-testid) so far."""
    values: list[int] = page.evaluate(f"[...(window.__cards[{board!r}] ?? [])]")
    return set(values)


def all_cards_drawn(page: Page, prefix: str = "") -> set[int]:
    """Every card identity the page has drawn on boards whose test id starts with prefix."""
    values: list[int] = page.evaluate(
        "(p) => Object.entries(window.__cards).filter(([k]) => k.startsWith(p))"
        ".flatMap(([, v]) => [...v])",
        prefix,
    )
    return set(values)


@pytest.fixture
def screenshot() -> Callable[[Page, str], None]:
    """Save a screenshot as docs/screenshots/<name>.png."""

    def save(page: Page, name: str, **options: Any) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(250)  # let card transitions settle
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), **options)

    return save
