"""Friends in the browser: two players race, one follows the other from the race's
results, sees them online on the friends page and challenges them; the other accepts
the notice on the page it is on and both are seated in the new race. A block then
hides the blocker's follower and refuses a new follow. The friends page and the
challenge notice are axe-clean and fit a phone."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from live_server import ServerProcess
from pages import OWN, PHONE, Pages, Screenshot, assert_accessible, room_of
from reading import unfitting_text
from waits import scaled


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A node that makes quick races at once and renews presence twice a second."""
    process = ServerProcess(
        valkey_url,
        tmp_path_factory.mktemp("serve-friends"),
        env={
            "KLONDIKE_QUICK_FILL_SECONDS": "0.5",
            "KLONDIKE_QUICK_TICK_SECONDS": "0.2",
            "KLONDIKE_PRESENCE_SECONDS": "0.5",
            "KLONDIKE_GRACE_SECONDS": "600",
        },
    )
    yield process
    process.stop()


def race_and_resign(ann: Page, bea: Page) -> str:
    """Both press Race now, land in one race, and resign: its room, with results shown."""
    for page in (ann, bea):
        page.click("[data-testid=race-now-draw1]")
    for page in (ann, bea):
        expect(page).to_have_url(re.compile(r"#/room/[A-Za-z0-9_-]+$"), timeout=scaled(10_000))
    room = room_of(ann)
    assert room_of(bea) == room
    for page in (ann, bea):
        expect(page.locator(f"{OWN} .card[data-card]").first).to_be_visible(timeout=scaled(15_000))
        page.click("[data-testid=resign]")
    for page in (ann, bea):
        expect(page.locator("[data-testid=results]")).to_be_visible(timeout=scaled(15_000))
    return room


def test_follow_from_results_challenge_accept_and_block(
    pages: Pages, screenshot: Screenshot
) -> None:
    ann = pages.open(name="Ann")
    bea = pages.open(name="Bea", viewport=PHONE)
    first = race_and_resign(ann, bea)
    # Ann follows Bea from the results table (no Follow on her own row).
    results = ann.locator("[data-testid=results]")
    follow = results.locator("[data-testid=follow]")
    expect(follow).to_have_count(1)
    expect(follow).to_have_text("Follow")
    follow.click()
    expect(follow).to_have_text("Unfollow")
    expect(follow).to_have_attribute("aria-pressed", "true")
    assert_accessible(ann)

    ann.goto("/#/friends")
    following = ann.get_by_test_id("following")
    expect(following).to_contain_text("Bea")
    expect(following).to_contain_text("Online", timeout=scaled(15_000))
    assert_accessible(ann)
    assert unfitting_text(ann) == []
    screenshot(ann, "friends-desktop")

    # The challenge reaches Bea on the page she is on (the last race's results).
    following.locator("[data-testid=challenge]").click()
    expect(ann.get_by_test_id("friends-status")).to_contain_text("Challenge sent to Bea")
    toast = bea.get_by_test_id("challenge-toast")
    expect(toast).to_contain_text("Ann challenges you to a race")
    assert_accessible(bea)
    assert unfitting_text(bea) == []
    screenshot(bea, "friends-challenge-phone")
    toast.get_by_test_id("challenge-accept").click()
    for page in (ann, bea):
        expect(page).to_have_url(re.compile(r"#/room/[A-Za-z0-9_-]+$"), timeout=scaled(10_000))
        expect(page.locator(f"{OWN} .card[data-card]").first).to_be_visible(timeout=scaled(15_000))
    raced = room_of(ann)
    assert raced == room_of(bea) != first
    expect(toast).to_have_count(0)
    expect(ann.locator("main")).to_contain_text("Bea")
    expect(bea.locator("main")).to_contain_text("Ann")

    # Bea blocks Ann from her friends page: Ann is no longer among her followers.
    bea.goto("/#/friends")
    followers = bea.get_by_test_id("followers")
    expect(followers).to_contain_text("Ann")
    assert_accessible(bea)
    assert unfitting_text(bea) == []
    screenshot(bea, "friends-phone")
    followers.locator("[data-testid=block]").click()
    expect(bea.get_by_test_id("blocked")).to_contain_text("Ann")
    expect(bea.get_by_test_id("followers")).to_have_count(0)
    # Ann follows her no more, and a new follow from the results is refused.
    ann.goto("/#/friends")
    expect(ann.get_by_test_id("following")).to_have_count(0)
    ann.goto(f"/#/room/{first}")
    follow = ann.locator("[data-testid=results] [data-testid=follow]")
    expect(follow).to_have_text("Follow", timeout=scaled(15_000))
    follow.click()
    expect(ann.locator("[data-testid=results] .follow-error")).to_have_text(
        "A block stands between you and this player."
    )
    expect(follow).to_have_text("Follow")


@pytest.mark.parametrize(
    ("locale", "title"), [("fr-FR", "Amis"), ("eu-ES", "Lagunak"), ("es-ES", "Amigos")]
)
def test_the_friends_page_fits_a_phone_in_every_language(
    pages: Pages, locale: str, title: str
) -> None:
    page = pages.open("/#/friends", name="Zoe", viewport=PHONE, locale=locale)
    expect(page.get_by_role("heading", level=1)).to_have_text(title)
    expect(page.locator(".friends-head + section h2")).to_be_visible()
    assert_accessible(page)
    assert unfitting_text(page) == []
