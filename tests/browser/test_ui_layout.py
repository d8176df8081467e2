"""Layouts under pressure: a racer's opponents on a phone's screen, with their away
countdown; a spectator's hidden-cards badge and what the face-down cards mean; daily
leaderboard headers on one line in every language; outlines that enclose a whole
column; and drags made while the board lays itself out again."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Page, ViewportSize, expect
from redis import Redis

from klondike_live import keys
from klondike_live.daily.variants import DRAW1, variant_slug
from klondike_live.engine import Board, Move
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T
from klondike_live.engine.view import racer_view
from klondike_live.race.room import RoomState

from deal_pool import queue_deals
from pages import (
    OWN,
    PHONE,
    BoardDriver,
    Pages,
    assert_accessible,
    ready_and_start,
    room_of,
    run_size,
    settle,
)
from valkeys import started_valkey
from waits import scaled


@pytest.fixture(scope="module")
def valkey_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Valkey of this module's own (its server's too): today's daily game played here
    and the deals queued here reach no other module's leaderboard or pool."""
    external = os.environ.get("KLONDIKE_TEST_REDIS_URL", "").strip()
    if external:
        yield external
        return
    with started_valkey(tmp_path_factory) as url:
        yield url


def stored_room(valkey_url: str, room_id: str) -> RoomState:
    """The room as stored (its deal's seed, its variant)."""
    with Redis.from_url(valkey_url) as redis:
        blob = redis.hget(keys.room(room_id), "state")
    assert isinstance(blob, bytes)
    return RoomState.from_blob(blob)


LAPTOP: ViewportSize = {"width": 1366, "height": 768}
NARROW: ViewportSize = {"width": 760, "height": 768}
SLUG = variant_slug(DRAW1)
# A certified draw-1 deal whose tenth stock card is an ace: a racer who turns ten
# cards and sends it home puts a card on the foundations that the other has not seen.
MASK_DEAL = "spectator-mask-5"


def start_race(pages: Pages, viewport: ViewportSize) -> tuple[Page, Page, str]:
    """Ann and Bea race each other (a race of two) at `viewport`; returns both pages
    and the room."""
    ann = pages.open(name="Ann", viewport=viewport)
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea", viewport=viewport)
    ready_and_start(ann, bea, "Bea")
    return ann, bea, room


def in_viewport(page: Page, selector: str) -> None:
    """The element lies wholly inside the window, the page not scrolled (the rows are
    drawn again as progress comes: the check waits for one that is)."""
    assert page.evaluate("window.scrollY") == 0
    expect(page.locator(selector)).to_be_in_viewport(ratio=1)


def test_phone_racer_sees_opponents_without_scrolling(pages: Pages) -> None:
    """On a phone, a racer's opponents' progress is on the screen from the start, and
    the board still reaches down the screen and takes a move."""
    ann, _bea, _room = start_race(pages, PHONE)
    opponent = "[data-testid=opponent-1]"
    expect(ann.locator(opponent)).to_be_visible()
    settle(ann)
    in_viewport(ann, opponent)
    in_viewport(ann, f"{opponent} [role=progressbar] >> nth=0")
    own = ann.locator(OWN)
    box = own.bounding_box()
    assert box is not None and box["y"] + box["height"] >= PHONE["height"] - 40, box
    ann.locator(f'{OWN} .card[data-place="stock"]').last.tap()
    expect(own).to_have_attribute("data-moves", "1")
    settle(ann)
    in_viewport(ann, opponent)
    assert_accessible(ann)


def test_racer_sees_an_opponent_away_with_the_grace_countdown(pages: Pages) -> None:
    """When an opponent's page closes, a racer sees that opponent away with the time
    before it counts as resigned, counting down, on the phone's screen."""
    ann, bea, _room = start_race(pages, PHONE)
    opponent = ann.locator("[data-testid=opponent-1]")
    expect(opponent.locator("[data-testid=away]")).to_have_count(0)
    bea.context.close()
    away = opponent.locator("[data-testid=away]")
    expect(away).to_contain_text(re.compile(r"resigns in 0:[0-5]\d"), timeout=scaled(15_000))
    first = away.inner_text()
    expect(away).not_to_have_text(first, timeout=scaled(5_000))  # it counts down
    in_viewport(ann, "[data-testid=opponent-1] [data-testid=away]")
    assert_accessible(ann)


def test_spectator_phone_badge_uncovered_and_face_down_cards_explained(
    pages: Pages, valkey_url: str
) -> None:
    """A spectator on a phone sees the "+1 hidden" badge uncovered by column 7, and is
    told why cards a racer has seen are drawn face down."""
    queue_deals(valkey_url, DRAW1, (MASK_DEAL,))
    ann, bea, room = start_race(pages, LAPTOP)
    watcher = pages.open(f"/#/watch/{room}", name="Cy", viewport=PHONE)
    assert stored_room(valkey_url, room).seed == MASK_DEAL, "the queued deal was not dealt"
    board = Board.from_seed(MASK_DEAL, DRAW1)
    driver = BoardDriver(ann)
    for token in ["D"] * 10 + ["WF"]:
        driver.play(board, token, "keys")
    badge = watcher.locator("[data-testid=board-0] .hidden-badge")
    expect(badge).to_have_text("+1 hidden")
    settle(watcher)
    badge.scroll_into_view_if_needed()
    covered = badge.evaluate(
        """(node) => {
          const r = node.getBoundingClientRect();
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return hit && (hit === node || node.contains(hit)) ? null
            : `${hit?.className} ${hit?.getAttribute('aria-label')}`;
        }"""
    )
    assert covered is None, f"the badge is covered by {covered}"
    # Its own box stays within the board's top strip: nothing of it under a column.
    column = watcher.locator('[data-testid=board-0] .slot[data-place="t6"]').bounding_box()
    box = badge.bounding_box()
    assert box is not None and column is not None
    assert box["y"] + box["height"] <= column["y"] + 0.5, (box, column)
    note = watcher.locator("[data-testid=mask-note]")
    expect(note).to_be_visible()
    expect(note).to_contain_text("spectators may not")
    expect(badge).to_have_attribute("title", re.compile("not know"))
    # Racers are not told this: they see their own cards.
    expect(ann.locator("[data-testid=mask-note]")).to_be_hidden()
    expect(bea.locator("[data-testid=mask-note]")).to_be_hidden()
    assert_accessible(watcher)


TWO_FRAMES = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"

HEADERS_ON_ONE_LINE = """
() => [...document.querySelectorAll('[data-testid^=leaderboard-] th')].flatMap((th) => {
  const range = document.createRange();
  range.selectNodeContents(th);
  const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0)
    .map((r) => Math.round(r.top)));
  const wide = th.scrollWidth > th.clientWidth;
  return tops.size > 1 || wide ? [`"${th.textContent}" (${tops.size} lines, `
    + `${th.scrollWidth} px in ${th.clientWidth})`] : [];
})
"""


def test_daily_leaderboard_headers_on_one_line(pages: Pages) -> None:
    """The daily leaderboard's header cells ("Rank", "Moves", "Replay"...) keep their
    words whole, on one line, at 1366x768 and on a phone, in every language."""
    page = pages.open("/#/daily", name="Marguerite Delacroix", viewport=LAPTOP)
    card = page.locator(f"[data-testid=challenge-{SLUG}]")
    for _ in range(40):
        expect(card).to_be_visible(timeout=scaled(30_000))
        if "Par " in card.inner_text():
            break
        page.wait_for_timeout(scaled(3_000))  # between reloads: the page is not told
        page.reload()
    expect(card).to_contain_text("Par ")
    page.click(f"[data-testid=play-{SLUG}]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(60_000))
    page.keyboard.press("d")
    expect(page.locator(OWN)).to_have_attribute("data-moves", "1")
    page.click("[data-testid=resign]")
    expect(page.locator("[data-testid=results]")).to_be_visible()
    today = datetime.now(UTC).date().isoformat()
    for lang in ("en", "eu", "es", "fr"):
        # Today's page, and the day's own leaderboard page.
        for path in ("#/daily", f"#/daily/{today}/{SLUG}"):
            page.goto(f"/?lang={lang}{path}")
            header = page.locator("[data-testid^=leaderboard-] th")
            expect(header.last).to_be_visible()
            expect(page.locator("html")).to_have_attribute("lang", lang)
            for size in (LAPTOP, PHONE):
                page.set_viewport_size(size)
                page.evaluate(TWO_FRAMES)
                broken = page.evaluate(HEADERS_ON_ONE_LINE)
                where = f"{lang} {path} at {size['width']}x{size['height']}"
                assert not broken, f"{where}: {broken}"
            page.set_viewport_size(LAPTOP)


COVERS = """
([outlined, card]) => {
  const a = outlined.getBoundingClientRect(), b = card.getBoundingClientRect();
  return a.left <= b.left + 0.5 && a.right >= b.right - 0.5
    && a.top <= b.top + 0.5 && a.bottom >= b.bottom - 0.5
    ? null : `${JSON.stringify(a)} does not cover ${JSON.stringify(b)}`;
}
"""


def start_solo(page: Page) -> None:
    page.goto("/#/")
    page.select_option("select[name=draw]", "1")
    page.select_option("select[name=passes]", "unlimited")
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible()


def test_column_outlines_enclose_the_column(pages: Pages, valkey_url: str) -> None:
    """A column's keyboard focus ring and its outline as a place to go (a hint's target,
    or where picked-up cards may go) enclose the column's cards, down to its top card."""
    page = pages.open(name="Outline", viewport=LAPTOP)
    start_solo(page)
    state = stored_room(valkey_url, room_of(page))
    board = Board.from_seed(state.seed, state.variant)
    settle(page)
    top = page.locator(f'{OWN} .card[data-place="t6"]').last
    slot = page.locator(f'{OWN} .slot[data-place="t6"]')
    slot.focus()
    page.keyboard.press("Shift")  # a key: the focus ring shows (focus-visible)
    expect(slot).to_be_focused()
    problem = page.evaluate(COVERS, [slot.element_handle(), top.element_handle()])
    assert problem is None, f"the focused column's outline: {problem}"

    # Turn the stock until a card can go onto a column with cards.
    driver = BoardDriver(page)
    onto_column = None
    for _ in range(30):
        onto_column = next(
            (m for m in board.legal_moves() if m.kind in (T2T, W2T) and board.tableau[m.dst]),
            None,
        )
        if onto_column:
            break
        driver.play(board, "D", "keys")
    assert onto_column is not None, "no move onto a column in thirty turns of the stock"
    target = page.locator(f'{OWN} .slot.target[data-place^="t"]')
    page.click("[data-testid=hint]")
    expect(page.locator(f"{OWN} .card.hinted, {OWN} .slot.target").first).to_be_visible()
    if not target.count():  # the hint goes elsewhere: pick the cards up by keys instead
        if onto_column.kind == W2T:
            page.keyboard.press("w")
        else:
            for _ in range(run_size(board, onto_column)):
                page.keyboard.press(str(onto_column.src + 1))
    expect(target.first).to_be_visible()
    for node in target.all():
        place = node.get_attribute("data-place")
        cards = page.locator(f'{OWN} .card[data-place="{place}"]')
        if not cards.count():
            continue
        problem = page.evaluate(COVERS, [node.element_handle(), cards.last.element_handle()])
        assert problem is None, f"the outlined column {place}: {problem}"


# Wait until the board has laid itself out again after a resize (two frames), then
# give where the source and target are drawn at that moment (mid-animation if they move).
DRAWN_AFTER_RESIZE = """
async ([source, target]) => {
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [source.getBoundingClientRect().toJSON(), target.getBoundingClientRect().toJSON()];
}
"""

# Every card of the own board lies on its pile: in its column's, foundation's or the
# stock's and waste's place (draw 1), as the slots are drawn.
OFF_PILE = """
(own) => {
  const slots = Object.fromEntries([...own.querySelectorAll('.slot')]
    .map((s) => [s.dataset.place, s.getBoundingClientRect()]));
  const out = [];
  for (const card of own.querySelectorAll('.card')) {
    const r = card.getBoundingClientRect(), s = slots[card.dataset.place];
    const column = card.dataset.place.startsWith('t');
    const dx = Math.abs(r.left - s.left), dy = r.top - s.top;
    if (dx > (card.dataset.place === 'stock' ? 6 : 1.5) || (!column && Math.abs(dy) > 6)
        || (column && dy < -0.5))
      out.push(`${card.getAttribute('aria-label')} (${card.dataset.place}) at `
        + `${Math.round(r.left)},${Math.round(r.top)}, its pile at ${Math.round(s.left)},`
        + `${Math.round(s.top)}`);
  }
  return out;
}
"""


def next_drag(board: Board) -> Move | None:
    """A move to make by drag (none: the stock must be turned first)."""
    order = {W2F: 0, T2F: 1, W2T: 2, T2T: 3}
    moves = [
        m
        for m in board.legal_moves()
        if m.kind not in (DRAW, RECYCLE, F2T)
        # A king between empty columns goes back and forth: move it only from a pile
        # with more under it.
        and not (m.kind == T2T and len(board.tableau[m.src]) == run_size(board, m))
    ]
    moves.sort(key=lambda m: order[m.kind])
    return moves[0] if moves else None


def test_drags_made_while_the_board_lays_out_again(pages: Pages, valkey_url: str) -> None:
    """The window is resized and a card dragged at once, many times, while the cards
    take their new sizes and places: each drag starts where the card is drawn and
    lands on its target, and no card is left drawn off its pile."""
    page = pages.open(name="Quick", viewport=LAPTOP)
    start_solo(page)
    state = stored_room(valkey_url, room_of(page))
    board = Board.from_seed(state.seed, state.variant)
    driver = BoardDriver(page)
    own = page.locator(OWN)
    sizes = (NARROW, LAPTOP)
    drags = 0
    for step in range(200):
        if drags >= 16 or board.is_trivially_won():
            break
        move = next_drag(board)
        if move is None:
            driver.play(board, "D", "keys")
            continue
        settle(page)
        moves_before = int(own.get_attribute("data-moves") or 0)
        source = driver.card(driver.moving_card(board, move)).element_handle()
        target = driver.target(board, move).element_handle()
        page.set_viewport_size(sizes[drags % 2])
        start, end = page.evaluate(DRAWN_AFTER_RESIZE, [source, target])
        x, y = start["x"] + start["width"] / 2, start["y"] + min(12.0, start["height"] / 2)
        mouse = page.mouse
        mouse.move(x, y)
        mouse.down()
        mouse.move(x + 8, y + 8, steps=2)
        mouse.move(end["x"] + end["width"] / 2, end["y"] + min(20.0, end["height"] / 2), steps=6)
        mouse.up()
        drags += 1
        try:
            expect(own).to_have_attribute("data-pending", "0")
            expect(own).to_have_attribute("data-moves", str(moves_before + 1))
        except AssertionError:
            raise AssertionError(f"drag {drags} ({move}, step {step}) did not land") from None
        board.play(move)
        settle(page)
        off = own.evaluate(OFF_PILE)
        assert not off, f"after drag {drags} ({move}): {off}"
        shown = own.locator('.card[data-place^="t"]:not(.back)').evaluate_all(
            "ns => ns.map(n => Number(n.dataset.card)).sort((a, b) => a - b)"
        )
        view = racer_view(board)
        expected = sorted(
            c for pile, down in zip(view.tableau, view.face_down, strict=True) for c in pile[down:]
        )
        assert shown == expected, f"after drag {drags} ({move}) the columns differ"
    assert drags >= 8, f"only {drags} drags made"
