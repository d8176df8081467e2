"""End to end: move times, live games and replays over HTTP, on a real node and Valkey."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from klondike_live import keys
from klondike_live.client import Client, apply_diff, view_from_wire
from klondike_live.engine import ALL_CARDS, Board, Deal, GameRecord, Variant, view_of
from klondike_live.gateway.server import Node
from klondike_live.protocol.outgoing import view_wire
from klondike_live.store.connect import RedisClient

from auditor import http_audit, record_http
from helpers import WON, close_all, node, started_race
from waits import connect_client, scaled

if TYPE_CHECKING:
    from conftest import WaitFor

__all__ = ["http_audit", "node"]  # the fixtures, imported for pytest


def _fetch(url: str) -> tuple[int, dict[str, str], Any]:
    """GET `url` anonymously, the answer remembered for the HTTP audit (`http_audit`)."""
    try:
        with urllib.request.urlopen(url, timeout=scaled(5)) as response:
            status, headers, body = (
                response.status,
                dict(response.headers),
                json.loads(response.read()),
            )
    except urllib.error.HTTPError as error:
        with error:
            status, headers, body = error.code, dict(error.headers), json.loads(error.read())
    record_http(url, None, status, body)
    return status, headers, body


async def get(node: Node, path: str) -> tuple[int, dict[str, str], Any]:
    """GET `path` from the node's port: status, headers and the decoded JSON body."""
    return await asyncio.to_thread(_fetch, node.url + path)


async def get_ok(node: Node, path: str) -> Any:
    status, headers, body = await get(node, path)
    assert status == 200, (path, status, body)
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert headers["Cache-Control"] == "no-store"
    return body


async def create_solo(client: Client, *, public: bool) -> str:
    """Create a solo game (the client's helper has no `public` option)."""
    created = await client.call(
        {"t": "create", "rid": 901, "kind": "solo", "variant": "draw=1", "public": public},
        lambda m: m["t"] == "created" and m.get("rid") == 901,
    )
    room = str(created["room"])
    await client.join(room)
    await client.expect(lambda m: m["t"] == "board" and m.get("room") == room)
    return room


def text(reply: bytes | str) -> str:
    """A text reply of the test client (bytes in and out), decoded."""
    assert isinstance(reply, bytes), reply
    return reply.decode()


def final_views(results: dict[str, Any]) -> dict[int, Any]:
    return {row["seat"]: row["view"] for row in results["ranking"]}


async def test_move_times_are_stored_with_the_moves_and_given_with_the_results(
    node: Node, redis: RedisClient
) -> None:
    """Each stored move has its server time; the results give them per row, in move order."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        for index, token in enumerate(WON.moves[:12]):
            await alice.move(room, token)
            if index in (3, 7):
                await asyncio.sleep(scaled(0.15))  # time between moves, measured below
        stored = [int(t) for t in await redis.lrange(keys.times(room, 1, 0), 0, -1)]
        assert len(stored) == 12 == await redis.llen(keys.moves(room, 1, 0))
        assert stored == sorted(stored) and stored[0] >= 0
        assert stored[4] - stored[3] >= 150 and stored[8] - stored[7] >= 150
        await alice.resign(room)
        await bob.resign(room)
        results = await alice.expect(lambda m: m["t"] == "results")
        rows = {row["seat"]: row for row in results["ranking"]}
        assert rows[0]["times"] == stored and rows[1]["times"] == []
        assert (
            len(rows[0]["times"])
            == rows[0]["moves"]
            == len(GameRecord.parse(rows[0]["record"]).moves)
        )
        assert stored[-1] <= rows[0]["end_ms"] <= results["ended_at"] - results["started_at"]
        assert results["kind"] == "race"
        over_http = await get_ok(node, f"api/results/{room}/1")
        assert over_http["ranking"] == results["ranking"]
    finally:
        await close_all([alice, bob])


async def test_undo_takes_back_the_move_and_its_time(node: Node, redis: RedisClient) -> None:
    """In practice, an undo removes the last move and its time: the lists stay aligned,
    and the replay of the ended game holds just the moves that stand."""
    player = await connect_client(node.ws_url, name="Solo")
    try:
        room = await create_solo(player, public=False)
        for token in WON.moves[:3]:
            await player.move(room, token)
        await player.undo(room)
        await asyncio.sleep(0.05)
        await player.move(room, WON.moves[2])
        times = [int(t) for t in await redis.lrange(keys.times(room, 1, 0), 0, -1)]
        moves = [text(m) for m in await redis.lrange(keys.moves(room, 1, 0), 0, -1)]
        assert moves == list(WON.moves[:3]) and len(times) == 3 and times == sorted(times)
        await player.resign(room)
        results = await player.expect(lambda m: m["t"] == "results")
        assert results["kind"] == "solo" and results["ranking"][0]["times"] == times
        replay = await get_ok(node, f"api/replay/{room}/1")
        (board,) = replay["boards"]
        assert replay["kind"] == "solo" and board["status"] == "resigned"
        assert [(s["m"], s["t"]) for s in board["steps"]] == list(zip(moves, times, strict=True))
        view = view_from_wire(Variant.parse(replay["variant"]), board["start"])
        for step in board["steps"]:
            view = apply_diff(view, step["d"])
        assert view_wire(view) == results["ranking"][0]["view"]
    finally:
        await player.close()


async def test_live_lists_public_games_while_they_are_played(node: Node, wait_for: WaitFor) -> None:
    """/api/live lists a public race and a public solo game being played, with their
    racers and spectator count, never a private game, and drops each one as it ends."""
    room, racers, (carol,) = await started_race(
        node, "Alice", "Bob", spectators=("Carol",), public=True
    )
    _, others, _ = await started_race(node, "Dan", "Eve")
    solo = await connect_client(node.ws_url, name="Sol")
    secret = await connect_client(node.ws_url, name="Priv")
    try:
        solo_room = await create_solo(solo, public=True)
        await create_solo(secret, public=False)

        async def listed() -> dict[str, Any]:
            return {entry["room"]: entry for entry in await get_ok(node, "api/live")}

        async def watched() -> bool:
            return bool((await listed()).get(room, {}).get("spectators") == 1)

        await wait_for(watched)
        live = await listed()
        assert set(live) == {room, solo_room}, "private games are never listed"
        race = live[room]
        assert set(race) == {
            "room",
            "kind",
            "variant",
            "state",
            "racers",
            "bots",
            "started_at",
            "spectators",
        }
        assert race["kind"] == "race" and race["state"] in ("countdown", "racing")
        assert race["racers"] == ["Alice", "Bob"] and race["variant"] == "draw=1 passes=1 f2t=no"
        assert race["bots"] == [False, False]
        assert isinstance(race["started_at"], int)
        single = live[solo_room]
        assert (single["kind"], single["racers"], single["spectators"]) == ("solo", ["Sol"], 0)
        assert single["state"] in ("countdown", "racing")

        for racer in racers:
            await racer.resign(room)
        await carol.expect(lambda m: m["t"] == "results")
        assert set(await listed()) == {solo_room}, "a finished race is never listed"
        await solo.resign(solo_room)
        await solo.expect(lambda m: m["t"] == "results")
        assert await listed() == {}
        status, _, rooms = await get(node, "api/rooms")
        assert status == 200 and rooms == []
    finally:
        await close_all(racers, others, [carol, solo, secret])


async def test_replay_of_a_finished_race_rebuilds_every_final_board(node: Node) -> None:
    """Applying each step's diff to a board's start gives its final view in the results;
    steps carry the recorded moves and their times."""
    room, (alice, bob), (carol,) = await started_race(node, "Alice", "Bob", spectators=("Carol",))
    try:
        status, _, body = await get(node, f"api/replay/{room}/1")
        assert (status, body) == (404, {"error": "not_found"}), "no replay while playable"
        for token in WON.moves[:15]:
            await bob.move(room, token)
        await bob.resign(room)
        for token in WON.moves:
            if alice.own_board(room, 0).status != "playing":
                break
            await alice.move(room, token)
        results = await carol.expect(lambda m: m["t"] == "results", timeout=scaled(30))
        replay = await get_ok(node, f"api/replay/{room}/1")
        for key in ("gen", "seed", "deal", "commitment", "variant", "started_at", "ended_at"):
            assert replay[key] == results[key], key
        assert (replay["room"], replay["kind"]) == (room, "race")
        rows = {row["seat"]: row for row in results["ranking"]}
        deal = Deal.from_seed(results["seed"])
        assert [b["seat"] for b in replay["boards"]] == [0, 1]
        for board in replay["boards"]:
            row = rows[board["seat"]]
            for key in ("name", "rank", "status", "time_ms", "moves"):
                assert board[key] == row[key], key
            assert board["end_t"] == row["end_ms"]
            assert board["start"] == view_wire(view_of(Board(deal), ALL_CARDS))
            record = GameRecord.parse(row["record"])
            assert [s["m"] for s in board["steps"]] == list(record.moves)
            assert [s["t"] for s in board["steps"]] == row["times"]
            view = view_from_wire(Variant.parse(replay["variant"]), board["start"])
            for step in board["steps"]:
                view = apply_diff(view, step["d"])
            assert view_wire(view) == row["view"], f"board {board['seat']}"
        won = replay["boards"][0]
        assert won["status"] == "won" and won["end_t"] == won["time_ms"] >= won["steps"][-1]["t"]
        assert replay["boards"][1]["status"] == "resigned" and replay["boards"][1]["moves"] == 15
    finally:
        await close_all([alice, bob, carol])


async def test_replay_and_results_answer_404_for_no_finished_game(node: Node) -> None:
    """Unknown rooms, malformed ids or generations and unfinished games get a JSON 404."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        for path in (
            "api/replay/nosuchroom/1",
            "api/replay/short/1",
            "api/replay/no%7Bsuch%7Droom/1",
            f"api/replay/{room}/1",
            f"api/replay/{room}/x",
            f"api/replay/{room}/%C2%B2",
            f"api/replay/{room}/99999999999999999999",
            f"api/replay/{room}",
            f"api/results/{room}/1",
            f"api/results/{room}/%C2%B2",
            "api/nothing",
        ):
            status, headers, body = await get(node, path)
            assert (status, body) == (404, {"error": "not_found"}), path
            assert headers["Content-Type"] == "application/json; charset=utf-8"
            assert headers["Cache-Control"] == "no-store"
        await alice.resign(room)
        await bob.resign(room)
        await alice.expect(lambda m: m["t"] == "results")
        assert (await get_ok(node, f"api/replay/{room}/1"))["gen"] == 1
        status, _, _ = await get(node, f"api/replay/{room}/2")
        assert status == 404, "the next race has not been played"
    finally:
        await close_all([alice, bob])


async def test_a_won_practice_game_ends_with_results_and_a_replay(node: Node) -> None:
    """Winning a solo game ends it: status won, results with the win time, a replay."""
    player = await connect_client(node.ws_url, name="Solo")
    try:
        room = await create_solo(player, public=True)
        for token in WON.moves:
            await player.move(room, token)
        await player.expect(lambda m: m["t"] == "diff" and m["status"] == "won")
        results = await player.expect(lambda m: m["t"] == "results")
        (row,) = results["ranking"]
        assert row["status"] == "won" and row["time_ms"] is not None
        assert len(row["times"]) == len(WON.moves)
        replay = await get_ok(node, f"api/replay/{room}/1")
        (board,) = replay["boards"]
        assert board["status"] == "won" and board["moves"] == len(WON.moves)
        assert await get_ok(node, "api/live") == []
        status, _, _ = await get(node, "api/results")
        assert status == 200
    finally:
        await player.close()


async def test_live_index_tidies_entries_of_games_no_longer_played(
    node: Node, redis: RedisClient
) -> None:
    """An entry left for a finished or vanished room is not listed and is removed; an
    entry re-listed with a newer start (a rematch started again) is kept."""
    room, (alice, bob), _ = await started_race(node, "Alice", "Bob", public=True)
    try:
        await alice.resign(room)
        await bob.resign(room)
        results = await alice.expect(lambda m: m["t"] == "results")
        await redis.zadd(keys.LIVE, {room: results["started_at"], "vanishedroom": 1})
        assert await get_ok(node, "api/live") == []
        assert await redis.zcard(keys.LIVE) == 0
        await redis.zadd(keys.LIVE, {room: results["started_at"]})
        await node.service.store.unlist_live(room, results["started_at"] - 1)
        assert await redis.zscore(keys.LIVE, room) is not None, "a newer entry stays"
    finally:
        await close_all([alice, bob])
