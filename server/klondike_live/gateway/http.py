"""Plain HTTP on the websocket port: health, metrics, a small JSON API, static files.

websockets calls `HttpRoutes.__call__` for every request before the handshake; a
request for `/ws` goes on to become a websocket, anything else gets a response here.

    GET /healthz                   200 {"status": "ok", ...} when Redis answers, else 503
    GET /metrics                   Prometheus text
    GET /api/rooms                 public rooms waiting in their lobby
    GET /api/results               recently finished races
    GET /api/results/<room>/<gen>  one finished race: ranking, seed, deal, game records
    GET /<path>                    the browser client's files from client_web/

Nothing here reveals a card of a race that is still playable: results exist only for
finished races.
"""

from __future__ import annotations

import json
import mimetypes
from http import HTTPStatus
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from klondike_live import __version__, keys
from klondike_live.metrics import Metrics
from klondike_live.race.room import LOBBY
from klondike_live.store import Store

WEBSOCKET_PATH = "/ws"
CLIENT_DIR = Path(__file__).resolve().parents[3] / "client_web"


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


class HttpRoutes:
    """The `process_request` hook of the server."""

    def __init__(
        self, store: Store, metrics: Metrics, node_id: str, client_dir: Path = CLIENT_DIR
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.node_id = node_id
        self.client_dir = client_dir.resolve()

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == WEBSOCKET_PATH:
            return None
        try:
            return await self._route(path)
        except Exception:
            return json_response({"error": "internal"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    async def _route(self, path: str) -> Response:
        if path == "/healthz":
            return await self._health()
        if path == "/metrics":
            body, content_type = self.metrics.render()
            return _response(HTTPStatus.OK, body, content_type)
        if path == "/api/rooms":
            return json_response(await self._public_rooms())
        if path == "/api/results":
            return json_response(await self._finished())
        if path.startswith("/api/results/"):
            return await self._results(path.removeprefix("/api/results/"))
        if path.startswith("/api/"):
            return not_found()
        return self._static(path)

    async def _health(self) -> Response:
        try:
            await self.store.redis.ping()
        except Exception:
            return json_response(
                {"status": "unavailable", "node": self.node_id}, HTTPStatus.SERVICE_UNAVAILABLE
            )
        return json_response({"status": "ok", "node": self.node_id, "version": __version__})

    async def _public_rooms(self) -> list[dict[str, Any]]:
        out = []
        for room_id in await self.store.list_public():
            loaded = await self.store.load_room(room_id)
            if loaded is None:
                continue
            state = loaded[0]
            if state.state != LOBBY:
                continue
            host = next((s.name for _, s in state.seated() if s.user == state.host), "")
            out.append(
                {
                    "room": state.id,
                    "variant": str(state.variant),
                    "host": host,
                    "racers": len(state.seated()),
                    "capacity": state.capacity,
                    "time_limit": state.time_limit,
                    "created_at": state.created_ms,
                }
            )
        return out

    async def _finished(self) -> list[dict[str, Any]]:
        out = []
        for room_id, gen in await self.store.list_finished():
            data = await self.store.load_results(room_id, gen)
            if data is None:
                continue
            results = msgpack.unpackb(data, raw=False)
            out.append(
                {
                    "room": room_id,
                    "gen": gen,
                    "variant": results["variant"],
                    "ended_at": results["ended_at"],
                    "ranking": [
                        {k: row[k] for k in ("rank", "seat", "name", "status", "time_ms", "found")}
                        for row in results["ranking"]
                    ],
                }
            )
        return out

    async def _results(self, rest: str) -> Response:
        room_id, _, gen_text = rest.partition("/")
        if not keys.is_room_id(room_id) or not gen_text.isdigit():
            return not_found()
        data = await self.store.load_results(room_id, int(gen_text))
        if data is None:
            return not_found()
        return json_response(msgpack.unpackb(data, raw=False))

    def _static(self, path: str) -> Response:
        if not self.client_dir.is_dir():
            return json_response(
                {"name": "klondike-live", "version": __version__, "websocket": WEBSOCKET_PATH}
            )
        relative = path.lstrip("/") or "index.html"
        target = (self.client_dir / relative).resolve()
        if not target.is_relative_to(self.client_dir) or not target.is_file():
            return not_found()
        content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type.endswith("javascript"):
            content_type += "; charset=utf-8"
        return _response(HTTPStatus.OK, target.read_bytes(), content_type, cache="no-cache")
