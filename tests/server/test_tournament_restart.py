"""A tournament survives restarts of the server and of Valkey: its entrants, its
committed deals and its heat's timers are in Redis (AOF), so the heat opens and is
scored after both came back (real processes, as in test_daily_restart.py)."""

from __future__ import annotations

import functools
from pathlib import Path

from klondike_live.client import Client, ServerError
from klondike_live.embedded import open_redis

from auditor import audit_clients
from daily_support import TEST_SECRET
from helpers import close_all, serve_process
from test_daily_restart import fetch, start_valkey
from waits import connect_client, scaled, wait_for


async def test_a_tournament_goes_on_after_the_server_and_valkey_restart(tmp_path: Path) -> None:
    """Created and entered before the restart; after it, the same entrants and
    commitment, the heat's room opens by its stored timer, the heat is raced and
    scored, and its archive is complete."""
    valkey_dir = tmp_path / "valkey"
    valkey = start_valkey(valkey_dir)
    try:
        async with serve_process(
            valkey.connection_url, tmp_path / "node", TEST_SECRET.decode()
        ) as served:
            org = await connect_client(served.ws_url, name="Org")
            ann = await connect_client(served.ws_url, name="Ann")
            bob = await connect_client(served.ws_url, name="Bob")
            now = org.received[0]["now"]
            tid = await org.create_tournament(
                "Restartable",
                "heats",
                ["draw=1 passes=1 f2t=no"],
                closes_at=now + 4000,
                start_at=now + 60_000,
                heats=1,
            )
            await ann.enter_tournament(tid)
            before = await bob.enter_tournament(tid)
            await close_all([org, ann, bob])
        valkey.stop(timeout=scaled(30))
        valkey = start_valkey(valkey_dir)
        async with serve_process(
            valkey.connection_url, tmp_path / "node", TEST_SECRET.decode()
        ) as served:
            shown = await fetch(served, f"api/tournaments/{tid}")
            assert shown["entrants"] == before["entrants"]
            assert shown["rounds"][0]["commitment"] == before["rounds"][0]["commitment"]
            org = await connect_client(served.ws_url, token=org.token)
            ann = await connect_client(served.ws_url, token=ann.token)
            bob = await connect_client(served.ws_url, token=bob.token)
            try:
                await org.watch_tournament(tid)
                room = await org.heat_room(tid, 1, timeout=scaled(30))

                async def joined(racer: Client) -> bool:
                    # The heat is named in the tournament a moment before its room is
                    # written (`Tournaments._open_heat`): a join that quick finds none.
                    try:
                        await racer.join(room)
                    except ServerError as exc:
                        if exc.code != "no_room":
                            raise
                        return False
                    return True

                for racer in (ann, bob):
                    await wait_for(functools.partial(joined, racer))
                await org.tournament_action(tid, "start_heat")
                for racer in (ann, bob):
                    await racer.expect(lambda m: m["t"] == "board" and m.get("room") == room)
                    await racer.move(room, "D")
                    await racer.resign(room)
                await org.expect(
                    lambda m: m["t"] == "tournament" and m["tournament"]["state"] == "finished",
                    timeout=scaled(30),
                )
                archive = await fetch(served, f"api/tournaments/{tid}/archive")
                heat = archive["rounds"][0]
                assert heat["state"] == "finished" and len(heat["results"]) == 2
                assert sorted(row["points"] for row in heat["results"]) == [1.5, 1.5]
                assert heat["seed"]
            finally:
                await close_all([org, ann, bob])
            redis = await open_redis(valkey.connection_url)
            try:
                assert await audit_clients(redis, [org, ann, bob]) > 0
            finally:
                await redis.aclose()
    finally:
        valkey.stop(timeout=scaled(30))
