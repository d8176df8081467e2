"""Requests pipelined after `hello`, and `create` with `join: true` (protocol 2 and 5)."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect

from klondike_live.gateway.server import Node

from helpers import node
from waits import wait_for

__all__ = ["node"]  # the fixture, imported for pytest


async def _next(connection: ClientConnection) -> dict[str, Any]:
    frame = msgpack.unpackb(await wait_for(connection.recv(), 10))
    assert isinstance(frame, dict)
    return frame


async def _flight(node: Node, *frames: dict[str, Any]) -> ClientConnection:
    """Open a connection and send `frames` at once, before any reply is read."""
    connection = await connect(node.ws_url, compression=None)
    for frame in frames:
        await connection.send(msgpack.packb(frame))
    return connection


async def test_create_with_join_sends_created_then_room_and_own_board(node: Node) -> None:
    """hello, create(join) and ping in one flight: answered in order, the board included
    (after the progress that comes ahead of the boards)."""
    connection = await _flight(
        node,
        {"t": "hello", "v": 1, "name": "Quick"},
        {"t": "create", "rid": 1, "kind": "solo", "variant": "draw=1", "join": True},
        {"t": "ping", "rid": 2},
    )
    try:
        welcome = await _next(connection)
        assert welcome["t"] == "welcome"
        created = await _next(connection)
        assert created["t"] == "created" and created["rid"] == 1
        room = await _next(connection)
        assert room["t"] == "room" and room["room"] == created["room"] and "rid" not in room
        assert room["state"] == "racing"
        assert [s["user"] for s in room["seats"] if s] == [welcome["user"]]
        progress = await _next(connection)  # where the boards stand, then the boards
        assert progress["t"] == "progress" and progress["boards"][0][3] == 0
        board = await _next(connection)
        assert (board["t"], board["audience"], board["seat"]) == ("board", "own", 0)
        assert board["room"] == created["room"] and board["moves"] == 0
        following = await _next(connection)
        while following["t"] != "pong":  # progress and the like may come first
            assert following["t"] != "error", following
            following = await _next(connection)
        assert following["rid"] == 2
        await connection.send(msgpack.packb({"t": "move", "room": room["room"], "id": 1, "m": "D"}))
        diff = await _next(connection)
        while diff["t"] != "diff":
            diff = await _next(connection)
        assert diff["id"] == 1 and diff["moves"] == 1
    finally:
        await connection.close()


async def test_join_pipelined_after_hello_of_a_returning_player(node: Node) -> None:
    """A returning player's hello and join in one flight: welcome, then the room, the
    progress and the board."""
    first = await _flight(
        node,
        {"t": "hello", "v": 1, "name": "Back"},
        {"t": "create", "rid": 1, "kind": "solo", "variant": "draw=3"},
    )
    welcome = await _next(first)
    created = await _next(first)
    assert created["t"] == "created"
    await first.close()
    again = await _flight(
        node,
        {"t": "hello", "v": 1, "token": welcome["token"]},
        {"t": "join", "room": created["room"], "as": "racer", "rid": 5},
    )
    try:
        hello = await _next(again)
        assert hello["t"] == "welcome" and hello["user"] == welcome["user"]
        room = await _next(again)
        assert room["t"] == "room" and room["rid"] == 5 and room["room"] == created["room"]
        assert (await _next(again))["t"] == "progress"
        board = await _next(again)
        assert (board["t"], board["audience"], board["seat"]) == ("board", "own", 0)
    finally:
        await again.close()


async def test_frames_after_a_refused_hello_are_not_answered(node: Node) -> None:
    """A bad token closes the connection: the pipelined join gets no answer."""
    connection = await _flight(
        node,
        {"t": "hello", "v": 1, "token": "not-a-token"},
        {"t": "join", "room": "nosuchroom", "as": "racer", "rid": 5},
    )
    refusal = await _next(connection)
    assert refusal["t"] == "error" and refusal["code"] == "token_invalid"
    await wait_for(connection.wait_closed(), 10)
    assert connection.close_code == 4002


@pytest.mark.parametrize(
    "request_",
    [
        {"kind": "race", "seats": 2},
        {"kind": "daily"},
        {"kind": "solo", "join": 1},
    ],
)
async def test_create_join_is_for_solo_games_only(node: Node, request_: dict[str, Any]) -> None:
    """`join` on another kind, or not a bool, is a `bad_field` naming it."""
    frame = {"t": "create", "rid": 3, "variant": "draw=1", "join": True} | request_
    connection = await _flight(node, {"t": "hello", "v": 1, "name": "Strict"}, frame)
    try:
        assert (await _next(connection))["t"] == "welcome"
        refusal = await _next(connection)
        assert refusal["t"] == "error" and refusal["code"] == "bad_field"
        assert refusal["rid"] == 3 and "join" in refusal["msg"]
    finally:
        await connection.close()
