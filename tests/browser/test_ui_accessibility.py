"""Accessibility of the client's pages, checked by axe-core in Chromium."""

from __future__ import annotations

from playwright.sync_api import expect

from pages import OWN, Pages, assert_accessible
from waits import scaled


def test_pages_meet_wcag_aa(pages: Pages) -> None:
    """Home, a game, its help overlay, its result and its replay have no serious
    WCAG 2.1 A/AA problem (contrast, names, roles, labels)."""
    page = pages.open(name="Ada")
    expect(page.locator("[data-testid=start-solo]")).to_be_visible()
    assert_accessible(page)
    page.click("[data-testid=start-solo]")
    own = page.locator(OWN)
    expect(own.locator(".card").first).to_be_visible()
    page.locator(f'{OWN} .card[data-place="stock"]').last.click()
    expect(own).to_have_attribute("data-moves", "1")
    assert_accessible(page)
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    assert_accessible(page)
    page.keyboard.press("Escape")
    page.click("[data-testid=resign]")
    expect(page.locator("[data-testid=results]")).to_be_visible()
    assert_accessible(page)
    page.click("[data-testid=replay-link]")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text("move 0/1")
    assert_accessible(page)


def test_tournament_pages_meet_wcag_aa(pages: Pages) -> None:
    """The tournaments page with its create form, and a new tournament's page (its
    organizer's view, with the tools), have no serious WCAG 2.1 A/AA problem."""
    page = pages.open("/#/tournaments", name="Ada")
    expect(page.locator("[data-testid=create-tournament]")).to_be_visible()
    assert_accessible(page)
    page.locator("input[name=name]").fill("Accessible cup")
    page.locator("[data-testid=create-submit]").click()
    expect(page.locator("[data-testid=organizer]")).to_be_visible(timeout=scaled(20_000))
    page.locator("[data-testid=enter]").click()
    expect(page.locator("[data-testid=entrants]")).to_contain_text("Ada")
    assert_accessible(page)
