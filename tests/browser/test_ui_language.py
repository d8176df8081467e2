"""The page's language: a Basque browser opens in Basque, `?lang=` links, the pickers,
and a switch in the middle of a game that keeps the game going."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from pages import OWN, Pages, room_of


def test_a_basque_browser_opens_in_basque(pages: Pages) -> None:
    page = pages.open(locale="eu-ES")
    expect(page.locator("html")).to_have_attribute("lang", "eu")
    expect(page.locator("h1")).to_have_text("Lehiatu zure lagunekin banaketa berean")
    expect(page.locator("[data-testid=start-solo]")).to_have_text("Jokatu bakarka")
    expect(page.locator("#settings-button")).to_have_text("Ezarpenak")
    expect(page.locator("[data-testid=home-language]")).to_have_value("eu")
    assert not pages.errors


def test_a_lang_link_is_kept_and_the_home_picker_switches_in_place(pages: Pages) -> None:
    page = pages.open("/?lang=fr#/")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("h1")).to_have_text("Affrontez vos amis sur la même donne")
    assert "lang=" not in page.url  # a later choice survives a reload
    page.reload()
    expect(page.locator("h1")).to_have_text("Affrontez vos amis sur la même donne")
    # The options are named in themselves, whatever the page's language.
    names = page.locator("[data-testid=home-language] option").all_text_contents()
    assert names == ["Euskara", "Español", "Français", "English"]
    page.select_option("select[name=passes]", "unlimited")
    picker = page.locator("[data-testid=home-language]")
    picker.focus()
    picker.select_option("es")
    expect(page.locator("html")).to_have_attribute("lang", "es")
    expect(page.locator("h1")).to_have_text("Compite con tus amigos en el mismo reparto")
    # Relabelled in place: what the player chose stays, the picker keeps the focus.
    expect(page.locator("select[name=passes]")).to_have_value("unlimited")
    expect(picker).to_be_focused()
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", "es")
    assert not pages.errors


def test_switching_language_mid_game_keeps_the_game(pages: Pages) -> None:
    page = pages.open(name="Polyglot")
    page.click("[data-testid=start-solo]")
    board = page.locator(OWN)
    expect(board.locator(".card").first).to_be_visible()
    room, url = room_of(page), page.url
    page.evaluate("document.querySelector('[data-testid=own-board]').dataset.kept = 'yes'")
    page.click("#settings-button")
    page.select_option("[data-testid=settings-language]", "fr")
    expect(page.locator("#settings-title")).to_have_text("Réglages")
    page.click("#settings button[type=submit]")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("#help-button")).to_contain_text("Touches")
    # The same board, in the same room: the page was not mounted again.
    assert page.url == url and room_of(page) == room
    expect(board).to_have_attribute("data-kept", "yes")
    # And the game goes on: a turn of the stock counts as a move.
    moves = page.locator("[data-testid=moves]")
    before = moves.inner_text()
    page.keyboard.press("d")
    expect(moves).not_to_have_text(before)
    expect(moves).to_have_text(re.compile(r"^\d+$"))
    assert not pages.errors
