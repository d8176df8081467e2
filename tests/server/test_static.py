"""The browser client's files over HTTP: versioned URLs, cache lifetimes, ETags and 304,
gzip, and that nothing but the client's own files can be fetched (docs/operations.md,
"Static files")."""

from __future__ import annotations

import asyncio
import gzip
import re
import shutil
from pathlib import Path

from klondike_live.gateway.assets import IMMUTABLE, PAGE, ClientAssets
from klondike_live.gateway.client_files import SOURCE, client_files
from klondike_live.gateway.server import Node

from helpers import node
from waits import wait_for

__all__ = ["node"]  # the fixture, imported for pytest

CLIENT = SOURCE
RUNTIME = "node_modules/@msgpack/msgpack/dist.umd/msgpack.min.js"
INTL = "node_modules/intl-messageformat/intl-messageformat.iife.js"


async def http(
    node: Node, path: str, *headers: str, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    """One raw request, the path sent as it is: status, headers (lower-case), body."""
    reader, writer = await asyncio.open_connection(node.settings.host, node.port)
    try:
        extra = "".join(f"{header}\r\n" for header in headers)
        writer.write(f"{method} {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n".encode())
        await writer.drain()
        data = await wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    found = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
    if "content-length" in found and method != "HEAD":
        assert len(body) == int(found["content-length"]), (path, found)
    return int(status_line.split()[1]), found, body


async def page(node: Node) -> tuple[str, str]:
    """The served index.html and the version in its URLs."""
    status, _, body = await http(node, "/")
    assert status == 200
    text = body.decode()
    version = re.search(r'src="/static/([0-9a-f]{12})/src/main\.js"', text)
    assert version is not None, text
    return text, version.group(1)


async def test_the_page_is_cached_briefly_and_names_versioned_urls(node: Node) -> None:
    """index.html: cached 5 minutes (`max-age=300`), then revalidated with its ETag; its
    style, msgpack's script, English catalog, entry module and import map point at
    /static/<version>/, with a modulepreload link for every module of the graph (the
    import map's intl-messageformat among them)."""
    status, headers, _ = await http(node, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["cache-control"] == PAGE == "max-age=300"
    assert re.fullmatch(r'"[0-9a-f]{20}"', headers["etag"])
    text, version = await page(node)
    prefix = f"/static/{version}/"
    assert f'href="{prefix}style.css"' in text
    assert f'<script defer src="{prefix}{RUNTIME}"></script>' in text
    assert f'"@msgpack/msgpack": "{prefix}src/msgpack.js"' in text
    assert f'"intl-messageformat": "{prefix}{INTL}"' in text
    assert f'href="{prefix}locales/en.json"' in text
    assert "/node_modules/" not in text.replace(prefix + "node_modules/", "")
    preloaded = re.findall(r'<link rel="modulepreload" href="([^"]+)"', text)
    # Modules of the page, each once, but the entry; among them the deepest imports.
    modules = {prefix + name for name in client_files(CLIENT) if name.startswith("src/")}
    modules.add(prefix + INTL)
    assert len(preloaded) == len(set(preloaded))
    assert set(preloaded) <= modules - {prefix + "src/main.js"}
    for name in ("net.js", "msgpack.js", "i18n.js", "pages/room.js", "board.js", "selection.js"):
        assert f"{prefix}src/{name}" in preloaded, name
    assert prefix + INTL in preloaded
    assert text.index("</script>", text.index("importmap")) < text.index("modulepreload")


async def test_versioned_files_are_immutable_and_are_the_files_on_disk(node: Node) -> None:
    """Each client file under /static/<version>/ is the file itself, cached for a year."""
    _, version = await page(node)
    for name in client_files(CLIENT):
        if name == "index.html":
            continue
        status, headers, body = await http(node, f"/static/{version}/{name}")
        assert status == 200, name
        assert headers["cache-control"] == IMMUTABLE
        assert body == (CLIENT / name).read_bytes(), name
    _, headers, _ = await http(node, f"/static/{version}/src/main.js")
    assert headers["content-type"] == "text/javascript; charset=utf-8"
    _, headers, _ = await http(node, f"/static/{version}/{RUNTIME}")
    assert headers["content-type"] == "text/javascript; charset=utf-8"
    _, headers, _ = await http(node, f"/static/{version}/node_modules/@msgpack/msgpack/LICENSE")
    assert headers["content-type"] == "text/plain; charset=utf-8"
    _, headers, _ = await http(node, f"/static/{version}/style.css")
    assert headers["content-type"] == "text/css; charset=utf-8"


async def test_unversioned_and_stale_version_urls_must_revalidate(node: Node) -> None:
    """/src/main.js and a URL of another version serve the current file with no-cache:
    only the current version may be kept without asking."""
    expected = (CLIENT / "src/main.js").read_bytes()
    for path in ("/src/main.js", "/static/000000000000/src/main.js"):
        status, headers, body = await http(node, path)
        assert (status, headers["cache-control"], body) == (200, "no-cache", expected), path
        assert "etag" in headers


async def test_if_none_match_answers_304(node: Node) -> None:
    """The ETag given back in If-None-Match (weak or not, in a list) gets 304 with the
    caching headers and no body; another ETag gets the file."""
    _, version = await page(node)
    for path in ("/", f"/static/{version}/src/net.js", "/style.css"):
        _, headers, _ = await http(node, path)
        etag = headers["etag"]
        for condition in (etag, f"W/{etag}", f'"other", {etag}', "*"):
            status, again, body = await http(node, path, f"If-None-Match: {condition}")
            assert (status, body) == (304, b""), (path, condition)
            assert again["etag"] == etag
            assert again["cache-control"] == headers["cache-control"]
        status, _, body = await http(node, path, 'If-None-Match: "other"')
        assert status == 200 and body


async def test_gzip_when_accepted(node: Node) -> None:
    """Text files are gzipped when Accept-Encoding allows it, with Vary and their own
    ETag; not when it does not."""
    _, version = await page(node)
    for path in ("/", f"/static/{version}/src/board.js", f"/static/{version}/style.css"):
        _, plain_headers, plain = await http(node, path)
        assert plain_headers["vary"] == "Accept-Encoding"
        assert "content-encoding" not in plain_headers
        for accept in ("gzip", "gzip, deflate, br, zstd", "br;q=1.0, gzip;q=0.8", "*"):
            status, headers, body = await http(node, path, f"Accept-Encoding: {accept}")
            assert status == 200
            assert headers["content-encoding"] == "gzip", (path, accept)
            assert headers["vary"] == "Accept-Encoding"
            assert gzip.decompress(body) == plain
            assert len(body) < len(plain)
            assert headers["etag"] != plain_headers["etag"]
        for accept in ("gzip;q=0", "identity", "br", "*;q=0"):
            _, headers, body = await http(node, path, f"Accept-Encoding: {accept}")
            assert "content-encoding" not in headers, (path, accept)
            assert body == plain
        _, headers, _ = await http(node, path, "Accept-Encoding: gzip")
        status, _, _ = await http(
            node, path, "Accept-Encoding: gzip", f"If-None-Match: {headers['etag']}"
        )
        assert status == 304


async def test_head_of_a_file_has_the_get_headers(node: Node) -> None:
    _, version = await page(node)
    path = f"/static/{version}/src/board.js"
    _, get_headers, get_body = await http(node, path, "Accept-Encoding: gzip")
    status, headers, body = await http(node, path, "Accept-Encoding: gzip", method="HEAD")
    assert (status, body) == (200, b"")
    assert headers["content-length"] == get_headers["content-length"] == str(len(get_body))
    for name in ("content-type", "content-encoding", "etag", "cache-control"):
        assert headers[name] == get_headers[name]


async def test_unknown_files_and_the_developers_files_are_404(node: Node) -> None:
    _, version = await page(node)
    for path in (
        "/src/nothing.js",
        f"/static/{version}/src/nothing.js",
        f"/static/{version}/index.html",
        f"/static/{version}/",
        "/static/",
        "/package.json",
        "/package-lock.json",
        "/eslint.config.js",
        "/test/fixtures/games.json",
        "/node_modules/@msgpack/msgpack/package.json",
        "/node_modules/@msgpack/msgpack/dist.esm/index.mjs",
        "/node_modules/@msgpack/msgpack/dist.umd/msgpack.min.js.map",
        "/node_modules/eslint/package.json",
        "/node_modules/.installed",
        "/src",
    ):
        status, headers, body = await http(node, path)
        assert status == 404, path
        assert body == b'{"error":"not_found"}'
        assert headers["cache-control"] == "no-store"


async def test_paths_out_of_the_client_are_refused(node: Node) -> None:
    """Dot segments, encoded or not, absolute and doubled slashes reach no file."""
    _, version = await page(node)
    for path in (
        "/../pyproject.toml",
        "/src/../../pyproject.toml",
        f"/static/{version}/../../pyproject.toml",
        f"/static/{version}/../src/main.js",
        "/%2e%2e/pyproject.toml",
        "/src/%2e%2e/%2e%2e/pyproject.toml",
        "/..%2fpyproject.toml",
        "//etc/passwd",
        "/static//etc/passwd",
        "/src/./main.js",
        "/src//main.js",
        "/./index.html",
        "/src/main.js%00",
    ):
        status, _, body = await http(node, path)
        assert status == 404, path
        assert body == b'{"error":"not_found"}'


def test_the_version_changes_when_a_file_changes(tmp_path: Path) -> None:
    """Editing, adding or removing a client file gives a new version (and new URLs in the
    page, on its next request); an unchanged tree keeps its version."""
    root = tmp_path / "client_web"
    for name in client_files(CLIENT):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CLIENT / name, root / name)
    assets = ClientAssets(root)
    first = assets.version
    assert ClientAssets(root).version == first
    page = assets.reply("/")
    assert page is not None and f"/static/{first}/src/main.js" in page.body.decode()

    with (root / "src/board.js").open("a", encoding="utf-8") as file:
        file.write("\n// changed\n")
    page = assets.reply("/")  # the page's request notices the change
    assert page is not None
    second = assets.version
    assert second != first
    assert f"/static/{second}/src/main.js" in page.body.decode()
    board = assets.reply(f"/static/{second}/src/board.js")
    assert board is not None and board.body.endswith(b"// changed\n")
    assert board.headers["Cache-Control"] == IMMUTABLE
    stale = assets.reply(f"/static/{first}/src/board.js")
    assert stale is not None and stale.headers["Cache-Control"] == "no-cache"

    (root / "src/extra.js").write_text("export const x = 1;\n", encoding="utf-8")
    assets.reply("/")
    third = assets.version
    assert third not in (first, second)
    (root / "src/extra.js").unlink()
    assets.reply("/")
    assert assets.version == second
