"""Profiles and your data in the browser: Ann (an account, a name with markup and
right-to-left letters) races Bea; from the race's results Bea opens Ann's profile, where
the name is plain isolated text and Bea's record against Ann shows; the page passes axe
and fits a phone. Ann downloads her data as a JSON file, then deletes her account: Bea's
games still list the race, Ann shown as "deleted player"."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect

from pages import DESKTOP, PHONE, Pages, Screenshot, assert_accessible, ready_and_start, room_of
from waits import scaled

NAME = "<b>Ann</b> \u05e9\u05dc\u05d5\u05dd"
"""A display name holding markup and Hebrew letters (bidi controls themselves are no
display name's: the server refuses them, `auth.validate_display_name`)."""
PASSWORD = "correct horse battery"


def open_account(page: Page) -> None:
    page.goto("/#/account")
    expect(page.locator("[data-testid=account-page]")).to_be_visible()


def race_to_results(ann: Page, bea: Page) -> None:
    """Ann makes a race, Bea joins, both ready, it starts, both resign."""
    ann.goto("/#/")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    room = room_of(ann)
    bea.goto(f"/#/room/{room}")
    ready_and_start(ann, bea, "Bea")
    ann.click("[data-testid=resign]")
    bea.click("[data-testid=resign]")
    for racer in (ann, bea):
        expect(racer.locator("[data-testid=results]")).to_contain_text("Bea")


def test_a_profile_from_results_your_data_and_a_deleted_account(
    pages: Pages, screenshot: Screenshot
) -> None:
    ann = pages.open(name=NAME)
    bea = pages.open(name="Bea")
    open_account(ann)
    form = "[data-testid=account-create]"
    ann.fill(f"{form} input[name=username]", "AnnProfile")
    ann.fill(f"{form} input[name=password]", PASSWORD)
    ann.click(f"{form} button[name=password]")
    expect(ann.locator("[data-testid=account-username]")).to_contain_text("AnnProfile")
    race_to_results(ann, bea)

    # From the results, Bea opens Ann's profile: by its username once known.
    link = bea.locator("[data-testid=results] [data-testid=player-link]").first
    expect(link.locator("bdi")).to_have_text(NAME)
    link.click()
    title = bea.locator("[data-testid=profile-name]")
    expect(title).to_have_text("AnnProfile", timeout=scaled(10_000))
    expect(bea).to_have_url(re.compile(r"#/@/AnnProfile$"))
    assert title.evaluate("node => node.tagName") == "BDI"
    expect(bea.locator("[data-testid=profile-kind]")).to_contain_text("Account")
    follow = bea.locator("[data-testid=profile-actions] [data-testid=follow]")
    expect(follow).to_have_attribute("aria-pressed", "false")
    follow.click()  # Bea follows Ann from her profile, and it holds on a reload
    expect(follow).to_have_attribute("aria-pressed", "true", timeout=scaled(10_000))
    bea.reload()
    expect(follow).to_have_attribute("aria-pressed", "true", timeout=scaled(10_000))
    games = bea.locator("[data-testid=profile-games] li")
    expect(games).to_have_count(1, timeout=scaled(10_000))
    expect(bea.locator("[data-testid=profile-vs]")).to_contain_text(
        "Your first game against AnnProfile"
    )
    assert_accessible(bea)
    screenshot(bea, "profile-desktop", full_page=True)
    bea.set_viewport_size(PHONE)
    overflow = bea.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the profile is {overflow} px wider than the phone"
    assert_accessible(bea)
    screenshot(bea, "profile-phone", full_page=True)
    bea.set_viewport_size(DESKTOP)

    # Markup in a name is shown as text everywhere: Bea's own profile lists Ann as an
    # opponent by that name, with no element made of it.
    bea.goto("/#/me/games")
    opponent = bea.locator("[data-testid=games-table] [data-testid=player-link] bdi")
    expect(opponent).to_have_text(NAME, timeout=scaled(10_000))
    assert bea.locator("[data-testid=games-table] b").count() == 0

    # Ann downloads her data.
    open_account(ann)
    with ann.expect_download() as downloaded:
        ann.click("[data-testid=account-download]")
    path = downloaded.value.path()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["account"]["username"] == "AnnProfile" and data["account"]["password"] is True
    assert len(data["games"]) == 1 and len(data["sessions"]) == 1
    assert [f["name"] for f in data["friends"]["followers"]] == ["Bea"]
    expect(ann.locator("[data-testid=account-status]")).to_contain_text("downloaded")
    assert_accessible(ann)
    screenshot(ann, "account-your-data", full_page=True)

    # Ann deletes her account: a wrong confirmation is refused, the right one deletes.
    delete = "[data-testid=account-delete]"
    ann.fill(f"{delete} input[name=confirm]", "someone")
    ann.click("[data-testid=account-delete-button]")
    expect(ann.locator("[data-testid=account-status]")).to_contain_text(
        "Type your username exactly"
    )
    ann.fill(f"{delete} input[name=confirm]", "annprofile")
    ann.click("[data-testid=account-delete-button]")
    expect(ann.locator("[data-testid=account-status]")).to_contain_text(
        "Your account was deleted", timeout=scaled(10_000)
    )
    expect(ann.locator("[data-testid=account-create]")).to_be_visible()

    # Bea's history keeps the race, Ann's seat a deleted player, no longer a link.
    bea.reload()
    row = bea.locator("[data-testid=games-table] tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("deleted player", timeout=scaled(10_000))
    expect(row.locator("[data-testid=player-link]")).to_have_count(0)
    bea.goto("/#/@/AnnProfile")
    expect(bea.locator("[data-testid=profile-missing]")).to_contain_text("No player")
