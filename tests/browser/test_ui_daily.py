"""Today's daily challenge in the browser: a win, a rank, the gate, a replay, a ghost."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect
from redis import Redis

from klondike_live import keys
from klondike_live.daily.days import DayRecord
from klondike_live.daily.variants import DRAW1, variant_slug
from klondike_live.engine import Board

from pages import OWN, BoardDriver, Mode, Pages, Screenshot, assert_accessible, room_of
from valkeys import started_valkey
from waits import scaled

SLUG = variant_slug(DRAW1)


@pytest.fixture(scope="module")
def valkey_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Valkey of this module's own (its server's too): today's leaderboard starts
    empty, whichever other modules of the session played today's deals before."""
    with started_valkey(tmp_path_factory) as url:
        yield url


def todays_record(valkey_url: str) -> DayRecord:
    """Today's draw-1 record as the server stored it: seed and certified line."""
    day = datetime.now(UTC).date().isoformat()
    with Redis.from_url(valkey_url, decode_responses=True) as redis:
        fields = redis.hgetall(keys.daily_day(day, SLUG))
    assert fields, f"no daily record for {day}"
    return DayRecord.from_fields(fields)


def test_daily_challenge_won_ranked_gated_and_ghosted(
    pages: Pages, valkey_url: str, screenshot: Screenshot
) -> None:
    """A player wins today's draw-1 deal through the UI and sees their rank; someone who
    has not played is kept from its replay; the winner watches it and races its ghost."""
    page = pages.open("/#/daily", name="Daisy")
    card = page.locator(f"[data-testid=challenge-{SLUG}]")
    expect(card).to_contain_text("Draw 1")
    other = pages.open("/#/daily", name="Nosy")  # looks at the leaderboard meanwhile
    board_seen_by_other = other.locator(f"[data-testid=leaderboard-{SLUG}]")
    expect(board_seen_by_other).to_contain_text("No one has finished yet")
    # The server certifies today's deal on first use: that takes a while on a busy machine.
    for _ in range(40):
        if "Par " in card.inner_text():
            break
        page.wait_for_timeout(scaled(3_000))  # between reloads: the page is not told
        page.reload()
        expect(card).to_be_visible(timeout=scaled(30_000))
    expect(card).to_contain_text("Par ")
    page.click(f"[data-testid=play-{SLUG}]")
    own = page.locator(OWN)
    expect(own.locator(".card").first).to_be_visible(timeout=scaled(60_000))
    expect(page.locator("h1")).to_contain_text("Daily challenge")
    expect(page.locator("[data-testid=undo]")).to_have_count(0)
    room = room_of(page)

    record = todays_record(valkey_url)
    board = Board.from_seed(record.seed, DRAW1)
    driver = BoardDriver(page)
    modes: list[Mode] = ["click", "keys", "drag"]
    for n, token in enumerate(record.moves):
        if board.is_trivially_won():
            break
        driver.play(board, token, modes[n % 3])
    expect(own).to_have_attribute("data-status", "won", timeout=scaled(15_000))
    expect(page.locator("[data-testid=results]")).to_contain_text("won")
    expect(page.locator("[data-testid=results]")).to_contain_text("revealed when the day closes")

    # The leaderboard another player has open follows, without a reload.
    expect(board_seen_by_other).to_contain_text("Daisy", timeout=scaled(10_000))

    # Someone who has not played today may not watch it or see its replay.
    other.goto(f"/#/watch/{room}")
    expect(other.locator("[data-testid=message]")).to_contain_text("finish your own attempt first")
    assert other.locator(".card[data-card]:not([data-card=''])").count() == 0
    other.goto(f"/#/replay/{room}/1")
    expect(other.locator("main")).to_contain_text("finish your own attempt first")

    page.click("[data-testid=daily-back]")
    mine = page.locator(f"[data-testid=my-result-{SLUG}]")
    expect(mine).to_contain_text("won in")
    expect(mine).to_contain_text("rank 1 of 1")
    expect(page.locator(f"[data-testid=leaderboard-{SLUG}]")).to_contain_text("Daisy")
    expect(page.locator("[data-testid=stat-days]")).to_have_text("1")
    assert_accessible(page)
    screenshot(page, "daily-desktop")

    page.click(f"[data-testid=leader-replay-{SLUG}]")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text("move 0/")
    page.click("[data-testid=replay-step]")
    expect(page.locator("[data-testid=replay-moves-0]")).to_contain_text("move 1/")
    # A daily game's replay: moves against the day's par, time against the leader (her).
    compare = page.locator("[data-testid=daily-compare-0]")
    expect(compare).to_contain_text(f"(par {record.par}, ")
    expect(compare).to_contain_text("the leader's time, Daisy")
    page.go_back()
    page.click(f"[data-testid=ghost-{SLUG}]")
    expect(page.locator("[data-testid=ghost]")).to_contain_text("Daisy (ghost)")
    expect(page.locator("h1")).to_contain_text("unranked")
    expect(page.locator("[data-testid=undo]")).to_be_visible()
    # A practice game's clock, and the ghost on it, start at the player's first move.
    expect(page.locator(f"{OWN} .card").first).to_be_visible(timeout=scaled(30_000))
    page.keyboard.press("d")
    expect(page.locator(OWN)).to_have_attribute("data-moves", "1")
    expect(page.locator("[data-testid=ghost]")).not_to_contain_text(
        "0 moves", timeout=scaled(15_000)
    )
