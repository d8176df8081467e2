"""How cards and pages read: whole card indices at every size (long columns, a draw-3
waste fan, results boards), one board per player in the results with the deal's proof
behind a disclosure, replay keys, words that fit the game, boxes that stay in their
panels, and a phone board that uses the screen."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, ViewportSize, expect
from redis import Redis

from klondike_live import keys
from klondike_live.daily.variants import DRAW1, variant_slug
from klondike_live.engine import Board
from klondike_live.race.room import RoomState

from deal_pool import queue_deals
from pages import (
    OWN,
    PHONE,
    BoardDriver,
    Pages,
    Screenshot,
    all_cards_drawn,
    assert_accessible,
    cards_drawn,
    ready_and_start,
    room_of,
)
from reading import assert_indices_readable, moves_to_long_column, overflowing
from waits import scaled

LAPTOP: ViewportSize = {"width": 1366, "height": 768}
WIDE: ViewportSize = {"width": 1920, "height": 1080}
SIZES = (LAPTOP, WIDE, PHONE)
SLUG = variant_slug(DRAW1)
CELLS = "[data-testid^=leaderboard-] :is(td, th, a)"


def stored_room(valkey_url: str, room_id: str) -> RoomState:
    """The room as stored (the test reads the server's truth, as an operator could)."""
    with Redis.from_url(valkey_url) as redis:
        blob = redis.hget(keys.room(room_id), "state")
    assert isinstance(blob, bytes)
    return RoomState.from_blob(blob)


def start_solo(page: Page, draw: str, passes: str = "unlimited") -> None:
    page.goto("/#/")
    page.select_option("select[name=draw]", draw)
    page.select_option("select[name=passes]", passes)
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible()


def check_sizes(page: Page, selector: str, at_least: int) -> None:
    for size in SIZES:
        page.set_viewport_size(size)
        assert_indices_readable(page, selector, at_least=at_least)
    page.set_viewport_size(LAPTOP)


def test_long_column_indices_readable_at_every_size(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    """A column of nine face-up cards shows every card's rank and suit at 1366x768,
    1920x1080 and on a phone; so do the result and the replay of that game."""
    page = pages.open(name="Reader", viewport=LAPTOP)
    line: list[str] | None = None
    for _ in range(6):
        start_solo(page, "1")
        state = stored_room(valkey_url, room_of(page))
        line = moves_to_long_column(state.seed, state.variant)
        if line is not None:
            break
    assert line is not None, "no deal with a nine-card column in six tries"
    board = Board.from_seed(state.seed, state.variant)
    driver = BoardDriver(page)
    for token in line:
        driver.play(board, token, "keys")
    check_sizes(page, f"{OWN}", at_least=9)
    screenshot(page, "solo-long-column-desktop")

    page.click("[data-testid=resign]")
    expect(page.locator("[data-testid=results]")).to_be_visible()
    check_sizes(page, ".board", at_least=9)

    page.click("[data-testid=replay-link]")
    page.click("[aria-label='To the end']")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text(
        f"move {len(line)}/{len(line)}"
    )
    check_sizes(page, "[data-testid=boards] .board", at_least=9)


def test_draw3_waste_fan_shows_every_index(pages: Pages) -> None:
    """In draw 3 the two cards under the top of the waste show their suit as well as
    their rank, at every size."""
    page = pages.open(name="Fan", viewport=LAPTOP)
    start_solo(page, "3", "rules")
    own = page.locator(OWN)
    page.keyboard.press("d")
    expect(own).to_have_attribute("data-moves", "1")
    expect(own).to_have_attribute("data-pending", "0")
    expect(own.locator('.card[data-place="waste"]')).to_have_count(3)
    # Seven column tops and the three fanned waste cards.
    check_sizes(page, OWN, at_least=10)


# A certified draw-1 deal, and a line on it that puts one card home ("6F") and then
# turns the stock three times.
RESULTS_DRAW_1 = "results-3"
RESULTS_LINE = ("67", "6F", "D", "D", "D")


def test_race_results_watch_replay_and_words(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    """After a race each racer sees one board per player, revealed and readable, the
    deal's proof behind "Verify this deal"; the replay keys work after a replay button
    was clicked; the finished game is listed as "led with 1 card"; the rematch lobby
    does not keep the last game's message; the race counts in the statistics."""
    queue_deals(valkey_url, DRAW1, (RESULTS_DRAW_1,))
    ann = pages.open(name="Ann", viewport=LAPTOP)
    ann.check("form:has([data-testid=create-race]) input[name=public]")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea", viewport=LAPTOP)
    ready_and_start(ann, bea, "Bea")
    state = stored_room(valkey_url, room)
    assert state.seed == RESULTS_DRAW_1, "the queued deal was not dealt"
    board = Board.from_seed(state.seed, state.variant)
    driver = BoardDriver(ann)
    for token in RESULTS_LINE:
        driver.play(board, token, "keys")
    assert board.foundation_count == 1
    bea.keyboard.press("d")
    expect(bea.locator(OWN)).to_have_attribute("data-moves", "1")

    ann.click("[data-testid=resign]")
    bea.click("[data-testid=resign]")
    results = ann.locator("[data-testid=results]")
    expect(results).to_contain_text("Bea")
    # One board per player: Ann's own board gives way to the revealed boards.
    expect(ann.locator("[data-testid=boards] article")).to_have_count(2)
    expect(ann.locator(OWN)).to_be_hidden()
    labels = ann.locator(".board:visible").evaluate_all("ns => ns.map(n => n.ariaLabel)")
    assert sorted(labels) == ["Ann's board", "Bea's board"], labels
    expect(ann.locator("[data-testid=board-0] header")).to_contain_text("Ann (you)")
    check_sizes(ann, "[data-testid=boards] .board", at_least=20)

    # The seed and commitment sit behind a disclosure with a plain explanation.
    verify = ann.locator("[data-testid=verify]")
    expect(verify.locator("summary")).to_have_text("Verify this deal")
    assert "commitment" not in results.inner_text().replace(verify.inner_text(), "")
    expect(verify.locator("[data-testid=verify-seed]")).to_be_hidden()
    verify.locator("summary").click()
    expect(verify.locator("[data-testid=verify-seed]")).to_have_text(state.seed)
    expect(verify).to_contain_text(state.commitment)
    expect(verify).to_contain_text("before the first card")
    assert_accessible(ann)
    screenshot(ann, "race-results-desktop", full_page=True)
    ann.set_viewport_size(PHONE)
    assert_indices_readable(ann, "[data-testid=boards] .board", at_least=20)  # laid out again
    wide = ann.evaluate("document.documentElement.scrollWidth")
    assert wide <= PHONE["width"], f"the results page is {wide} px wide on a phone"
    screenshot(ann, "race-results-phone", full_page=True)
    ann.set_viewport_size(LAPTOP)

    # Replay keys keep working once a replay button has the focus.
    ann.click("[data-testid=replay-link]")
    moves0 = ann.locator("[data-testid=replay-moves-0]")
    total = len(board.moves)
    expect(moves0).to_contain_text(f"move 0/{total}")
    ann.click("[data-testid=replay-step]")
    expect(moves0).to_contain_text(f"move 1/{total}")
    expect(ann.locator("[data-testid=replay-step]")).to_be_focused()

    def shown() -> int:
        match = re.search(r"move (\d+)/", moves0.inner_text())
        assert match is not None
        return int(match.group(1))

    ann.keyboard.press("ArrowRight")
    expect(moves0).not_to_contain_text(f"move 1/{total}")
    assert shown() > 1
    ann.keyboard.press("End")
    expect(moves0).to_contain_text(f"move {total}/{total}")
    # One step back from the end: some board shows an earlier move.
    controls = ann.locator("[data-testid^=replay-moves-]")
    at_end = controls.all_inner_texts()
    ann.keyboard.press("ArrowLeft")
    ann.wait_for_function(
        "(before) => JSON.stringify([...document.querySelectorAll("
        "'[data-testid^=replay-moves-]')].map((n) => n.innerText)) !== before",
        arg=json.dumps(at_end, separators=(",", ":"), ensure_ascii=False),
    )
    ann.keyboard.press("Home")
    expect(moves0).to_contain_text(f"move 0/{total}")

    # The finished race is listed with the right number.
    ann.goto("/#/")
    expect(ann.locator("[data-testid=finished-games]")).to_contain_text(
        re.compile(r"Ann led with 1 card(?!s)")
    )

    # A rematch lobby does not say the last game is over.
    ann.go_back()
    ann.go_back()
    expect(bea.locator("[data-testid=message]")).to_contain_text("Game over")
    bea.click("[data-testid=rematch]")
    expect(bea.locator("[data-testid=seats]")).to_contain_text("Ann")
    expect(bea.locator("[data-testid=message]")).to_have_text("")

    # The race counts in each racer's statistics.
    bea.goto("/#/stats")
    row = bea.locator("[data-testid=stats-race]")
    expect(row).to_contain_text("Race · Draw 1")
    expect(row.locator("td").nth(0)).to_have_text("1")  # played
    expect(bea.locator("[data-testid=stats-recent]")).to_contain_text("Race · Draw 1")


def test_a_finished_solo_game_reads_right_to_a_stranger(pages: Pages) -> None:
    """A stranger opening someone's finished solo game is told nothing about races and
    sees no "leader" badge on the one board; a room that does not exist shows no stats."""
    owner = pages.open(name="Owner", viewport=LAPTOP)
    start_solo(owner, "1")
    owner.keyboard.press("d")
    expect(owner.locator(OWN)).to_have_attribute("data-moves", "1")
    owner.click("[data-testid=resign]")
    expect(owner.locator("[data-testid=results]")).to_be_visible()
    room = room_of(owner)

    stranger = pages.open(f"/#/room/{room}", name="Stranger", viewport=LAPTOP)
    expect(stranger.locator("[data-testid=subtitle]")).to_contain_text("Finished")
    expect(stranger.locator("[data-testid=board-0] .card").first).to_be_visible()
    message = stranger.locator("[data-testid=message]")
    expect(message).not_to_contain_text("race")
    expect(message).not_to_contain_text("spectator")
    expect(stranger.locator(".badge.lead")).to_have_count(0)
    assert_indices_readable(stranger, "[data-testid=boards] .board", at_least=7)

    stranger.goto("/#/room/nosuchroom00")
    expect(stranger.locator("h1")).to_have_text("No such room")
    expect(stranger.locator(".stats")).to_be_hidden()
    assert_accessible(stranger)


def test_phone_board_uses_the_screen_and_shows_the_stock_count(
    pages: Pages, screenshot: Screenshot
) -> None:
    """On a phone (touch) the board reaches the bottom of the screen with cards as large
    as the width allows, and column 1 never covers the stock count; the game's results,
    its deal's proof open, stay within the screen's width."""
    page = pages.open(name="Marguerite Delacroix", viewport=PHONE)
    page.click("[data-testid=start-solo]")
    own = page.locator(OWN)
    expect(own.locator(".card").first).to_be_visible()
    page.locator(f'{OWN} .card[data-place="stock"]').last.tap()
    expect(own).to_have_attribute("data-moves", "1")
    page.wait_for_function("document.getAnimations().length === 0")
    count = own.locator(".stock-count")
    expect(count).to_have_text("23")
    count_box = count.bounding_box()
    assert count_box is not None
    for node in own.locator('.card[data-place="t0"], .slot[data-place="t0"]').all():
        box = node.bounding_box()
        assert box is not None
        assert box["y"] >= count_box["y"] + count_box["height"], (
            f"column 1 starts at {box['y']}, over the stock count ending at "
            f"{count_box['y'] + count_box['height']}"
        )
    board_box = own.bounding_box()
    assert board_box is not None
    bottom = board_box["y"] + board_box["height"]
    assert bottom >= PHONE["height"] - 24, f"the board ends at {bottom} of {PHONE['height']}"
    # The columns are short: the tableau fans out over the height, cards at full width.
    card = own.locator('.card[data-place="t6"]').last.bounding_box()
    assert card is not None and card["width"] >= 50, card
    column = own.locator('.card[data-place="t6"]')
    first, last = column.first.bounding_box(), column.last.bounding_box()
    assert first is not None and last is not None
    assert last["y"] - first["y"] >= 6 * 0.18 * card["height"]
    assert_indices_readable(page, OWN, at_least=7)
    assert_accessible(page)

    page.click("[data-testid=resign]")
    expect(page.locator("[data-testid=results]")).to_contain_text("resigned")
    page.locator("[data-testid=verify] summary").tap()
    expect(page.locator("[data-testid=verify-seed]")).to_be_visible()
    page.wait_for_function("document.getAnimations().length === 0")
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= PHONE["width"], (
        f"the results page is {wide} px wide on a {PHONE['width']} px screen"
    )
    assert_indices_readable(page, OWN, at_least=7)
    assert_accessible(page)


def test_daily_game_says_playing_and_its_leaderboard_fits(pages: Pages) -> None:
    """Today's daily game says "Playing", not "Racing"; given up and reloaded, it shows
    its board as it ended; at 1366 px the leaderboard with its "Replay" links stays
    inside its panel; the attempt counts in the statistics."""
    page = pages.open("/#/daily", name="Marguerite Delacroix", viewport=LAPTOP)
    # The server certifies today's deal on first use: that takes a while on a busy machine.
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
    subtitle = page.locator("[data-testid=subtitle]")
    expect(subtitle).to_contain_text("Playing")
    expect(subtitle).not_to_contain_text("Racing")
    page.keyboard.press("d")
    expect(page.locator(OWN)).to_have_attribute("data-moves", "1")
    page.click("[data-testid=resign]")
    expect(page.locator("[data-testid=results]")).to_be_visible()
    # Reloaded, the finished attempt shows its board as it ended, with its stats.
    page.reload()
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-status", "resigned", timeout=scaled(10_000))
    expect(page.locator("[data-testid=results]")).to_be_visible()
    expect(own).to_have_attribute("data-moves", "1")
    expect(page.locator("[data-testid=moves]")).to_have_text("1")
    expect(own.locator('.card[data-place="waste"]')).to_have_count(1)
    expect(own.locator('.card[data-place^="t"]')).to_have_count(28)
    page.click("[data-testid=daily-back]")
    board = page.locator(f"[data-testid=leaderboard-{SLUG}]")
    expect(board.get_by_role("link", name="Replay").first).to_be_visible()
    for size in (LAPTOP, WIDE, PHONE):
        page.set_viewport_size(size)
        spilled = overflowing(page, CELLS, "section.panel")
        assert not spilled, f"at {size}: {spilled}"
    page.set_viewport_size(LAPTOP)
    assert_accessible(page)
    page.goto("/#/stats")
    row = page.locator("[data-testid=stats-daily]")
    expect(row).to_contain_text("Daily challenge · Draw 1")
    expect(row.locator("td").nth(0)).to_have_text("1")  # played


def test_watching_clocks_away_racers_and_a_finished_racer_watching(
    pages: Pages, screenshot: Screenshot
) -> None:
    """A spectator sees each racer's clock and the race's time left; a racer who drops
    shows as away with the grace countdown; a racer who resigned watches the remaining
    boards, shown only the cards every racer still playing has seen."""
    ann = pages.open(name="Ann", viewport=LAPTOP)
    ann.select_option("form:has([data-testid=create-race]) select[name=seats]", "3")
    ann.select_option("form:has([data-testid=create-race]) select[name=time]", "600")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea", viewport=LAPTOP)
    cy = pages.open(invite.input_value(), name="Cy", viewport=LAPTOP)
    dee = pages.open(f"/#/watch/{room}", name="Dee", viewport=LAPTOP)
    expect(ann.locator("[data-testid=seats]")).to_contain_text("Cy")
    for racer in (ann, bea, cy):
        racer.click("[data-testid=ready]")
    expect(ann.locator("[data-testid=start]")).to_be_enabled()
    ann.click("[data-testid=start]")
    for racer in (ann, bea, cy):
        expect(racer.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(10_000))

    # Each racer's clock runs, and the race's time left counts down.
    clock = dee.locator("[data-testid=board-0] [data-testid=racer-clock]")
    expect(clock).to_have_text(re.compile(r"^0:0[1-9]$"), timeout=scaled(15_000))
    expect(dee.locator("[data-testid=board-2] [data-testid=racer-clock]")).to_be_visible()
    left = dee.locator("[data-testid=time-left]")
    expect(left).to_contain_text(re.compile(r"9:[0-5]\d left"))

    # Bea drops: she shows away, with the time before she counts as resigned.
    bea_seen = cards_drawn(bea, "own-board")
    bea.context.close()
    away = dee.locator("[data-testid=board-1] [data-testid=away]")
    expect(away).to_contain_text(re.compile(r"resigns in 0:[0-5]\d"), timeout=scaled(15_000))
    first = away.inner_text()
    expect(away).not_to_have_text(first, timeout=scaled(5_000))  # it counts down
    expect(dee.locator("[data-testid=board-0] [data-testid=away]")).to_have_count(0)
    screenshot(dee, "watching-desktop")
    assert_accessible(dee)

    # Ann resigns and watches the rest: Cy's turned cards stay backs (Bea has not seen them).
    ann.click("[data-testid=resign]")
    expect(ann.locator("[data-testid=subtitle]")).to_contain_text(
        "Your game is over · watching", timeout=scaled(10_000)
    )
    expect(ann.locator("[data-testid=board-2] .card").first).to_be_visible()
    expect(ann.locator(OWN)).to_be_hidden()
    for _ in range(3):
        moves = int(cy.locator(OWN).get_attribute("data-moves") or 0)
        cy.keyboard.press("d")
        expect(cy.locator(OWN)).to_have_attribute("data-moves", str(moves + 1))
    expect(ann.locator("[data-testid=board-2] header")).to_contain_text("3 moves")
    expect(ann.locator("[data-testid=board-2] .card[data-place=waste]")).to_have_count(3)
    assert ann.locator("[data-testid=board-2] .card.back[data-place=waste]").count() == 3
    cy_seen = cards_drawn(cy, "own-board")
    watched = all_cards_drawn(ann, "board-")
    assert watched and watched <= cy_seen & bea_seen, watched - (cy_seen & bea_seen)
    expect(ann.locator("[data-testid=message]")).not_to_contain_text("own race")
    assert_accessible(ann)

    # Cy resigns too; Bea's grace runs out or not, the race ends and Ann has her seat
    # back for the rematch.
    cy.click("[data-testid=resign]")
    expect(ann.locator("[data-testid=results]")).to_contain_text("Cy", timeout=scaled(90_000))
    expect(ann.locator("[data-testid=rematch]")).to_be_visible(timeout=scaled(10_000))
