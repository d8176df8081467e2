"""Race now in the browser: a player alone on the home page is racing a stranger (another
browser) within seconds of the stranger pressing Race now, on the same deal; a player
alone a while is offered the machine, on a phone too, and may keep waiting, cancel, or
race a bot. Every view is axe-clean and fits the window."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from live_server import ServerProcess
from pages import OWN, PHONE, Pages, Screenshot, assert_accessible, cards_drawn, room_of
from reading import unfitting_text
from waits import scaled

ALONE_SECONDS = 3
"""How long a player waits alone before the machine is offered, on this server."""


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A node with a one-second fill window, the machine offered after three seconds
    alone, quick bots and a grace period longer than any test here."""
    process = ServerProcess(
        valkey_url,
        tmp_path_factory.mktemp("serve-quick"),
        env={
            "KLONDIKE_QUICK_FILL_SECONDS": "1",
            "KLONDIKE_QUICK_ALONE_SECONDS": str(ALONE_SECONDS),
            "KLONDIKE_QUICK_TICK_SECONDS": "0.2",
            "KLONDIKE_BOT_PACE_SCALE": "0.1",
            "KLONDIKE_GRACE_SECONDS": "600",
        },
    )
    yield process
    process.stop()


def test_a_player_alone_races_the_next_one_to_press_race_now(
    pages: Pages, screenshot: Screenshot
) -> None:
    ann = pages.open(name="Ann")
    ann.click("[data-testid=race-now-draw1]")
    expect(ann).to_have_url(re.compile(r"#/quick/draw1$"))
    status = ann.get_by_test_id("quick-status")
    expect(status).to_have_text("1 player waiting: you")
    expect(ann.get_by_role("heading", name="Looking for racers")).to_be_visible()
    expect(ann.get_by_test_id("quick-waited")).to_contain_text("Waiting for")
    assert_accessible(ann)
    assert unfitting_text(ann) == []
    screenshot(ann, "quick-race-waiting-desktop")

    bea = pages.open(name="Bea")
    expect(bea.get_by_test_id("race-now")).to_contain_text("Race now")
    assert_accessible(bea)
    bea.click("[data-testid=race-now-draw1]")
    # Both are in the same race within seconds, each on its own board of one deal.
    for page in (ann, bea):
        expect(page).to_have_url(re.compile(r"#/room/[A-Za-z0-9_-]+$"), timeout=scaled(10_000))
    assert room_of(ann) == room_of(bea)
    for page in (ann, bea):
        expect(page.locator(f"{OWN} .card[data-card]").first).to_be_visible(timeout=scaled(15_000))
    for page in (ann, bea):
        face_up = page.locator(f'{OWN} .card[data-card]:not([data-card=""])')
        expect(face_up).to_have_count(7, timeout=scaled(15_000))
    # The same deal: the same seven up-cards.
    assert cards_drawn(ann, "own-board") == cards_drawn(bea, "own-board")
    expect(ann.locator("main")).to_contain_text("Bea")
    expect(bea.locator("main")).to_contain_text("Ann")


def test_alone_on_a_phone_the_machine_is_offered(pages: Pages, screenshot: Screenshot) -> None:
    cy = pages.open(name="Cy", viewport=PHONE)
    cy.click("[data-testid=race-now-draw3]")
    offer = cy.get_by_test_id("quick-offer")
    expect(offer).to_be_visible(timeout=scaled((ALONE_SECONDS + 5) * 1000))
    expect(offer).to_contain_text("Nobody else yet")
    assert_accessible(cy)
    assert unfitting_text(cy) == []
    screenshot(cy, "quick-race-offer-phone")
    # Keep waiting: the offer goes, the wait goes on.
    cy.click("[data-testid=quick-keep]")
    expect(offer).to_have_count(0)
    expect(cy.get_by_test_id("quick-status")).to_have_text("1 player waiting: you")
    # Cancel: home again, out of the queue.
    cy.click("[data-testid=quick-cancel]")
    expect(cy.get_by_test_id("race-now")).to_be_visible()
    # Again, and this time the machine.
    cy.click("[data-testid=race-now-draw3]")
    expect(offer).to_be_visible(timeout=scaled((ALONE_SECONDS + 5) * 1000))
    cy.select_option("[data-testid=machine-level]", "relaxed")
    cy.click("[data-testid=race-machine]")
    expect(cy).to_have_url(re.compile(r"#/room/"), timeout=scaled(10_000))
    expect(cy.locator("[data-testid=seats]")).to_contain_text(
        "Relaxed bot (bot · relaxed)", timeout=scaled(15_000)
    )
    expect(cy.locator("main")).to_contain_text("Draw 3")


def test_the_waiting_view_speaks_the_page_language(pages: Pages) -> None:
    page = pages.open(name="Dé", locale="fr-FR")
    button = page.get_by_test_id("race-now-draw1")
    expect(button).to_have_text("Course immédiate · Piocher 1 · 1 tour")
    page.click("[data-testid=race-now-draw1]")
    expect(page.get_by_test_id("quick-status")).to_have_text("1 joueur en attente\u00a0: vous")
    assert_accessible(page)
    page.click("[data-testid=quick-cancel]")
    expect(page.get_by_test_id("race-now")).to_be_visible()
