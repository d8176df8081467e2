"""A deleted account is erased from what still lives in Valkey, over real nodes, Valkey
and the history database: a race that ends after the deletion is archived with the
player erased; today's daily leaderboard shows the deleted marker at once and its
closed day keeps no trace of the player; a live tournament shows the marker to its
watchers at once and keeps none in its archive. Each test searches every stored row
and the relevant Valkey keys for the player's user id and name."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import msgpack
from sqlalchemy import select
from test_accounts import answer, closed_with, register, two_nodes
from test_tournaments_http import server_ms

from klondike_live import keys
from klondike_live.client import Client, Message
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1, variant_slug
from klondike_live.gateway.server import Node, running
from klondike_live.history import History
from klondike_live.history.players import DELETED_NAME, deleted_id
from klondike_live.history.schema import metadata
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency
from klondike_live.store.scan import scan_keys

from auditor import audit_account_frames, http_audit
from daily_support import DAY, DayClock, get_ok, play, prepare, record_for, start_attempt
from helpers import FAST, WON, close_all, started_race
from waits import connect_client, scaled, wait_for

__all__ = ["http_audit", "two_nodes"]  # fixtures, imported for pytest


async def stored_rows(history: History) -> str:
    """Every row of every table of the history database, as text (blobs as bytes)."""
    lines = []
    async with history.engine.connect() as conn:
        for table in metadata.sorted_tables:
            for row in (await conn.execute(select(table))).all():
                lines.append(f"{table.name}: {tuple(row)!r}")
    return "\n".join(lines)


async def valkey_values(redis: RedisClient, pattern: str = f"{keys.PREFIX}:*") -> dict[str, str]:
    """Every Valkey key matching `pattern` with its value as text (msgpack and JSON
    spell their texts as they are)."""
    found: dict[str, str] = {}
    async for names in scan_keys(redis, Latency(), pattern, 500):
        for name in names:
            kind = text(await redis.type(name))
            value: Any
            if kind == "string":
                value = await redis.get(name)
            elif kind == "hash":
                value = await redis.hgetall(name)
            elif kind == "zset":
                value = await redis.zrange(name, 0, -1)
            elif kind == "set":
                value = await redis.smembers(name)
            elif kind == "list":
                value = await redis.lrange(name, 0, -1)
            else:
                value = await redis.xrange(name)
            found[name] = repr(value)
    return found


def traces(texts: dict[str, str] | str, user: str, name: str) -> list[str]:
    """Where `user` or `name` appears (a key's name or value, or a line of text)."""
    if isinstance(texts, str):
        return [line for line in texts.splitlines() if user in line or name in line]
    return [k for k, v in texts.items() if user in k or user in v or name in v]


def unnamed(frame: Message) -> bool:
    """Whether a room frame shows a seat with no name (a deleted account's)."""
    return any(seat and seat.get("name") == DELETED_NAME for seat in frame.get("seats", []))


def results_of(room: str) -> Callable[[Message], bool]:
    return lambda m: bool(m["t"] == "results" and m["room"] == room)


def archived(history: History, room: str) -> Callable[[], Awaitable[bool]]:
    return lambda: history.has_game(room, 1)


async def delete_account(node: Node, token: str, username: str) -> None:
    """Delete the account of `token` from a device of its own, as the client does."""
    device = await connect_client(node.ws_url, token=token)
    reply = await answer(device, {"t": "delete_account", "username": username})
    assert reply["t"] == "account_deleted", reply
    assert audit_account_frames(device.received) >= 1
    assert await closed_with(device) == 4006


async def test_a_race_that_ends_after_its_player_deleted_the_account_is_archived_erased(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """Ann (account "Annie") wins a race and deletes her account while Bea still plays;
    Bea resigns after it, so the game reaches the history database after the deletion:
    Ann's seat there, in the results as served and in Valkey's cached copy is the
    marker with no name, nobody has statistics for her, Bea's game and record are whole."""
    first, second = two_nodes
    room, (ann, bea), _ = await started_race(first, "Ann", "Bea")
    try:
        signed = await register(ann, "Annie")
        for token in WON.moves:
            if ann.own_board(room, 0).status != "playing":
                break
            await ann.move(room, token)
        assert ann.own_board(room, 0).status == "won"
        await delete_account(second, signed["token"], "annie")
        history = first.service.history
        assert not await history.has_game(room, 1)  # the race is still on
        # Her seat goes on with no name: in the room as stored and as its viewers see it.
        await bea.expect(lambda m: m["t"] == "room" and m.get("room") == room and unnamed(m))
        live = await valkey_values(redis, f"{keys.PREFIX}:{{r:{room}}}*")
        assert keys.room(room) in live and traces(live, "\x00", "Ann") == []

        await bea.resign(room)
        await bea.expect(lambda m: m["t"] == "results" and m["room"] == room)
        await wait_for(lambda: history.has_game(room, 1))
        marker = deleted_id(ann.user)

        async def cached_erased() -> bool:
            data = await redis.hget(keys.results(room, 1), "data")
            return data is not None and ann.user.encode() not in data

        await wait_for(cached_erased)
        assert traces(await stored_rows(history), ann.user, "Ann") == []
        cached = await valkey_values(redis, keys.results(room, 1))
        assert cached and traces(cached, ann.user, "Ann") == []
        results = await get_ok(second, f"api/results/{room}/1")
        assert [(r["user"], r["name"]) for r in results["ranking"]] == [
            (marker, DELETED_NAME),
            (bea.user, "Bea"),
        ]
        assert ann.user not in json.dumps(results) and "Ann" not in json.dumps(results)
        theirs = await get_ok(first, f"api/players/{bea.user}/profile")
        assert [(g["room"], g["result"]) for g in theirs["games"]] == [(room, "lost")]
        assert theirs["games"][0]["opponents"] == [
            {"user": marker, "name": DELETED_NAME, "rank": 1, "bot": False}
        ]
        assert theirs["totals"]["played"] == 1
        assert (await get_ok(first, f"api/players/{bea.user}/vs/{marker}"))["losses"] == 1
        assert await history.stats(ann.user) == ({}, [])
        assert (await history.stats(marker))[0] == {}
    finally:
        await close_all([ann, bea])


async def test_a_player_on_today_s_leaderboard_deletes_the_account(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """Ann and Bea finish today's attempt; Ann (account "Annie") deletes her account:
    the leaderboard as served shows the marker with no name in her row at once (her
    rank and result unchanged), Valkey's keys of the day hold neither her id nor her
    name, and once the day has closed and is kept, the database holds no trace of her."""
    record = record_for(DAY, DRAW1)
    slug = variant_slug(DRAW1)
    path = f"api/daily/{DAY.isoformat()}/{slug}/leaderboard"
    ann = await connect_client(daily_node.ws_url, name="Ann")
    bea = await connect_client(daily_node.ws_url, name="Bea")
    clients: list[Client] = [ann, bea]
    try:
        rooms = []
        for player, moves in ((ann, record.moves), (bea, record.moves[:3])):
            room, _ = await start_attempt(player)
            await play(player, room, moves)
            if player is bea:
                await bea.resign(room)
            await player.expect(results_of(room))
            rooms.append(room)
        before = await get_ok(daily_node, path)
        assert [(r["user"], r["name"], r["rank"]) for r in before["rows"]] == [
            (ann.user, "Ann", 1),
            (bea.user, "Bea", 2),
        ]
        signed = await register(ann, "Annie")
        await delete_account(daily_node, signed["token"], "annie")
        marker = deleted_id(ann.user)

        after = await get_ok(daily_node, path)
        assert [(r["user"], r["name"], r["rank"]) for r in after["rows"]] == [
            (marker, DELETED_NAME, 1),
            (bea.user, "Bea", 2),
        ]
        assert after["rows"][0]["won"] is True and after["count"] == 2
        assert ann.user not in json.dumps(after) and "Ann" not in json.dumps(after)
        today = await valkey_values(redis, f"{keys.PREFIX}:{{d:{DAY.isoformat()}:{slug}}}:*")
        assert keys.daily_board(DAY.isoformat(), slug) in today
        assert traces(today, ann.user, "Ann") == []
        assert bea.user in today[keys.daily_entries(DAY.isoformat(), slug)]
        attempt = await valkey_values(redis, f"{keys.PREFIX}:{{r:{rooms[0]}}}*")
        assert keys.room(rooms[0]) in attempt and traces(attempt, "\x00", "Ann") == []

        history = daily_node.service.history
        for room in rooms:
            await wait_for(archived(history, room))
        clock.set(datetime(2030, 1, 2, 0, 5, tzinfo=UTC))
        assert await daily_node.service.daily.keep_closed_days() >= 1
        assert traces(await stored_rows(history), ann.user, "Ann") == []
        kept = await get_ok(daily_node, path)
        assert kept["closed"] is True
        assert [(r["user"], r["name"]) for r in kept["rows"]] == [
            (marker, DELETED_NAME),
            (bea.user, "Bea"),
        ]
    finally:
        await close_all(clients)


async def test_a_live_tournament_s_entrant_deletes_the_account(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """Ann enters Org's tournament beside Bob, with Fan watching on the other node; Ann
    (account "Annie") deletes her account: Fan gets the tournament with the marker in
    her place, the HTTP API serves it so, and Valkey's copy holds no trace of her; Org
    cancels it, and its archive in the database holds none either."""
    first, second = two_nodes
    org = await connect_client(first.ws_url, name="Org")
    ann = await connect_client(first.ws_url, name="Ann")
    bob = await connect_client(first.ws_url, name="Bob")
    fan = await connect_client(second.ws_url, name="Fan")
    try:
        now = await server_ms(redis)
        tid = await org.create_tournament(
            "Cup",
            "heats",
            ["draw=1 passes=1 f2t=no"],
            public=True,
            closes_at=now + 600_000,
            start_at=now + 900_000,
            heats=1,
        )
        await ann.enter_tournament(tid)
        shown = await bob.enter_tournament(tid)
        assert [(e["user"], e["name"]) for e in shown["entrants"]] == [
            (ann.user, "Ann"),
            (bob.user, "Bob"),
        ]
        await fan.watch_tournament(tid)
        signed = await register(ann, "Annie")
        await delete_account(second, signed["token"], "annie")
        marker = deleted_id(ann.user)

        def erased(m: dict[str, Any]) -> bool:
            return m["t"] == "tournament" and any(
                e["user"] == marker for e in m["tournament"]["entrants"]
            )

        frame = await fan.expect(erased, timeout=scaled(10))
        assert [(e["user"], e["name"]) for e in frame["tournament"]["entrants"]] == [
            (marker, DELETED_NAME),
            (bob.user, "Bob"),
        ]
        served = await get_ok(first, f"api/tournaments/{tid}")
        assert ann.user not in json.dumps(served) and "Ann" not in json.dumps(served)
        assert [e["user"] for e in served["entrants"]] == [marker, bob.user]
        live = await valkey_values(redis, keys.tournament(tid))
        assert live and traces(live, ann.user, "Ann") == []

        await org.tournament_action(tid, "cancel")
        history = first.service.history
        await wait_for(lambda: history.load_tournament(tid))
        assert traces(await stored_rows(history), ann.user, "Ann") == []
        archive = await get_ok(second, f"api/tournaments/{tid}/archive")
        assert ann.user not in json.dumps(archive) and "Ann" not in json.dumps(archive)
    finally:
        await close_all([org, ann, bob, fan])


async def test_a_ranked_attempt_that_ends_after_the_deletion_is_ranked_under_the_marker(
    make_settings: Callable[..., Settings], redis: RedisClient, clock: DayClock
) -> None:
    """Ann (account "Annie") deletes her account in the middle of her ranked attempt:
    every connection of hers closes, the guest's she played on included; when the
    attempt ends (its time limit), its row on the leaderboard is the marker's with no
    name, and nothing of the day's in Valkey names her."""
    await prepare(redis, DAY, DRAW1)
    record = record_for(DAY, DRAW1)
    slug = variant_slug(DRAW1)
    path = f"api/daily/{DAY.isoformat()}/{slug}/leaderboard"
    settings = make_settings(**FAST, daily_time_limit_seconds=3)
    async with running(settings, clock=clock) as node:
        ann = await connect_client(node.ws_url, name="Ann")
        try:
            room, _ = await start_attempt(ann)
            await play(ann, room, record.moves[:3])
            signed = await register(ann, "Annie")
            await delete_account(node, signed["token"], "annie")
            assert await closed_with(ann) == 4006

            async def ranked() -> list[Any]:
                return list((await get_ok(node, path))["rows"])

            rows = await wait_for(ranked, 15)
            assert [(r["user"], r["name"], r["won"]) for r in rows] == [
                (deleted_id(ann.user), DELETED_NAME, False)
            ]
            today = await valkey_values(redis, f"{keys.PREFIX}:{{d:{DAY.isoformat()}:{slug}}}:*")
            assert keys.daily_entries(DAY.isoformat(), slug) in today
            assert traces(today, ann.user, "Ann") == []
        finally:
            await ann.close()


def waiting_game(room: str, players: list[tuple[str, str, str, int]], ended_at: int) -> bytes:
    """Stored results (the shape `race.results.build_results` writes, without game
    records: never served here) of a finished race: `players` are (user, name, status,
    rank) in seat order."""
    ranking: list[dict[str, Any]] = [
        {
            "seat": seat,
            "user": user,
            "name": name,
            "bot": False,
            "status": status,
            "rank": rank,
            "moves": 90,
            "found": 52 if status == "won" else 20,
            "time_ms": 200_000 if status == "won" else None,
            "record": "",
            "times": [],
        }
        for seat, (user, name, status, rank) in enumerate(players)
    ]
    results = {
        "gen": 1,
        "kind": "race",
        "certified": True,
        "public": True,
        "seed": "5eed",
        "commitment": "c0ffee",
        "deal": "",
        "variant": "draw=1 passes=1 f2t=no",
        "started_at": ended_at - 300_000,
        "ended_at": ended_at,
        "ranking": ranking,
        "from": 0,
    }
    blob: bytes = msgpack.packb(results, use_bin_type=True)
    return blob


async def test_a_game_waiting_in_the_outbox_is_erased_at_once_and_archived_erased(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """A race Ann won against Bea waits in the outbox (its entry not due yet, as while
    the database is down) when Ann deletes her account: its results in Valkey are
    erased at once; once the entry falls due, the database keeps it erased, counted for
    Bea only."""
    first, second = two_nodes
    ann = await connect_client(first.ws_url, name="Ann")
    bea = await connect_client(first.ws_url, name="Bea")
    room = "waiting-room-01"
    try:
        now = await server_ms(redis)
        players = [(ann.user, "Ann", "won", 1), (bea.user, "Bea", "resigned", 2)]
        await redis.hset(keys.results(room, 1), "data", waiting_game(room, players, now))
        await redis.zadd(keys.OUTBOX, {f"{room}|1": now + 3_600_000})
        signed = await register(ann, "Annie")
        await delete_account(second, signed["token"], "annie")
        marker = deleted_id(ann.user)
        cached = await valkey_values(redis, keys.results(room, 1))
        assert cached and traces(cached, ann.user, "Ann") == []
        data = await redis.hget(keys.results(room, 1), "data")
        assert data is not None
        ranking = msgpack.unpackb(data, raw=False)["ranking"]
        assert [(r["user"], r["name"]) for r in ranking] == [
            (marker, DELETED_NAME),
            (bea.user, "Bea"),
        ]

        history = first.service.history
        assert not await history.has_game(room, 1)
        await redis.zadd(keys.OUTBOX, {f"{room}|1": 0}, xx=True)  # due now
        await wait_for(archived(history, room), 15)
        assert traces(await stored_rows(history), ann.user, "Ann") == []
        assert await history.stats(ann.user) == ({}, [])
        assert (await history.stats(marker))[0] == {}
        assert (await history.stats(bea.user))[0]
    finally:
        await close_all([ann, bea])
