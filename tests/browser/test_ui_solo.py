"""A solo game in the browser, played to a win with drag and drop, clicks and keys."""

from __future__ import annotations

import re
from itertools import cycle

from playwright.sync_api import Page, expect
from redis import Redis

from klondike_live import keys
from klondike_live.engine import Board
from klondike_live.race.room import RoomState
from klondike_live.solver.search import SOLVABLE, Budget, solve

from pages import OWN, PHONE, BoardDriver, Mode, Pages, Screenshot, room_of
from waits import scaled


def room_state(valkey_url: str, room_id: str) -> RoomState:
    """The room as stored (the test reads the server's truth, as an operator could)."""
    with Redis.from_url(valkey_url) as redis:
        blob = redis.hget(keys.room(room_id), "state")
    assert isinstance(blob, bytes)
    return RoomState.from_blob(blob)


def start_solvable_solo(page: Page, valkey_url: str) -> tuple[Board, list[str]]:
    """Start solo games from the home page until the solver finds a win for one."""
    for _ in range(6):
        page.goto("/#/")
        page.select_option("select[name=draw]", "1")
        page.select_option("select[name=passes]", "unlimited")
        page.click("[data-testid=start-solo]")
        expect(page.locator("[data-testid=own-board] .card").first).to_be_visible()
        state = room_state(valkey_url, room_of(page))
        board = Board.from_seed(state.seed, state.variant)
        result = solve(board.copy(), Budget(seconds=10))
        if result.result == SOLVABLE:
            return board, result.moves
    raise AssertionError("no solvable deal in six tries")


def test_solo_game_won_through_the_ui(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    """Drag, click and keyboard moves each play part of a winning game; the win shows."""
    page = pages.open(name="Solo")
    screenshot(page, "home-desktop")
    board, solution = start_solvable_solo(page, valkey_url)
    driver = BoardDriver(page)
    modes: cycle[Mode] = cycle(["drag", "click", "keys"])
    used: set[Mode] = set()
    for token in solution:
        if board.is_trivially_won():
            break  # the rest is forced: Auto-complete (below)
        mode = next(modes)
        driver.play(board, token, mode)
        used.add(mode)
        if len(board.moves) == 12:
            screenshot(page, "solo-desktop")
    assert used == {"drag", "click", "keys"}
    own = page.locator("[data-testid=own-board]")
    # The rest is forced: a practice game offers Auto-complete for it (a race would
    # finish it at once), unless the page already played it.
    finish = page.locator("[data-testid=finish]")
    won = page.locator("[data-testid=own-board][data-status=won]")
    expect(finish.or_(won).first).to_be_visible(timeout=scaled(30_000))
    if finish.is_visible():
        finish.click()
    expect(own).to_have_attribute("data-status", "won", timeout=scaled(30_000))  # a loaded machine
    expect(page.locator("[data-testid=message]")).to_contain_text("You won")
    expect(page.locator("[data-testid=found]")).to_have_text("52/52")
    expect(page.locator("[data-testid=results]")).to_contain_text("won")
    assert own.locator('.card[data-place^="f"]').count() == 52


def test_phone_layout_fits_and_plays(pages: Pages, screenshot: Screenshot) -> None:
    """On a phone the seven columns fit the screen width and a tap on the stock turns it."""
    page = pages.open(name="Phone", viewport=PHONE)
    screenshot(page, "home-phone", full_page=True)
    page.click("[data-testid=start-solo]")
    own = page.locator("[data-testid=own-board]")
    expect(own.locator(".card").first).to_be_visible()
    for box in (c.bounding_box() for c in own.locator(".card").all()):
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    page.locator('[data-testid=own-board] .card[data-place="stock"]').last.tap()
    expect(own).to_have_attribute("data-moves", "1")
    assert own.locator('.card[data-place="waste"]').count() == 1
    screenshot(page, "solo-phone")


def test_practice_tools_hint_undo_and_focus(pages: Pages) -> None:
    """In a solo game: a hint is shown and highlighted, Enter on a focused pile plays,
    and undo takes the move back."""
    page = pages.open(name="Tools")
    page.click("[data-testid=start-solo]")
    own = page.locator(OWN)
    expect(own.locator(".card").first).to_be_visible()
    page.click("[data-testid=hint]")
    message = page.locator("[data-testid=message]")
    expect(message).to_have_attribute("data-verdict", re.compile(r"."), timeout=scaled(15_000))
    highlighted = own.locator(".card.hinted, .slot.target")
    if message.get_attribute("data-verdict") == "lost":  # a random deal may have no win
        expect(highlighted).to_have_count(0)
    else:
        expect(highlighted, message.inner_text()).not_to_have_count(0)
    page.focus(f'{OWN} .slot[data-place="stock"]')
    page.keyboard.press("Enter")
    expect(own).to_have_attribute("data-moves", "1")
    assert own.locator('.card[data-place="waste"]').count() == 1
    page.click("[data-testid=undo]")
    expect(own).to_have_attribute("data-moves", "0")
    expect(own.locator('.card[data-place="waste"]')).to_have_count(0)
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    expect(page.locator("#help")).to_contain_text("Pick up the waste")
