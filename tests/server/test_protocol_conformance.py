"""End to end on a real node: the protocol as docs/protocol.md states it, for a client
written from that page alone (tokens and names, abuse limits, the join reply, HTTP
methods)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import jwt
import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from klondike_live.config import Settings
from klondike_live.gateway.server import Node, running
from klondike_live.store.connect import RedisClient

from helpers import close_all, node
from waits import connect_client, scaled, wait_for

__all__ = ["node"]  # the fixture, imported for pytest


async def handshake(node: Node, **fields: object) -> tuple[dict[str, Any], int | None]:
    """Say `hello` with `fields` on a new connection: the server's answer and, when it
    is not `welcome`, the code the connection is then closed with."""
    async with connect(node.ws_url, compression=None) as ws:
        await ws.send(msgpack.packb({"t": "hello", "v": 1, **fields}))
        answer: dict[str, Any] = msgpack.unpackb(await wait_for(ws.recv(), 5))
        if answer["t"] == "welcome":
            return answer, None
        with pytest.raises(ConnectionClosed):
            await wait_for(ws.recv(), 5)
        return answer, ws.close_code


def token(node: Node, **claims: object) -> str:
    return jwt.encode({"sub": "site-user-1", **claims}, node.settings.secret, "HS256")


# ------------------------------------------------------------ tokens and names


async def test_token_expired_within_the_leeway_is_accepted(node: Node) -> None:
    """A token whose exp passed 3 s ago still logs in (leeway 5 s)."""
    answer, _ = await handshake(node, token=token(node, exp=int(time.time()) - 3))
    assert answer["t"] == "welcome" and answer["user"] == "site-user-1"


async def test_token_expired_beyond_the_leeway_closes_4002(node: Node) -> None:
    """A token whose exp passed 7 s ago gets token_expired and close 4002."""
    answer, code = await handshake(node, token=token(node, exp=int(time.time()) - 7))
    assert (answer["t"], answer["code"], code) == ("error", "token_expired", 4002)


@pytest.mark.parametrize("bad", ["", " ", "x" * 3000])
async def test_empty_or_junk_token_is_token_invalid_4002(node: Node, bad: str) -> None:
    """An empty, blank or overlong token is token_invalid with close 4002, not bad_field."""
    answer, code = await handshake(node, token=bad)
    assert (answer["t"], answer["code"], code) == ("error", "token_invalid", 4002)


async def test_nil_token_is_no_token(node: Node) -> None:
    """`token: nil` is the same as no token: a new guest."""
    answer, _ = await handshake(node, token=None, name="Nil")
    assert answer["t"] == "welcome" and answer["user"].startswith("g_")


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "Ann\nLee",
        "Ann\tLee",
        "Ann\r\nLee",
        "Ann\x85Lee",
        "Ann\u2028Lee",
        "Ann\u2029Lee",
        "Ann\u200bLee",
        "\u200dAnn",
        "\u3164",
        "x" * 25,
        "x" * 300,
    ],
)
async def test_refused_names_get_bad_name_and_1008(node: Node, name: str) -> None:
    """Empty, control, separator, invisible and overlong names: bad_name, close 1008."""
    answer, code = await handshake(node, name=name)
    assert (answer["t"], answer["code"], code) == ("error", "bad_name", 1008)


@pytest.mark.parametrize("name", [5, ["Ann"], b"Ann"])
async def test_a_name_that_is_not_a_string_is_bad_field(node: Node, name: object) -> None:
    """A name of another type is a malformed hello: bad_field, close 1008."""
    answer, code = await handshake(node, name=name)
    assert (answer["t"], answer["code"], code) == ("error", "bad_field", 1008)


async def test_a_bad_name_is_refused_with_a_token_too(node: Node) -> None:
    """The name overrides the token's, so a token does not save a bad name."""
    answer, code = await handshake(node, token=token(node), name="Ann\nLee")
    assert (answer["code"], code) == ("bad_name", 1008)


async def test_space_separators_collapse_to_one_space(node: Node) -> None:
    """Runs of spaces (no-break and ideographic too) become one space, trimmed."""
    answer, _ = await handshake(node, name=" Ann\u00a0\u3000 Lee ")
    assert answer["name"] == "Ann Lee"


# ------------------------------------------------------------ abuse limits


async def raw(node: Node) -> ClientConnection:
    ws = await connect(node.ws_url, compression=None)
    await ws.send(msgpack.packb({"t": "hello", "v": 1, "name": "Raw"}))
    assert msgpack.unpackb(await ws.recv())["t"] == "welcome"
    return ws


async def answer(ws: ClientConnection, frame: bytes | str) -> dict[str, Any]:
    await ws.send(frame)
    reply: dict[str, Any] = msgpack.unpackb(await wait_for(ws.recv(), 5))
    return reply


async def closed(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed):
        while True:
            await wait_for(ws.recv(), 5)
    return ws.close_code


BAD_FRAMES: list[tuple[bytes | str, str]] = [
    ("{}", "text_frame"),
    (b"\xc1", "malformed"),
    (msgpack.packb([1]), "malformed"),
    (msgpack.packb({"t": "fly"}), "unknown_type"),
    (msgpack.packb({"t": "ping", "x": 1}), "bad_field"),
    (msgpack.packb({"t": "move", "room": "abcdefgh", "id": 2**53, "m": "D"}), "bad_field"),
    (msgpack.packb({"t": "hello", "v": 1}), "wrong_state"),
    ("ping", "text_frame"),
    (b"", "malformed"),
]


async def test_ten_bad_frames_within_ten_seconds_close_1008(node: Node) -> None:
    """Decode errors, text frames and a second hello all count: the 10th closes 1008."""
    ws = await raw(node)
    assert len(BAD_FRAMES) == 9
    for frame, code in BAD_FRAMES:
        assert (await answer(ws, frame))["code"] == code
    assert (await answer(ws, msgpack.packb({"t": "ping", "rid": 1})))["t"] == "pong"
    assert (await answer(ws, b"\xc1"))["code"] == "malformed"
    assert await closed(ws) == 1008


async def test_refusals_by_the_service_never_close(node: Node) -> None:
    """Well-formed requests the server refuses (no_room, ...) are not abuse."""
    ws = await raw(node)
    try:
        for rid in range(30):
            join = {"t": "join", "room": "nosuchroom", "as": "racer", "rid": rid}
            reply = await answer(ws, msgpack.packb(join))
            assert (reply["code"], reply["rid"]) == ("no_room", rid)
        assert (await answer(ws, msgpack.packb({"t": "ping", "rid": 99})))["rid"] == 99
    finally:
        await ws.close()


async def test_rate_limit_refusals_close_only_in_a_row(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """`abuse_limit` rate_limited refusals in a row close 1008; one accepted message
    between them starts the count again."""
    # One message a second on the tests' clock, so that three pings fit in the time
    # one token takes to come back, however slow the machine.
    settings = make_settings(rate_per_second=1.0 / scaled(1.0), rate_burst=1, abuse_limit=3)
    async with running(settings) as started:
        ws = await raw(started)

        async def ping(rid: int) -> str:
            reply = await answer(ws, msgpack.packb({"t": "ping", "rid": rid}))
            assert reply["rid"] == rid, "a refusal names the request"
            return str(reply["t"] if reply["t"] == "pong" else reply["code"])

        assert [await ping(1), await ping(2), await ping(3)] == ["pong"] + ["rate_limited"] * 2
        await asyncio.sleep(scaled(1.3))  # a token comes back
        assert [await ping(4), await ping(5), await ping(6)] == ["pong"] + ["rate_limited"] * 2
        await asyncio.sleep(scaled(1.3))  # a token comes back
        assert await ping(7) == "pong"
        assert [await ping(8), await ping(9), await ping(10)] == ["rate_limited"] * 3
        assert await closed(ws) == 1008


# ------------------------------------------------------------ the join reply


async def test_the_join_reply_is_the_first_frame_of_the_room(node: Node) -> None:
    """No frame of a room reaches a connection before its join's `room` reply, even while
    the room changes; the reply carries the join's rid, as an error about a join does."""
    host = await connect_client(node.ws_url, name="Host")
    guest = await connect_client(node.ws_url, name="Guest")
    try:
        room = await host.create_race(seats=2)
        await host.join(room)

        async def toggle() -> None:
            for i in range(20):
                await host.ready(room, i % 2 == 0)

        toggling = asyncio.create_task(toggle())
        await guest.send({"t": "join", "room": room, "as": "racer", "rid": 41})
        await toggling
        reply = await guest.expect(lambda m: m.get("room") == room)
        assert reply["t"] == "room" and reply["rid"] == 41
        assert [s["name"] for s in reply["seats"] if s] == ["Host", "Guest"]
        await guest.send({"t": "join", "room": "nosuchroom", "as": "racer", "rid": 42})
        refusal = await guest.expect(lambda m: m["t"] == "error")
        assert (refusal["code"], refusal["rid"]) == ("no_room", 42)
    finally:
        await close_all([host, guest])


# ------------------------------------------------------------ HTTP methods


async def http(node: Node, request: bytes) -> tuple[int | None, dict[str, str], bytes]:
    """Send one raw request: the status, headers (lower-case names) and body; status
    None when the connection closed without an answer."""
    reader, writer = await asyncio.open_connection(node.settings.host, node.port)
    try:
        writer.write(request)
        await writer.drain()
        data = await wait_for(reader.read(), 5)
    finally:
        writer.close()
    if not data:
        return None, {}, b""
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
    return int(status_line.split()[1]), headers, body


def request(method: str, path: str, extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n".encode()


PATHS = [
    "/api/rooms",
    "/api/live",
    "/api/results",
    "/api/results/abcdefgh/1",
    "/api/replay/abcdefgh/1",
    "/api/daily",
    "/api/daily/archive",
    "/healthz",
    "/metrics",
    "/",
    "/nothing-here",
]


async def test_other_methods_get_405_with_allow(node: Node) -> None:
    """POST, PUT, DELETE, TRACE, OPTIONS, PATCH on any route: 405, `Allow: GET, HEAD`
    and `{"error": "method_not_allowed"}`."""
    for method in ("POST", "PUT", "DELETE", "TRACE", "OPTIONS", "PATCH"):
        for path in PATHS:
            status, headers, body = await http(node, request(method, path))
            assert status == 405, (method, path, status)
            assert headers["allow"] == "GET, HEAD"
            assert headers["content-type"] == "application/json; charset=utf-8"
            assert json.loads(body) == {"error": "method_not_allowed"}


async def test_the_websocket_path_allows_only_get(node: Node) -> None:
    """/ws takes GET only (the upgrade): HEAD or POST is 405 with `Allow: GET`."""
    for method in ("HEAD", "POST", "DELETE"):
        status, headers, body = await http(node, request(method, "/ws"))
        assert (status, headers["allow"]) == (405, "GET")
        assert json.loads(body) == {"error": "method_not_allowed"}


async def test_head_answers_the_get_headers_without_a_body(node: Node) -> None:
    """HEAD gets the GET answer's status and headers (Content-Length too), no body."""
    for path in ("/api/rooms", "/healthz", "/nothing-here"):
        get_status, get_headers, get_body = await http(node, request("GET", path))
        status, headers, body = await http(node, request("HEAD", path))
        assert (status, body) == (get_status, b"")
        assert headers["content-length"] == get_headers["content-length"] == str(len(get_body))
        assert headers["content-type"] == get_headers["content-type"]


async def test_a_request_with_a_body_is_closed_unanswered(node: Node) -> None:
    """websockets refuses request bodies before routing: no answer at all, any method."""
    for method in ("POST", "GET"):
        answer_ = await http(node, request(method, "/api/rooms", "Content-Length: 2\r\n") + b"{}")
        assert answer_ == (None, {}, b"")
    chunked = request("POST", "/api/rooms", "Transfer-Encoding: chunked\r\n") + b"0\r\n\r\n"
    assert await http(node, chunked) == (None, {}, b"")
    assert (await http(node, request("GET", "/api/rooms")))[0] == 200, "the node is fine"
