"""Names over real websockets: `rename` answered by `renamed`, the seat renamed for every
viewer, a refused name leaving the connection open, renames rate-limited, and the name
kept across a reconnection when the client says it in `hello`."""

from __future__ import annotations

from collections.abc import Callable

import msgpack
import pytest
from websockets.asyncio.client import connect

from klondike_live.client import Message, ServerError
from klondike_live.config import Settings
from klondike_live.gateway.server import Node, running
from klondike_live.store.connect import RedisClient

from helpers import FAST, close_all, node
from waits import connect_client

__all__ = ["node"]  # the fixture, imported for pytest


def seat_names(message: Message) -> list[str | None]:
    return [None if s is None else s["name"] for s in message["seats"]]


async def test_a_rename_reaches_every_viewer_of_the_lobby_at_once(node: Node) -> None:
    """The host and a spectator get a room frame with the new name; the renamed racer's
    later hello with its token and that name keeps it (a reload)."""
    alice = await connect_client(node.ws_url, name="Alice")
    bob = await connect_client(node.ws_url)  # a guest: named by its token
    carol = await connect_client(node.ws_url, name="Carol")
    try:
        room = await alice.create_race(seats=3)
        await alice.join(room)
        await bob.join(room)
        await carol.join(room, "spectator")
        assert bob.name.startswith("Guest ")
        assert await bob.rename("  Bobby   Tables ") == "Bobby Tables"

        def shows(m: Message) -> bool:
            return m["t"] == "room" and seat_names(m)[1] == "Bobby Tables"

        for client in (alice, bob, carol):
            # Bob's own room frame may come just before his `renamed` (docs/protocol.md,
            # "Changing your name"), which `rename` read past: it is in `received`.
            seen = [m for m in client.received if shows(m)]
            frame = seen[0] if seen else await client.expect(shows)
            assert seat_names(frame) == ["Alice", "Bobby Tables", None]

        again = await connect_client(node.ws_url, token=bob.token, name=bob.name)
        await bob.close()
        assert again.name == "Bobby Tables"
        assert seat_names(await again.join(room))[1] == "Bobby Tables"
        await again.close()
    finally:
        await close_all([alice, bob, carol])


async def test_a_refused_name_is_bad_name_and_the_connection_stays(node: Node) -> None:
    """`bad_name` names the request by its rid; the name is unchanged and the connection
    goes on."""
    async with await connect_client(node.ws_url, name="Dana") as dana:
        for rid, bad in enumerate(("", "x" * 25, "Dana\u202e"), start=100):
            with pytest.raises(ServerError) as refused:
                await dana.call({"t": "rename", "name": bad, "rid": rid}, lambda m: False)
            assert refused.value.code == "bad_name"
        assert await dana.rename("Dana K") == "Dana K"


async def test_renames_cost_half_the_burst(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With a burst of 4, two renames in a row pass and the third is `rate_limited`."""
    settings = make_settings(**{**FAST, "rate_per_second": 0.01, "rate_burst": 4})
    async with running(settings) as started, connect(started.ws_url, compression=None) as socket:
        await socket.send(msgpack.packb({"t": "hello", "v": 1, "name": "Eve"}))
        assert msgpack.unpackb(await socket.recv())["t"] == "welcome"
        answers = []
        for rid in (1, 2, 3):
            await socket.send(msgpack.packb({"t": "rename", "name": f"Eve {rid}", "rid": rid}))
            answers.append(msgpack.unpackb(await socket.recv()))
        assert [(a["t"], a["rid"]) for a in answers] == [
            ("renamed", 1),
            ("renamed", 2),
            ("error", 3),
        ]
        assert answers[2]["code"] == "rate_limited"
