"""The replay page's solver analysis in Chromium: the verdict strip, the move that lost
the game with the winning line that existed before it (as move chips, and as ghost cards
on the board), and "Play from here"."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from klondike_live.engine import Board, GameRecord

from live_server import ServerProcess
from pages import OWN, BoardDriver, Pages, assert_accessible, room_of
from waits import connect_client, scaled

LOST = GameRecord.parse(
    (Path(__file__).resolve().parents[1] / "data" / "lost-draw3-lose4.txt").read_text()
)
LOST_AT = 14
"""Move 14 of this game lost it (tests/solver/test_analysis.py checks it)."""


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A node that analyses finished games (the other browser tests' nodes do not)."""
    process = ServerProcess(
        valkey_url, tmp_path_factory.mktemp("serve"), env={"KLONDIKE_ANALYSIS_SECONDS": "10"}
    )
    yield process
    process.stop()


async def _play_lost_game(ws_url: str) -> str:
    """A solo game on the record's deal, its moves played, then resigned: its room."""
    client = await connect_client(ws_url, name="Ada")
    try:
        created = await client.call(
            {
                "t": "create",
                "rid": 1,
                "kind": "solo",
                "variant": str(LOST.variant),
                "seed": str(LOST.seed),
                "moves": [],
            },
            lambda m: m["t"] == "created" and m.get("rid") == 1,
        )
        room = str(created["room"])
        await client.join(room)
        await client.expect(lambda m: m["t"] == "board" and m.get("room") == room)
        for token in LOST.moves:
            await client.move(room, token)
            await asyncio.sleep(scaled(0.06))  # a pace under the node's 20 moves a second
        await client.resign(room)
        await client.expect(lambda m: m["t"] == "results" and m["room"] == room, timeout=scaled(30))
        return room
    finally:
        await client.close()


SUITS = "\u2663\u2666\u2665\u2660"
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
NAMES = ["Ace", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten"]
NAMES += ["Jack", "Queen", "King"]


def short_name(card: int) -> str:
    """The client's short name of a card: "7\u2665"."""
    return RANKS[card % 13] + SUITS[card // 13]


def moved_card(board: Board, token: str) -> int:
    """The card `token` moves from `board` (for `D`, the last one it turns)."""
    after = board.copy()
    after.play(token)
    if token == "D":
        return int(after.waste[-1])
    if token[0] == "W":
        return int(board.waste[-1])
    source = int(token[0]) - 1
    return int(board.tableau[source][len(after.tableau[source])])


def board_cards(page: Page) -> list[tuple[str, str]]:
    """Every face-up card of the replay's first board with the pile it stands in."""
    cards = page.locator("[data-testid=board-0] .card:not(.back)")
    return sorted(
        (str(c.get_attribute("data-card")), str(c.get_attribute("data-place"))) for c in cards.all()
    )


def play_lost_game(server: ServerProcess) -> str:
    """`_play_lost_game` on an event loop of its own (Playwright has this thread's)."""
    ws_url = server.url.replace("http://", "ws://") + "ws"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _play_lost_game(ws_url)).result(timeout=scaled(120))


def test_replay_shows_the_strip_the_losing_move_and_plays_from_there(
    pages: Pages, server: ServerProcess
) -> None:
    """A lost game's replay: one strip cell per position, winnable up to the move that
    lost it (marked), lost after; "Show the winning line there" goes to the position
    before it with its line, shown on the board too as ghost cards move by move and closed
    again to the real position; "Play from here" starts a solo game at exactly that
    position (its face-up cards are the engine's) and a move can be made there."""
    room = play_lost_game(server)
    page = pages.open(f"/#/replay/{room}/1", name="Bea")
    strip = page.locator("[data-testid=verdict-strip-0]")
    expect(strip).to_be_visible(timeout=scaled(120_000))  # analysed in the background first
    cells = strip.locator(".cell")
    expect(cells).to_have_count(len(LOST.moves) + 1)
    expect(cells.nth(0)).to_have_class("cell v-winnable current")  # the replay's start
    expect(cells.nth(LOST_AT - 1)).to_have_class("cell v-winnable")
    expect(cells.nth(LOST_AT)).to_have_class("cell v-lost lost-at")
    expect(cells.nth(len(LOST.moves))).to_have_class("cell v-lost")
    label = strip.get_attribute("aria-label") or ""
    assert f"moves 0\u2013{LOST_AT - 1}: a win was possible" in label, label
    lost = page.locator("[data-testid=lost-move-0]")
    token = LOST.moves[LOST_AT - 1]
    expect(lost).to_contain_text(f"The move that lost it: move {LOST_AT} ({token})")

    page.click("[data-testid=show-lost-0]")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text(
        f"move {LOST_AT - 1}/{len(LOST.moves)}"
    )
    line = page.locator("[data-testid=winning-line-0] li")
    expect(line.first).to_be_visible()
    assert line.count() >= 1
    expect(cells.nth(LOST_AT - 1)).to_have_class("cell v-winnable current")
    assert_accessible(page)

    # The same line as ghost cards on the board: move 2 of it (the arrow key steps the
    # line while it is open, not the replay), then back to the game's real position.
    tokens = [t.strip() for t in line.all_inner_texts()]
    before = Board.from_seed(str(LOST.seed), LOST.variant)
    for token in LOST.moves[: LOST_AT - 1]:
        before.play(token)
    before.play(tokens[0])
    second = moved_card(before, tokens[1])
    real = board_cards(page)
    page.click("[data-testid=ghost-open-0]")
    status = page.locator("[data-testid=ghost-status-0]")
    expect(status).to_contain_text("Winning line, move 1 of ")
    page.keyboard.press("ArrowRight")
    expect(status).to_contain_text(re.compile(r"Winning line, move 2 of \d+: "))
    expect(status).to_contain_text(short_name(second))
    ghost = page.locator(f"[data-testid=board-0] .card.ghost[data-card='{second}']")
    expect(ghost).to_be_visible()
    name = NAMES[second % 13] + " of " + ["clubs", "diamonds", "hearts", "spades"][second // 13]
    expect(ghost).to_have_attribute("aria-label", f"{name}, moved by the winning line")
    assert page.locator("[data-testid=board-0] .card.ghost").count() >= 2
    assert board_cards(page) != real
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text(
        f"move {LOST_AT - 1}/{len(LOST.moves)}"
    )
    assert_accessible(page)
    page.click("[data-testid=ghost-close-0]")
    expect(page.locator("[data-testid=board-0] .card.ghost")).to_have_count(0)
    expect(status).to_have_count(0)
    assert board_cards(page) == real
    # Closed, the arrow keys step the replay again.
    page.keyboard.press("ArrowRight")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text(
        f"move {LOST_AT}/{len(LOST.moves)}"
    )
    page.click("[data-testid=show-lost-0]")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text(
        f"move {LOST_AT - 1}/{len(LOST.moves)}"
    )

    page.click("[data-testid=play-from-here-0]")
    expect(page).to_have_url(re.compile(r"#/room/[A-Za-z0-9_-]+$"), timeout=scaled(30_000))
    assert room_of(page) != room
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-moves", "0", timeout=scaled(30_000))
    start = Board.from_seed(str(LOST.seed), LOST.variant)
    for token in LOST.moves[: LOST_AT - 1]:
        start.play(token)
    driver = BoardDriver(page)
    for pile, down in zip(start.tableau, start.face_down, strict=True):
        for card in pile[down:]:
            expect(driver.card(int(card))).to_be_visible()
    move = start.legal_moves()[0]
    driver.play(start, str(move), "click")
    expect(own).to_have_attribute("data-moves", "1")
