"""A match in the browser: Ann and Bea play a best of 3 while Cy watches. The score
shows throughout (the lobby, each deal, the wait between deals), the second deal comes
by itself, and at Ann's second deal won the match's results list each deal with its
replay, for the racers and the spectator; a deal's replay leads back to the match."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from klondike_live.daily.variants import DRAW1

from deal_pool import queue_deals
from pages import DESKTOP, OWN, PHONE, Pages, Screenshot, assert_accessible, room_of
from test_ui_games import send_an_ace_home
from waits import scaled

SLOW = scaled(20_000)
"""Waits for what follows a deal: its results, the next deal after its interval."""

# Certified draw-1 deals with an ace on top of a column from the deal: Ann puts one card
# home at once in each deal, so each deal is hers.
MATCH_DEALS = ("match-35", "match-37")


def deal(ann: Page, bea: Page) -> None:
    """Ann sends an ace home; both resign: the deal is Ann's."""
    for racer in (ann, bea):
        expect(racer.locator(f"{OWN} .card").first).to_be_visible(timeout=SLOW)
    send_an_ace_home(ann)
    for racer in (ann, bea):
        racer.click("[data-testid=resign]")


def test_a_best_of_3_to_the_match_results(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    queue_deals(valkey_url, DRAW1, MATCH_DEALS)
    ann = pages.open(name="Ann")
    ann.select_option("select[name=best_of]", "3")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea")
    cy = pages.open(f"/#/watch/{room}", name="Cy")
    expect(ann.locator("[data-testid=seats]")).to_contain_text("Bea")
    for page in (ann, bea, cy):
        expect(page.locator("[data-testid=match]")).to_have_text(
            "Match, best of 3: first to 2 deals"
        )
    assert_accessible(ann)

    ann.click("[data-testid=ready]")
    bea.click("[data-testid=ready]")
    expect(ann.locator("[data-testid=start]")).to_be_enabled()
    ann.click("[data-testid=start]")
    expect(cy.locator("[data-testid=match-status]")).to_have_text("Deal 1", timeout=SLOW)
    deal(ann, bea)
    for page in (ann, bea, cy):
        score = page.locator("[data-testid=match-score]")
        expect(score).to_have_text("Ann 1 · Bea 0", timeout=SLOW)
    expect(bea.locator("[data-testid=match-status]")).to_contain_text("Next deal in")
    expect(bea.locator("[data-testid=rematch]")).to_have_count(0)
    expect(bea.locator("[data-testid=replay-link]")).to_have_count(0)  # leaving forfeits
    screenshot(bea, "match-between-deals-desktop")

    for page in (ann, bea, cy):
        expect(page.locator("[data-testid=match-status]")).to_have_text("Deal 2", timeout=SLOW)
    deal(ann, bea)
    for page in (ann, bea, cy):
        expect(page.locator("[data-testid=match-status]")).to_have_text(
            "Ann wins the match", timeout=SLOW
        )
        results = page.locator("[data-testid=match-results]")
        expect(results.locator("[data-testid=match-deal]")).to_have_count(2, timeout=SLOW)
        expect(results.locator("[data-testid=match-final]")).to_have_text("Ann 2 · Bea 0")
    expect(cy.locator("[data-testid=match-deal]").first).to_contain_text("Ann, 1 card home")
    expect(ann.locator("[data-testid=rematch]")).to_be_visible()
    screenshot(ann, "match-results-desktop")
    assert_accessible(ann)
    assert_accessible(cy)
    cy.set_viewport_size(PHONE)
    screenshot(cy, "match-results-phone", full_page=True)
    assert_accessible(cy)
    width = cy.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the match results overflow a phone: {width} px"
    cy.set_viewport_size(DESKTOP)

    # The archive: a deal's replay leads back to the match's page.
    cy.locator("[data-testid=match-deal] a").first.click()
    expect(cy.locator("[data-testid=replay-match]")).to_have_text(
        "Deal 1 of a match: see the match", timeout=SLOW
    )
    cy.click("[data-testid=replay-match]")
    expect(cy.locator("[data-testid=match-final]")).to_have_text("Ann 2 · Bea 0", timeout=SLOW)
    expect(cy.locator("[data-testid=match-deal]")).to_have_count(2)
    assert_accessible(cy)
