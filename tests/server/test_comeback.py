"""End to end: players coming back to their games, on a real node and Valkey.

A racer rejoining its finished game gets its own final board; games not made public are
on no public listing; a practice game's clock waits for its player; a player's
unfinished games and statistics over HTTP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgpack
from test_http_api import create_solo, get_ok

from klondike_live import keys
from klondike_live.client import Client
from klondike_live.gateway.server import Node
from klondike_live.store.connect import RedisClient

from auditor import http_audit
from helpers import WON, close_all, node, started_race

if TYPE_CHECKING:
    from conftest import WaitFor

__all__ = ["http_audit", "node"]  # the fixtures, imported for pytest


async def test_a_racer_back_in_its_finished_game_gets_its_final_board(node: Node) -> None:
    """Rejoining a finished solo game as its player gives its own board as it ended
    (moves, status, the cards it saw), then the results."""
    player = await Client.connect(node.ws_url, name="Solo")
    try:
        room = await create_solo(player, public=False)
        for token in WON.moves[:6]:
            await player.move(room, token)
        await player.resign(room)
        await player.expect(lambda m: m["t"] == "results")
        last = player.own_board(room, 0)
        final_view = last.view
    finally:
        await player.close()
    back = await Client.connect(node.ws_url, token=player.token)
    try:
        await back.join(room)
        board = await back.expect(lambda m: m["t"] == "board")
        results = await back.expect(lambda m: m["t"] == "results")
        assert board["audience"] == "own" and board["seat"] == 0 and board["epoch"] == 1
        assert board["status"] == "resigned" and board["moves"] == 6
        assert board["view"] == final_view
        assert results["ranking"][0]["moves"] == 6
        assert "score" in board and "last_id" in board
    finally:
        await back.close()


async def test_a_spectator_of_a_finished_game_gets_no_own_board(node: Node) -> None:
    """Anyone else opening the finished game gets the room and the results only."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    stranger = await Client.connect(node.ws_url, name="Stranger")
    try:
        await alice.resign(room)
        await bob.resign(room)
        await alice.expect(lambda m: m["t"] == "results")
        await stranger.join(room, role="spectator")
        await stranger.expect(lambda m: m["t"] == "results")
        assert not [m for m in stranger.received if m.get("t") in ("board", "diff")]
    finally:
        await close_all([alice, bob, stranger])


async def test_unlisted_games_are_on_no_public_listing(
    node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """A private race and a solo game not made public are never in /api/live or
    /api/results, nor in the finished index; their results answer by link; a public
    solo game is listed."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    quiet = await Client.connect(node.ws_url, name="Quiet")
    loud = await Client.connect(node.ws_url, name="Loud")
    try:
        private_solo = await create_solo(quiet, public=False)
        public_solo = await create_solo(loud, public=True)
        live = {g["room"] for g in await get_ok(node, "api/live")}
        assert live == {public_solo}
        await alice.resign(room)
        await bob.resign(room)
        await quiet.resign(private_solo)
        await loud.resign(public_solo)
        for client in (alice, quiet, loud):
            await client.expect(lambda m: m["t"] == "results")

        async def listed() -> bool:
            return public_solo in {g["room"] for g in await get_ok(node, "api/results")}

        await wait_for(listed)
        finished = {g["room"] for g in await get_ok(node, "api/results")}
        assert room not in finished and private_solo not in finished
        members = await node.service.store.list_finished()
        listed_rooms = {room_id for room_id, _gen in members}
        assert room not in listed_rooms and private_solo not in listed_rooms
        for hidden in (room, private_solo):
            results = await get_ok(node, f"api/results/{hidden}/1")
            assert results["public"] is False
            await get_ok(node, f"api/replay/{hidden}/1")
    finally:
        await close_all([alice, bob, quiet, loud])


async def test_a_finished_game_without_its_public_flag_is_not_listed(
    node: Node, redis: RedisClient
) -> None:
    """A finished-index entry whose results do not say the game was public (one listed
    before results said so) stays off /api/results."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob", public=True)
    try:
        await alice.resign(room)
        await bob.resign(room)
        await alice.expect(lambda m: m["t"] == "results")
        assert [g["room"] for g in await get_ok(node, "api/results")] == [room]
        data = await redis.hget(keys.results(room, 1), "data")
        assert isinstance(data, bytes)
        stored = msgpack.unpackb(data, raw=False)
        del stored["public"]
        await redis.hset(keys.results(room, 1), "data", msgpack.packb(stored))
        assert await get_ok(node, "api/results") == []
    finally:
        await close_all([alice, bob])
