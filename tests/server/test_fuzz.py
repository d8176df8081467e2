"""Fuzz: thousands of random and mutated frames against a live server."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeAlias

import msgpack
from websockets.asyncio.client import connect

from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.protocol.codes import ErrorCode
from klondike_live.store.connect import RedisClient

from helpers import FAST
from waits import connect_client, wait_for

SERVER_TYPES = {"welcome", "error", "pong", "created", "room", "board", "diff", "ack", "progress"}
SERVER_TYPES |= {"results", "hint", "daily_update"}
CODES = {str(code) for code in ErrorCode}

Packable: TypeAlias = (
    int | float | str | bytes | bool | list["Packable"] | dict["Packable", "Packable"] | None
)
"""A value of msgpack's types (an int may be too big for it), as `random_value` makes."""

VALID: list[dict[str, Packable]] = [
    {"t": "ping", "rid": 1},
    {"t": "create", "rid": 2, "kind": "race", "variant": "draw=3", "seats": 4, "public": False},
    {"t": "create", "rid": 3, "kind": "solo", "variant": "draw=1 passes=unlimited"},
    {"t": "join", "room": "abcdefgh12", "as": "spectator", "since": [[0, 1, 5]]},
    {"t": "move", "room": "abcdefgh12", "id": 5, "m": "36:2"},
    {"t": "ready", "room": "abcdefgh12", "ready": True},
    {"t": "hint", "room": "abcdefgh12", "rid": 4},
    {"t": "undo", "room": "abcdefgh12", "id": 6},
    {"t": "leave", "room": "abcdefgh12"},
    {"t": "resign", "room": "abcdefgh12"},
    {"t": "rematch", "room": "abcdefgh12"},
    {"t": "start", "room": "abcdefgh12"},
    {"t": "create", "rid": 5, "kind": "race", "variant": "draw=1", "seats": 2, "deal": "any"},
    {"t": "daily_watch", "rid": 6, "date": "2030-01-01", "variant": "draw=3 passes=3 f2t=no"},
    {"t": "daily_unwatch", "date": "2030-01-01", "variant": "draw=1"},
]


def random_value(rng: random.Random, depth: int = 0) -> Packable:
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return rng.randint(-(2**63), 2**64 - 1)
    if choice == 1:
        return rng.random() * 1e9
    if choice == 2:
        return "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(rng.randrange(12)))
    if choice == 3:
        return rng.randbytes(rng.randrange(12))
    if choice == 4:
        return rng.choice([None, True, False])
    if choice == 5:
        return rng.choice(["ping", "move", "join", "hello", "create", "t", "room", "id", "m"])
    if choice == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys = ["t", "room", "id", "m", "rid", "as", "since", "kind", "variant", "seats", "v"]
    out: dict[Packable, Packable] = {}
    for _ in range(rng.randrange(6)):
        key = rng.choice(keys) if rng.random() < 0.8 else random_value(rng, depth + 3)
        out[key] = random_value(rng, depth + 1)
    return out


def mutated(rng: random.Random) -> bytes:
    message = dict(rng.choice(VALID))
    action = rng.randrange(5)
    if action == 0:
        key = rng.choice(list(message))
        message[key] = random_value(rng)
    elif action == 1:
        message.pop(rng.choice(list(message)))
    elif action == 2:
        message[rng.choice(["x", "rid", "id", "since", "m"])] = random_value(rng)
    frame = bytearray(msgpack.packb(message, use_bin_type=True))
    if action == 3:
        for _ in range(rng.randrange(1, 4)):
            frame[rng.randrange(len(frame))] = rng.randrange(256)
    if action == 4:
        frame = frame[: rng.randrange(len(frame))]
    return bytes(frame)


def frames(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            out.append(rng.randbytes(rng.randrange(1, 64)))
        elif kind == 1:
            try:
                out.append(msgpack.packb(random_value(rng), use_bin_type=True))
            except (OverflowError, ValueError, TypeError):
                out.append(rng.randbytes(8))
        else:
            out.append(mutated(rng))
    return out


async def test_random_and_mutated_frames_get_errors_and_the_server_stays_up(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """3,000 bad frames: each is answered (an error or a valid reply), the connection
    and the server stay up, and a fresh client still plays."""
    settings = make_settings(
        **{**FAST, "rate_per_second": 10_000.0, "rate_burst": 100_000}, abuse_limit=10_000
    )
    async with running(settings) as node:
        connection = await connect(node.ws_url, compression=None)
        await connection.send(msgpack.packb({"t": "hello", "v": 1}))
        assert msgpack.unpackb(await connection.recv())["t"] == "welcome"
        seen_codes: set[str] = set()
        for number, frame in enumerate(frames(3000, seed=20261130)):
            await connection.send(frame)
            marker = 10_000_000 + number
            await connection.send(msgpack.packb({"t": "ping", "rid": marker}))
            while True:
                try:
                    data = await wait_for(connection.recv(), 10)
                except TimeoutError:
                    raise AssertionError(f"no answer to frame {number}: {frame!r}") from None
                reply = msgpack.unpackb(data, raw=False)
                assert reply["t"] in SERVER_TYPES, reply
                if reply["t"] == "error":
                    assert reply["code"] in CODES, reply
                    assert "Traceback" not in reply["msg"]
                    seen_codes.add(reply["code"])
                if reply["t"] == "pong" and reply.get("rid") == marker:
                    break
        assert {"malformed", "unknown_type", "bad_field"} <= seen_codes
        assert "internal" not in seen_codes
        await connection.close()
        client = await connect_client(node.ws_url, name="After")
        room = await client.create_solo()
        await client.join(room)
        await client.expect(lambda m: m["t"] == "board")
        await client.move(room, "D")
        await client.close()
