"""Your games (`#/me/games`) and head to head under a race's results: two racers race
twice (Ann sends an ace home each time, so she ranks first), Ann plays a solo game, then
her games page lists the three newest first, pages through them with *More games*,
narrows them by kind, result and opponent (your record against them above the list),
and opens a game's replay; the results of the second race show each racer's record
against the other. A player with no games
sees the empty list, and a history database that does not answer is said so."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from klondike_live.daily.variants import DRAW1

from deal_pool import queue_deals
from pages import OWN, PHONE, TOP_STRIP, Pages, Screenshot, assert_accessible, room_of
from waits import scaled

EN_DASH = "\N{EN DASH}"
SLOW = scaled(15_000)
"""Waits for what the history database gives: it is written a moment after the results."""

# The card number of an ace on top of a column or of the waste of the page's own board
# (cards are suit * 13 + rank - 1: an ace is 0 modulo 13), or null.
TOP_ACE = """(own) => {
  const tops = new Map();
  for (const node of document.querySelectorAll(`${own} .card[data-card]`)) {
    const place = node.dataset.place;
    if (!(place === "waste" || place.startsWith("t")) || node.dataset.card === "") continue;
    const index = Number(node.dataset.index);
    if (!tops.has(place) || tops.get(place).index < index)
      tops.set(place, {index, card: Number(node.dataset.card)});
  }
  const ace = [...tops.values()].find((top) => top.card % 13 === 0);
  return ace ? ace.card : null;
}"""


def moved(page: Page, moves: int) -> None:
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-moves", str(moves))
    expect(own).to_have_attribute("data-pending", "0")


def send_an_ace_home(page: Page) -> None:
    """Turn the stock until an ace is on top of a pile, and send it home (one card home)."""
    own = page.locator(OWN)
    for _ in range(30):
        moves = int(own.get_attribute("data-moves") or 0)
        ace = page.evaluate(TOP_ACE, OWN)
        if ace is not None:
            page.locator(f'{OWN} .card[data-card="{ace}"]').dblclick(position=TOP_STRIP)
            moved(page, moves + 1)
            expect(page.locator("[data-testid=found]")).to_have_text("1/52")
            return
        page.locator(f'{OWN} .card[data-place="stock"]').last.click()
        moved(page, moves + 1)
    raise AssertionError("no ace came up")


def race(ann: Page, bea: Page) -> None:
    """Ann and Bea, in Ann's room's lobby, race: Ann gets an ace home, both resign."""
    ann.click("[data-testid=ready]")
    bea.click("[data-testid=ready]")
    expect(ann.locator("[data-testid=start]")).to_be_enabled()
    ann.click("[data-testid=start]")
    for racer in (ann, bea):
        expect(racer.locator(f"{OWN} .card").first).to_be_visible(timeout=SLOW)
    send_an_ace_home(ann)
    for racer in (ann, bea):
        racer.click("[data-testid=resign]")
    for racer in (ann, bea):
        expect(racer.locator("[data-testid=results]")).to_contain_text("Bea", timeout=SLOW)


def user_of(page: Page) -> str:
    user: str = page.evaluate("window.klondike.conn.user")
    return user


def rows(page: Page) -> list[str]:
    """The kinds of the games listed, in order."""
    kinds: list[str] = page.locator("[data-testid=games-row]").evaluate_all(
        "rows => rows.map((row) => row.dataset.kind)"
    )
    return kinds


# Certified draw-1 deals with an ace on top of a column from the deal: each race puts one
# card home at once, whatever the stock holds.
RACE_DEALS = ("games-23", "games-24")


def test_your_games_and_head_to_head(pages: Pages, valkey_url: str, screenshot: Screenshot) -> None:
    queue_deals(valkey_url, DRAW1, RACE_DEALS)
    ann = pages.open(name="Ann")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea")
    expect(ann.locator("[data-testid=seats]")).to_contain_text("Bea")
    ann_id, bea_id = user_of(ann), user_of(bea)

    # The first race: each racer's first game against the other.
    race(ann, bea)
    ann_record = ann.locator(f"[data-testid=head-to-head-{bea_id}]")
    expect(ann_record).to_have_text("Your first game against Bea", timeout=SLOW)
    expect(bea.locator(f"[data-testid=head-to-head-{ann_id}]")).to_have_text(
        "Your first game against Ann", timeout=SLOW
    )

    # A rematch: now a score, counting this race too, and a link to the games together.
    ann.click("[data-testid=rematch]")
    for racer in (ann, bea):
        expect(racer.locator("[data-testid=ready]")).to_have_text("I'm ready", timeout=SLOW)
    race(ann, bea)
    expect(ann_record).to_contain_text(f"You 2 {EN_DASH} 0 Bea", timeout=SLOW)
    expect(ann_record).to_contain_text("2 games together")
    bea_record = bea.locator(f"[data-testid=head-to-head-{ann_id}]")
    expect(bea_record).to_contain_text(f"You 0 {EN_DASH} 2 Ann", timeout=SLOW)
    expect(ann.locator("[data-testid=head-to-head]")).to_contain_text("Head to head")
    assert_accessible(ann)
    screenshot(ann, "race-results-head-to-head")

    # A solo game, given up: Ann's newest game.
    ann.goto("/#/")
    ann.click("[data-testid=start-solo]")
    expect(ann.locator(f"{OWN} .card").first).to_be_visible(timeout=SLOW)
    solo = room_of(ann)
    ann.click("[data-testid=resign]")
    expect(ann.locator("[data-testid=results]")).to_contain_text("resigned", timeout=SLOW)

    # The home page links to the games page, which lists them newest first, two a page.
    ann.goto("/#/")
    expect(ann.locator("[data-testid=games-link]")).to_be_visible(timeout=SLOW)
    ann.click("[data-testid=games-link]")
    expect(ann).to_have_url(re.compile(r"#/me/games$"))
    expect(ann.locator("h1")).to_have_text("Your games")
    table = ann.locator("[data-testid=games-table]")
    expect(table.locator("[data-testid=games-row]")).to_have_count(3, timeout=SLOW)
    assert rows(ann) == ["solo", "race", "race"]
    ann.goto("/#/me/games?limit=2")
    expect(table.locator("[data-testid=games-row]")).to_have_count(2, timeout=SLOW)
    first, second = table.locator("[data-testid=games-row]").all()
    expect(first).to_have_attribute("data-room", solo)
    expect(first).to_contain_text("Solo")
    expect(first).to_contain_text("Lost")
    expect(first).to_contain_text("resigned")
    expect(second).to_have_attribute("data-room", room)
    expect(second).to_have_attribute("data-gen", "2")
    expect(second).to_contain_text("1st of 2")
    expect(second).to_contain_text("1/52")
    expect(second).to_contain_text("Bea")
    more = ann.locator("[data-testid=games-more]")
    more.click()
    expect(table.locator("[data-testid=games-row]")).to_have_count(3)
    expect(table.locator("[data-testid=games-row]").nth(2)).to_have_attribute("data-gen", "1")
    expect(more).to_have_count(0)
    expect(ann.locator("[data-testid=games-end]")).to_be_visible()
    expect(table.locator("[data-testid=games-replay]").nth(2)).to_be_focused()
    assert_accessible(ann)
    screenshot(ann, "games-desktop")
    ann.set_viewport_size(PHONE)
    screenshot(ann, "games-phone", full_page=True)
    ann.set_viewport_size({"width": 1280, "height": 800})

    # Filters: the kind, then the result (none won), cleared; the opponent.
    ann.select_option("[data-testid=games-filter-kind]", "race")
    expect(ann).to_have_url(re.compile(r"#/me/games\?kind=race&limit=2$"))
    expect(table.locator("[data-testid=games-row]")).to_have_count(2)
    assert rows(ann) == ["race", "race"]
    ann.select_option("[data-testid=games-filter-result]", "won")
    expect(ann.locator("[data-testid=games-empty]")).to_contain_text("No games match")
    ann.click("text=Clear the filters")
    expect(table.locator("[data-testid=games-row]")).to_have_count(2)
    assert rows(ann) == ["solo", "race"]
    ann_games_record = ann.locator("[data-testid=games-head-to-head]")
    expect(ann_games_record).to_have_count(0)
    ann.select_option("[data-testid=games-filter-opponent]", label="Bea")
    expect(ann).to_have_url(re.compile(rf"opponent={bea_id}"))
    expect(table.locator("[data-testid=games-row]")).to_have_count(2)
    assert rows(ann) == ["race", "race"]
    # Your record against the opponent, above the list, as under a race's results.
    expect(ann_games_record).to_contain_text(f"You 2 {EN_DASH} 0 Bea")
    expect(ann_games_record).to_contain_text("2 games together")
    expect(ann_games_record.get_by_role("heading", name="Head to head")).to_be_visible()
    ann.reload()  # the filters are in the address
    expect(ann.locator("[data-testid=games-filter-opponent]")).to_have_value(bea_id, timeout=SLOW)
    expect(table.locator("[data-testid=games-row]")).to_have_count(2)
    expect(ann_games_record).to_contain_text(f"You 2 {EN_DASH} 0 Bea")
    assert_accessible(ann)

    # A game's link opens its replay.
    table.locator("[data-testid=games-replay]").first.click()
    expect(ann).to_have_url(re.compile(rf"#/replay/{room}/2$"))
    expect(ann.locator("[data-testid=replay-moves-0]")).to_be_visible(timeout=SLOW)

    # Head to head links to the games together, from Bea's side.
    bea_record.get_by_role("link", name="Your games together").click()
    expect(bea).to_have_url(re.compile(rf"#/me/games\?opponent={ann_id}$"))
    expect(bea.locator("[data-testid=games-row]")).to_have_count(2, timeout=SLOW)
    expect(bea.locator("[data-testid=games-row]").first).to_contain_text("2nd of 2")
    bea_games_record = bea.locator("[data-testid=games-head-to-head]")
    expect(bea_games_record).to_contain_text(f"You 0 {EN_DASH} 2 Ann")
    # The filter cleared, the record goes.
    bea.select_option("[data-testid=games-filter-opponent]", "")
    expect(bea).to_have_url(re.compile(r"#/me/games$"))
    expect(bea.locator("[data-testid=games-row]")).to_have_count(2)
    expect(bea_games_record).to_have_count(0)


def test_no_games_yet_and_history_unavailable(pages: Pages) -> None:
    page = pages.open("/#/me/games", name="Cy")
    empty = page.locator("[data-testid=games-empty]")
    expect(empty).to_contain_text("No finished games yet", timeout=SLOW)
    expect(empty.get_by_role("link", name="Play a game")).to_have_attribute("href", "#/")
    assert_accessible(page)

    page.route(
        "**/api/players/**",
        lambda route: route.fulfill(
            status=503,
            content_type="application/json",
            body='{"error": "history_unavailable"}',
        ),
    )
    page.reload()
    error = page.locator("[data-testid=games-error]")
    expect(error).to_contain_text("not available right now", timeout=SLOW)
    expect(page.get_by_role("alert")).to_be_visible()
    page.unroute("**/api/players/**")
    page.get_by_role("button", name="Try again").click()
    expect(empty).to_contain_text("No finished games yet", timeout=SLOW)
