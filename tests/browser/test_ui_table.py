"""The game table's feel in the browser: hints that show, every click on the stock
counted, the win celebration, one-click moves, auto-completion and the f2t variant."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect
from redis import Redis

from klondike_live import keys
from klondike_live.engine import Board, Move
from klondike_live.engine.moves import DRAW, RECYCLE, T2T
from klondike_live.race.room import RoomState

from pages import OWN, BoardDriver, Pages, room_of, run_size

HINTED = """() => {
  const node = document.querySelector('[data-testid=own-board] .card.hinted');
  if (!node) return null;
  const style = getComputedStyle(node);
  return {
    card: node.dataset.card ?? '',
    flip: node.classList.contains('flip'),
    animation: style.animationName,
    outline: style.outlineStyle,
    width: parseFloat(style.outlineWidth),
    color: style.outlineColor,
  };
}"""


def room_state(valkey_url: str, room_id: str) -> RoomState:
    """The room as stored (the test reads the server's truth, as an operator could)."""
    with Redis.from_url(valkey_url) as redis:
        blob = redis.hget(keys.room(room_id), "state")
    assert isinstance(blob, bytes)
    return RoomState.from_blob(blob)


def start_solo(page: Page, valkey_url: str, draw: str = "1", passes: str = "unlimited") -> Board:
    """A solo game from the home page; the test follows it on its own engine board."""
    page.goto("/#/")
    page.select_option("select[name=draw]", draw)
    page.select_option("select[name=passes]", passes)
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible()
    state = room_state(valkey_url, room_of(page))
    return Board.from_seed(state.seed, state.variant)


def ask_hint(page: Page) -> str:
    """Click Hint; the hinted move's token once the answer is shown."""
    own = page.locator(OWN)
    page.click("[data-testid=hint]")
    expect(own).to_have_attribute("data-hint", re.compile(r"."), timeout=30_000)
    return own.get_attribute("data-hint") or ""


def hinted(page: Page) -> dict[str, Any]:
    """The hinted card's looks: its card, whether it was dealt or turned (flip), and
    its computed animation and outline."""
    expect(page.locator(f"{OWN} .card.hinted")).to_have_count(1)
    found: dict[str, Any] | None = page.evaluate(HINTED)
    assert found is not None
    return found


def test_hints_show_on_turned_cards_on_runs_and_without_motion(
    pages: Pages, valkey_url: str
) -> None:
    """Following the hints: the hinted card always shows a pulsing ring, also when it
    was dealt or turned face up; a run's hint marks the card at its bottom; the message
    is words; with the motion setting off the ring is still there, without animation."""
    page = pages.open(name="Hinted")
    board = start_solo(page, valkey_url)
    driver = BoardDriver(page)
    message = page.locator("[data-testid=message]")
    seen_flip = seen_run = False
    for _ in range(160):
        token = ask_hint(page)
        move = Move.parse(token)
        if move.kind == RECYCLE:  # the empty stock is marked, there is no card to mark
            expect(driver.slot("stock")).to_have_class(re.compile(r"\btarget\b"))
            driver.play(board, token, "click")
            continue
        looks = hinted(page)
        assert looks["outline"] == "solid" and looks["width"] >= 2, (token, looks)
        assert looks["animation"] == "hint", (token, looks)
        assert not re.search(r"\b(D|R|[1-7W][1-7F](:\d+)?)\b", message.inner_text()), (
            message.inner_text()
        )
        if move.kind != DRAW:
            assert looks["card"] == str(driver.moving_card(board, move)), (token, looks)
            seen_flip = seen_flip or looks["flip"]
            if move.kind == T2T and run_size(board, move) > 1:
                seen_run = True
                assert re.match(r"Move \S+ \(with the \d+ on it\) onto ", message.inner_text())
        if seen_flip and seen_run:
            break
        driver.play(board, token, "click")
        if board.is_trivially_won():
            break
    assert seen_flip, "no hint named a dealt or turned card"
    assert seen_run, "no hint moved a run of cards"
    page.click("#settings-button")
    page.uncheck("#settings input[name=motion]")
    page.click("#settings button[type=submit]")
    ask_hint(page)
    looks = hinted(page)
    assert looks["animation"] == "none", looks
    assert looks["outline"] == "solid" and looks["width"] >= 2, looks


def test_six_fast_clicks_on_the_stock_turn_six_cards(pages: Pages, valkey_url: str) -> None:
    """Clicks 40-80 ms apart on the stock each turn a card, also while the card turned
    before is still sliding out of the stock over it."""
    page = pages.open(name="Quick")
    start_solo(page, valkey_url, passes="rules")
    own = page.locator(OWN)
    box = BoardDriver(page).slot("stock").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for pause in (40, 80, 50, 70, 60, 0):
        page.mouse.click(x, y)
        page.wait_for_timeout(pause)
    expect(own).to_have_attribute("data-pending", "0")
    expect(own).to_have_attribute("data-moves", "6")
    expect(own.locator('.card[data-place="waste"]')).to_have_count(6)
    expect(page.locator("[data-testid=moves]")).to_have_text("6")
