"""Plain HTTP on the websocket port: health, metrics, a small JSON API, static files.

websockets calls `HttpRoutes.__call__` for every request before the handshake; a
request for `/ws` goes on to become a websocket, anything else gets a response here.

    GET /healthz/live              200 while the process serves HTTP at all (liveness)
    GET /healthz/ready             200 {"status": "ok", ...} when Redis answers PING within
                                   0.5 s and the bus subscriber is connected, else 503
                                   {"status": "unavailable", "failing": [...]} (readiness);
                                   both say "history": "ok" or "unavailable" (the
                                   history database, which readiness does not wait for)
                                   and "core": how the pure core runs, "compiled
                                   (mypyc)" or "pure Python" (`klondike_live.compiled`)
    GET /healthz                   the same as /healthz/ready
    GET /metrics                   Prometheus text
    GET /api/me/account            the signed-in account and its sessions (a session
                                   token; else 401 `{"error": "unauthorized"}`)
    GET /api/...                   the JSON API (`api.py`): lobbies, live games, results,
                                   replays, analyses, a player's own, the daily
                                   challenges; `/api/tournaments...` (`tournament_api.py`)
    GET /, /static/<version>/<path>, /<path>
                                   the browser client's files (`assets.py`: versioned
                                   URLs, cache lifetimes, ETags and 304, gzip), from
                                   the installed package or a checkout's client_web/
                                   (`client_files.py`); any other path is 404

Every route answers GET and HEAD (the same headers, no body); any other method gets 405
`{"error": "method_not_allowed"}` with `Allow` (only GET for `/ws`). A request with a
body never gets here: websockets closes the connection without an answer.

Nothing here reveals a card of a game that is still playable: results and replays exist
only for finished games. A daily game's results and replay are shown, while its day is
open, only to an account that finished its own ranked attempt (`Authorization: Bearer
<token>`; else 403 `{"error": "spoiler"}`, `DailyService.may_see`); what is shown of a
finished game is `race.redaction`'s policy alone (docs/rules.md, "What each viewer may
see"). The routes read no store: every answer is the service's.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from klondike_live import __version__, compiled
from klondike_live.auth import AuthError, Identity, KeyRing, verify_token
from klondike_live.gateway.api import Api
from klondike_live.gateway.assets import ClientAssets
from klondike_live.gateway.client_files import client_root
from klondike_live.gateway.tournament_api import TournamentApi
from klondike_live.history import HistoryError
from klondike_live.metrics import Metrics
from klondike_live.service.live import LiveService

log = logging.getLogger(__name__)

WEBSOCKET_PATH = "/ws"
CORE = compiled.describe()


def _response(status: HTTPStatus, body: bytes, content_type: str, **extra: str) -> Response:
    headers = Headers()
    headers["Content-Type"] = content_type
    headers["Content-Length"] = str(len(body))
    headers["Cache-Control"] = extra.get("cache", "no-store")
    headers["X-Content-Type-Options"] = "nosniff"
    return Response(status.value, status.phrase, headers, body)


def json_response(data: Any, status: HTTPStatus = HTTPStatus.OK) -> Response:
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return _response(status, body, "application/json; charset=utf-8")


def not_found() -> Response:
    return json_response({"error": "not_found"}, HTTPStatus.NOT_FOUND)


def method_not_allowed(allow: tuple[str, ...]) -> Response:
    response = json_response({"error": "method_not_allowed"}, HTTPStatus.METHOD_NOT_ALLOWED)
    response.headers["Allow"] = ", ".join(allow)
    return response


class HttpRoutes:
    """The `process_request` hook of the server: HTTP over the service's answers."""

    def __init__(
        self,
        service: LiveService,
        metrics: Metrics,
        node_id: str,
        keys: bytes | KeyRing,
        client_dir: Path | None = None,
        *,
        bus_connected: Callable[[], bool] | None = None,
    ) -> None:
        self.queries = service.queries
        self.accounts = service.accounts
        self.api = Api(service.queries, service.analyses, service.codes)
        self.tournaments = TournamentApi(service.tournaments)
        self.metrics = metrics
        self.node_id = node_id
        self.keys = keys
        root = (client_dir or client_root()).resolve()
        self.assets = ClientAssets(root) if root.is_dir() else None
        if self.assets is not None:
            log.info("serving the client from %s (version %s)", root, self.assets.version)
        self.bus_connected = bus_connected

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        path, _, query = request.path.partition("?")
        allow = ("GET",) if path == WEBSOCKET_PATH else ("GET", "HEAD")
        if request.method not in allow:
            return method_not_allowed(allow)
        if path == WEBSOCKET_PATH:
            return None
        try:
            response = await self._route(path, query, request.headers)
        except Exception:
            log.exception("HTTP request for %s failed", path)
            response = json_response({"error": "internal"}, HTTPStatus.INTERNAL_SERVER_ERROR)
        if request.method == "HEAD":  # the GET answer's headers, Content-Length included
            return dataclasses.replace(response, body=b"")
        return response

    async def _route(self, path: str, query: str, headers: Headers) -> Response:
        if path in ("/healthz", "/healthz/ready"):
            return await self._ready()
        if path == "/healthz/live":
            return json_response({"status": "ok", "node": self.node_id, "version": __version__})
        if path == "/metrics":
            body, content_type = self.metrics.render()
            return _response(HTTPStatus.OK, body, content_type)
        if path.startswith("/api/"):
            return await self._api(path.removeprefix("/api/"), query, headers)
        return self._static(path, headers)

    async def _identity(self, headers: Headers) -> Identity | None:
        """Who a valid `Authorization: Bearer <token>` names, checked as `hello` checks
        it (an ended session, a guest that is an account now: None), else None."""
        scheme, _, token = headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        try:
            identity = verify_token(self.keys, token.strip())
            await self.accounts.check(identity)
        except AuthError:
            return None
        return identity

    async def _ready(self) -> Response:
        """Ready for traffic: Redis answers within its health bound (a stalled Redis
        included) and the bus subscriber is connected. The history database's state is
        shown (`history`: "ok" or "unavailable") but does not make a node unready: live
        play never waits for it (finished games wait in the outbox)."""
        failing = []
        if not await self.queries.ready():
            failing.append("redis")
        if self.bus_connected is not None and not self.bus_connected():
            failing.append("bus")
        history = "ok" if await self.queries.history_ready() else "unavailable"
        if failing:
            return json_response(
                {
                    "status": "unavailable",
                    "node": self.node_id,
                    "failing": failing,
                    "history": history,
                },
                HTTPStatus.SERVICE_UNAVAILABLE,
            )
        return json_response(
            {
                "status": "ok",
                "node": self.node_id,
                "version": __version__,
                "core": CORE,
                "history": history,
            }
        )

    async def _api(self, route: str, query: str, headers: Headers) -> Response:
        if route == "tournaments" or route.startswith("tournaments/"):
            status, data = await self.tournaments.route(route)
        else:
            parsed = parse_qs(query[:1024], keep_blank_values=False)
            try:
                identity = await self._identity(headers)
                if route == "me/account":
                    account = None if identity is None else await self.accounts.overview(identity)
                    if account is None:
                        status, data = HTTPStatus.UNAUTHORIZED, {"error": "unauthorized"}
                    else:
                        status, data = HTTPStatus.OK, account
                else:
                    user = None if identity is None else identity.user_id
                    status, data = await self.api.route(route, parsed, user)
            except HistoryError as exc:
                log.warning("GET /api/%s: %s", route, exc)
                status, data = HTTPStatus.SERVICE_UNAVAILABLE, {"error": "history_unavailable"}
        return json_response(data, status)

    def _static(self, path: str, headers: Headers) -> Response:
        if self.assets is None:
            return json_response(
                {"name": "klondike-live", "version": __version__, "websocket": WEBSOCKET_PATH}
            )
        reply = self.assets.reply(
            path, headers.get("Accept-Encoding", ""), headers.get("If-None-Match", "")
        )
        if reply is None:
            return not_found()
        response_headers = Headers()
        for name, value in reply.headers.items():
            response_headers[name] = value
        if reply.status is not HTTPStatus.NOT_MODIFIED:
            response_headers["Content-Length"] = str(len(reply.body))
        response_headers["X-Content-Type-Options"] = "nosniff"
        return Response(reply.status.value, reply.status.phrase, response_headers, reply.body)
