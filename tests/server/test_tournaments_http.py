"""Tournaments end to end: websocket clients organize, enter and race a heat on a real
node; the HTTP API lists it, shows it, its standings and its archive."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from klondike_live.client import Message, ServerError
from klondike_live.store.connect import RedisClient

from auditor import http_audit
from helpers import WON, close_all, node
from test_http_api import get, get_ok
from waits import connect_client, scaled

__all__ = ["http_audit", "node"]  # the fixtures, imported for pytest


async def server_ms(redis: RedisClient) -> int:
    seconds, micros = await redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


async def test_a_heat_over_websockets_and_its_archive_over_http(
    node: Any, redis: RedisClient
) -> None:
    """The organizer creates a one-heat tournament, two players enter and race it (one
    wins the deal, the other resigns); its page updates for a watcher, and the HTTP
    API shows the tournament, its standings and, once over, its archive with the seed
    beside its commitment and a replay for each result."""
    org = await connect_client(node.ws_url, name="Org")
    ann = await connect_client(node.ws_url, name="Ann")
    bob = await connect_client(node.ws_url, name="Bob")
    fan = await connect_client(node.ws_url, name="Fan")
    try:
        now = await server_ms(redis)
        tid = await org.create_tournament(
            "Lunch heat",
            "heats",
            ["draw=1 passes=1 f2t=no"],
            public=True,
            closes_at=now + 1500,
            start_at=now + 60_000,  # its room opens as registration closes
            heats=1,
        )
        status, _, body = await get(node, f"api/tournaments/{tid}/archive")
        assert status == 409 and body["error"] == "not_over"
        await ann.enter_tournament(tid)
        shown = await bob.enter_tournament(tid)
        assert [e["name"] for e in shown["entrants"]] == ["Ann", "Bob"]
        with_fan = await fan.watch_tournament(tid)
        commitment = with_fan["rounds"][0]["commitment"]
        assert len(commitment) == 64 and "seed" not in with_fan["rounds"][0]
        listed = await get_ok(node, "api/tournaments")
        assert [t["id"] for t in listed] == [tid] and listed[0]["entrants"] == 2
        refused = False
        try:
            await fan.tournament_action(tid, "start_heat")
        except ServerError as exc:
            refused = exc.code == "not_host"
        assert refused
        await org.watch_tournament(tid)
        room = await org.heat_room(tid, 1, timeout=scaled(30))  # registration closes: it opens
        for racer in (ann, bob):
            joined = await racer.join(room)
            assert joined["tournament"] == {"id": tid, "heat": 1}
        await org.tournament_action(tid, "start_heat")
        await ann.expect(lambda m: m["t"] == "board" and m.get("room") == room, timeout=scaled(30))
        for move_id, token in enumerate(WON.moves, start=1):
            answer = await ann.move(room, token, move_id)
            if answer.get("status") == "won":
                break  # a position won by force finishes at once
        await bob.move(room, "D")  # he played the heat (a racer with no move scores nothing)
        await bob.resign(room)
        await fan.expect(
            lambda m: m["t"] == "tournament" and m["tournament"]["state"] == "finished",
            timeout=scaled(30),
        )
        final = fan.tournament(tid)
        assert final is not None
        assert [(s["name"], s["points"]) for s in final["standings"]] == [("Ann", 2), ("Bob", 1)]
        standings = await get_ok(node, f"api/tournaments/{tid}/standings")
        assert standings["standings"] == final["standings"]
        archive = await get_ok(node, f"api/tournaments/{tid}/archive")
        heat = archive["rounds"][0]
        assert heat["commitment"] == commitment and heat["seed"] == str(WON.seed)
        for row in heat["results"]:
            status, _, replay = await get(node, row["replay"].removeprefix("/"))
            assert status == 200 and replay["gen"] == 1, row
    finally:
        await close_all([org, ann, bob, fan])


def answers(rid: int) -> Callable[[Message], bool]:
    return lambda m: bool(m.get("rid") == rid)


async def test_bad_tournament_requests_get_clear_errors(node: Any, redis: RedisClient) -> None:
    """Settings that do not make a tournament, an unknown id and a malformed path get a
    stable code and a readable message, never a crash."""
    org = await connect_client(node.ws_url, name="Org")
    try:
        now = await server_ms(redis)
        cases: list[tuple[dict[str, Any], str]] = [
            ({"format": "heats", "variants": ["draw=1"], "closes_at": now - 1, "start_at": now,
              "heats": 1}, "bad_field"),
            ({"format": "heats", "variants": ["draw=1"], "closes_at": now + 5000,
              "start_at": now, "heats": 1}, "bad_field"),
            ({"format": "heats", "variants": ["draw=1", "draw=3"], "closes_at": now + 5000,
              "start_at": now + 9000, "heats": 1}, "bad_field"),
            ({"format": "series", "variants": ["draw=1"], "closes_at": now + 5000,
              "from": "2020-01-01", "to": "2020-01-02"}, "bad_field"),
            ({"format": "series", "variants": ["draw=1"], "closes_at": now + 5000,
              "from": "2999-01-01", "to": "2999-03-01"}, "bad_field"),
        ]  # fmt: skip
        for fields, code in cases:
            rid = org._new_id()
            message = {"t": "tournament_create", "rid": rid, "name": "X", **fields}
            await org.send(message)
            answer = await org.expect(answers(rid), timeout=scaled(10))
            assert answer["t"] == "error" and answer["code"] == code, (fields, answer)
            assert answer["msg"], answer
        try:
            await org.watch_tournament("no-such-tournament")
            raise AssertionError("watched a tournament that does not exist")
        except ServerError as exc:
            assert exc.code == "no_room"
        for path in (
            "api/tournaments/x",
            "api/tournaments/no-such-tournament",
            "api/tournaments/a/b/c",
        ):
            status, _, body = await get(node, path)
            assert status == 404 and body == {"error": "not_found"}, path
    finally:
        await org.close()
