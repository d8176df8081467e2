"""Room codes over HTTP, end to end on a real node and Valkey: `GET /api/codes/<code>`
leads to an open race; text that is no code is refused with a stable error code and a
message; an unknown code or that of a finished race is not found."""

from __future__ import annotations

from urllib.parse import quote

from klondike_live.gateway.server import Node

from auditor import http_audit
from helpers import close_all, node, started_race
from test_http_api import get, get_ok
from waits import connect_client

__all__ = ["http_audit", "node"]  # the fixtures, imported for pytest


async def test_a_race_code_leads_to_its_lobby_and_bad_text_is_refused(node: Node) -> None:
    ann = await connect_client(node.ws_url, name="Ann")
    try:
        room = await ann.create_race()
        frame = await ann.join(room)
        code = frame["code"]
        assert isinstance(code, str) and len(code) == 6
        assert await get_ok(node, f"api/codes/{code}") == {"room": room, "code": code}
        typed = quote(f" {code[:3].lower()}-{code[3:]} ")  # as a person may type it
        assert await get_ok(node, f"api/codes/{typed}") == {"room": room, "code": code}
        for bad in ("ABCDEF", "ACDEF", "ACDEFGH", "ACD%2FEFG", "x" * 300, ""):
            status, _, body = await get(node, f"api/codes/{bad}")
            assert status == 400, (bad, status, body)
            assert body["error"] == "bad_code"
            assert "ACDEFGHJKMNPQRTUVWXY" in body["message"]
        unknown = "QQQQQQ" if code != "QQQQQQ" else "WWWWWW"
        status, _, body = await get(node, f"api/codes/{unknown}")
        assert (status, body) == (404, {"error": "not_found"})
    finally:
        await close_all([ann])


async def test_the_code_of_a_finished_race_is_not_found(node: Node) -> None:
    room, racers, _ = await started_race(node, "Ann", "Bob")
    try:
        frames = [m for m in racers[0].received if m["t"] == "room" and m["room"] == room]
        code = frames[-1]["code"]
        assert await get_ok(node, f"api/codes/{code}") == {"room": room, "code": code}
        for client in racers:
            await client.resign(room)
        await racers[0].expect(lambda m: m["t"] == "results")
        status, _, body = await get(node, f"api/codes/{code}")
        assert (status, body) == (404, {"error": "not_found"})
    finally:
        await close_all(racers)
