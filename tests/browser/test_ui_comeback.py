"""Players coming back: a finished game reloads as it ended, a solo game and a daily
practice game wait for their player with the clock paused, unfinished games to resume,
statistics, and games not made public stay off every public listing."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from klondike_live.daily.variants import DRAW3, variant_slug

from live_server import ServerProcess
from pages import (
    DESKTOP,
    OWN,
    PHONE,
    Pages,
    Screenshot,
    assert_accessible,
    ready_and_start,
    room_of,
)
from reading import overflowing
from waits import scaled

STOCK = f'{OWN} .card[data-place="stock"]'
LAPTOP: ViewportSize = {"width": 1366, "height": 768}
WIDE: ViewportSize = {"width": 1920, "height": 1080}
GRACE_SECONDS = 2
DAILY = variant_slug(DRAW3)
"""The daily deal played here: draw 3, whose leaderboard no other test reads (this
session's Valkey keeps today's attempts for the tests that follow)."""


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A node whose disconnect grace is short: an absent racer is resigned after 2 s."""
    process = ServerProcess(
        valkey_url,
        Path(tmp_path_factory.mktemp("serve")),
        env={"KLONDIKE_GRACE_SECONDS": str(GRACE_SECONDS)},
    )
    yield process
    process.stop()


def turn_stock(page: Page, times: int) -> None:
    """Click the stock `times` times, each confirmed by the server."""
    own = page.locator(OWN)
    for _ in range(times):
        moves = int(own.get_attribute("data-moves") or 0)
        page.locator(STOCK).last.click()
        expect(own).to_have_attribute("data-moves", str(moves + 1))
        expect(own).to_have_attribute("data-pending", "0")


def start_solo(page: Page, *, public: bool = False) -> str:
    """Start a solo game from the home page; its room id."""
    page.goto("/#/")
    if public:
        page.check("form:has([data-testid=start-solo]) input[name=public]")
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(10_000))
    return room_of(page)


def board_picture(page: Page) -> list[tuple[str | None, ...]]:
    """What the own board shows: every card's place, index and identity (or back)."""
    page.wait_for_function("document.getAnimations().length === 0")
    rows = page.locator(f"{OWN} .card").evaluate_all(
        "nodes => nodes.map(n => [n.dataset.place, n.dataset.index, n.dataset.card])"
    )
    return sorted(tuple(row) for row in rows)


def get_json(server: ServerProcess, path: str) -> Any:
    with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=scaled(10)) as answer:
        return json.loads(answer.read())


def test_a_finished_game_reloads_as_it_ended(pages: Pages) -> None:
    """A solo game given up and reloaded (or come back to through history) shows its
    board as it ended and the stats of the results, not an empty board."""
    page = pages.open(name="Back")
    start_solo(page)
    turn_stock(page, 3)
    page.click("[data-testid=resign]")
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-status", "resigned")
    expect(page.locator("[data-testid=results]")).to_contain_text("resigned")
    before = board_picture(page)
    assert len([row for row in before if row[0] == "waste"]) == 3

    for come_back in (page.reload, lambda: (page.goto("/#/"), page.go_back())):
        come_back()
        expect(page.locator("[data-testid=results]")).to_contain_text("resigned")
        expect(own).to_have_attribute("data-status", "resigned", timeout=scaled(10_000))
        expect(own).to_have_attribute("data-moves", "3")
        expect(page.locator("[data-testid=moves]")).to_have_text("3")
        expect(page.locator("[data-testid=found]")).to_have_text("0/52")
        assert board_picture(page) == before


def test_games_not_made_public_are_never_listed(pages: Pages, server: ServerProcess) -> None:
    """A race created without "List it publicly" and a solo game without "Let anyone
    watch" appear in no stranger's listing, live or finished, while their links still
    open them; a public solo game is listed."""
    ann = pages.open(name="Ann")
    ann.click("[data-testid=create-race]")
    invite = ann.locator("[data-testid=invite-link]")
    expect(invite).to_have_value(re.compile(r"#/room/[A-Za-z0-9_-]{8,}$"))
    race = room_of(ann)
    bea = pages.open(invite.input_value(), name="Bea")
    ready_and_start(ann, bea, "Bea")

    quiet = pages.open(name="Quiet")
    private_solo = start_solo(quiet)
    public_page = pages.open(name="Open")
    public_solo = start_solo(public_page, public=True)

    stranger = pages.open(name="Stranger")
    live = stranger.locator("[data-testid=live-games]")
    expect(live.locator(f'a[href="#/watch/{public_solo}"]')).to_have_count(
        1, timeout=scaled(15_000)
    )
    for hidden in (race, private_solo):
        expect(live.locator(f'a[href="#/watch/{hidden}"]')).to_have_count(0)

    for page in (ann, bea, public_page, quiet):
        page.click("[data-testid=resign]")
    for page in (ann, bea, public_page, quiet):
        expect(page.locator("[data-testid=results]")).to_contain_text(
            "resigned", timeout=scaled(10_000)
        )

    finished = stranger.locator("[data-testid=finished-games]")
    expect(finished.locator(f'a[href="#/replay/{public_solo}/1"]')).to_have_count(
        1, timeout=scaled(15_000)
    )
    listed = {game["room"] for game in get_json(server, "/api/results")}
    listed |= {game["room"] for game in get_json(server, "/api/live")}
    assert public_solo in listed
    for hidden in (race, private_solo):
        expect(finished.locator(f'a[href="#/replay/{hidden}/1"]')).to_have_count(0)
        assert hidden not in listed
        # Reachable by its link: the replay opens for the stranger.
        stranger.goto(f"/#/replay/{hidden}/1")
        expect(stranger.locator(".card").first).to_be_visible(timeout=scaled(10_000))
        stranger.goto("/#/")


def shown_seconds(page: Page) -> int:
    """The game's time in the stats bar, in whole seconds."""
    minutes, seconds = page.locator("[data-testid=time]").inner_text().split(":")[-2:]
    return int(minutes) * 60 + int(seconds)


def test_a_solo_clock_starts_at_the_first_move(pages: Pages) -> None:
    """A new solo game's clock shows 0:00 until the first move, then runs from 0."""
    page = pages.open(name="Thinker")
    start_solo(page)
    page.wait_for_timeout(scaled(3_000))  # a pause: the clock does not run meanwhile
    clock = page.locator("[data-testid=time]")
    expect(clock).to_have_text("0:00")
    turn_stock(page, 1)
    expect(clock).to_have_text(re.compile(r"^0:0[12]$"))  # from 0, not from the deal


def test_a_solo_game_waits_for_its_player(pages: Pages) -> None:
    """Closing the tab of a solo game and coming back after the grace period finds it
    still playing, its board as left and its clock where it stood."""
    page = pages.open(name="Walker")
    room = start_solo(page)
    turn_stock(page, 5)
    expect(page.locator("[data-testid=time]")).not_to_have_text("0:00")  # time on the clock
    before = board_picture(page)
    left_at = shown_seconds(page)
    context = page.context
    page.close()
    page = context.new_page()
    page.wait_for_timeout(scaled((GRACE_SECONDS + 3) * 1000))  # a pause past the grace period
    page.goto(f"/#/room/{room}")
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-moves", "5", timeout=scaled(10_000))
    expect(own).to_have_attribute("data-status", "playing")
    expect(page.locator("[data-testid=subtitle]")).not_to_contain_text("Finished")
    assert board_picture(page) == before
    assert left_at <= shown_seconds(page) <= left_at + scaled(2)
    turn_stock(page, 1)  # still playable


def test_unfinished_games_to_resume_and_statistics(pages: Pages, screenshot: Screenshot) -> None:
    """The home page lists your unfinished solo games (newest first) to resume and your
    statistics in a line; the stats page shows them per kind and variant; a stranger's
    home page shows none of it."""
    page = pages.open(name="Keeper")
    older = start_solo(page)
    turn_stock(page, 2)
    newer = start_solo(page)
    turn_stock(page, 1)
    page.click("[data-testid=resign]")
    expect(page.locator("[data-testid=results]")).to_contain_text("resigned")
    third = start_solo(page)

    page.goto("/#/")
    mine = page.locator("[data-testid=unfinished-games]")
    expect(mine.locator("li")).to_have_count(2, timeout=scaled(15_000))
    expect(mine.locator("li").first).to_contain_text("0 moves")
    expect(mine.locator("li").nth(1)).to_contain_text("2 moves")
    expect(mine.locator(f"[data-testid=resume-{third}]")).to_be_visible()
    expect(mine.locator(f"[data-testid=resume-{newer}]")).to_have_count(0)
    expect(page.locator("[data-testid=stats-summary]")).to_have_text("1 game played · 0 won (0%)")
    assert_accessible(page)
    screenshot(page, "home-returning-desktop")
    page.set_viewport_size(PHONE)
    expect(mine.locator(f"[data-testid=resume-{third}]")).to_be_visible()
    screenshot(page, "home-returning-phone", full_page=True)
    page.set_viewport_size(DESKTOP)

    page.click(f"[data-testid=resume-{older}]")
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-moves", "2", timeout=scaled(10_000))
    expect(own).to_have_attribute("data-status", "playing")

    page.goto("/#/")
    page.click("[data-testid=stats-link]")
    row = page.locator("[data-testid=stats-solo]")
    expect(row).to_contain_text("Solo · Draw 1 · 1 pass")
    expect(row.locator("td").nth(0)).to_have_text("1")  # played
    expect(row.locator("td").nth(1)).to_have_text("0")  # won
    expect(row.locator("td").nth(2)).to_have_text("0%")
    expect(page.locator("[data-testid=stats-recent] li")).to_have_count(1)
    expect(page.locator("[data-testid=stats-recent]")).to_contain_text("resigned · 1 move")
    assert_accessible(page)
    screenshot(page, "stats-desktop")
    for size in (LAPTOP, WIDE, PHONE):
        page.set_viewport_size(size)
        spilled = overflowing(page, "[data-testid=stats-page] :is(table, li)", "main")
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert not spilled and wide <= size["width"], f"at {size}: {wide} px wide, {spilled}"
    assert_accessible(page)
    screenshot(page, "stats-phone", full_page=True)
    page.set_viewport_size(DESKTOP)

    stranger = pages.open(name="Stranger")
    expect(stranger.locator("[data-testid=finished-games]")).to_be_visible()
    stranger.wait_for_timeout(scaled(1_000))  # a pause: their games do not show up
    expect(stranger.locator("[data-testid=your-games]")).to_be_hidden()


def test_a_daily_practice_game_waits_for_its_player(pages: Pages) -> None:
    """An unranked replay of today's deal (once the ranked attempt is over) waits for its
    player as a solo game does: closed for longer than the grace period, it is still
    playing, listed among the unfinished games on the home page, and resumed from there
    to the same board and clock."""
    page = pages.open("/#/daily", name="Practiser")
    card = page.locator(f"[data-testid=challenge-{DAILY}]")
    # The server certifies today's deal on first use: that takes a while on a busy machine.
    for _ in range(40):
        expect(card).to_be_visible(timeout=scaled(30_000))
        if "Par " in card.inner_text():
            break
        page.wait_for_timeout(scaled(3_000))  # between reloads: the page is not told
        page.reload()
    expect(card).to_contain_text("Par ")
    page.click(f"[data-testid=play-{DAILY}]")  # the ranked attempt, given up at once
    own = page.locator(OWN)
    expect(own.locator(".card").first).to_be_visible(timeout=scaled(60_000))
    page.click("[data-testid=resign]")
    expect(own).to_have_attribute("data-status", "resigned", timeout=scaled(10_000))
    page.goto("/#/daily")
    card.get_by_role("button", name="Play again (unranked)").click()
    expect(page.locator("h1")).to_contain_text("unranked", timeout=scaled(30_000))
    expect(own.locator(".card").first).to_be_visible(timeout=scaled(30_000))
    room = room_of(page)
    turn_stock(page, 4)
    expect(page.locator("[data-testid=time]")).not_to_have_text("0:00")  # time on the clock
    before = board_picture(page)
    left_at = shown_seconds(page)
    context = page.context
    page.close()
    page = context.new_page()
    page.wait_for_timeout(scaled((GRACE_SECONDS + 3) * 1000))  # a pause past the grace period
    page.goto("/#/")
    mine = page.locator("[data-testid=unfinished-games]")
    resume = mine.locator(f"[data-testid=resume-{room}]")
    expect(resume).to_be_visible(timeout=scaled(15_000))
    listed = mine.locator("li", has=page.locator(f"[data-testid=resume-{room}]"))
    expect(listed).to_contain_text("(unranked)")
    expect(listed).to_contain_text("4 moves")
    resume.click()
    own = page.locator(OWN)
    expect(own).to_have_attribute("data-moves", "4", timeout=scaled(10_000))
    expect(own).to_have_attribute("data-status", "playing")
    expect(page.locator("h1")).to_contain_text("unranked")
    expect(page.locator("[data-testid=subtitle]")).not_to_contain_text("Finished")
    assert board_picture(page) == before
    assert left_at <= shown_seconds(page) <= left_at + scaled(2)
    turn_stock(page, 1)  # still playable
