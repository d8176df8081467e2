"""The game table's feel in the browser: hints that show, every click on the stock
counted, the win celebration, one-click moves, auto-completion and the f2t variant."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect
from redis import Redis

from klondike_live import keys
from klondike_live.config import DEFAULT_POOL_VARIANTS
from klondike_live.engine import Board, Move, Variant
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T
from klondike_live.race.room import RoomState
from klondike_live.solver.hints import best_move, forced_finish
from klondike_live.solver.search import SOLVABLE, Budget, solve

from deal_pool import queue_deals
from live_server import ServerProcess
from pages import (
    OWN,
    PHONE,
    TOP_STRIP,
    BoardDriver,
    Mode,
    Pages,
    Screenshot,
    assert_accessible,
    board_moves,
    room_of,
    run_size,
    settle,
)
from waits import scaled

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


FORCED_DRAW_3 = ("t3", "t6", "t8")
"""Draw-3 deals (unlimited passes) where following the solver's line leaves cards in the
stock and waste when the last card turns face up, and moving cards home then wins
(found by trying seeds t1, t2, ... with this file's own check): the pool deals them."""


FORCED_DRAW_1 = ("u1", "u2", "u4")
"""Draw-1 deals (unlimited passes) where following the solver's line leaves cards in the
stock or waste when the last card turns face up (found by trying seeds u1, u2, ... with
this file's own check): the pool deals them, so the test does not hang on random deals
and on which line the solver happens to find."""

DRAW_1_UNLIMITED = Variant.parse("draw=1 passes=unlimited f2t=no")

RUN_DRAW_1 = "r2"
"""A draw-1 deal (unlimited passes) whose winning line, the one its hints follow, moves
a run of cards (its 29th move): the hints test does not hang on a random deal."""

CARDS_BACK = Variant.parse("draw=1 passes=unlimited f2t=yes")

BACK_DRAW_1 = "b3"
"""A deal of the cards-back variant where, playing the hint heuristic's moves, a
foundation card can go back after 21 moves (found by trying seeds b1, b2, ...): the
cards-back test does not hang on a random deal that offers none in 200."""

HARD_DRAW_1 = "h27"
"""A draw-1, one-pass deal the pool's search certifies (in about 220,000 nodes) and a
one-second search, a hint's, does not win from its start."""


EASY_DRAW_1 = "h29"
"""A draw-1, one-pass deal a hint's search wins at once (its first hint marks a card)."""


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A node that also deals certified games of the cards-back variant from its pool
    (the home page's variants are pooled by default, not this one)."""
    pooled = ", ".join([*(str(v) for v in DEFAULT_POOL_VARIANTS), str(CARDS_BACK)])
    process = ServerProcess(
        valkey_url, tmp_path_factory.mktemp("serve"), env={"KLONDIKE_POOL_VARIANTS": pooled}
    )
    yield process
    process.stop()


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


def start_winnable_solo(page: Page, valkey_url: str) -> tuple[Board, list[str]]:
    """A draw-1 solo game with unlimited passes that the solver wins, and its solution."""
    for _ in range(6):
        board = start_solo(page, valkey_url)
        result = solve(board.copy(), Budget(seconds=10))
        if result.result == SOLVABLE:
            return board, result.moves
    raise AssertionError("no solvable deal in six tries")


def play_to_the_end(page: Page, board: Board, solution: list[str]) -> None:
    """Play the solution by clicks until the rest finishes by itself."""
    driver = BoardDriver(page)
    for token in solution:
        if board.is_trivially_won():
            break
        driver.play(board, token, "click")
    expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=scaled(20_000))


# Counts the tones the page's WebAudio makes (the sound setting's effect).
COUNT_TONES = """
window.__tones = 0;
const original = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () {
  window.__tones += 1;
  return original.call(this);
};
"""
EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf]")


def ask_hint(page: Page, *, tap: bool = False) -> str:
    """Click (or tap) Hint; the hinted move's token once the answer is shown."""
    own = page.locator(OWN)
    button = page.locator("[data-testid=hint]")
    button.tap() if tap else button.click()
    expect(own).to_have_attribute("data-hint", re.compile(r"."), timeout=scaled(30_000))
    return own.get_attribute("data-hint") or ""


def hinted(page: Page) -> dict[str, Any]:
    """The hinted card's looks: its card, whether it was dealt or turned (flip), and
    its computed animation and outline."""
    expect(page.locator(f"{OWN} .card.hinted")).to_have_count(1)
    found: dict[str, Any] | None = page.evaluate(HINTED)
    assert found is not None
    return found


def test_hints_show_on_turned_cards_on_runs_and_without_motion(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    """Following the hints: the hinted card always shows a pulsing ring, also when it
    was dealt or turned face up; a run's hint marks the card at its bottom; the message
    is words; with the motion setting off the ring is still there, without animation."""
    queue_deals(valkey_url, DRAW_1_UNLIMITED, (RUN_DRAW_1,))
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
                screenshot(page, "hint-desktop")
                text = message.inner_text()
                assert re.match(
                    r"Move \S+ \(with the \d+ cards? on it\) (onto|to the empty column) ", text
                ), text
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


def test_a_hint_shows_with_the_systems_reduced_motion(pages: Pages, valkey_url: str) -> None:
    """With the system's reduced motion (the page's setting left alone) a hinted card
    still shows its ring, still."""
    page = pages.open(name="Still")
    page.emulate_media(reduced_motion="reduce")
    page.reload()
    queue_deals(valkey_url, Variant.parse("draw=1 passes=1 f2t=no"), (EASY_DRAW_1,))
    start_solo(page, valkey_url, passes="rules")
    token = ask_hint(page)
    assert Move.parse(token).kind != RECYCLE, token
    looks = hinted(page)
    assert looks["animation"] == "none", looks
    assert looks["outline"] == "solid" and looks["width"] >= 2, looks


def test_following_the_hints_on_a_certified_deal_wins(pages: Pages, valkey_url: str) -> None:
    """A player who plays every hint on a certified deal (the home page's draw 1, one
    pass) wins it: from the first hint on, each one is a move of a winning line (the
    deal's line, kept and followed, not searched for again against the clock)."""
    queue_deals(valkey_url, Variant.parse("draw=1 passes=1 f2t=no"), (HARD_DRAW_1,))
    page = pages.open(name="Follower")
    board = start_solo(page, valkey_url, passes="rules")
    state = room_state(valkey_url, room_of(page))
    assert state.certified and state.seed == HARD_DRAW_1, "the queued deal was not dealt"
    driver = BoardDriver(page)
    message = page.locator("[data-testid=message]")
    verdicts: list[str] = []
    for _ in range(400):
        if board.is_trivially_won():
            break
        token = ask_hint(page)
        verdict = message.get_attribute("data-verdict") or ""
        assert verdict == "winning", (
            f"hint {len(verdicts) + 1} after {len(board.moves)} moves: {message.inner_text()!r}"
        )
        verdicts.append(verdict)
        driver.play(board, token, "click")
    expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=scaled(20_000))


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


def test_a_win_cascades_and_sounds_when_asked_and_shows_no_emoji(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    """Sounds are off until the player turns them on (kept over a reload); a won game
    plays them, cascades its cards and says "You won!" with an icon of the page's own,
    not a font emoji."""
    page = pages.open(name="Winner")
    page.context.add_init_script(COUNT_TONES)
    page.reload()
    page.click("#settings-button")
    sound = page.locator("#settings input[name=sound]")
    expect(sound).not_to_be_checked()
    sound.check()
    page.click("#settings button[type=submit]")
    page.reload()
    page.click("#settings-button")
    expect(page.locator("#settings input[name=sound]")).to_be_checked()
    page.click("#settings button[type=submit]")
    board, solution = start_winnable_solo(page, valkey_url)
    play_to_the_end(page, board, solution)
    expect(page.locator("[data-testid=celebration]")).to_be_attached()
    page.wait_for_timeout(scaled(1_500))  # a pause for the picture: some cards on their way
    screenshot(page, "win-desktop")
    message = page.locator("[data-testid=message]")
    expect(message).to_contain_text("You won!")
    expect(message.locator("svg.icon-trophy")).to_be_visible()
    assert not EMOJI.search(message.inner_text()), message.inner_text()
    assert page.evaluate("window.__tones") > len(solution) // 2


def test_no_cascade_with_reduced_motion(pages: Pages, valkey_url: str) -> None:
    """With the system's reduced motion the win shows no cascade (and sounds stay off)."""
    page = pages.open(name="Calm")
    page.context.add_init_script(COUNT_TONES)
    page.emulate_media(reduced_motion="reduce")
    page.reload()
    board, solution = start_winnable_solo(page, valkey_url)
    play_to_the_end(page, board, solution)
    expect(page.locator("[data-testid=message]")).to_contain_text("You won!")
    page.wait_for_timeout(scaled(500))  # a pause: no cascade starts
    expect(page.locator("[data-testid=celebration]")).to_have_count(0)
    assert page.evaluate("window.__tones") == 0


def next_card_move(board: Board, driver: BoardDriver, *, skip: str = "") -> Move:
    """A legal move of one card (waste or a column's top card), turning the stock until
    there is one."""
    for _ in range(60):
        for move in board.legal_moves():
            if move.kind in (W2T, W2F, T2F) and str(move) != skip:
                return move
            if move.kind == T2T and run_size(board, move) == 1 and str(move) != skip:
                return move
        driver.play(board, "D" if board.stock else "R", "click")
    raise AssertionError("no card to move")


def test_one_click_moves_send_a_card_to_its_place_and_drag_still_works(
    pages: Pages, valkey_url: str
) -> None:
    """With one-click moves on, one click on a card that can move moves it; a drag still
    puts a card where it is dropped."""
    page = pages.open(name="OneClick")
    page.click("#settings-button")
    page.check("#settings input[name=autoMove]")
    page.click("#settings button[type=submit]")
    board = start_solo(page, valkey_url)
    driver = BoardDriver(page)
    own = page.locator(OWN)
    move = next_card_move(board, driver)
    card = driver.moving_card(board, move)
    source = "waste" if move.kind in (W2T, W2F) else f"t{move.src}"
    before = int(own.get_attribute("data-moves") or 0)
    settle(page)
    driver.card(card).click(position=TOP_STRIP)
    expect(own).to_have_attribute("data-moves", str(before + 1))
    expect(own).to_have_attribute("data-pending", "0")
    place = driver.card(card).get_attribute("data-place") or ""
    assert place != source and place[0] in "ft", place
    origin = "W" if source == "waste" else str(move.src + 1)
    board.play(f"{origin}{'F' if place[0] == 'f' else int(place[1]) + 1}")
    dragged = next_card_move(board, driver)
    driver.play(board, str(dragged), "drag")


def test_cards_back_from_foundations_when_the_variant_is_chosen(
    pages: Pages, valkey_url: str
) -> None:
    """The optional variant is offered for solo games and races and named in the title;
    in it a foundation card is dragged back onto a column that takes it, and tapped back
    (the card, then the column) once it went home again."""
    page = pages.open(name="Backwards")
    page.check("[data-testid=race-f2t]")
    page.click("[data-testid=create-race]")
    expect(page.locator("h1")).to_contain_text("cards back from foundations")
    page.goto("/#/")
    queue_deals(valkey_url, CARDS_BACK, (BACK_DRAW_1,))
    page.check("[data-testid=solo-f2t]")
    page.select_option("select[name=passes]", "unlimited")
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible()
    title = "Draw 1 · unlimited passes · cards back from foundations"
    expect(page.locator("h1")).to_contain_text(title)
    state = room_state(valkey_url, room_of(page))
    assert state.variant.f2t and state.seed == BACK_DRAW_1, "the queued deal was not dealt"
    board = Board.from_seed(state.seed, state.variant)
    driver = BoardDriver(page)
    own = page.locator(OWN)
    for _ in range(200):  # the heuristic's moves (it never moves a card back itself)
        back = [m for m in board.legal_moves() if m.kind == F2T]
        if back:
            move = back[0]
            card = board.foundations[move.src] + 13 * move.src - 1
            target = board.tableau[move.dst]
            settle(page)
            before = int(own.get_attribute("data-moves") or 0)
            drop = driver.card(int(target[-1])) if target else driver.slot(f"t{move.dst}")
            driver.drag(driver.card(card), drop)
            expect(own).to_have_attribute("data-moves", str(before + 1))
            expect(own).to_have_attribute("data-pending", "0")
            expect(driver.card(card)).to_have_attribute("data-place", f"t{move.dst}")
            # Home again with a double click, then back by a tap on it and on the column.
            settle(page)
            driver.card(card).dblclick(position=TOP_STRIP)
            expect(own).to_have_attribute("data-moves", str(before + 2))
            expect(driver.card(card)).to_have_attribute("data-place", f"f{move.src}")
            expect(own).to_have_attribute("data-pending", "0")
            settle(page)
            driver.card(card).click(position=TOP_STRIP)
            drop.click(position=TOP_STRIP)
            expect(own).to_have_attribute("data-moves", str(before + 3))
            expect(own).to_have_attribute("data-pending", "0")
            expect(driver.card(card)).to_have_attribute("data-place", f"t{move.dst}")
            return
        best = best_move(board)
        assert best is not None, "the game is stuck before a card could go back"
        driver.play(board, str(best), "click")
    raise AssertionError("no foundation card could go back in 200 moves")


def test_auto_complete_is_offered_once_the_rest_is_forced(pages: Pages, valkey_url: str) -> None:
    """Draw 1 with unlimited passes: once every tableau card is face up, Auto-complete is
    offered while the stock still has cards, and it wins the game."""
    lines = queue_deals(valkey_url, DRAW_1_UNLIMITED, FORCED_DRAW_1)
    page = pages.open(name="Finisher")
    for _ in range(len(FORCED_DRAW_1)):
        board = start_solo(page, valkey_url)
        seed = room_state(valkey_url, room_of(page)).seed
        # A queued deal's line; a deal handed out in an earlier run on the same Valkey is
        # not queued again, and the next pooled deal comes with the solver's own line.
        solution = lines.get(seed) or solve(board.copy(), Budget(seconds=10)).moves
        driver = BoardDriver(page)
        finish = page.locator("[data-testid=finish]")
        for token in solution:
            if not any(board.face_down):
                break
            expect(finish).to_have_count(0)
            driver.play(board, token, "click")
        if board.stock or board.waste:
            break
    else:
        raise AssertionError("no game kept cards in the stock until every card was face up")
    expect(finish).to_be_visible()
    finish.click()
    expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=scaled(60_000))
    expect(page.locator("[data-testid=found]")).to_have_text("52/52")


def test_auto_complete_in_draw_3_is_offered_when_the_server_says_forced(
    pages: Pages, valkey_url: str
) -> None:
    """Draw 3: once every card is face up, Auto-complete is offered exactly when moving
    cards home wins from the stock's order (the server decides); then it wins."""
    queue_deals(valkey_url, Variant.parse("draw=3 passes=unlimited f2t=no"), FORCED_DRAW_3)
    page = pages.open(name="DrawThree")
    for _ in range(4):
        board = start_solo(page, valkey_url, draw="3")
        result = solve(board.copy(), Budget(seconds=10))
        if result.result != SOLVABLE:
            continue
        driver = BoardDriver(page)
        finish = page.locator("[data-testid=finish]")
        for token in result.moves:
            if not any(board.face_down):
                break
            driver.play(board, token, "click")
        if not (board.stock or board.waste):
            continue
        settle(page)
        forced = forced_finish(board)
        if not forced:  # a pause: the server's answer offers no finish (an offer is awaited)
            page.wait_for_timeout(scaled(1_000))
        expect(finish).to_have_count(1 if forced else 0)
        if forced:
            finish.click()
            expect(page.locator(OWN)).to_have_attribute(
                "data-status", "won", timeout=scaled(60_000)
            )
            return
    raise AssertionError("no game reached a forced finish with cards left in the stock")


LAPTOP: ViewportSize = {"width": 1366, "height": 768}
WIDE: ViewportSize = {"width": 1920, "height": 1080}
SIZES = {"laptop": (LAPTOP, "v3"), "wide": (WIDE, "v2"), "phone": (PHONE, "v11")}
"""Per screen, a deal of CARDS_BACK whose solver line (no card back in it) soon lets a
foundation card go back onto a column, sends an ace home, moves a run, and turns the last
card face up while the stock still has cards (found by trying seeds v1, v2, ...); a seed
each, since the pool hands a seed out once."""

CASCADE = """() => {
  const canvas = document.querySelector('[data-testid=celebration]');
  if (!canvas) return null;
  const r = canvas.getBoundingClientRect();
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let drawn = 0, first = -1;
  for (let k = 3; k < data.length; k += 4) {
    if (!data[k]) continue;
    drawn += 1;
    if (first < 0) first = Math.floor((k - 3) / 4 / canvas.width);
  }
  const home = document.querySelector('[data-testid=own-board] .slot[data-place=f0]');
  return {left: r.left, top: r.top, width: r.width, height: r.height,
          ratio: canvas.width / r.width, drawn: drawn / (data.length / 4),
          highest: first / (canvas.width / r.width), home: home.getBoundingClientRect().top};
}"""
"""The cascade's canvas: its box, its pixel ratio, the share of its pixels drawn, the
highest drawn row and the foundations' top (in CSS px)."""


class Table:
    """The player's input on one screen: a mouse on a desktop, a finger on a phone."""

    def __init__(self, page: Page, phone: bool) -> None:
        self.page = page
        self.phone = phone
        self.driver = BoardDriver(page)
        self.mode: Mode = "tap" if phone else "click"

    def press(self, selector: str) -> None:
        button = self.page.locator(selector)
        button.tap() if self.phone else button.click()

    def pick(self, target: Locator) -> None:
        """One tap or click on the strip of a card (or a pile) that shows."""
        if self.phone:
            self.driver.tap(target)
        else:
            target.click(position=TOP_STRIP)

    def setting(self, name: str, on: bool) -> None:
        self.press("#settings-button")
        box = self.page.locator(f"#settings input[name={name}]")
        box.check() if on else box.uncheck()
        self.press("#settings button[type=submit]")
        expect(self.page.locator("#settings")).to_be_hidden()

    def confirmed(self, moves: int, card: int, place: str) -> None:
        own = self.page.locator(OWN)
        expect(own).to_have_attribute("data-moves", str(moves))
        expect(own).to_have_attribute("data-pending", "0")
        expect(self.driver.card(card)).to_have_attribute("data-place", place)

    def card_back_and_home(self, board: Board) -> None:
        """A foundation card dragged back onto a column, home again, back by a tap on it
        and on the column, and home again: the board is as it was, four moves on."""
        driver = self.driver
        move = next(m for m in board.legal_moves() if m.kind == F2T)
        card = board.foundations[move.src] + 13 * move.src - 1
        pile = board.tableau[move.dst]
        drop = driver.card(int(pile[-1])) if pile else driver.slot(f"t{move.dst}")
        home, column = f"f{move.src}", f"t{move.dst}"
        before = board_moves(self.page)
        settle(self.page)
        if self.phone:
            driver.touch_drag(driver.card(card), drop)
        else:
            driver.drag(driver.card(card), drop)
        self.confirmed(before + 1, card, column)
        for n, (there, where) in enumerate(((home, None), (column, drop), (home, None))):
            settle(self.page)
            if there == home and not self.phone:
                driver.card(card).dblclick(position=TOP_STRIP)
            else:
                self.pick(driver.card(card))
                self.pick(where if where is not None else driver.slot(home))
            self.confirmed(before + 2 + n, card, there)
        back = str(move)
        board.play(back)
        board.play(f"{move.dst + 1}F")
        board.play(back)
        board.play(f"{move.dst + 1}F")

    def hint(self, board: Board, move: Move) -> dict[str, Any]:
        """Ask for a hint: it names the line's next move and rings the card that moves."""
        assert ask_hint(self.page, tap=self.phone) == str(move)
        looks = hinted(self.page)
        assert looks["card"] == str(self.driver.moving_card(board, move)), (str(move), looks)
        assert looks["outline"] == "solid" and looks["width"] >= 2, (str(move), looks)
        return looks


@pytest.mark.parametrize("size", list(SIZES))
def test_the_tables_features_on_desktops_and_a_phone(
    pages: Pages, valkey_url: str, screenshot: Screenshot, size: str
) -> None:
    """At 1366x768, 1920x1080 and on a phone (390x844, touch: taps and a finger's drag),
    in one game of the cards-back variant: hints ring the card to move (a dealt one, a
    run's bottom card, still with reduced motion), a one-click move sends an ace home, a
    foundation card goes back by drag and by tap, Auto-complete is offered once the rest
    is forced with cards in the stock, and the win cascades over the whole screen."""
    viewport, seed = SIZES[size]
    phone = viewport == PHONE
    line = queue_deals(valkey_url, CARDS_BACK, (seed,))[seed]
    page = pages.open(name=f"Table{size.title()}", viewport=viewport)
    table = Table(page, phone)
    page.check("[data-testid=solo-f2t]")
    page.select_option("select[name=passes]", "unlimited")
    table.press("[data-testid=start-solo]")
    own = page.locator(OWN)
    expect(own.locator(".card").first).to_be_visible()
    state = room_state(valkey_url, room_of(page))
    assert state.certified and state.seed == seed, "the queued deal was not dealt"
    board = Board.from_seed(seed, CARDS_BACK)
    assert_accessible(page)
    driver = table.driver
    finish = page.locator("[data-testid=finish]")
    todo = {"back", "dealt", "run", "one-click"}
    for token in line:
        if not any(board.face_down):
            break
        move = Move.parse(token)
        if "back" in todo and any(m.kind == F2T for m in board.legal_moves()):
            table.card_back_and_home(board)
            todo.discard("back")
        if "dealt" in todo and move.kind in (T2F, T2T):
            looks = table.hint(board, move)
            assert looks["flip"] and looks["animation"] == "hint", looks
            todo.discard("dealt")
        if "run" in todo and move.kind == T2T and run_size(board, move) > 1:
            assert table.hint(board, move)["animation"] == "hint"
            page.emulate_media(reduced_motion="reduce")
            looks = hinted(page)
            assert looks["animation"] == "none" and looks["outline"] == "solid", looks
            page.emulate_media(reduced_motion="no-preference")
            todo.discard("run")
        if "one-click" in todo and move.kind in (W2F, T2F):
            card = driver.moving_card(board, move)
            if card % 13 == 0:  # an ace: one click sends it home
                table.setting("autoMove", True)
                before = board_moves(page)
                settle(page)
                table.pick(driver.card(card))
                table.confirmed(before + 1, card, f"f{card // 13}")
                board.play(move)
                table.setting("autoMove", False)
                todo.discard("one-click")
                continue
        expect(finish).to_have_count(0)
        driver.play(board, token, table.mode)
    assert not todo, f"not seen: {todo}"
    assert board.stock or board.waste, "the stock is empty: nothing forced to offer"
    expect(finish).to_be_visible()
    table.press("[data-testid=finish]")
    expect(own).to_have_attribute("data-status", "won", timeout=scaled(60_000))
    expect(page.locator("[data-testid=found]")).to_have_text("52/52")
    expect(page.locator("[data-testid=message]")).to_contain_text("You won!")
    expect(page.locator("[data-testid=celebration]")).to_be_attached()
    page.wait_for_function(f"({CASCADE})()?.drawn > 0.02")
    cascade = page.evaluate(CASCADE)
    assert cascade is not None
    assert (cascade["left"], cascade["top"]) == (0, 0), cascade
    assert (cascade["width"], cascade["height"]) == (viewport["width"], viewport["height"]), cascade
    assert cascade["ratio"] == (2 if phone else 1), cascade
    # The cards leave from the foundations where they are now (a card thrown up rises
    # at most 90 px), not from where they were before the results appeared above them.
    assert cascade["highest"] >= cascade["home"] - 100, cascade
    if phone:
        screenshot(page, "win-phone")
