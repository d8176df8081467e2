"""Bot racers end to end: real Valkey, a real node, real websocket clients.

In-server bots race a person at every level; their frames go through the leak auditor
like every test client's (`server_fixtures.leak_audit` records what each bot's
connection is handed). Bot accounts (a token with the `bot` claim) race through the
API only where bots are allowed, with a stable error code elsewhere, and the example
bot of docs/examples races a person through a real server.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import urllib.request
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from klondike_live.auth import mint_bot_token
from klondike_live.client import Client, Message, ServerError
from klondike_live.config import Settings
from klondike_live.gateway.server import Node, running
from klondike_live.store.connect import RedisClient

from helpers import FAST, WON
from waits import connect_client, scaled

ROOT = Path(__file__).resolve().parents[2]

if TYPE_CHECKING:
    from conftest import WaitFor

BOT_FAST = {**FAST, "bot_pace_scale": 0.02}
"""Bots think for a fiftieth of their level's pace."""


@pytest.fixture
async def node(make_settings: Callable[..., Settings], redis: RedisClient) -> AsyncIterator[Node]:
    """A node whose races deal the stored won game's seed, with quick bots."""
    async with running(make_settings(**BOT_FAST), seed_source=lambda: str(WON.seed)) as started:
        yield started


def results_of(client: Client, room: str) -> Message:
    return next(m for m in client.received if m["t"] == "results" and m["room"] == room)


@pytest.mark.parametrize("level", ["relaxed", "steady", "expert"])
async def test_a_race_against_a_bot_of_each_level_finishes(node: Node, level: str) -> None:
    """A person adds a bot in the lobby, both race; the results label the bot."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        room = await alice.create_race("draw=1", seats=2, bots=True, time_limit=300)
        await alice.join(room)
        shown = await alice.add_bot(room, level)
        bot_seat = next(s for s in shown["seats"] if s and s["bot"])
        assert bot_seat["level"] == level and bot_seat["ready"]
        assert not next(s for s in shown["seats"] if s and s["user"] == alice.user)["bot"]
        await alice.ready(room)
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        for token in WON.moves:
            if alice.own_board(room, 0).status != "playing":
                break
            await alice.move(room, token)
        assert alice.own_board(room, 0).status == "won"
        results = await alice.expect(lambda m: m["t"] == "results", timeout=scaled(240))
        rows = {row["seat"]: row for row in results["ranking"]}
        assert rows[0]["bot"] is False and rows[1]["bot"] is True
        assert rows[1]["user"] == bot_seat["user"]
        assert rows[1]["moves"] > 0  # the bot played
        assert rows[1]["status"] in ("won", "resigned")
    finally:
        await alice.close()


async def test_a_bot_plays_on_to_its_end_after_the_person_resigns(
    make_settings: Callable[..., Settings],
) -> None:
    """The person resigns at once and watches the rest (as the browser does): the bot is
    never shown away, keeps moving, and the results come as soon as its board is done,
    long before any grace period could have ended it. The person's seat stays online
    while its connection watches."""
    settings = make_settings(**BOT_FAST, grace_seconds=600)
    async with running(settings, seed_source=lambda: str(WON.seed)) as node:
        alice = await connect_client(node.ws_url, name="Alice")
        try:
            room = await alice.create_race("draw=1", seats=2, machine="expert", time_limit=900)
            await alice.join(room)
            await alice.ready(room)
            await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
            await alice.resign(room)
            await alice.expect(lambda m: m["t"] == "diff" and m.get("status") == "resigned")
            await alice.join(room, "spectator")
            results = await alice.expect(lambda m: m["t"] == "results", timeout=scaled(120))
            rooms = [m for m in alice.received if m["t"] == "room" and m["room"] == room]
            seats = [s for m in rooms for s in m["seats"] if s is not None]
            assert all(s["online"] for s in seats if s["bot"]), "the bot was shown away"
            watching = rooms[rooms.index(next(m for m in rooms if m["state"] == "racing")) :]
            assert all(s["online"] for m in watching for s in m["seats"] if s)
            rows = {row["seat"]: row for row in results["ranking"]}
            assert rows[0]["status"] == "resigned" and rows[0]["moves"] == 0
            assert rows[1]["moves"] > 0
            assert rows[1]["status"] in ("won", "resigned")
            if rows[1]["status"] == "won":
                assert rows[1]["rank"] < rows[0]["rank"]
        finally:
            await alice.close()


async def test_race_the_machine_starts_when_the_person_is_ready(
    node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """One bot seated at creation; `ready` alone starts the race; the person's
    statistics count it as a race against the machine, and the bot has none."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        room = await alice.create_race("draw=1", seats=2, machine="relaxed", time_limit=120)
        state = await alice.join(room)
        bots = [s for s in state["seats"] if s and s["bot"]]
        assert len(bots) == 1 and bots[0]["level"] == "relaxed" and state["bots"] is True
        await alice.ready(room)
        board = await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        assert board["seat"] == 0
        await alice.resign(room)
        results = await alice.expect(lambda m: m["t"] == "results", timeout=scaled(200))
        assert any(row["bot"] for row in results["ranking"])

        async def counted() -> list[tuple[str, int]]:
            # The game's statistics are written just after its results are sent.
            status, stats = await asyncio.to_thread(stats_of, node, alice.token)
            assert status == 200
            return [(c["kind"], c["played"]) for c in stats["categories"]]

        assert await wait_for(counted) == [("race_machine", 1)]
        counters, _games = await node.service.history.stats(bots[0]["user"])
        assert counters == {}  # a bot is no player: no statistics (its games are listed)
    finally:
        await alice.close()


def stats_of(node: Node, token: str) -> tuple[int, Any]:
    """GET /api/me/stats with a player's token."""
    request = urllib.request.Request(node.url + "api/me/stats")
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=scaled(5)) as response:
        return response.status, json.loads(response.read())


async def test_only_the_host_adds_bots_and_only_where_bots_are_allowed(node: Node) -> None:
    alice = await connect_client(node.ws_url, name="Alice")
    bob = await connect_client(node.ws_url, name="Bob")
    try:
        closed = await alice.create_race("draw=1", seats=3)
        await alice.join(closed)
        with pytest.raises(ServerError) as refused:
            await alice.add_bot(closed, "steady")
        assert refused.value.code == "bots_not_allowed"
        room = await alice.create_race("draw=1", seats=2, bots=True)
        await alice.join(room)
        await bob.join(room)
        with pytest.raises(ServerError) as refused:
            await bob.add_bot(room, "steady")
        assert refused.value.code == "not_host"
        with pytest.raises(ServerError) as refused:
            await alice.add_bot(room, "steady")
        assert refused.value.code == "room_full"
    finally:
        await alice.close()
        await bob.close()


async def test_the_host_removes_a_bot_from_the_lobby(node: Node, wait_for: WaitFor) -> None:
    """`remove_bot` frees a bot's seat in the lobby (the bot leaves the node); anyone but
    the host, a seat with no bot, and a race under way get stable codes."""
    alice = await connect_client(node.ws_url, name="Alice")
    bob = await connect_client(node.ws_url, name="Bob")
    try:
        room = await alice.create_race("draw=1", seats=3, bots=True)
        await alice.join(room)
        shown = await alice.add_bot(room, "steady")
        bot = next(s for s in shown["seats"] if s and s["bot"])
        await bob.join(room)
        assert len(node.service.bots.racers) == 1
        refusals = [
            (bob, bot["seat"], "not_host"),
            (alice, 0, "not_a_bot"),  # its own seat
            (alice, 2, "not_a_bot"),  # a person's
        ]
        for client, seat, code in refusals:
            with pytest.raises(ServerError) as refused:
                await client.remove_bot(room, seat)
            assert refused.value.code == code
        freed = await alice.remove_bot(room, bot["seat"])
        assert [s["user"] for s in freed["seats"] if s] == [alice.user, bob.user]
        await wait_for(lambda: not node.service.bots.racers)
        with pytest.raises(ServerError) as refused:
            await alice.remove_bot(room, bot["seat"])  # free now
        assert refused.value.code == "not_a_bot"
        again = await alice.add_bot(room, "relaxed")  # the seat is free for another
        second = next(s for s in again["seats"] if s and s["bot"])
        for racer in (alice, bob):
            await racer.ready(room)
        await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        with pytest.raises(ServerError) as refused:
            await alice.remove_bot(room, second["seat"])
        assert refused.value.code == "wrong_state"
    finally:
        await alice.close()
        await bob.close()


async def test_a_bot_token_is_refused_where_bots_are_not_allowed(node: Node) -> None:
    token, identity = mint_bot_token(node.settings.keys, "Outside Bot")
    alice = await connect_client(node.ws_url, name="Alice")
    bot = await connect_client(node.ws_url, token=token)
    try:
        assert bot.user == identity.user_id
        closed = await alice.create_race("draw=1", seats=2)
        for role in ("racer", "spectator"):
            with pytest.raises(ServerError) as refused:
                await bot.join(closed, role)
            assert refused.value.code == "bots_not_allowed"
        for kind in ("daily", "solo"):
            rid = 900 if kind == "daily" else 901
            message: dict[str, Any] = {"t": "create", "kind": kind, "variant": "draw=1"}
            with pytest.raises(ServerError) as refused:
                await bot.call({**message, "rid": rid}, lambda m: m["t"] == "created")
            assert refused.value.code == "bots_not_allowed"
        room = await alice.create_race("draw=1", seats=2, bots=True)
        await alice.join(room)
        state = await bot.join(room)
        seat = next(s for s in state["seats"] if s and s["user"] == bot.user)
        assert seat["bot"] is True and "level" not in seat
    finally:
        await alice.close()
        await bot.close()


def load_example() -> Any:
    path = ROOT / "docs" / "examples" / "race_bot.py"
    spec = importlib.util.spec_from_file_location("race_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_example_bot_races_a_person_through_the_api(
    node: Node, wait_for: WaitFor
) -> None:
    """docs/examples/race_bot.py, with a bot token, joins a race and plays it out."""
    example = load_example()
    token, identity = mint_bot_token(node.settings.keys, "Example Bot")
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        room = await alice.create_race("draw=1", seats=2, bots=True, time_limit=300)
        await alice.join(room)
        racing = asyncio.create_task(example.race(node.ws_url, token, room))
        await alice.expect(
            lambda m: (
                m["t"] == "room"
                and any(s and s["user"] == identity.user_id and s["ready"] for s in m["seats"])
            )
        )
        await alice.ready(room)
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        for token_ in WON.moves:
            if alice.own_board(room, 0).status != "playing":
                break
            await alice.move(room, token_)
        results = await wait_for(racing, 240)
        rows = {row["user"]: row for row in results["ranking"]}
        assert rows[identity.user_id]["bot"] is True
        assert rows[identity.user_id]["moves"] > 0
    finally:
        await alice.close()


def answering(rid: int) -> Callable[[Message], bool]:
    return lambda m: m.get("rid") == rid


async def test_a_bot_account_is_rate_limited_like_a_person(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A burst of requests from a bot token gets the same rate_limited refusals as the
    same burst from a person's connection."""
    settings = make_settings(rate_per_second=0.5, rate_burst=3)
    async with running(settings) as started:
        token, _ = mint_bot_token(started.settings.keys, "Burst Bot")
        answers: dict[str, list[str]] = {}
        for who, client in (
            ("person", await connect_client(started.ws_url, name="Alice")),
            ("bot", await connect_client(started.ws_url, token=token)),
        ):
            try:
                for rid in range(1, 7):
                    await client.send({"t": "ping", "rid": rid})
                replies = [await client.expect(answering(rid)) for rid in range(1, 7)]
                answers[who] = [str(m["t"] if m["t"] == "pong" else m["code"]) for m in replies]
            finally:
                await client.close()
        assert answers["bot"] == answers["person"]
        assert answers["bot"].count("rate_limited") >= 2, answers


async def test_the_pace_fit_reads_people_and_leaves_bots_out(node: Node, wait_for: WaitFor) -> None:
    """tools/fit_pace.py, on the history database of a node that ran a public race of a
    person against a bot (the script reads the finished public games): it takes the
    gaps between the person's stored move times, and none of the bot's board."""
    path = ROOT / "tools" / "fit_pace.py"
    spec = importlib.util.spec_from_file_location("fit_pace", path)
    assert spec is not None and spec.loader is not None
    fit_pace = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit_pace)
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        room = await alice.create_race(
            "draw=1", seats=2, machine="steady", time_limit=300, public=True
        )
        await alice.join(room)
        await alice.ready(room)
        await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        played = 0
        for token in WON.moves:
            if alice.own_board(room, 0).status != "playing":
                break
            await alice.move(room, token)
            played += 1
            await asyncio.sleep(0.01)
        results = await alice.expect(lambda m: m["t"] == "results", timeout=scaled(240))
    finally:
        await alice.close()
    rows = {row["seat"]: row for row in results["ranking"]}
    assert rows[1]["bot"] and rows[1]["moves"] >= 3  # its board would have gaps to fit
    history = node.service.history
    await wait_for(lambda: history.has_game(room, 1))  # drained just after the results
    gaps, games, boards = await fit_pace.gaps_of_people(node.settings.history_url, 60.0, 1)
    assert (games, boards) == (1, 1)
    assert played // 2 <= len(gaps) < played
    assert all(0 < gap < 60 for gap in gaps)
