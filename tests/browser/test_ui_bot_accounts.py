"""Bot accounts in the browser: an account creates a bot on its account page, sees its
token once (with a Copy button), and after a reload the list shows the bot with no
token, and the bot's profile names its owner; a new token and a deletion (confirmed)
work from the list; the section passes axe and fits a phone."""

from __future__ import annotations

import jwt
from playwright.sync_api import Page, expect
from test_ui_account import open_account

from pages import PHONE, Pages, Screenshot, assert_accessible

ROWS = "[data-testid=bots-row]"


def make_account(page: Page, username: str) -> None:
    open_account(page)
    form = "[data-testid=account-create]"
    page.fill(f"{form} input[name=username]", username)
    page.fill(f"{form} input[name=password]", "correct horse battery")
    page.click(f"{form} button[name=password]")
    expect(page.locator("[data-testid=account-username]")).to_contain_text(username)


def shown_token(page: Page) -> str:
    box = page.locator("[data-testid=bots-token-box]")
    expect(box).to_contain_text("you will not see it again")
    return page.input_value("[data-testid=bots-token]")


def test_an_account_makes_a_bot_and_sees_its_token_once(
    pages: Pages, screenshot: Screenshot
) -> None:
    page = pages.open(viewport=PHONE)
    make_account(page, "Owner")
    expect(page.locator("[data-testid=bots-none]")).to_be_visible()
    page.fill("[data-testid=bots-create] input[name=username]", "OwnerBot")
    page.click("[data-testid=bots-create] button[type=submit]")
    token = shown_token(page)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["bot"] is True and claims["name"] == "OwnerBot"
    expect(page.locator(ROWS)).to_have_count(1)
    expect(page.locator(ROWS)).to_contain_text("OwnerBot")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the account page is {overflow} px wider than the phone"
    for button in page.locator("[data-testid=account-bots] button").all():
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert_accessible(page)
    screenshot(page, "account-bots-token", full_page=True)

    page.reload()
    expect(page.locator(ROWS)).to_have_count(1)
    expect(page.locator("[data-testid=bots-token-box]")).to_have_count(0)
    assert token not in page.content()
    # Its profile says it is a bot, and whose.
    page.goto("/#/@/OwnerBot")
    expect(page.locator("[data-testid=profile-kind]")).to_contain_text("Bot account of Owner")
    page.go_back()
    expect(page.locator(ROWS)).to_have_count(1)

    page.click("[data-testid=bots-new-token]")
    fresh = shown_token(page)
    assert fresh != token
    page.click("[data-testid=bots-token-hide]")
    expect(page.locator("[data-testid=bots-token-box]")).to_have_count(0)

    page.click("[data-testid=bots-delete]")
    expect(page.locator(ROWS)).to_contain_text("Its token stops working")
    assert_accessible(page)
    page.click("[data-testid=bots-delete-confirm]")
    expect(page.locator("[data-testid=bots-status]")).to_contain_text("Bot OwnerBot deleted")
    expect(page.locator(ROWS)).to_have_count(0)
    expect(page.locator("[data-testid=bots-none]")).to_be_visible()
