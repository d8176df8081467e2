"""End to end: a finished game's solver analysis over HTTP, on a real node and Valkey.

After a game ends the node analyses it in the background (`service.analysis`), stores
the result beside the game's results (same key, same expiry) and `GET
/api/analysis/ROOM/GEN` answers 202 `pending`, then 200 with every board's per-ply
verdicts. A daily game's analysis is withheld while its day is open, for everyone
(the replay shows it only as played), and shown once the day has closed; the HTTP
audit (`auditor.audit_http`) checks every answer of these tests.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from klondike_live import keys
from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1
from klondike_live.engine import Board, GameRecord
from klondike_live.gateway.server import Node, running
from klondike_live.service.analysis import MAX_QUEUED
from klondike_live.store.connect import RedisClient

from auditor import audit_http, http_audit
from daily_support import DAY, DayClock, get, play, prepare, record_for, start_attempt
from helpers import FAST, WON, close_all
from waits import connect_client, scaled, wait_for

__all__ = ["http_audit"]  # the fixture, imported for pytest

PLAYED = 20
ANALYSIS = {"analysis_seconds": 5.0}
"""The tests' other nodes analyse nothing (tests/conftest.py); these nodes do."""


@pytest.fixture
async def node(make_settings: Callable[..., Settings]) -> AsyncIterator[Node]:
    """A node that analyses finished games, dealing the stored won game."""
    settings = make_settings(**FAST, **ANALYSIS)
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        yield started


@pytest.fixture
async def daily_node(
    make_settings: Callable[..., Settings], redis: RedisClient, clock: DayClock
) -> AsyncIterator[Node]:
    """A node that analyses finished games, on the test clock, with 2030-01-01 ready."""
    await prepare(redis, DAY, DRAW1)
    async with running(make_settings(**FAST, **ANALYSIS), clock=clock) as started:
        yield started


async def ready(node: Node, path: str, token: str | None = None) -> dict[str, Any]:
    """Poll an analysis until it is stored (202 `pending` meanwhile); its body."""
    deadline = time.monotonic() + scaled(180)
    while True:
        status, body = await get(node, path, token)
        if status == 200:
            assert body["status"] == "ready"
            return dict(body)
        assert (status, body) == (202, {"status": "pending"}), (status, body)
        assert time.monotonic() < deadline, f"no analysis within {scaled(180):g} s"
        await asyncio.sleep(scaled(0.5))  # between polls


async def solo_game(client: Client) -> str:
    """A solo game of the node's deal created and joined by `client`: its room, once its
    board arrived."""
    created = await client.call(
        {"t": "create", "rid": 7, "kind": "solo", "variant": "draw=1", "deal": "any"},
        lambda m: m["t"] == "created" and m.get("rid") == 7,
    )
    room = str(created["room"])
    await client.join(room)
    await client.expect(lambda m: m["t"] == "board" and m.get("room") == room)
    return room


def check_board(board: dict[str, Any], record: GameRecord) -> None:
    """The plies of one board: one per position, winnable lines win, ordered verdicts."""
    plies = board["plies"]
    assert [p["ply"] for p in plies] == list(range(len(record.moves) + 1))
    position = Board(record.starting_deal(), record.variant)
    verdicts = []
    for ply in plies:
        if ply["ply"]:
            position.play(record.moves[ply["ply"] - 1])
        verdicts.append(ply["verdict"])
        if ply["verdict"] == "winnable":
            replay = position.copy()
            for token in ply["line"]:
                replay.play(token)
            assert replay.is_won()
        else:
            assert ply["line"] is None
    if "lost" in verdicts:
        assert "winnable" not in verdicts[verdicts.index("lost") :]


async def test_a_finished_solo_game_is_analysed_and_cached(node: Node, redis: RedisClient) -> None:
    """Twenty moves of a winning game, then resign: the analysis appears after the end,
    pending first, every ply winnable or unknown (the deal is won by the rest of the
    record), stored compressed in the results hash with the results' expiry, and served
    again from the store (the claim gone, the stored bytes unchanged); an analysis
    stored uncompressed, as before, is served the same."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        room = await solo_game(alice)
        status, body = await get(node, f"api/analysis/{room}/1")
        assert (status, body) == (404, {"error": "not_found"}), "no analysis of a live game"
        for token in WON.moves[:PLAYED]:
            await alice.move(room, token)
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)

        body = await ready(node, f"api/analysis/{room}/1")
        (board,) = body["boards"]
        assert board["seat"] == 0 and board["name"] == "Alice"
        record = GameRecord(variant=WON.variant, seed=WON.seed, moves=WON.moves[:PLAYED])
        check_board(board, record)
        assert {p["verdict"] for p in board["plies"]} <= {"winnable", "unknown"}
        assert board["lost_at"] is None

        key = keys.results(room, 1)
        stored = await redis.hget(key, "analysis")
        assert stored is not None and await redis.hget(key, "analysis_claim") is None
        ttl = await redis.ttl(key)
        assert ttl > 0, "the analysis expires with the results"
        assert isinstance(stored, bytes)
        raw = zlib.decompress(stored)
        assert len(stored) * 4 < len(raw), "the plies' lines repeat: they compress"
        assert await ready(node, f"api/analysis/{room}/1") == body
        assert await redis.hget(key, "analysis") == stored
        await redis.hset(key, "analysis", raw)
        assert await ready(node, f"api/analysis/{room}/1") == body
        assert await get(node, "api/analysis/nosuchroom1/1") == (404, {"error": "not_found"})
    finally:
        await close_all([alice])


async def test_no_analysis_when_it_is_switched_off(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With `analysis_seconds=0` nothing is analysed and the endpoint answers 404."""
    settings = make_settings(**FAST, analysis_seconds=0)
    async with running(settings, seed_source=lambda: str(WON.seed)) as off:
        alice = await connect_client(off.ws_url, name="Alice")
        try:
            room = await alice.create_solo()
            await alice.join(room)
            await alice.expect(lambda m: m["t"] == "board" and m.get("room") == room)
            await alice.resign(room)
            await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
            assert await get(off, f"api/analysis/{room}/1") == (404, {"error": "not_found"})
            await asyncio.sleep(scaled(0.5))  # a pause: no analysis claims the game meanwhile
            assert await redis.hget(keys.results(room, 1), "analysis_claim") is None
        finally:
            await close_all([alice])


async def test_an_open_days_analysis_is_withheld_until_the_close(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """Alice's resigned attempt of the open day: its analysis is refused to everyone
    (403 `spoiler` for those the gate keeps out, 403 `withheld` for Alice herself and for
    Carol who finished hers); once the day has closed it is shown."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    carol = await connect_client(daily_node.ws_url, name="Carol")
    try:
        room, _ = await start_attempt(alice)
        await play(alice, room, record.moves[:PLAYED])
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
        carols, _ = await start_attempt(carol)
        await carol.resign(carols)
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == carols)

        slug = "draw1-passes1-f2tno"
        status, board_page = await get(daily_node, f"api/daily/{DAY}/{slug}/leaderboard", None)
        assert status == 200 and board_page["par"] == record.par, "the day's par"
        path = f"api/analysis/{room}/1"
        assert await get(daily_node, path, None) == (403, {"error": "spoiler"})
        for token in (alice.token, carol.token):
            assert await get(daily_node, path, token) == (403, {"error": "withheld"})

        clock.set(datetime(2030, 1, 2, 0, 0, 1, tzinfo=UTC))
        body = await ready(daily_node, path)
        (board,) = body["boards"]
        played = GameRecord(variant=DRAW1, seed=record.seed, moves=tuple(record.moves[:PLAYED]))
        check_board(board, played)
        assert await audit_http(redis) >= 0
    finally:
        await close_all([alice, carol])


async def test_the_backlog_is_bounded(node: Node) -> None:
    """Requests beyond `MAX_QUEUED` waiting games are not queued (asked for over HTTP
    later instead); games with no results are dropped at their claim."""
    analyses = node.service.analyses
    for n in range(MAX_QUEUED + 20):
        analyses.request(f"no-such-room-{n:04d}", 1)
    assert len(analyses._running) == MAX_QUEUED
    await analyses.close()
    await asyncio.sleep(0)  # the tasks' done callbacks
    assert not analyses._tasks and not analyses._running


async def test_a_flushed_valkey_loses_no_history(node: Node, redis: RedisClient) -> None:
    """A solo game played, analysed and drained to the history database; then the whole
    Valkey is flushed: its results, replay and analysis, its player's statistics and
    games page answer exactly as before (the auditor reads each answer)."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        room = await solo_game(alice)
        for token in WON.moves[:PLAYED]:
            await alice.move(room, token)
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
        await ready(node, f"api/analysis/{room}/1")
        history = node.service.history
        await wait_for(lambda: history.load_analysis(room, 1), 30)
        paths = [
            f"api/results/{room}/1",
            f"api/replay/{room}/1",
            f"api/analysis/{room}/1",
            "api/me/stats",
            f"api/players/{alice.user}/games",
        ]
        before = [await get(node, path, alice.token) for path in paths]
        assert [status for status, _ in before] == [200] * len(paths)
        await redis.flushall()
        assert [await get(node, path, alice.token) for path in paths] == before
    finally:
        await alice.close()
