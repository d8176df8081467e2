"""End to end: players' statistics and unfinished games, over HTTP with a token, on a
real node and Valkey; the store's counting script against its reference rule."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from klondike_live import keys
from klondike_live.gateway.server import Node
from klondike_live.race.stats import StatsKind, outcomes
from klondike_live.store.connect import RedisClient

from helpers import WON, close_all, node, started_race
from test_http_api import create_solo
from waits import connect_client, scaled, wait_for

__all__ = ["node"]  # the fixture, imported for pytest


def _fetch(url: str, token: str | None) -> tuple[int, Any]:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=scaled(5)) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


async def get_as(node: Node, path: str, token: str | None) -> tuple[int, Any]:
    """GET `path` with a player's token (None: anonymous)."""
    return await asyncio.to_thread(_fetch, node.url + path, token)


async def counted(node: Node, token: str, games: int) -> tuple[int, Any] | None:
    """GET api/me/stats once it counts `games` games (the history database has them a
    moment after their results are sent), else None."""
    status, stats = await get_as(node, "api/me/stats", token)
    return (status, stats) if stats.get("totals", {}).get("played") == games else None


async def test_unfinished_games_are_listed_for_their_player_only(
    node: Node, redis: RedisClient
) -> None:
    """A player's solo games not finished are listed newest first with variant, moves
    and time; a finished one leaves the list; nobody else sees them; no token: 401."""
    player = await connect_client(node.ws_url, name="Resumer")
    other = await connect_client(node.ws_url, name="Other")
    try:
        first = await create_solo(player, public=False)
        for token in WON.moves[:2]:
            await player.move(first, token)
        second = await create_solo(player, public=True)
        status, games = await get_as(node, "api/me/unfinished", player.token)
        assert status == 200
        assert [g["room"] for g in games] == [second, first]
        by_room = {g["room"]: g for g in games}
        assert by_room[first]["moves"] == 2 and by_room[first]["kind"] == "solo"
        assert by_room[first]["variant"] == "draw=1 passes=1 f2t=no"
        assert by_room[second]["moves"] == 0 and by_room[second]["time_ms"] == 0
        assert by_room[second]["paused"] is True
        ttl = await redis.pttl(keys.user_unfinished(player.user))
        assert 29 * 86_400_000 < ttl <= 30 * 86_400_000
        assert (await get_as(node, "api/me/unfinished", other.token)) == (200, [])
        assert (await get_as(node, "api/me/unfinished", None))[0] == 401
        assert (await get_as(node, "api/me/unfinished", "forged.token.x"))[0] == 401
        await player.resign(first)
        await player.expect(lambda m: m["t"] == "results" and m["room"] == first)
        _, games = await get_as(node, "api/me/unfinished", player.token)
        assert [g["room"] for g in games] == [second]
    finally:
        await close_all([player, other])


async def test_statistics_count_every_kind_of_game(node: Node) -> None:
    """Solo games and races count per kind and variant: played, won, win rate, best
    time, fewest moves, streaks, recent games newest first."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        won = await create_solo(alice, public=False)
        for token in WON.moves:
            await alice.move(won, token)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == won)
        lost = await create_solo(alice, public=False)
        await alice.move(lost, WON.moves[0])
        await alice.resign(lost)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == lost)
        status, stats = await wait_for(lambda: counted(node, alice.token, 2))
        assert status == 200
        (solo,) = stats["categories"]
        assert solo["kind"] == "solo" and solo["variant"] == "draw=1 passes=1 f2t=no"
        assert (solo["played"], solo["won"], solo["win_rate"]) == (2, 1, 0.5)
        assert solo["fewest_moves"] == len(WON.moves) and solo["best_ms"] is not None
        assert (solo["streak"], solo["best_streak"]) == (0, 1)
        assert [(g["room"], g["won"]) for g in stats["recent"]] == [(lost, False), (won, True)]
        assert stats["totals"] == {"played": 2, "won": 1, "win_rate": 0.5}
    finally:
        await alice.close()

    room, (ann, bea), _ = await started_race(node, "Ann", "Bea")
    try:
        for token in WON.moves:
            if ann.own_board(room, 0).status != "playing":
                break  # a race finishes a board won in all but name at once
            await ann.move(room, token)
        await bea.resign(room)
        await ann.expect(lambda m: m["t"] == "results")
        _, mine = await wait_for(lambda: counted(node, ann.token, 1))
        _, hers = await wait_for(lambda: counted(node, bea.token, 1))
        (race,) = mine["categories"]
        assert (race["kind"], race["played"], race["won"], race["streak"]) == ("race", 1, 1, 1)
        assert race["fewest_moves"] == ann.own_board(room, 0).moves
        (lost_race,) = hers["categories"]
        assert (lost_race["played"], lost_race["won"], lost_race["best_ms"]) == (1, 0, None)
        assert hers["recent"][0]["rank"] == 2 and hers["recent"][0]["players"] == 2
        assert (await get_as(node, "api/me/stats", None))[0] == 401
    finally:
        await close_all([ann, bea])


def test_outcomes_skip_practice_daily_games_and_bots() -> None:
    """An unranked daily game counts for nobody; a tie for first wins for both; a race
    with a bot counts as against the machine, for its people only."""
    row = {"status": "won", "rank": 1, "time_ms": 1000, "moves": 90, "found": 52}
    results: dict[str, Any] = {
        "gen": 1,
        "kind": "race",
        "variant": "draw=1 passes=1 f2t=no",
        "ended_at": 5,
        "ranking": [{**row, "user": "a"}, {**row, "user": "b"}],
    }
    assert [(o.user, o.won, o.kind) for o in outcomes(results)] == [
        ("a", True, StatsKind.RACE),
        ("b", True, StatsKind.RACE),
    ]
    with_bot = results | {"ranking": [*results["ranking"], {**row, "user": "bot", "bot": True}]}
    assert [(o.user, o.kind) for o in outcomes(with_bot)] == [
        ("a", StatsKind.RACE_MACHINE),
        ("b", StatsKind.RACE_MACHINE),
    ]
    practice = results | {"kind": "daily", "daily": {"ranked": False}}
    assert outcomes(practice) == []
    ranked = results | {"kind": "daily", "daily": {"ranked": True}}
    assert {o.kind for o in outcomes(ranked)} == {StatsKind.DAILY}
