"""The client's files in a real browser: every module comes from a versioned URL that
the page preloads, gzipped; a second visit within 5 minutes takes them all, the page
too, from the cache, and a reload revalidates the page (docs/operations.md, "Static
files")."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page, expect

from live_server import ServerProcess
from pages import DESKTOP, OWN, Pages

RESOURCES = """
performance.getEntriesByType('resource').map((r) => ({
  path: new URL(r.name).pathname, transfer: r.transferSize,
  encoded: r.encodedBodySize, decoded: r.decodedBodySize,
}))
"""
NAVIGATION = """(() => {
  const n = performance.getEntriesByType('navigation')[0];
  return { status: n.responseStatus, transfer: n.transferSize, encoded: n.encodedBodySize };
})()"""


def static_files(page: Page) -> dict[str, dict[str, Any]]:
    """The page's resources that are the client's files, by path."""
    entries: list[dict[str, Any]] = page.evaluate(RESOURCES)
    return {e["path"]: e for e in entries if not e["path"].startswith(("/api/", "/ws"))}


def test_modules_are_versioned_preloaded_cached_and_gzipped(pages: Pages) -> None:
    page = pages.open(name="Cached")
    page.click("[data-testid=start-solo]")
    expect(page.locator(f"{OWN} .card").first).to_be_visible()
    preloaded = {
        urlsplit(str(href)).path
        for href in page.eval_on_selector_all(
            "link[rel=modulepreload]", "links => links.map(l => l.href)"
        )
    }
    first = static_files(page)
    version = next(p for p in first if p.endswith("/src/main.js")).split("/")[2]
    prefix = f"/static/{version}/"
    scripts = {path for path in first if path.endswith(".js")}
    assert all(path.startswith(prefix) for path in first), sorted(first)
    # Every module but the entry was announced in the page, so none waited for its importer.
    assert scripts - preloaded == {
        prefix + "src/main.js",
        prefix + "node_modules/@msgpack/msgpack/dist.umd/msgpack.min.js",
    }
    assert preloaded <= scripts
    for path, entry in first.items():
        assert entry["transfer"] > 0, path  # fetched: a fresh context has no cache
    main = first[prefix + "src/main.js"]
    assert 0 < main["encoded"] < main["decoded"]  # gzipped on the wire

    again = page.context.new_page()
    again.goto("/")
    expect(again.locator("[data-testid=start-solo]")).to_be_visible()
    second = static_files(again)
    assert set(second) == set(first)
    for path, entry in second.items():
        assert entry["transfer"] == 0, path  # from the cache, not even revalidated
    navigation = again.evaluate(NAVIGATION)
    # The page itself is still fresh (max-age=300): from the cache, no request at all.
    assert navigation["status"] == 200
    assert navigation["transfer"] == 0 and navigation["encoded"] > 0, navigation
    # A reload revalidates it: a 304 (the browser shows it as the cached 200) that carries
    # headers only, less than the body it keeps.
    again.reload()
    expect(again.locator("[data-testid=start-solo]")).to_be_visible()
    navigation = again.evaluate(NAVIGATION)
    assert navigation["status"] == 200
    assert 0 < navigation["transfer"] < navigation["encoded"], navigation
    again.close()


def test_a_first_visit_is_clean(browser: Browser, server: ServerProcess) -> None:
    """A fresh browser (no token, no name) opening the home page: no console error and
    no failed request (the home page asks for the player's own lists, which answer to
    its token, only once the server's `welcome` gave it one)."""
    context = browser.new_context(base_url=server.url, locale="en-US", viewport=DESKTOP)
    try:
        page = context.new_page()
        errors: list[str] = []
        failed: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on(
            "response",
            lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None,
        )
        page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
        # The home page's lists: the player's own come once it has its token.
        with page.expect_response(lambda r: "/api/me/stats" in r.url and r.ok):
            page.goto("/")
        expect(page.locator("[data-testid=start-solo]")).to_be_visible()
        assert not failed, failed
        assert not errors, errors
    finally:
        context.close()
