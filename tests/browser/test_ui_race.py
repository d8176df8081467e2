"""A race in the browser: two racers on one deal, a spectator, a reload, a replay."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgpack
from playwright.sync_api import Page, WebSocket, expect

from pages import (
    DESKTOP,
    OWN,
    PHONE,
    Pages,
    Screenshot,
    all_cards_drawn,
    assert_accessible,
    cards_drawn,
    room_of,
)
from waits import scaled

STOCK = f'{OWN} .card[data-place="stock"]'


def turn_stock(page: Page, times: int) -> None:
    """Click the stock `times` times, each confirmed by the server."""
    own = page.locator(OWN)
    for _ in range(times):
        moves = int(own.get_attribute("data-moves") or 0)
        page.locator(STOCK).last.click()
        expect(own).to_have_attribute("data-moves", str(moves + 1))
        expect(own).to_have_attribute("data-pending", "0")


def board_picture(page: Page) -> list[tuple[str | None, ...]]:
    """What the own board shows: every card's place, index and identity (or back)."""
    cards = page.locator(f"{OWN} .card")
    rows = cards.evaluate_all(
        "nodes => nodes.map(n => [n.dataset.place, n.dataset.index, n.dataset.card])"
    )
    return sorted(tuple(row) for row in rows)


class FrameLog:
    """Card identities in the board frames a page receives (decoded msgpack)."""

    def __init__(self, page: Page) -> None:
        self.cards: set[int] = set()
        self.frames = 0
        page.on("websocket", self._attach)

    def _attach(self, socket: WebSocket) -> None:
        socket.on("framereceived", self._received)

    def _received(self, payload: str | bytes) -> None:
        if isinstance(payload, str):
            return
        frame = msgpack.unpackb(payload, raw=False)
        if frame.get("t") in ("board", "diff"):
            self.frames += 1
            self.cards |= _cards_in(frame.get("view") or frame.get("d"))


def _cards_in(data: Mapping[str, Any]) -> set[int]:
    """Every card identity in a view or diff (tableau, waste; foundations count ranks),
    as msgpack decodes it."""
    found: set[int] = set()
    for pile in data.get("tableau", []):
        found |= {c for c in pile[1] if c >= 0}
    for _pile, _keep, _down, cards in data.get("piles", []):
        found |= {c for c in cards if c >= 0}
    found |= {c for c in data.get("waste", []) if c >= 0}
    for suit, height in enumerate(data.get("foundations", [])):
        found |= {suit * 13 + rank for rank in range(height)}
    return found


def test_race_watched_reloaded_and_replayed(pages: Pages, screenshot: Screenshot) -> None:
    """Two racers race while a spectator watches only common knowledge; a reload resumes
    the same board; the results and a replay of the race follow."""
    ann = pages.open(name="Ann")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea")
    watcher = pages.open(f"/#/watch/{room}", name="Cy")
    frames = FrameLog(watcher)
    watcher.reload()  # attach the frame log before the websocket opens
    expect(ann.locator("[data-testid=seats]")).to_contain_text("Bea")
    screenshot(ann, "lobby-desktop")
    assert_accessible(ann)

    ann.click("[data-testid=ready]")
    bea.click("[data-testid=ready]")
    expect(ann.locator("[data-testid=start]")).to_be_enabled()
    ann.click("[data-testid=start]")
    for racer in (ann, bea):
        expect(racer.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(10_000))
    expect(watcher.locator("[data-testid=board-0] .card").first).to_be_visible()

    # Ann turns five stock cards that Bea has not seen.
    turn_stock(ann, 5)
    expect(watcher.locator("[data-testid=board-0] header")).to_contain_text("5 moves")
    expect(bea.locator("[data-testid=opponent-0]")).to_contain_text("5 moves")
    ann_seen, bea_seen = cards_drawn(ann, "own-board"), cards_drawn(bea, "own-board")
    shown = all_cards_drawn(watcher, "board-")
    assert len(bea_seen) == 7 and len(ann_seen) == 12
    assert len(shown) == 7 and shown <= ann_seen & bea_seen
    assert frames.frames >= 7 and frames.cards <= ann_seen & bea_seen
    screenshot(ann, "race-racer-desktop")
    screenshot(watcher, "race-spectator-desktop")
    assert_accessible(watcher)
    assert_accessible(bea)
    for page, name in ((ann, "race-racer-phone"), (watcher, "race-spectator-phone")):
        page.set_viewport_size(PHONE)
        screenshot(page, name, full_page=True)
        page.set_viewport_size(DESKTOP)

    # Bea turns three: now both have seen those, and the spectator may see them too.
    turn_stock(bea, 3)
    expect(watcher.locator("[data-testid=board-1] header")).to_contain_text("3 moves")
    bea_seen = cards_drawn(bea, "own-board")
    shown = all_cards_drawn(watcher, "board-")
    assert shown <= ann_seen & bea_seen and len(shown) > 7
    assert frames.cards <= ann_seen & bea_seen

    # A reload mid-race resumes the same board.
    before = board_picture(bea)
    bea.reload()
    expect(bea.locator(OWN)).to_have_attribute("data-moves", "3", timeout=scaled(10_000))
    expect(bea.locator(f"{OWN} .card").first).to_be_visible()
    bea.wait_for_function("document.getAnimations().length === 0")
    assert board_picture(bea) == before
    turn_stock(bea, 1)

    # Both resign: the race ends, everyone sees the results and every board revealed.
    ann.click("[data-testid=resign]")
    bea.click("[data-testid=resign]")
    for page in (ann, bea, watcher):
        expect(page.locator("[data-testid=results]")).to_contain_text("Bea")
    expect(ann.locator("[data-testid=results]")).to_contain_text("resigned")
    expect(watcher.locator("[data-testid=board-0] .card.back[data-place^=t]")).to_have_count(0)
    expect(watcher.locator("[data-testid=board-0] .card.revealed").first).to_be_visible()

    # The replay steps through the race, both boards on one clock.
    ann.click("[data-testid=replay-link]")
    moves0 = ann.locator("[data-testid=replay-moves-0]")
    moves1 = ann.locator("[data-testid=replay-moves-1]")
    expect(moves0).to_contain_text("move 0/5")
    for _ in range(3):
        ann.click("[data-testid=replay-step]")
    expect(moves0).to_contain_text("move 3/5")
    ann.fill("[data-testid=replay-move]", "5")
    ann.press("[data-testid=replay-move]", "Enter")
    expect(moves0).to_contain_text("move 5/5")
    expect(moves1).to_contain_text("move 0/4")  # Bea moved after Ann: same clock
    ann.click("[aria-label='To the end']")
    expect(moves1).to_contain_text("move 4/4")
    screenshot(ann, "replay-desktop")
    ann.set_viewport_size(PHONE)
    screenshot(ann, "replay-phone", full_page=True)

    # A rematch takes the room back to its lobby, with both racers, for a fresh deal.
    bea.click("[data-testid=rematch]")
    for page in (bea, watcher):
        expect(page.locator("[data-testid=seats]")).to_contain_text("Ann")
        expect(page.locator("[data-testid=results]")).to_be_hidden()
    ann.go_back()
    expect(ann.locator("[data-testid=seats]")).to_contain_text("Bea")
    expect(ann.locator("[data-testid=ready]")).to_have_text("I'm ready")
