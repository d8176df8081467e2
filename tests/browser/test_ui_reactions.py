"""Reactions in the browser: a spectator reacts; the other spectator (on a phone, who
reacts too) and a racer whose game is over see it float over the boards; a racer still
playing has them off and no bar to send them; a spectator who turns them off sees no
more."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from pages import PHONE, Pages, Screenshot, assert_accessible, ready_and_start, room_of

LAYER = "[data-testid=reaction-layer]"
STILL = ".reaction-float { animation: none; transform: translateY(-4rem); }"


def received(page: Page) -> int:
    """How many reactions the page was shown in all."""
    return int(page.locator(LAYER).get_attribute("data-received") or 0)


def expect_received(page: Page, count: int) -> None:
    expect(page.locator(LAYER)).to_have_attribute("data-received", str(count))


def test_spectators_and_finished_racers_see_reactions(pages: Pages, screenshot: Screenshot) -> None:
    """Cy reacts: Dee (watching on a phone) and Ann (resigned, watching the rest) see
    it; Bea, still playing, has no bar and gets none; Dee reacts by a tap; once Dee
    turns reactions off, Cy's next one reaches Ann and Cy only."""
    ann = pages.open(name="Ann")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea")
    cy = pages.open(f"/#/watch/{room}", name="Cy")
    dee = pages.open(f"/#/watch/{room}", name="Dee", viewport=PHONE)
    ready_and_start(ann, bea, "Bea")

    # Racers playing: no bar, reactions off. Ann resigns and watches the rest: on.
    expect(bea.locator("[data-testid=reaction-bar]")).to_be_hidden()
    expect(bea.locator("[data-testid=reactions-toggle]")).to_have_attribute("aria-pressed", "false")
    ann.click("[data-testid=resign]")
    expect(ann.locator("[data-testid=reaction-bar]")).to_be_visible()
    expect(ann.locator("[data-testid=reactions-toggle]")).to_have_attribute("aria-pressed", "true")
    expect(ann.locator("[data-testid=board-1]")).to_be_visible()

    expect(cy.locator("[data-testid=react-clap]")).to_have_attribute("aria-label", "Send Clap")
    cy.click("[data-testid=react-clap]")
    for page in (cy, dee, ann):
        expect(page.locator(f"{LAYER} .reaction-float[data-reaction=clap]")).to_have_count(1)
        expect_received(page, 1)
    # The screenshots show a reaction still (they wait for animations to end).
    for page in (cy, dee):
        page.add_style_tag(content=STILL)
    screenshot(cy, "reactions-desktop")
    screenshot(dee, "reactions-phone")
    assert_accessible(dee)
    assert_accessible(cy)
    assert received(bea) == 0  # the same node sent Dee's and Ann's: none came for Bea

    # Dee reacts from her phone: a tap on the bar.
    dee.locator("[data-testid=react-wow]").tap()
    for page in (cy, dee, ann):
        expect_received(page, 2)

    # Dee turns them off (remembered as a setting); Cy's next reaches Ann, not Dee.
    dee.click("[data-testid=reactions-toggle]")
    expect(dee.locator("[data-testid=reactions-toggle]")).to_have_attribute("aria-pressed", "false")
    assert (
        dee.evaluate("JSON.parse(localStorage.getItem('klondike.settings')).reactionsWatching")
        is False
    )
    cy.click("[data-testid=react-party]")
    expect_received(ann, 3)
    expect_received(cy, 3)
    assert received(dee) == 2 and received(bea) == 0
