"""The game table's feel in the browser: hints that show, every click on the stock
counted, the win celebration, one-click moves, auto-completion and the f2t variant."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from playwright.sync_api import Page, expect
from redis import Redis

from klondike_live import keys
from klondike_live.engine import Board, Move, Variant
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T
from klondike_live.race.room import RoomState
from klondike_live.solver.hints import best_move, forced_finish
from klondike_live.solver.search import SOLVABLE, Budget, solve
from klondike_live.store.connect import open_redis
from klondike_live.store.pool import PoolStore

from pages import OWN, TOP_STRIP, BoardDriver, Pages, Screenshot, room_of, run_size, settle

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


HARD_DRAW_1 = "h27"
"""A draw-1, one-pass deal the pool's search certifies (in about 220,000 nodes) and a
one-second search, a hint's, does not win from its start."""


EASY_DRAW_1 = "h29"
"""A draw-1, one-pass deal a hint's search wins at once (its first hint marks a card)."""


def queue_deals(valkey_url: str, variant: Variant, seeds: tuple[str, ...]) -> None:
    """Put `seeds` first in the certified deal pool of `variant`, so that the next solo
    games of that variant get them in order (a seed the pool handed out before, in an
    earlier run on the same Valkey, is not queued again)."""

    async def push() -> None:
        redis = await open_redis(valkey_url)
        try:
            pool = PoolStore(redis)
            for seed in seeds:
                line = solve(Board.from_seed(seed, variant), Budget(seconds=10))
                assert line.result == SOLVABLE, seed
                await pool.push(variant, seed, line.moves)
        finally:
            await redis.aclose()

    # Playwright's sync API runs an event loop in this thread: the store's in another.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, push()).result()


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
    expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=20_000)


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
    pages: Pages, valkey_url: str, screenshot: Screenshot
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
    expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=20_000)


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
    page.wait_for_timeout(1_500)  # some cards on their way
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
    page.wait_for_timeout(500)
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
    page.check("[data-testid=solo-f2t]")
    page.select_option("select[name=passes]", "unlimited")
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible()
    title = "Draw 1 · unlimited passes · cards back from foundations"
    expect(page.locator("h1")).to_contain_text(title)
    state = room_state(valkey_url, room_of(page))
    assert state.variant.f2t
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
    page = pages.open(name="Finisher")
    for _ in range(3):
        board, solution = start_winnable_solo(page, valkey_url)
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
    expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=60_000)
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
        page.wait_for_timeout(1_000)  # the server's answer
        forced = forced_finish(board)
        expect(finish).to_have_count(1 if forced else 0)
        if forced:
            finish.click()
            expect(page.locator(OWN)).to_have_attribute("data-status", "won", timeout=60_000)
            return
    raise AssertionError("no game reached a forced finish with cards left in the stock")
