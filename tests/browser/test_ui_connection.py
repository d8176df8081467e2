"""Connection life in the browser: a server restart mid-game, with moves made meanwhile."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import expect

from live_server import ServerProcess
from pages import OWN, Pages
from waits import scaled


def test_page_rides_out_a_server_restart(
    pages: Pages, server: ServerProcess, valkey_url: str
) -> None:
    """While the server is down a banner shows and a move waits; after the restart the
    page reconnects by itself, resumes its board and the move is confirmed."""
    page = pages.open(name="Steady")
    page.click("[data-testid=start-solo]")
    own = page.locator(OWN)
    stock = page.locator(f'{OWN} .card[data-place="stock"]')
    for moves in ("1", "2"):
        stock.last.click()
        expect(own).to_have_attribute("data-moves", moves)
    expect(own).to_have_attribute("data-pending", "0")

    server.stop()
    banner = page.locator("#banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Reconnecting")
    stock.last.click()  # made while offline: kept until the server confirms it
    expect(own).to_have_attribute("data-pending", "1")

    port = urlsplit(server.url).port
    assert port is not None
    restarted = ServerProcess(valkey_url, server.data_dir, port=port)  # same secret
    try:
        expect(banner).to_be_hidden(timeout=scaled(20_000))
        expect(own).to_have_attribute("data-moves", "3")
        expect(own).to_have_attribute("data-pending", "0")
        assert page.locator(f'{OWN} .card[data-place="waste"]').count() == 3
    finally:
        restarted.stop()
