"""Bots in the browser: "race the machine" from the home page, and "add a bot" in a
race's lobby, each bot labelled as one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from live_server import ServerProcess
from pages import OWN, Pages, Screenshot, assert_accessible
from waits import scaled


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server node whose bots think for a tenth of their level's pace, and whose
    grace period is far longer than any test here (an away seat would show)."""
    process = ServerProcess(
        valkey_url,
        tmp_path_factory.mktemp("serve-bots"),
        env={"KLONDIKE_BOT_PACE_SCALE": "0.1", "KLONDIKE_GRACE_SECONDS": "600"},
    )
    yield process
    process.stop()


def test_race_the_machine_from_the_home_page(pages: Pages, screenshot: Screenshot) -> None:
    """One click makes a race with a labelled bot; it starts when the person is ready,
    the bot plays, and the results and the replay label it."""
    page = pages.open(name="Ann")
    page.select_option("[data-testid=machine-level]", "relaxed")
    page.click("[data-testid=race-machine]")
    seats = page.locator("[data-testid=seats]")
    expect(seats).to_contain_text("Relaxed bot (bot · relaxed)", timeout=scaled(15_000))
    expect(page.locator("[data-testid=start]")).to_have_count(1)
    page.click("[data-testid=ready]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(20_000))
    rival = page.locator("[data-testid=opponent-1]")
    expect(rival).to_contain_text("(bot · relaxed)")
    expect(rival).not_to_contain_text(" 0 moves", timeout=scaled(30_000))
    screenshot(page, "race-the-machine")
    page.click("[data-testid=resign]")
    results = page.locator("table.results")
    expect(results).to_contain_text("(bot · relaxed)", timeout=scaled(120_000))
    page.click("[data-testid=replay-link]")
    expect(page.locator("[data-testid=board-1]")).to_be_visible(timeout=scaled(15_000))
    expect(page.locator("main")).to_contain_text("Relaxed bot (bot · relaxed)")


def test_the_bot_plays_on_to_its_end_after_the_person_resigns(pages: Pages) -> None:
    """The person resigns at once: the bot is never shown away, its moves go on while
    the person watches, and the results come when its board is done (the grace period
    is ten minutes here)."""
    page = pages.open(name="Cleo")
    page.select_option("[data-testid=machine-level]", "expert")
    page.click("[data-testid=race-machine]")
    expect(page.locator("[data-testid=ready]")).to_be_visible(timeout=scaled(15_000))
    page.click("[data-testid=ready]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(20_000))
    page.click("[data-testid=resign]")
    # The person watches the rest: the bot's board, its moves going on, never away.
    summary = page.locator("[data-testid=board-1] header span.muted")
    expect(summary).to_contain_text("moves", timeout=scaled(15_000))
    for _ in range(3):
        expect(summary).not_to_have_text(summary.inner_text(), timeout=scaled(15_000))
        expect(page.locator("[data-testid=away]")).to_have_count(0)
    results = page.locator("table.results")
    expect(results).to_contain_text("(bot · expert)", timeout=scaled(90_000))
    expect(page.locator("[data-testid=away]")).to_have_count(0)


def test_the_host_adds_a_bot_in_the_lobby(pages: Pages, screenshot: Screenshot) -> None:
    page = pages.open(name="Bea")
    page.click("[data-testid=create-race]")
    expect(page.locator("[data-testid=add-bot]")).to_be_visible(timeout=scaled(15_000))
    assert_accessible(page)
    page.select_option("[data-testid=bot-level]", "expert")
    page.click("[data-testid=add-bot]")
    seats = page.locator("[data-testid=seats]")
    expect(seats).to_contain_text("Expert bot (bot · expert)", timeout=scaled(15_000))
    expect(page.locator("[data-testid=add-bot]")).to_have_count(0)  # no free seat left
    screenshot(page, "lobby-with-a-bot")
    page.click("[data-testid=ready]")
    expect(page.locator("[data-testid=start]")).to_be_enabled()


def test_the_host_removes_a_bot_and_not_ready_is_a_secondary_button(pages: Pages) -> None:
    """The host takes a bot off its seat before the race (the seat is free again, for
    another bot); once ready, "Not ready" is a secondary button beside "Start race"."""
    page = pages.open(name="Dan")
    page.click("[data-testid=create-race]")
    expect(page.locator("[data-testid=add-bot]")).to_be_visible(timeout=scaled(15_000))
    page.select_option("[data-testid=bot-level]", "steady")
    page.click("[data-testid=add-bot]")
    seats = page.locator("[data-testid=seats]")
    expect(seats).to_contain_text("Steady bot (bot · steady)", timeout=scaled(15_000))
    remove = page.get_by_role("button", name="Remove Steady bot")
    expect(remove).to_have_attribute("data-testid", "remove-bot-1")
    assert_accessible(page)
    remove.click()
    expect(seats).not_to_contain_text("Steady bot", timeout=scaled(15_000))
    expect(seats).to_contain_text("Seat 2: free")
    expect(page.locator("[data-testid^=remove-bot-]")).to_have_count(0)
    page.select_option("[data-testid=bot-level]", "relaxed")
    page.click("[data-testid=add-bot]")
    expect(seats).to_contain_text("Relaxed bot (bot · relaxed)", timeout=scaled(15_000))
    ready = page.locator("[data-testid=ready]")
    start = page.locator("[data-testid=start]")
    expect(ready).not_to_have_class("ghost")  # "I'm ready" is the main action at first
    ready.click()
    expect(ready).to_have_text("Not ready")
    expect(start).to_be_enabled()
    expect(ready).to_have_class("ghost")

    def background(testid: str) -> str:
        return str(
            page.eval_on_selector(
                f"[data-testid={testid}]", "el => getComputedStyle(el).backgroundColor"
            )
        )

    assert background("ready") != background("start")
