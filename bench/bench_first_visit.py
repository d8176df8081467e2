"""First and repeat visit over a throttled connection, against the same page served plain.

Headless Chromium (`/usr/bin/chromium`, Playwright) gets a slow mobile connection from
the DevTools protocol (`Network.emulateNetworkConditions`: 1.6 Mbps down, 750 kbps up,
150 ms latency per request, the "Slow 4G" of Lighthouse) and plays a visitor.

**Playable board**: the player's own board (`[data-testid=own-board]`) shows its 28
tableau cards and its stock (drawn as a short stack). Times are taken in the page
(`performance.now()`, from the start of the navigation) by a MutationObserver. After
each visit the benchmark clicks the stock and waits until the board counts the move
(`data-moves`), so a board that would not take a click fails the run.

Three visits per round and node, in one browser context:

- **first**: a fresh context (empty cache) opens `/` and clicks "Play solo" the moment it
  is there (the page's own script clicks it: no reaction time, no automation delay);
- **repeat**: a new tab (warm cache) does the same: another new game;
- **return**: a new tab (warm cache) opens the first game's address (`#/room/<id>`), as
  a player coming back to the game: the board shows with no click.

"home page" is when "Play solo" is there (every module loaded and run): the static
files' part. From there to the board is the game's start over the websocket (connect,
hello, create, join, and the solo game's start, which the client waits for), which the
static files do not touch.

Each round measures two nodes in alternating order: `served`, the gateway as it is
(versioned URLs cached as immutable, ETags, gzip, modulepreload), and `plain`, the same
server and page with the static files served as before (`first_visit_server.py --plain`:
no-cache without validators, no compression, no versioned URLs, no preload). Medians over
the rounds, the ratio served/plain, the requests and bytes of each visit, and the
targets: a playable board in under 2 s on a first visit, under 0.5 s on a repeat one.

    .venv/bin/python bench/bench_first_visit.py [--rounds 5]
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Browser, BrowserContext, sync_playwright

from harness.processes import BENCH_DIR, Harness
from harness.report import parser

THROTTLE = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1_600_000 / 8,
    "uploadThroughput": 750_000 / 8,
}
FIRST_TARGET_MS = 2000.0
REPEAT_TARGET_MS = 500.0
QUICK_DAILY = {"KLONDIKE_DAILY_BUDGET_NODES": "20000"}  # the home page's daily deals

# Marks, in ms since the navigation started: the home page's "Play solo" is there (and is
# clicked at once), the board first shows its tableau and stock.
MARKS = """
window.__marks = {};
new MutationObserver(() => {
  const start = document.querySelector('[data-testid=start-solo]');
  if (start && window.__marks.page === undefined) {
    window.__marks.page = performance.now();
    start.click();
  }
  const own = document.querySelector('[data-testid=own-board]');
  if (
    own && window.__marks.board === undefined &&
    own.querySelectorAll('.card[data-place^="t"]').length === 28 &&
    own.querySelector('.card[data-place="stock"]')
  ) {
    window.__marks.board = performance.now();
  }
}).observe(document, { subtree: true, childList: true });
"""
OWN = "[data-testid=own-board]"


@dataclass
class Visit:
    page_ms: float | None
    board_ms: float
    requests: int
    kilobytes: float
    address: str


def visit(context: BrowserContext, url: str) -> Visit:
    """One visit in a new tab, to a playable board that takes a click on the stock."""
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    requests = [0]
    received = [0.0]

    def sent(_: Any) -> None:
        requests[0] += 1

    def finished(event: Any) -> None:
        received[0] += float(event.get("encodedDataLength", 0))

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.loadingFinished", finished)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", THROTTLE)
    page.goto(url, wait_until="commit")
    page.wait_for_function("window.__marks.board !== undefined", timeout=60_000)
    marks = page.evaluate("window.__marks")
    moves = int(page.locator(OWN).get_attribute("data-moves") or 0)
    page.locator(f'{OWN} .card[data-place="stock"]').last.click(timeout=30_000)
    page.wait_for_function(
        f"document.querySelector('{OWN}')?.dataset.moves === '{moves + 1}'", timeout=30_000
    )
    address = page.url
    page.close()
    page_ms = marks.get("page")
    return Visit(
        None if page_ms is None else float(page_ms),
        float(marks["board"]),
        requests[0],
        received[0] / 1024,
        address,
    )


VISITS = ("first", "repeat", "return")


def one_round(browser: Browser, url: str) -> list[Visit]:
    """A first visit, a repeat visit and a return to the first game, in one context."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.add_init_script("localStorage.setItem('klondike.name', 'Bench');")
    context.add_init_script(MARKS)
    try:
        first = visit(context, url)
        return [first, visit(context, url), visit(context, first.address)]
    finally:
        context.close()


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> int:
    options = parser(__doc__)
    options.add_argument("--rounds", type=int, default=5)
    args = options.parse_args()
    results: dict[str, list[list[Visit]]] = {"plain": [], "served": []}
    with Harness() as harness:
        script = [sys.executable, str(BENCH_DIR / "first_visit_server.py")]
        nodes = {  # each with its own embedded Valkey
            "plain": harness.node(None, "plain", QUICK_DAILY, command=[*script, "--plain"]),
            "served": harness.node(None, "served", QUICK_DAILY, command=script),
        }
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
            try:
                for number in range(args.rounds):
                    order = ("plain", "served") if number % 2 == 0 else ("served", "plain")
                    for label in order:
                        results[label].append(one_round(browser, nodes[label].url))
                    print(f"round {number + 1}/{args.rounds} done", file=sys.stderr)
            finally:
                browser.close()

    print(
        f"{args.rounds} rounds, 1.6 Mbps down / 750 kbps up / 150 ms latency; "
        "medians (min-max) in ms from the start of the navigation"
    )
    print(
        f"{'visit':<7} {'node':<7} {'home page':>10} {'playable board':>20}"
        f" {'requests':>9} {'KiB':>7}"
    )
    medians: dict[tuple[str, str], float] = {}
    for index, which in enumerate(VISITS):
        for label in ("plain", "served"):
            visits = [run[index] for run in results[label]]
            boards = [v.board_ms for v in visits]
            pages = [v.page_ms for v in visits if v.page_ms is not None]
            medians[which, label] = median(boards)
            home = f"{median(pages):>10.0f}" if pages else f"{'-':>10}"
            board = f"{median(boards):.0f} ({min(boards):.0f}-{max(boards):.0f})"
            print(
                f"{which:<7} {label:<7} {home} {board:>20}"
                f" {median([float(v.requests) for v in visits]):>9.0f}"
                f" {median([v.kilobytes for v in visits]):>7.1f}"
            )
    failed = False
    for which in VISITS:
        target = FIRST_TARGET_MS if which == "first" else REPEAT_TARGET_MS
        served, plain = medians[which, "served"], medians[which, "plain"]
        failed |= served >= target
        print(
            f"{which}: served/plain = {served / plain:.2f}x ({served:.0f} vs {plain:.0f} ms); "
            f"target < {target:.0f} ms: {'met' if served < target else 'MISSED'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
