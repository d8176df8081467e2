"""End to end: players' statistics and unfinished games, over HTTP with a token, on a
real node and Valkey; the store's counting script against its reference rule."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.error
import urllib.request
from dataclasses import replace
from typing import Any

import msgpack

from klondike_live import keys
from klondike_live.engine import Variant
from klondike_live.gateway.server import Node
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.room import new_room
from klondike_live.race.stats import GameOutcome, StatsKind, fold, outcomes, summary
from klondike_live.service.players import record_game
from klondike_live.store import Retention, Store
from klondike_live.store.connect import RedisClient

from helpers import WON, close_all, node, started_race
from test_http_api import create_solo
from waits import connect_client, scaled

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
        status, stats = await get_as(node, "api/me/stats", alice.token)
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
        _, mine = await get_as(node, "api/me/stats", ann.token)
        _, hers = await get_as(node, "api/me/stats", bea.token)
        (race,) = mine["categories"]
        assert (race["kind"], race["played"], race["won"], race["streak"]) == ("race", 1, 1, 1)
        assert race["fewest_moves"] == ann.own_board(room, 0).moves
        (lost_race,) = hers["categories"]
        assert (lost_race["played"], lost_race["won"], lost_race["best_ms"]) == (1, 0, None)
        assert hers["recent"][0]["rank"] == 2 and hers["recent"][0]["players"] == 2
        assert (await get_as(node, "api/me/stats", None))[0] == 401
    finally:
        await close_all([ann, bea])


async def test_a_race_against_bots_counts_apart_and_bots_are_not_players(
    node: Node, redis: RedisClient
) -> None:
    """Recorded with `vs_machine` and the bots' ids, a race counts as `race_machine` for
    its human racers only; recording the same game again changes nothing."""
    room, (ann, bot), _ = await started_race(node, "Ann", "Bot")
    try:
        await ann.resign(room)
        await bot.resign(room)
        await ann.expect(lambda m: m["t"] == "results")
        store = node.service.store
        loaded = await store.load_room(room)
        assert loaded is not None
        data = await store.load_results(room, 1)
        assert data is not None
        results = msgpack.unpackb(data, raw=False)
        # As the bot feature will: the same game, recorded as against the machine.
        state = replace(loaded[0], id=f"{room}x")
        for _ in range(2):
            await record_game(store.players, state, results, vs_machine=True, bots={bot.user})
        _, mine = await get_as(node, "api/me/stats", ann.token)
        kinds = {(c["kind"], c["played"]) for c in mine["categories"]}
        assert kinds == {("race", 1), ("race_machine", 1)}
        assert not await redis.exists(keys.user_stats(bot.user)) or {
            c["kind"] for c in (await get_as(node, "api/me/stats", bot.token))[1]["categories"]
        } == {"race"}
    finally:
        await close_all([ann, bot])


async def test_the_counting_script_follows_the_reference_rule(redis: RedisClient) -> None:
    """Random games recorded by the store give the counters `race.stats.fold` gives;
    the recent games keep the newest 20."""
    store = Store(redis, retention=Retention())
    rng = random.Random(7)
    expected: dict[str, int] = {}
    for index in range(60):
        won = rng.random() < 0.6
        outcome = GameOutcome(
            user="g_reference",
            kind=rng.choice([StatsKind.SOLO, StatsKind.RACE, StatsKind.DAILY]),
            variant=rng.choice(["draw=1 passes=1 f2t=no", "draw=3 passes=3 f2t=no"]),
            won=won,
            time_ms=rng.randrange(60_000, 900_000) if won else None,
            moves=rng.randrange(60, 200),
            entry={"n": index},
        )
        assert await store.players.record_game(outcome, f"game{index}:1", 1000 + index)
        assert not await store.players.record_game(outcome, f"game{index}:1", 1000 + index)
        expected = fold(expected, outcome)
    counters, recent = await store.players.load_stats("g_reference")
    assert counters == expected
    assert [line["n"] for line in recent] == list(range(59, 39, -1))
    assert sum(c.played for c in summary(counters)) == 60


def test_outcomes_skip_practice_daily_games_and_bots() -> None:
    """An unranked daily game counts for nobody; a tie for first wins for both."""
    state = new_room(
        "room-0001",
        kind=RoomKind.RACE,
        variant=Variant(),
        capacity=3,
        time_limit=0,
        public=False,
        host="a",
        host_name="A",
        now_ms=0,
    )
    row = {"status": "won", "rank": 1, "time_ms": 1000, "moves": 90, "found": 52}
    results = {
        "gen": 1,
        "variant": "draw=1 passes=1 f2t=no",
        "ended_at": 5,
        "ranking": [
            {**row, "user": "a"},
            {**row, "user": "b"},
            {**row, "user": "bot", "rank": 3},
        ],
    }
    counted = outcomes(state, results, bots={"bot"})
    assert [(o.user, o.won, o.kind) for o in counted] == [
        ("a", True, StatsKind.RACE),
        ("b", True, StatsKind.RACE),
    ]
    practice = replace(state, kind=RoomKind.DAILY, ranked=False)
    assert outcomes(practice, results) == []
    ranked = replace(state, kind=RoomKind.DAILY, ranked=True)
    assert {o.kind for o in outcomes(ranked, results)} == {StatsKind.DAILY}
