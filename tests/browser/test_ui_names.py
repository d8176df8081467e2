"""Names in the browser: "Playing as" renames at once (in the lobby, every other page
shows it without a reload; it sticks across a reload), and a player who opens an invite
link without a name is asked once."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from pages import Pages, assert_accessible, room_of

SEATS = "[data-testid=seats]"
ASK = "[data-testid=name-ask]"


def new_race(page: Page, seats: int = 2) -> str:
    """Create a race from the home page; its invite link."""
    page.select_option("select[name=seats]", str(seats))
    page.click("[data-testid=create-race]")
    invite = page.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    return invite.input_value()


def test_a_name_typed_in_playing_as_shows_in_every_page_at_once(pages: Pages) -> None:
    """A host with no name types one on the home page and creates a race: the seats show
    it; renamed in the lobby, the other racer and a spectator see the new name without a
    reload; after the host's reload the name is still the new one."""
    host = pages.open()
    field = host.locator("[data-testid=name]")
    expect(field).to_have_value(re.compile(r"^Guest [0-9a-f]{4}$"))  # the guest's, confirmed
    field.fill("Hana")
    field.press("Tab")
    expect(field).to_have_value("Hana")
    invite = new_race(host)
    guest = pages.open(invite, name="Bea")
    watcher = pages.open(f"/#/watch/{room_of(host)}", name="Cy")
    for page in (host, guest, watcher):
        expect(page.locator(SEATS)).to_contain_text("Hana")
    expect(host.locator(ASK)).to_have_count(0)  # its own race: nobody asks

    lobby_name = host.locator("[data-testid=lobby-name]")
    expect(lobby_name).to_have_value("Hana")
    lobby_name.fill("  Hana   Kim ")
    lobby_name.press("Enter")
    expect(lobby_name).to_have_value("Hana Kim")  # as the server shows it
    for page in (host, guest, watcher):
        expect(page.locator(SEATS)).to_contain_text("Hana Kim")
        expect(page.locator(SEATS)).to_contain_text("Bea")

    host.reload()
    expect(host.locator("[data-testid=lobby-name]")).to_have_value("Hana Kim")
    guest.click("[data-testid=ready]")  # a later room frame: the seat kept its new name
    expect(guest.locator("[data-testid=ready]")).to_have_text("Not ready")
    for page in (host, guest, watcher):
        expect(page.locator(SEATS)).to_contain_text("Hana Kim")


def test_an_invite_link_asks_a_nameless_player_once(pages: Pages) -> None:
    """Opening an invite link with no name chosen: a dialog with the guest name as its
    default, focused; the answer is the seat's name; the next link asks nothing. Escape
    keeps the guest name, and a reload asks nothing either."""
    ann = pages.open(name="Ann")
    first = new_race(ann)
    cy = pages.open(name="Cy")
    second = new_race(cy, seats=3)

    bea = pages.open(first)
    ask = bea.locator(ASK)
    expect(ask).to_be_visible()
    answer = bea.locator("[data-testid=name-ask-input]")
    expect(answer).to_be_focused()
    expect(answer).to_have_value(re.compile(r"^Guest [0-9a-f]{4}$"))
    expect(bea.get_by_role("dialog", name="What should other players call you?")).to_be_visible()
    assert_accessible(bea)
    answer.fill("Bea")
    bea.click("[data-testid=name-ask-ok]")
    expect(ask).to_have_count(0)
    expect(ann.locator(SEATS)).to_contain_text("Bea")

    bea.goto(second)  # another link, same browser: not asked again
    expect(cy.locator(SEATS)).to_contain_text("Bea")
    expect(bea.locator(ASK)).to_have_count(0)

    dee = pages.open(second)
    expect(dee.locator(ASK)).to_be_visible()
    guest = dee.locator("[data-testid=name-ask-input]").input_value()
    dee.keyboard.press("Escape")
    expect(dee.locator(ASK)).to_have_count(0)
    expect(cy.locator(SEATS)).to_contain_text(guest)
    dee.reload()
    expect(dee.locator(SEATS)).to_contain_text(guest)
    expect(dee.locator(ASK)).to_have_count(0)
