"""End to end: players coming back to their games, on a real node and Valkey.

A racer rejoining its finished game gets its own final board; games not made public are
on no public listing; a practice game's clock waits for its player; a player's
unfinished games and statistics over HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from klondike_live import keys
from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.gateway.server import Node, running
from klondike_live.protocol.outgoing import view_wire
from klondike_live.store.connect import RedisClient

from auditor import http_audit
from helpers import FAST, WON, close_all, node, started_race
from test_http_api import create_solo, get_ok
from waits import connect_client, scaled, wait_for

if TYPE_CHECKING:
    from conftest import WaitFor

__all__ = ["http_audit", "node"]  # the fixtures, imported for pytest


async def test_a_racer_back_in_its_finished_game_gets_its_final_board(node: Node) -> None:
    """Rejoining a finished solo game as its player gives its own board as it ended
    (moves, status, the cards it saw), then the results."""
    player = await connect_client(node.ws_url, name="Solo")
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
    back = await connect_client(node.ws_url, token=player.token)
    try:
        await back.join(room)
        board = await back.expect(lambda m: m["t"] == "board")
        results = await back.expect(lambda m: m["t"] == "results")
        assert board["audience"] == "own" and board["seat"] == 0 and board["epoch"] == 1
        assert board["status"] == "resigned" and board["moves"] == 6
        assert board["view"] == view_wire(final_view)
        assert results["ranking"][0]["moves"] == 6
        assert "score" in board and "last_id" in board
    finally:
        await back.close()


async def test_a_spectator_of_a_finished_game_gets_no_own_board(node: Node) -> None:
    """Anyone else opening the finished game gets the room and the results only."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    stranger = await connect_client(node.ws_url, name="Stranger")
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
    quiet = await connect_client(node.ws_url, name="Quiet")
    loud = await connect_client(node.ws_url, name="Loud")
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
        members = await node.service.history.finished()
        listed_rooms = {room_id for room_id, _gen, _results in members}
        assert room not in listed_rooms and private_solo not in listed_rooms
        for hidden in (room, private_solo):
            results = await get_ok(node, f"api/results/{hidden}/1")
            assert results["public"] is False
            await get_ok(node, f"api/replay/{hidden}/1")
    finally:
        await close_all([alice, bob, quiet, loud])


async def solo_with(client: Client, **fields: object) -> str:
    """Create and join a solo game with extra `create` fields; its room id."""
    created = await client.call(
        {"t": "create", "rid": 902, "kind": "solo", "variant": "draw=1", **fields},
        lambda m: m["t"] == "created" and m.get("rid") == 902,
    )
    room = str(created["room"])
    await client.join(room)
    await client.expect(lambda m: m["t"] == "board" and m.get("room") == room)
    return room


def last_room(client: Client, room: str) -> dict[str, Any]:
    """The last `room` frame of `room` the client received."""
    return next(m for m in reversed(client.received) if m["t"] == "room" and m["room"] == room)


async def room_frame_where(
    client: Client, room: str, check: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The last `room` frame of `room`, once one passing `check` has arrived (5 s)."""

    def passing() -> dict[str, Any]:
        frame = last_room(client, room)
        return frame if check(frame) else {}

    try:
        return await wait_for(passing)
    except TimeoutError:
        raise AssertionError(f"no such room frame; the last: {last_room(client, room)}") from None


async def test_a_solo_clock_starts_at_the_first_move(node: Node, redis: RedisClient) -> None:
    """A new solo game's clock stands at 0 (`paused_at` = `start_at`) until the first
    move, which runs it from there: that move is timed near 0."""
    player = await connect_client(node.ws_url, name="Slow")
    try:
        room = await create_solo(player, public=False)
        frame = last_room(player, room)
        assert frame["paused_at"] == frame["start_at"]
        await asyncio.sleep(scaled(0.6))  # time on the clock if it ran from the start
        await player.move(room, WON.moves[0])
        running = await room_frame_where(player, room, lambda m: "paused_at" not in m)
        assert running["start_at"] >= frame["start_at"] + 500
        times = [int(t) for t in await redis.lrange(keys.times(room, 1, 0), 0, -1)]
        assert times and times[0] < scaled(400), times
    finally:
        await player.close()


async def test_a_solo_game_waits_for_its_player_with_its_clock_stopped(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A solo player gone longer than the grace period is not resigned: the clock stood
    still while it was away (its keys kept for `unfinished_days`), and runs again when
    it comes back; the time away is not counted."""
    settings = make_settings(**FAST, grace_seconds=0.2)
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        player = await connect_client(started.ws_url, name="Away")
        watcher = await connect_client(started.ws_url, name="Watcher")
        room = await create_solo(player, public=True)
        for token in WON.moves[:3]:
            await player.move(room, token)
        await watcher.join(room, role="spectator")
        await player.close()
        stopped = await room_frame_where(
            watcher, room, lambda m: "paused_at" in m and not m["seats"][0]["online"]
        )
        ttl = await redis.pttl(keys.room(room))
        assert 29 * 86_400_000 < ttl <= 30 * 86_400_000
        assert 0 < await redis.pttl(keys.board(room, 1, 0)) <= 30 * 86_400_000
        await asyncio.sleep(scaled(1.2))  # a pause well past the grace period: not resigned
        assert await redis.hget(keys.board(room, 1, 0), "status") == b"playing"
        back = await connect_client(started.ws_url, token=player.token, resume_from=player)
        await back.join(room)
        resumed = await room_frame_where(back, room, lambda m: "paused_at" not in m)
        clock_then = stopped["paused_at"] - stopped["start_at"]
        assert resumed["start_at"] >= stopped["start_at"] + 1200
        assert await redis.pttl(keys.room(room)) == -1
        assert await redis.pttl(keys.board(room, 1, 0)) == -1
        await back.move(room, WON.moves[3])
        times = [int(t) for t in await redis.lrange(keys.times(room, 1, 0), 0, -1)]
        assert times[3] - clock_then < scaled(1000), (times, clock_then)
        await back.resign(room)
        results = await back.expect(lambda m: m["t"] == "results")
        assert results["ranking"][0]["status"] == "resigned"
        assert results["ended_at"] - results["started_at"] < scaled(1200)
        await close_all([back, watcher])


async def test_a_solo_time_limit_waits_with_the_clock(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A solo game's time limit counts only the time its clock ran: away past the limit
    it is still playing; back, it times out once the limit is used up."""
    settings = make_settings(**FAST, grace_seconds=0.1)
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        player = await connect_client(started.ws_url, name="Limited")
        room = await solo_with(player, time_limit=1)
        await player.move(room, WON.moves[0])
        await player.close()
        await asyncio.sleep(scaled(1.5))  # a pause past the limit: it does not time out
        assert await redis.hget(keys.board(room, 1, 0), "status") == b"playing"
        back = await connect_client(started.ws_url, token=player.token, resume_from=player)
        await back.join(room)
        results = await back.expect(lambda m: m["t"] == "results", timeout=scaled(10))
        assert results["ranking"][0]["status"] == "timeout"
        await back.close()


async def test_a_race_still_resigns_an_absent_racer_and_a_ranked_clock_runs_on(
    make_settings: Callable[..., Settings],
) -> None:
    """Races keep the grace rule: an absent racer is resigned; their clock never stops."""
    settings = make_settings(**FAST, grace_seconds=0.2)
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        room, (alice, bob), _ = await started_race(started, "Alice", "Bob")
        await bob.close()
        await alice.resign(room)
        results = await alice.expect(lambda m: m["t"] == "results", timeout=scaled(10))
        assert {row["status"] for row in results["ranking"]} == {"resigned"}
        assert not [m for m in alice.received if m["t"] == "room" and "paused_at" in m]
        await alice.close()
