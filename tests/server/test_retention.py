"""Retention: a finished race's volatile keys expire; its results stay until the history
database has the game, then are a cache for `results_cache_minutes`; a rematch keeps its
room (real Valkey, real server, real SQLite)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import pytest
from redis.asyncio.cluster import RedisCluster

from klondike_live import keys
from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.engine import Variant
from klondike_live.gateway.server import Node, running
from klondike_live.history import HistoryError
from klondike_live.history.database import KeptGame
from klondike_live.protocol.kinds import Audience, RoomKind
from klondike_live.race.live_board import BoardEvent, Progress
from klondike_live.race.room import RoomState, new_room
from klondike_live.race.status import BoardOp, BoardStatus
from klondike_live.store.connect import RedisClient
from klondike_live.store.records import (
    DAY_MS,
    WATCHERS_KEEP_MS,
    Expiry,
    Retention,
    WriteStatus,
)
from klondike_live.store.store import Store

from helpers import FAST, WON, close_all, started_race
from waits import connect_client, scaled

if TYPE_CHECKING:
    from conftest import WaitFor

RACE_MS = Retention().race_ms
LOBBY_MS = Retention().lobby_ms
SLACK_MS = 60_000
"""How much a TTL may have run down between the finish and the test reading it."""


@pytest.fixture
async def node(make_settings: Callable[..., Settings], redis: RedisClient) -> AsyncIterator[Node]:
    """A node racing on the stored won deal, caching drained results for 3 minutes."""
    settings = make_settings(**FAST, results_cache_minutes=3)
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        yield started


async def room_keys(redis: RedisClient, room: str) -> dict[str, int]:
    """Every key of a room with its PTTL (-1: no expiry)."""
    pattern = f"{keys.room(room)[: -len(':room')]}*"
    if isinstance(redis, RedisCluster):  # a room's keys share one slot: ask its node
        node = redis.get_node_from_key(keys.room(room))
        found = await redis.keys(pattern, target_nodes=node)
    else:
        found = await redis.keys(pattern)
    names = [name.decode() if isinstance(name, bytes) else name for name in found]
    return {name: await redis.pttl(name) for name in names}


async def finish_by_resigning(
    node: Node, wait_for: WaitFor, *, spectate: bool = True, public: bool = False
) -> tuple[str, list[Client], list[Client]]:
    """A two-racer race with a spectator: a few moves each, then both resign."""
    room, racers, watchers = await started_race(
        node, "Alice", "Bob", spectators=("Carol",) if spectate else (), public=public
    )
    for racer in racers:
        await racer.expect(lambda m: m["t"] == "room" and m["state"] == "racing")
    for token in WON.moves[:5]:
        await racers[0].move(room, token)
        await racers[1].move(room, token)
    for racer in racers:
        await racer.resign(room)
    await racers[0].expect(lambda m: m["t"] == "results", timeout=scaled(30))
    if spectate:
        await wait_for(lambda: node.service.store.redis.exists(keys.watchers(room)))
    return room, racers, watchers


def in_range(ttl: int, keep_ms: int) -> bool:
    return keep_ms - SLACK_MS < ttl <= keep_ms


async def test_a_finished_race_expires_its_volatile_keys_and_caches_its_results(
    node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """After the finish, boards, moves, times, streams, claims and the room expire in about
    an hour, spectator counts within a minute; the results, once the history database
    has the game, after `results_cache_minutes`; nothing is left in the outbox."""
    room, racers, watchers = await finish_by_resigning(node, wait_for)
    try:
        await wait_for(lambda: node.service.history.has_game(room, 1))
        results_key = keys.results(room, 1)
        await wait_for(lambda: _expiring(redis, results_key))
        ttls = await room_keys(redis, room)
        expected_volatile = {keys.room(room)} | {
            keys.connection(room, racer.user) for racer in racers
        }
        for seat in (0, 1):
            expected_volatile |= set(keys.race_keys(room, 1, seat))
        assert expected_volatile <= set(ttls)
        for name in expected_volatile:
            assert in_range(ttls[name], RACE_MS), (name, ttls[name])
        assert 0 < ttls[results_key] <= 3 * 60_000
        assert 0 < ttls[keys.watchers(room)] <= WATCHERS_KEEP_MS
        assert set(ttls) == expected_volatile | {results_key, keys.watchers(room)}
        assert await redis.zcard(keys.OUTBOX) == 0
    finally:
        await close_all(racers, watchers)


async def _expiring(redis: RedisClient, name: str) -> bool:
    return int(await redis.pttl(name)) > 0


async def test_results_wait_without_expiry_while_the_database_fails(
    node: Node, redis: RedisClient, wait_for: WaitFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the history database refuses the game, its results have no expiry and it
    stays in the outbox (the volatile keys still expire); once the database answers
    again the next pass writes it, and the results become a cache."""
    history = node.service.history
    keep_game = history.keep_game
    refused: list[str] = []

    async def refuse(room_id: str, *args: Any, **kwargs: Any) -> KeptGame:
        refused.append(room_id)
        raise HistoryError("the database is down")

    monkeypatch.setattr(history, "keep_game", refuse)
    room, racers, watchers = await finish_by_resigning(node, wait_for, spectate=False)
    try:
        await wait_for(lambda: room in refused)
        ttls = await room_keys(redis, room)
        assert ttls.pop(keys.results(room, 1)) == -1
        assert ttls and all(in_range(ttl, RACE_MS) for ttl in ttls.values()), ttls
        assert await redis.zscore(keys.OUTBOX, f"{room}|1") is not None
        monkeypatch.setattr(history, "keep_game", keep_game)
        await redis.zadd(keys.OUTBOX, {f"{room}|1": 0})  # its lease over: due now
        await wait_for(lambda: history.has_game(room, 1))
        await wait_for(lambda: _expiring(redis, keys.results(room, 1)))
        assert await redis.zcard(keys.OUTBOX) == 0
    finally:
        await close_all(racers, watchers)


async def test_a_rematch_keeps_the_room_and_the_claims(
    node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """Back in the lobby the room hash and the racers' claims expire as a lobby does
    (`lobby_hours` after its last change); the finished race's keys keep their expiry,
    and once the next race is dealt its keys and the room have none."""
    room, racers, watchers = await finish_by_resigning(node, wait_for, spectate=False)
    try:
        await racers[0].rematch(room)
        await racers[0].expect(lambda m: m["t"] == "room" and m["state"] == "lobby")
        assert in_range(await redis.pttl(keys.room(room)), LOBBY_MS)
        for racer in racers:
            assert in_range(await redis.pttl(keys.connection(room, racer.user)), LOBBY_MS)
        assert in_range(await redis.pttl(keys.board(room, 1, 0)), RACE_MS)
        for racer in racers:
            await racer.ready(room)
        await racers[0].expect(lambda m: m["t"] == "room" and all(s["ready"] for s in m["seats"]))
        await racers[0].start(room)
        await racers[0].expect(lambda m: m["t"] == "room" and m["state"] == "racing")
        await racers[0].move(room, WON.moves[0])
        for name in (
            keys.room(room),
            *(keys.connection(room, racer.user) for racer in racers),
            *keys.race_keys(room, 2, 0)[:4],
        ):
            assert await redis.pttl(name) == -1, name
    finally:
        await close_all(racers, watchers)


async def test_a_claim_after_the_finish_expires_with_the_room(
    node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """A racer coming back to a finished room claims its seat for no longer than the room
    lives; the claim it left was released."""
    room, racers, watchers = await finish_by_resigning(node, wait_for, spectate=False)
    bob = racers[1]
    await bob.close()
    claim = keys.connection(room, bob.user)
    await wait_for(lambda: _missing(redis, claim))
    back = await connect_client(node.ws_url, token=bob.token)
    try:
        await back.join(room)
        await back.expect(lambda m: m["t"] == "results")
        ttl = await redis.pttl(claim)
        assert 0 < ttl <= await redis.pttl(keys.room(room)) + 1000
    finally:
        await close_all([racers[0], back], watchers)


async def _missing(redis: RedisClient, name: str) -> bool:
    return not await redis.exists(name)


async def test_a_game_whose_results_left_valkey_is_served_from_the_database(
    node: Node, redis: RedisClient, wait_for: WaitFor
) -> None:
    """Once drained, a finished public game's results can leave Valkey (their cache
    expiry, or a flush): /api/results still lists it, its results and replay answer the
    same as before; a game nobody played answers 404."""
    room, racers, watchers = await finish_by_resigning(node, wait_for, spectate=False, public=True)
    await close_all(racers, watchers)
    await wait_for(lambda: node.service.history.has_game(room, 1))
    before = {
        path: await _get_json(node, path)
        for path in (f"api/results/{room}/1", f"api/replay/{room}/1")
    }
    await redis.delete(keys.results(room, 1))  # what its expiry does
    assert [g["room"] for g in await _get_json(node, "api/results")] == [room]
    for path, answer in before.items():
        assert await _get_json(node, path) == answer
    for path in (f"api/results/{room}/2", "api/replay/no-such-room-0001/1"):
        with pytest.raises(urllib.error.HTTPError) as caught:
            await _get_json(node, path)
        assert caught.value.code == 404
        caught.value.close()


async def _get_json(node: Node, path: str) -> Any:
    def fetch() -> Any:
        with urllib.request.urlopen(node.url + path, timeout=scaled(5)) as response:
            return json.loads(response.read())

    return await asyncio.to_thread(fetch)


async def test_a_ranked_daily_room_outlives_its_day(redis: RedisClient) -> None:
    """At the finish a ranked daily attempt's room (its day's attempts record points at
    it) is kept with its results; once drained, results are a cache and the room stays
    two days; a practice room expires with the race's volatile keys."""
    store = Store(redis, retention=Retention(race_ms=1000, results_cache_ms=5000))

    def daily_room(room_id: str, *, ranked: bool) -> RoomState:
        return new_room(
            room_id,
            kind=RoomKind.DAILY,
            ranked=ranked,
            variant=Variant(draw=1, passes=1),
            capacity=1,
            time_limit=0,
            public=False,
            host="amy",
            host_name="Amy",
            now_ms=0,
            daily="2030-01-01",
        )

    for ranked, room_keep in ((True, 0), (False, 1000)):
        state = daily_room("daily-room-0001", ranked=ranked)
        by_keep = {e.after_ms: set(e.keys) for e in store.finished_expiries(state)}
        assert keys.room(state.id) in by_keep[room_keep]
        assert keys.results(state.id, 1) in by_keep[0]
        assert set(keys.race_keys(state.id, 1, 0)) <= by_keep[1000]
    assert store.drained_expiries("daily-room-0001", 1, True) == [
        Expiry((keys.results("daily-room-0001", 1),), 5000),
        Expiry((keys.room("daily-room-0001"),), 2 * DAY_MS),
    ]
    assert store.drained_expiries("race-room-0001", 1, False) == [
        Expiry((keys.results("race-room-0001", 1),), 5000)
    ]


async def test_a_late_board_event_expires_with_its_finished_board(redis: RedisClient) -> None:
    """An event stored on a board that already expires (a refresh after the finish)
    gives the streams it creates the board's expiry; on a board in play, none."""
    store = Store(redis)
    progress = Progress(0, 0, 21, 3, BoardStatus.WON, None)
    refresh = BoardEvent(BoardOp.REFRESH, (), None, 0, b"frame", 1, {}, progress)
    for room, ttl in (("late-room-0001", 50_000), ("live-room-0001", 0)):
        await redis.hset(
            keys.board(room, 1, 0),
            mapping={"seq": 0, "status": "won", "start_at": 0, "deadline": 0, "found": 0},
        )
        if ttl:
            await redis.pexpire(keys.board(room, 1, 0), ttl)
        result = await store.write_board_event(room, 1, 0, "amy", "", refresh, 0)
        assert result.status is WriteStatus.OK
        stream_ttl = await redis.pttl(keys.stream(room, 1, 0, Audience.SPECTATOR))
        assert (0 < stream_ttl <= ttl) if ttl else stream_ttl == -1
