"""A tournament in the browser: an organizer creates heats, two players enter, race a heat
that the organizer starts, and everyone sees the standings and the archive."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import msgpack
import pytest
from playwright.sync_api import Page, WebSocket, expect

from live_server import ServerProcess
from pages import DESKTOP, OWN, PHONE, Pages, Screenshot, assert_accessible, cards_drawn
from waits import scaled

STOCK = f'{OWN} .card[data-place="stock"]'
# A heat starts with a countdown and a room write on a loaded machine: wait generously.
SLOW = scaled(20_000)


class Frames:
    """Every frame a page receives (decoded msgpack), for checks of what it was shown."""

    def __init__(self, page: Page) -> None:
        self.frames: list[dict[str, Any]] = []
        page.on("websocket", self._attach)

    def _attach(self, socket: WebSocket) -> None:
        socket.on("framereceived", self._received)

    def _received(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            self.frames.append(msgpack.unpackb(payload, raw=False))

    def cards_of(self, room: str) -> set[int]:
        """Card identities in the board frames of `room`."""
        found: set[int] = set()
        for frame in self.frames:
            if frame.get("room") == room and frame.get("t") in ("board", "diff"):
                found |= _cards_in(frame.get("view") or frame.get("d") or {})
        return found

    def tournaments(self) -> list[Mapping[str, Any]]:
        return [f["tournament"] for f in self.frames if f.get("t") == "tournament"]


def _cards_in(data: Mapping[str, Any]) -> set[int]:
    found: set[int] = set()
    for pile in data.get("tableau", []):
        found |= {c for c in pile[1] if c >= 0}
    for _pile, _keep, _down, cards in data.get("piles", []):
        found |= {c for c in cards if c >= 0}
    found |= {c for c in data.get("waste", []) if c >= 0}
    for suit, height in enumerate(data.get("foundations", [])):
        found |= {suit * 13 + rank for rank in range(height)}
    return found


@pytest.fixture(scope="module")
def server(valkey_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server node whose countdowns last 5 s: long enough, on a loaded machine,
    to see that an entrant arrives in its seat while the countdown runs."""
    process = ServerProcess(
        valkey_url,
        tmp_path_factory.mktemp("serve-tournaments"),
        env={"KLONDIKE_COUNTDOWN_SECONDS": "5"},
    )
    yield process
    process.stop()


def turn_stock(page: Page, times: int) -> None:
    """Click the stock `times` times, each confirmed by the server."""
    own = page.locator(OWN)
    for _ in range(times):
        moves = int(own.get_attribute("data-moves") or 0)
        page.locator(STOCK).last.click()
        expect(own).to_have_attribute("data-moves", str(moves + 1), timeout=SLOW)
        expect(own).to_have_attribute("data-pending", "0", timeout=SLOW)


def test_heats_tournament_live_and_archived(pages: Pages, screenshot: Screenshot) -> None:
    """Created from the form, entered from two browsers, a heat started by the organizer
    and raced by both; the organizer's page follows it live (leaders, standings, no
    reload, no card or seed it may not know) and ends as the archive with replays."""
    org = pages.open("/#/tournaments", name="Olga")
    frames = Frames(org)
    org.reload()  # the frame log sees the websocket from its start
    form = org.locator("[data-testid=create-tournament]")
    expect(form).to_be_visible()
    form.locator("input[name=name]").fill("Thursday club")
    form.locator("input[name=heats]").fill("1")
    form.locator("input[name=listed]").check()
    form.locator("[data-testid=create-submit]").click()
    expect(org).to_have_url(re.compile(r"#/t/[A-Za-z0-9_-]{16}$"), timeout=SLOW)
    expect(org.locator("[data-testid=t-created]")).to_be_visible()
    invite = org.locator("[data-testid=t-invite]")
    expect(invite).to_have_value(org.url)
    tid = org.url.rsplit("/", 1)[-1]
    expect(org.locator("[data-testid=t-settings]")).to_contain_text("1 heat")
    org.evaluate("window.__sameDocument = true")  # a reload would forget it

    # Ann finds it in the public list; Bea comes by the invite link.
    ann = pages.open("/#/tournaments", name="Ann")
    ann.locator(f"[data-testid=listed-{tid}] a").click()
    bea = pages.open(invite.input_value(), name="Bea")
    for page in (ann, bea):
        page.locator("[data-testid=enter]").click()
        expect(page.locator("[data-testid=withdraw]")).to_be_visible(timeout=SLOW)
    entrants = org.locator("[data-testid=entrants]")
    expect(entrants).to_contain_text("Ann")
    expect(entrants).to_contain_text("Bea")
    expect(org.locator("[data-testid=standing]")).to_have_count(2)
    assert_accessible(org)
    assert_accessible(bea)

    # The organizer starts the heat now; its entrants join it from the tournament page.
    org.locator("[data-testid=close-registration]").click()
    expect(org.locator("[data-testid=log]")).to_contain_text("closed registration")
    expect(ann.locator("[data-testid=registration]")).to_contain_text("closed")
    org.locator("[data-testid=start-heat]").click()
    expect(org.locator("[data-testid=watch-heat]")).to_be_visible(timeout=SLOW)
    # Started now, with its entrants on this page: both are taken to their seats, and
    # see the countdown there.
    for page in (ann, bea):
        expect(page).to_have_url(re.compile(r"#/room/[A-Za-z0-9_-]+$"), timeout=SLOW)
        expect(page.locator(".countdown")).to_be_visible(timeout=SLOW)
    for page in (ann, bea):
        expect(page.locator(f"{OWN} .card").first).to_be_visible(timeout=SLOW)
    room = ann.url.rsplit("/", 1)[-1]
    turn_stock(ann, 3)
    turn_stock(bea, 1)

    # The organizer's page shows the leaders live, as a spectator sees them.
    ann_row = org.locator("[data-testid^=leader-]", has_text="Ann")
    expect(ann_row).to_contain_text("3", timeout=SLOW)
    expect(org.locator("[data-testid^=leader-]", has_text="Bea")).to_contain_text("1", timeout=SLOW)
    expect(org.locator("[data-testid=follow-leader]")).to_have_attribute("href", f"#/watch/{room}")
    screenshot(org, "tournament-heat-desktop", full_page=True)
    assert_accessible(org)
    common = cards_drawn(ann, "own-board") & cards_drawn(bea, "own-board")
    assert len(cards_drawn(ann, "own-board")) > len(common)  # Ann saw cards Bea did not
    assert frames.cards_of(room) <= common, "the spectator got a card a racer had not seen"
    assert frames.cards_of(room), "the leaders panel watched no board"
    for shown in frames.tournaments():
        assert all("seed" not in r for r in shown["rounds"]), "a heat's seed before its end"

    # Both resign: the heat ends and is scored; the organizer's page updates by itself.
    for page in (ann, bea):
        page.locator("[data-testid=resign]").click()
        expect(page.locator("[data-testid=resign]")).to_be_hidden(timeout=SLOW)
    for page in (ann, bea):
        expect(page.locator("[data-testid=results]")).to_contain_text("resigned", timeout=SLOW)
    standings = org.locator("[data-testid=standing]")
    expect(org.locator("[data-testid=standings-title], #standings-title")).to_have_text(
        "Final standings", timeout=SLOW
    )
    expect(standings).to_have_count(2)
    rows = [standings.nth(i).locator("td").all_inner_texts() for i in range(2)]
    assert sorted(r[1] for r in rows) == ["Ann", "Bea"]
    assert all(r[4] == "1" for r in rows), rows  # one round played each
    assert sum(float(r[2]) for r in rows) == 3  # 2 + 1, or 1.5 each when tied
    assert org.evaluate("window.__sameDocument === true"), "the page was reloaded"
    results = org.locator("[data-testid=results-1] tbody tr")
    expect(results).to_have_count(2)
    expect(org.locator("[data-testid=t-state]")).to_contain_text("finished")

    # The archive: the deal's seed beside its commitment, and every result's replay.
    expect(org.locator("#rounds-title")).to_contain_text("Archive", timeout=SLOW)
    verify = org.locator("[data-testid=round-1] [data-testid=verify]")
    verify.locator("summary").click()
    expect(verify.locator("[data-testid=verify-seed]")).not_to_be_empty()
    screenshot(org, "tournament-desktop", full_page=True)
    assert_accessible(org)
    org.set_viewport_size(PHONE)
    screenshot(org, "tournament-phone", full_page=True)
    org.set_viewport_size(DESKTOP)
    org.locator("[data-testid=results-1] a", has_text="Replay").first.click()
    expect(org).to_have_url(re.compile(rf"#/replay/{room}/1$"))
    expect(org.locator("[data-testid=replay-moves-0]")).to_contain_text("move 0/", timeout=SLOW)

    # A racer goes from the heat's results back to the standings.
    ann.locator("[data-testid=tournament-back]").click()
    expect(ann.locator("[data-testid=standing]")).to_have_count(2, timeout=SLOW)
    expect(ann.locator("[data-testid=standings] tr.me")).to_contain_text("Ann")
