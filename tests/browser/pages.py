"""Driving the browser client: pages per user that record the cards they draw, and a
board driver that turns a move token into a drag, clicks, keys or a phone's taps.

The driver knows the true position from the engine (tests follow the game on their own
`Board`), so it can find the card elements a move picks up and where they go.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, Protocol

from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    Position,
    ViewportSize,
    expect,
)

from klondike_live.engine import Board, Move
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T
from klondike_live.engine.view import racer_view

from waits import scaled

Mode = Literal["drag", "click", "keys", "tap"]
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
OWN = "[data-testid=own-board]"
ACTION_MS = 30_000
"""Playwright's default wait for an action or a navigation (scaled in every context)."""
EXPECT_MS = 5_000
"""Playwright's default wait of an `expect` (scaled for the whole run)."""
TOP_STRIP: Position = {"x": 20, "y": 8}


class Screenshot(Protocol):
    """The `screenshot` fixture: saves a page as <screenshot dir>/<name>.jpg."""

    def __call__(self, page: Page, name: str, *, full_page: bool = False) -> None: ...


def run_size(board: Board, move: Move) -> int:
    """The number of cards a tableau-to-tableau move carries."""
    if move.size:
        return move.size
    view = racer_view(board)
    pile, down = view.tableau[move.src], view.face_down[move.src]
    target = view.tableau[move.dst]
    for size in range(len(pile) - down, 0, -1):
        first = pile[-size]
        if not target:
            if first % 13 == 12:
                return size
            continue
        top = target[-1]
        red = first // 13 in (1, 2)
        if first % 13 == top % 13 - 1 and red != (top // 13 in (1, 2)):
            return size
    raise AssertionError(f"no run of {move} fits")


class BoardDriver:
    """Moves on the player's own board through pointer and keyboard input."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def card(self, card: int) -> Locator:
        return self.page.locator(f'{OWN} .card[data-card="{card}"]')

    def slot(self, place: str) -> Locator:
        return self.page.locator(f'{OWN} .slot[data-place="{place}"]')

    def stock(self) -> Locator:
        cards = self.page.locator(f'{OWN} .card[data-place="stock"]')
        return cards.last if cards.count() else self.slot("stock")

    def target(self, board: Board, move: Move) -> Locator:
        """Where a move's cards go: the destination's top card, or its empty slot."""
        if move.kind in (W2F, T2F):
            return self.slot(f"f{self.moving_card(board, move) // 13}")
        pile = board.tableau[move.dst]
        return self.card(int(pile[-1])) if pile else self.slot(f"t{move.dst}")

    def moving_card(self, board: Board, move: Move) -> int:
        """The card a move picks up (the first of a run)."""
        if move.kind in (W2T, W2F):
            return int(board.waste[-1])
        if move.kind == T2F:
            return int(board.tableau[move.src][-1])
        if move.kind == T2T:
            return int(board.tableau[move.src][-run_size(board, move)])
        raise AssertionError(f"{move} picks up no card")

    def play(self, board: Board, token: str, mode: Mode) -> None:
        """Make `token` through the UI in the given mode, then follow it on `board`."""
        move = Move.parse(token)
        moves_before = board_moves(self.page)
        settle(self.page)
        if move.kind in (DRAW, RECYCLE):
            if mode == "keys":
                self.page.keyboard.press("d")
            elif mode == "tap":
                self.tap(self.stock())
            else:
                self.stock().click()
        elif move.kind == F2T:
            raise AssertionError("foundation-to-tableau moves are not used here")
        elif mode == "drag":
            self.drag(self.card(self.moving_card(board, move)), self.target(board, move))
        elif mode == "tap":
            # A phone has no double click: the card, then where it goes (a foundation too).
            self.tap(self.card(self.moving_card(board, move)))
            self.tap(self.target(board, move))
        elif mode == "click":
            # Cards of a column overlap: press on the strip of the card that shows.
            source = self.card(self.moving_card(board, move))
            if move.kind in (W2F, T2F):
                source.dblclick(position=TOP_STRIP)
            else:
                source.click(position=TOP_STRIP)
                self.target(board, move).click(position=TOP_STRIP)
        else:
            self.keys(board, move)
        board.play(move)
        own = self.page.locator(OWN)
        # A board that is won in all but name may be finished by the server at once.
        moves = str(moves_before + 1) if not board.is_trivially_won() else re.compile(r"\d+")
        try:
            expect(own).to_have_attribute("data-pending", "0")
            expect(own).to_have_attribute("data-moves", moves)
        except AssertionError as exc:
            message = self.page.locator("[data-testid=message]").inner_text()
            raise AssertionError(
                f"{token} by {mode} after {moves_before} moves (page says {message!r}): {exc}"
            ) from None

    def keys(self, board: Board, move: Move) -> None:
        keyboard = self.page.keyboard
        if move.kind in (W2T, W2F):
            keyboard.press("w")
        else:
            for _ in range(run_size(board, move) if move.kind == T2T else 1):
                keyboard.press(str(move.src + 1))
        keyboard.press("f" if move.kind in (W2F, T2F) else str(move.dst + 1))

    def tap(self, target: Locator, position: Position = TOP_STRIP) -> None:
        """A finger's tap on the strip of `target` that shows (a touch screen, at once:
        two taps on one card make a double tap only when they come that fast)."""
        box = target.bounding_box()
        size = self.page.viewport_size
        assert box is not None and size is not None
        if box["y"] < 0 or box["y"] + position["y"] > size["height"]:
            target.scroll_into_view_if_needed()
            box = target.bounding_box()
            assert box is not None
        self.page.touchscreen.tap(box["x"] + position["x"], box["y"] + position["y"])

    def touch_drag(self, source: Locator, target: Locator) -> None:
        """A finger's drag from `source` onto `target` (touch events, as a phone sends)."""
        start = source.bounding_box()
        end = target.bounding_box()
        assert start is not None and end is not None
        x, y = start["x"] + start["width"] / 2, start["y"] + min(12.0, start["height"] / 2)
        x2, y2 = end["x"] + end["width"] / 2, end["y"] + min(20.0, end["height"] / 2)
        cdp = self.page.context.new_cdp_session(self.page)
        try:
            cdp.send(
                "Input.dispatchTouchEvent",
                {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]},
            )
            for k in range(1, 9):
                point = {"x": x + (x2 - x) * k / 8, "y": y + (y2 - y) * k / 8}
                cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
            cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        finally:
            cdp.detach()

    def drag(self, source: Locator, target: Locator) -> None:
        mouse = self.page.mouse
        start = source.bounding_box()
        end = target.bounding_box()
        assert start is not None and end is not None
        x, y = start["x"] + start["width"] / 2, start["y"] + min(12.0, start["height"] / 2)
        mouse.move(x, y)
        mouse.down()
        mouse.move(x + 8, y + 8, steps=2)
        mouse.move(end["x"] + end["width"] / 2, end["y"] + min(20.0, end["height"] / 2), steps=6)
        mouse.up()


def settle(page: Page) -> None:
    """Wait until no card is moving (transitions and animations have ended; a hint's
    endless pulse does not move anything)."""
    page.wait_for_function(
        "document.getAnimations()"
        ".filter((a) => a.effect?.getTiming().iterations !== Infinity).length === 0"
    )


def board_moves(page: Page) -> int:
    value = page.locator(OWN).get_attribute("data-moves")
    return int(value or 0)


def room_of(page: Page) -> str:
    """The room id in a room page's address."""
    return page.url.rsplit("/", 1)[-1]


def ready_and_start(host: Page, guest: Page, guest_name: str) -> None:
    """A race lobby's host and its guest (seen seated as `guest_name`) both say they are
    ready and the host starts; returns once both draw their own board's cards."""
    expect(host.locator("[data-testid=seats]")).to_contain_text(guest_name)
    host.click("[data-testid=ready]")
    guest.click("[data-testid=ready]")
    expect(host.locator("[data-testid=start]")).to_be_enabled()
    host.click("[data-testid=start]")
    for racer in (host, guest):
        expect(racer.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(10_000))


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
new MutationObserver(record).observe(document, {
  subtree: true, childList: true, attributes: true, attributeFilter: ['data-card'],
});
"""


class Pages:
    """Opens browser contexts (one per user) and checks them for script errors."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.contexts: list[BrowserContext] = []
        self.errors: list[str] = []

    def open(
        self,
        path: str = "",
        *,
        name: str = "",
        viewport: ViewportSize | None = None,
        locale: str = "en-US",
    ) -> Page:
        """A page in a new context: a browser whose language is `locale` (English unless
        a test asks for another: the tests read English text)."""
        mobile = viewport == PHONE
        context = self.browser.new_context(
            locale=locale,
            viewport=viewport or DESKTOP,
            base_url=self.base_url,
            has_touch=mobile,
            is_mobile=mobile,
            device_scale_factor=2 if mobile else 1,
        )
        # Playwright's own defaults (30 s for an action or a navigation), on the tests' clock.
        context.set_default_timeout(scaled(ACTION_MS))
        context.set_default_navigation_timeout(scaled(ACTION_MS))
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


AXE = (
    Path(__file__).resolve().parents[2] / "client_web" / "node_modules" / "axe-core" / "axe.min.js"
)


def assert_accessible(page: Page) -> None:
    """axe-core finds no serious or critical WCAG 2 A/AA problem on the page."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    results = page.evaluate(
        "axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']})"
    )
    problems = [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not problems, "\n".join(problems)
