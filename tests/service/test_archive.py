"""Finished games reach the history database exactly once, whatever fails in between:
a node that dies between the results and the drain, a database restarted or down for a
minute (real Valkey, real SQLite and PostgreSQL servers; the nodes' clocks move by
hand)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.history import History, HistoryError
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.kinds import Role
from klondike_live.race.room import FINISHED
from klondike_live.service.archive import FIRST_TRY_MS, LEASE_MS

from postgres import fresh_database, start_postgres, started_postgres, stop_postgres
from race_support import play, start_race
from service_fixtures import SEED, Cluster


async def finish_race(cluster: Cluster, node: int = 0) -> str:
    """A race of two on `node`: a move, then both racers resign; its room."""
    race = await start_race(cluster, spectators=(), spectator_node=node)
    ann, bob = race.racers
    await play(cluster, ann, race.room)
    for racer in (ann, bob):
        assert await cluster.request(racer, msg.Resign(race.room)) is None
    assert (await cluster.race(race.room)).state.state == FINISHED
    return race.room


async def drained(cluster: Cluster, node: int, after_ms: int) -> int:
    """One drain pass of `node` with every clock `after_ms` on; the games it wrote."""
    cluster.advance(after_ms)
    try:
        count = await cluster.nodes[node].service.archive.drain()
        await cluster.settle()
        return count
    finally:
        cluster.advance(-after_ms)


async def games_of(history: History, rooms: list[str]) -> list[bool]:
    return [await history.has_game(room, 1) for room in rooms]


@pytest.fixture
async def archive_pair(
    valkey_url: str,
    redis: Redis,
    service_settings: Callable[[int], Settings],
    history_url: str,
) -> AsyncIterator[Cluster]:
    """Two nodes on one Valkey sharing the history database `history_url` (SQLite,
    then PostgreSQL)."""

    def settings_for(index: int) -> Settings:
        return replace(service_settings(index), database_url=history_url)

    async with Cluster.running(valkey_url, settings_for, lambda: SEED, nodes=2) as started:
        yield started


async def test_a_finished_game_is_in_the_database_once_drained(
    archive_pair: Cluster, redis: Redis
) -> None:
    """The node that finishes a game drains it at once: the database has it, the outbox
    is empty, the results are a cache; a later pass of any node finds nothing to do."""
    room = await finish_race(archive_pair)
    history = archive_pair.nodes[1].history
    assert await history.has_game(room, 1)
    assert await redis.zcard(keys.OUTBOX) == 0
    assert await redis.pttl(keys.results(room, 1)) > 0
    assert await drained(archive_pair, 1, LEASE_MS) == 0
    assert await history.count_games() == 1


async def test_a_node_dead_between_the_results_and_the_drain_loses_no_game(
    archive_pair: Cluster, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Node 0 finishes two games and dies before draining them (its fast path never
    runs): they wait in the outbox with their results kept (no expiry); another node
    drains them once they fall due, each exactly once, and their results become a
    cache."""
    monkeypatch.setattr(archive_pair.nodes[0].service.archive, "finished", lambda *a: None)
    rooms = [await finish_race(archive_pair), await finish_race(archive_pair)]
    history = archive_pair.nodes[1].history
    assert await games_of(history, rooms) == [False, False]
    assert await redis.zcard(keys.OUTBOX) == 2
    assert [await redis.pttl(keys.results(room, 1)) for room in rooms] == [-1, -1]
    assert await drained(archive_pair, 1, 0) == 0  # not due yet: the finisher's turn
    assert await drained(archive_pair, 1, FIRST_TRY_MS + 1000) == 2
    assert await games_of(history, rooms) == [True, True]
    assert await history.count_games() == 2
    assert await redis.zcard(keys.OUTBOX) == 0
    assert all([await redis.pttl(keys.results(room, 1)) > 0 for room in rooms])
    stats, _ = await history.stats("ann")
    assert sum(v for k, v in stats.items() if k.startswith("played|")) == 2


async def test_a_game_drained_twice_counts_once(archive_pair: Cluster, redis: Redis) -> None:
    """A node that wrote the game and died before taking it out of the outbox: the
    entry falls due again, and draining it again adds and counts nothing."""
    room = await finish_race(archive_pair)
    await redis.zadd(keys.OUTBOX, {f"{room}|1": 0})  # as if never taken out
    assert await drained(archive_pair, 1, 0) == 1  # done again, harmlessly
    history = archive_pair.nodes[1].history
    assert await history.count_games() == 1
    stats, _ = await history.stats("bob")
    assert sum(v for k, v in stats.items() if k.startswith("played|")) == 1
    assert await redis.zcard(keys.OUTBOX) == 0


async def test_a_database_down_for_a_minute_and_restarted_loses_nothing(
    valkey_url: str,
    redis: Redis,
    service_settings: Callable[[int], Settings],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """PostgreSQL stopped (its connections cut) while games finish, for a minute of
    drain passes: play goes on, the games wait in the outbox, the outage is logged once;
    restarted, the next passes write every game exactly once and say so once."""
    with started_postgres() as server:
        url = fresh_database(server)

        def settings_for(index: int) -> Settings:
            return replace(service_settings(index), database_url=url)

        cluster = await Cluster.start(valkey_url, settings_for, lambda: SEED)
        try:
            first = await finish_race(cluster)  # drained while the database is up
            caplog.set_level(logging.INFO, logger="klondike_live.service.archive")
            stop_postgres(server)
            rooms = [await finish_race(cluster), await finish_race(cluster)]
            failures = 0
            for _ in range(12):  # a minute of passes: those with games due fail
                cluster.advance(5_000)
                try:
                    assert await cluster.nodes[0].service.archive.drain() == 0
                except HistoryError:
                    failures += 1
            assert failures >= 60_000 // LEASE_MS - 1
            assert await redis.zcard(keys.OUTBOX) == 2
            assert [await redis.pttl(keys.results(room, 1)) for room in rooms] == [-1, -1]
            start_postgres(server)
            cluster.advance(LEASE_MS)
            assert await cluster.nodes[0].service.archive.drain() == 2
            await cluster.settle()
            history = cluster.nodes[0].history
            assert await games_of(history, [first, *rooms]) == [True, True, True]
            assert await history.count_games() == 3
            assert await redis.zcard(keys.OUTBOX) == 0
            failed = [r for r in caplog.records if "history database failed" in r.getMessage()]
            back = [r for r in caplog.records if "answers again after" in r.getMessage()]
            assert (len(failed), len(back)) == (1, 1), [r.getMessage() for r in caplog.records]
        finally:
            await cluster.stop()


async def test_a_racer_back_in_a_finished_room_gets_its_results_from_the_database(
    archive_pair: Cluster, redis: Redis
) -> None:
    """A finished race whose results left Valkey (their cache expired) while its room is
    still there: a racer joining it again gets the same results frame as before, read
    from the history database."""
    race = await start_race(archive_pair, spectators=())
    ann, bob = race.racers
    await play(archive_pair, ann, race.room)
    for racer in (ann, bob):
        assert await archive_pair.request(racer, msg.Resign(race.room)) is None
    (before,) = ann.of_kind("results")
    await archive_pair.disconnect(ann)
    await redis.delete(keys.results(race.room, 1))
    back = archive_pair.connect("ann", node=1)
    assert await archive_pair.request(back, msg.Join(race.room, Role.RACER)) is None
    (after,) = back.of_kind("results")
    assert after == before
