"""A node for bench_first_visit.py: `klondike-live serve` as it is, or, with `--plain`,
serving the client's files the way the gateway did before versioned URLs (each file read
from client_web/ per request, `Cache-Control: no-cache` without a validator, no
compression, index.html as written: no versioned URLs, no modulepreload links). The
plain node is the benchmark's same-run baseline.

    .venv/bin/python bench/first_visit_server.py [--plain] serve --port N --data-dir D
"""

from __future__ import annotations

import mimetypes
import sys
from http import HTTPStatus

from websockets.datastructures import Headers
from websockets.http11 import Response

from klondike_live.cli import main
from klondike_live.gateway import http
from klondike_live.gateway.client_files import SOURCE


def plain_static(self: http.HttpRoutes, path: str, headers: Headers) -> Response:
    """The static-file answer before versioned URLs, as the baseline serves it."""
    root = SOURCE.resolve()
    target = (root / (path.lstrip("/") or "index.html")).resolve()
    if not target.is_relative_to(root) or not target.is_file():
        return http.not_found()
    content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if content_type.startswith("text/") or content_type.endswith("javascript"):
        content_type += "; charset=utf-8"
    body = target.read_bytes()
    answer = Headers()
    answer["Content-Type"] = content_type
    answer["Content-Length"] = str(len(body))
    answer["Cache-Control"] = "no-cache"
    return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, answer, body)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--plain"]:
        http.HttpRoutes._static = plain_static  # type: ignore[method-assign]
        args = args[1:]
    sys.exit(main(args))
