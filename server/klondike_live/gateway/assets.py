"""The browser client's files as the HTTP gateway serves them: versioned URLs, cache
lifetimes, ETags and gzip, all prepared in memory.

The client is ES modules with no build step, so the version is one for all of its files:
the first 12 hex digits of a SHA-256 over every served file (`ClientAssets.version`).
`index.html` is rewritten as it is served: each quoted absolute path of a client file in
it (`/style.css`, the entry module, the import map's `/node_modules/...`) becomes
`/static/<version>/<path>`, and a `<link rel="modulepreload">` for every module the entry
imports, directly or not, is added at the end of `<head>`. A module's relative imports
resolve against its own URL, so they stay under the same prefix; the import map covers
the npm runtime's bare name. Nothing inside a module is rewritten.

    /  and  /index.html      the rewritten page          max-age=300, ETag (PAGE)
    /static/<version>/<path> a client file               public, max-age=31536000, immutable
    /static/<other>/<path>   the current file (a page of another version, e.g. during a
                             rolling deploy)             no-cache, ETag
    /<path>                  the same file, unversioned  no-cache, ETag
    anything else            None (the caller answers 404)

Every representation has a strong ETag (the gzip one its own); `If-None-Match` that names
it gives 304. Text files are gzipped once (level 9) when the table is built, and served so
when `Accept-Encoding` allows gzip (`Vary: Accept-Encoding`). Paths are looked up in the
table, never on the file system, so no request path can reach a file outside it.

The table is rebuilt when a request for the page finds that a file was added, removed or
changed (one `stat` per file): an edit in a checkout shows on the next reload with a new
version, while an installed package's files never change.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mimetypes
import posixpath
import re
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from klondike_live.gateway.client_files import client_files

__all__ = ["IMMUTABLE", "PAGE", "PREFIX", "REVALIDATE", "Asset", "ClientAssets", "Reply"]

PREFIX = "/static/"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
PAGE = "max-age=300"
"""The page's lifetime: a visit within 5 minutes of the last uses it with no request (a
round trip saved), a later one revalidates it (304). Chromium does not apply
`stale-while-revalidate` to navigations, so only a `max-age` spares the page's round trip.
A page up to 5 minutes old is safe: its other version's URLs get the current files, and
a reload always revalidates it. docs/operations.md, *Static files*."""
INDEX = "index.html"

_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".webmanifest": "application/manifest+json",
}
_COMPRESSIBLE = ("text/", "application/json", "application/manifest+json", "image/svg+xml")
_MIN_GZIP = 256  # smaller bodies are not worth a gzip header

# A quoted absolute path in the page: `"/src/main.js"`, `'/style.css'`.
_QUOTED_PATH = re.compile(r"""(["'])/([\w@./-]+)\1""")
_IMPORT_MAP = re.compile(r"""<script\s+type=["']importmap["']\s*>(.*?)</script>""", re.S)
_ENTRY = re.compile(r"""<script\s+type=["']module["']\s+src=["']/([\w@./-]+)["']""")
# Static imports and re-exports: `import x from "./a.js"`, `export * from "./b.js"`,
# `import "./c.js"`. Dynamic `import()` is left to load when it runs.
_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*["']([^"'\n]+)["']""")


@dataclass(frozen=True, slots=True)
class Representation:
    """One encoding of a file: its bytes and strong ETag."""

    body: bytes
    etag: str


@dataclass(frozen=True, slots=True)
class Asset:
    """A served file: its type and its representations (gzip only if it pays)."""

    content_type: str
    identity: Representation
    gzipped: Representation | None


@dataclass(frozen=True, slots=True)
class Reply:
    """What to answer: a status, a body (empty for 304) and the headers to set."""

    status: HTTPStatus
    body: bytes
    headers: dict[str, str]


def content_type(name: str) -> str:
    """The Content-Type of a file name (UTF-8 for text and scripts)."""
    suffix = posixpath.splitext(name)[1].lower()
    kind = _TYPES.get(suffix) or mimetypes.guess_type(name)[0]
    if kind is None:
        kind = "text/plain" if not suffix else "application/octet-stream"
    if kind.startswith("text/") or kind in ("application/json", "image/svg+xml"):
        kind += "; charset=utf-8"
    return kind


def _asset(body: bytes, kind: str) -> Asset:
    digest = hashlib.sha256(body).hexdigest()[:20]
    identity = Representation(body, f'"{digest}"')
    gzipped = None
    if kind.startswith(_COMPRESSIBLE) and len(body) >= _MIN_GZIP:
        packed = gzip.compress(body, compresslevel=9, mtime=0)
        if len(packed) < len(body):
            gzipped = Representation(packed, f'"{digest}-gz"')
    return Asset(kind, identity, gzipped)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an `Accept-Encoding` value allows gzip (`gzip` or `*`, q not 0)."""
    allowed: dict[str, bool] = {}
    for item in accept_encoding.lower().split(","):
        coding, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        allowed[coding.strip()] = quality > 0
    return allowed.get("gzip", allowed.get("x-gzip", allowed.get("*", False)))


def etag_matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110's weak comparison of an `If-None-Match` value with an ETag."""
    if if_none_match.strip() == "*":
        return True
    plain = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == plain for tag in if_none_match.split(",") if tag)


def _resolve(specifier: str, importer: str, imports: dict[str, str]) -> str | None:
    """The client file a static import names, or None (a URL, an unknown bare name)."""
    if specifier.startswith(("./", "../")):
        return posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    target = imports.get(specifier, specifier)
    return target[1:] if target.startswith("/") and not target.startswith("//") else None


class ClientAssets:
    """The client's files under one root, in memory, with their versioned URLs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._signature: tuple[tuple[str, int, int], ...] = ()
        self.files: dict[str, Asset] = {}
        self.version = ""
        self.preloads: list[str] = []
        self._load()

    def _stat(self) -> tuple[tuple[str, int, int], ...]:
        entries = []
        for name in client_files(self.root):
            try:
                stat = (self.root / name).stat()
            except OSError:  # removed meanwhile: the next look finds the change
                continue
            entries.append((name, stat.st_mtime_ns, stat.st_size))
        return tuple(entries)

    def _load(self) -> None:
        signature = self._stat()
        raw = {name: (self.root / name).read_bytes() for name, _, _ in signature}
        version = hashlib.sha256()
        for name, body in sorted(raw.items()):
            if name != INDEX:
                version.update(f"{name}\0{hashlib.sha256(body).hexdigest()}\0".encode())
        self.version = version.hexdigest()[:12]
        files = {name: _asset(body, content_type(name)) for name, body in raw.items()}
        if INDEX in raw:
            page = raw[INDEX].decode()
            self.preloads = self._module_graph(page, raw)
            files[INDEX] = _asset(self._rewrite(page, raw).encode(), content_type(INDEX))
        self.files = files
        self._signature = signature

    def refresh(self) -> None:
        """Rebuild the table if any file was added, removed or changed."""
        if self._stat() != self._signature:
            self._load()

    def url(self, name: str) -> str:
        """The versioned URL of a client file."""
        return f"{PREFIX}{self.version}/{name}"

    def _module_graph(self, page: str, raw: dict[str, bytes]) -> list[str]:
        """Every module the page's entry modules import, nearest first (not the entries)."""
        found = _IMPORT_MAP.search(page)
        imports: dict[str, str] = {}
        if found:
            try:
                imports = dict(json.loads(found.group(1)).get("imports", {}))
            except (ValueError, AttributeError):
                imports = {}
        entries = [name for name in _ENTRY.findall(page) if name in raw]
        seen = set(entries)
        order: list[str] = []
        queue = list(entries)
        while queue:
            module = queue.pop(0)
            for specifier in _IMPORT.findall(raw[module].decode(errors="replace")):
                target = _resolve(specifier, module, imports)
                if target is not None and target in raw and target not in seen:
                    seen.add(target)
                    order.append(target)
                    queue.append(target)
        return order

    def _rewrite(self, page: str, raw: dict[str, bytes]) -> str:
        """The page with versioned URLs and its modulepreload links."""

        def versioned(match: re.Match[str]) -> str:
            quote, name = match.group(1), match.group(2)
            if name not in raw or name == INDEX:
                return match.group(0)
            return f"{quote}{self.url(name)}{quote}"

        page = _QUOTED_PATH.sub(versioned, page)
        links = "".join(
            f'    <link rel="modulepreload" href="{self.url(name)}" />\n' for name in self.preloads
        )
        head_end = page.find("</head>")
        if head_end < 0:
            return page
        line_start = page.rfind("\n", 0, head_end) + 1
        return page[:line_start] + links + page[line_start:]

    def reply(self, path: str, accept_encoding: str = "", if_none_match: str = "") -> Reply | None:
        """The answer to a GET of `path` (no query), or None if it names no client file."""
        cache = REVALIDATE
        if path in ("/", f"/{INDEX}"):
            self.refresh()
            name = INDEX
            cache = PAGE
        elif path.startswith(PREFIX):
            version, _, name = path.removeprefix(PREFIX).partition("/")
            if name == INDEX:
                return None
            if version == self.version:
                cache = IMMUTABLE
        else:
            name = path.removeprefix("/")
        asset = self.files.get(name)
        if asset is None:
            return None
        chosen = asset.identity
        headers = {"Content-Type": asset.content_type, "Cache-Control": cache}
        if asset.gzipped is not None:
            headers["Vary"] = "Accept-Encoding"
            if accepts_gzip(accept_encoding):
                chosen = asset.gzipped
                headers["Content-Encoding"] = "gzip"
        headers["ETag"] = chosen.etag
        if if_none_match and etag_matches(if_none_match, chosen.etag):
            headers.pop("Content-Type")
            headers.pop("Content-Encoding", None)
            return Reply(HTTPStatus.NOT_MODIFIED, b"", headers)
        return Reply(HTTPStatus.OK, chosen.body, headers)
