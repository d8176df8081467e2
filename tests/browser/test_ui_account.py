"""Accounts in the browser: a guest plays, makes itself an account with a passkey
(Chromium's virtual authenticator, through the DevTools protocol) or a password, and a
second browser signs in with that passkey or password and finds the same statistics and
the same unfinished game; the account page passes axe and fits a phone."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, CDPSession, Page, expect

from live_server import ServerProcess
from pages import PHONE, Pages, Screenshot, assert_accessible, room_of


@pytest.fixture
def named_pages(browser: Browser, server: ServerProcess) -> Iterator[Pages]:
    """Pages of the test server opened by its name, `localhost` (a passkey's RP id is a
    host name, never an address); the test fails on any uncaught page error."""
    opened = Pages(browser, server.url.replace("//127.0.0.1:", "//localhost:"))
    yield opened
    opened.close()
    assert not opened.errors, f"script errors: {opened.errors}"


def virtual_authenticator(page: Page) -> tuple[CDPSession, str]:
    """A platform authenticator with user verification in the page's browser context."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, str(added["authenticatorId"])


def play_as_guest(page: Page) -> str:
    """Give up one solo game (a finished game, in the statistics) and leave another
    with a card drawn (an unfinished game); the unfinished game's room."""
    for give_up in (True, False):
        page.goto("/#/")
        page.click("[data-testid=start-solo]")
        expect(page.locator("[data-testid=own-board] .card").first).to_be_visible()
        if give_up:
            page.click("[data-testid=resign]")
            expect(page.locator("[data-testid=new-game]")).to_be_visible()
    room = room_of(page)
    own = page.locator("[data-testid=own-board]")
    page.keyboard.press("d")
    expect(own).to_have_attribute("data-moves", "1")
    expect(own).to_have_attribute("data-pending", "0")
    return room


def open_account(page: Page) -> None:
    """Settings, then its Account link."""
    page.goto("/#/")
    page.click("#settings-button")
    page.click("[data-testid=account-link]")
    expect(page.locator("[data-testid=account-page]")).to_be_visible()


def what_the_player_has(page: Page, room: str) -> dict[str, Any]:
    """The statistics page's table and whether the home page offers the game to resume."""
    page.goto("/#/stats")
    table = page.locator("[data-testid=stats-table] tbody")
    expect(table).to_be_visible()
    stats = table.inner_text()
    page.goto("/#/")
    resume = page.locator(f"[data-testid=resume-{room}]")
    expect(resume).to_be_visible()
    return {"stats": stats, "resume": resume.count()}


def expect_signed_in(page: Page, username: str) -> None:
    expect(page.locator("[data-testid=account-username]")).to_contain_text(username)
    expect(page.locator("[data-testid=account-session-current]")).to_have_count(1)


def test_a_guest_makes_a_passkey_account_and_signs_in_elsewhere_with_it(
    named_pages: Pages, screenshot: Screenshot
) -> None:
    pages = named_pages
    first = pages.open(name="Pat")
    cdp, authenticator = virtual_authenticator(first)
    room = play_as_guest(first)
    before = what_the_player_has(first, room)
    open_account(first)
    assert_accessible(first)
    screenshot(first, "account-guest")
    first.fill("[data-testid=account-create] input[name=username]", "PasskeyPat")
    first.click("[data-testid=account-create] button[name=passkey]")
    expect(first.locator("[data-testid=account-status]")).to_contain_text("Account created")
    expect_signed_in(first, "PasskeyPat")
    credentials = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
    assert [c["isResidentCredential"] for c in credentials["credentials"]] == [True]

    # The same passkey on another device (synced, as passkeys are).
    second = pages.open()
    other_cdp, other = virtual_authenticator(second)
    other_cdp.send(
        "WebAuthn.addCredential",
        {"authenticatorId": other, "credential": credentials["credentials"][0]},
    )
    open_account(second)
    second.click("[data-testid=account-sign-in] button[name=passkey]")
    expect(second.locator("[data-testid=account-status]")).to_contain_text("Signed in")
    expect_signed_in(second, "PasskeyPat")
    expect(second.locator("[data-testid=account-session]")).to_have_count(1)
    assert_accessible(second)
    screenshot(second, "account-signed-in")
    assert what_the_player_has(second, room) == before
    # Resumed on the second device: the same game, where the guest left it.
    second.click(f"[data-testid=resume-{room}]")
    expect(second.locator("[data-testid=own-board]")).to_have_attribute("data-moves", "1")


def test_a_guest_makes_a_password_account_and_signs_in_elsewhere_then_out_everywhere(
    pages: Pages,
) -> None:
    first = pages.open(name="Pia")
    room = play_as_guest(first)
    before = what_the_player_has(first, room)
    open_account(first)
    form = "[data-testid=account-create]"
    first.fill(f"{form} input[name=username]", "PasswordPia")
    first.fill(f"{form} input[name=password]", "correct horse battery")
    first.click(f"{form} button[name=password]")
    expect(first.locator("[data-testid=account-status]")).to_contain_text("Account created")
    expect_signed_in(first, "PasswordPia")

    second = pages.open()
    open_account(second)
    form = "[data-testid=account-sign-in]"
    second.fill(f"{form} input[name=username]", "passwordpia")
    second.fill(f"{form} input[name=password]", "wrong horse battery")
    second.click(f"{form} button[name=password]")
    expect(second.locator("[data-testid=account-status]")).to_contain_text(
        "Wrong username or password"
    )
    second.fill(f"{form} input[name=password]", "correct horse battery")
    second.click(f"{form} button[name=password]")
    expect_signed_in(second, "PasswordPia")
    assert what_the_player_has(second, room) == before

    # Signing out everywhere from the second device makes both new guests.
    open_account(second)
    second.click("[data-testid=account-sign-out-everywhere]")
    for page in (first, second):
        open_account(page)
        expect(page.locator("[data-testid=account-create]")).to_be_visible()
        page.goto("/#/")
        expect(page.locator(f"[data-testid=resume-{room}]")).to_have_count(0)


def test_the_account_page_fits_a_phone(named_pages: Pages, screenshot: Screenshot) -> None:
    page = named_pages.open(viewport=PHONE)
    open_account(page)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the account page is {overflow} px wider than the phone"
    for button in page.locator("[data-testid=account-page] button").all():
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert re.search("Create an account", page.inner_text("[data-testid=account-page]"))
    assert_accessible(page)
    screenshot(page, "account-phone")
