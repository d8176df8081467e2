"""Races on a Valkey Cluster: two nodes, rooms on every shard, sharded pub/sub, and a
master failover mid-race that loses no acknowledged move."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from klondike_live import keys
from klondike_live.client import Client, ServerError
from klondike_live.config import Settings
from klondike_live.engine import GameRecord
from klondike_live.gateway.server import running
from klondike_live.store.connect import open_redis
from klondike_live.store.devcluster import DevCluster

from testdata import DATA

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())


async def race_across(node_a: str, node_b: str) -> tuple[str, list[Client]]:
    """Alice on node A, Bob and Carol (watching) on node B, racing once started."""
    alice = await Client.connect(node_a, name="Alice")
    bob = await Client.connect(node_b, name="Bob")
    carol = await Client.connect(node_b, name="Carol")
    room = await alice.create_race("draw=1", seats=2)
    await alice.join(room)
    await bob.join(room)
    await carol.join(room, "spectator")
    await alice.ready(room)
    await bob.ready(room)
    await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
    await alice.start(room)
    for racer in (alice, bob):
        await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
    await carol.expect(lambda m: m["t"] == "board" and m["seat"] == 1)
    return room, [alice, bob, carol]


def offsets_follow(client: Client) -> None:
    """Per board and audience, each diff is one past the last frame: no repeat, no gap."""
    last: dict[tuple[str, int, str, int], int] = {}
    for message in client.received:
        if message.get("t") not in ("board", "diff"):
            continue
        key = (message["room"], message["seat"], message["audience"], message["epoch"])
        if message["t"] == "diff" and key in last:
            assert message["off"] == last[key] + 1, (client.name, key, message["off"])
        last[key] = message["off"]


async def test_races_on_every_shard_reach_racers_and_spectators_on_other_nodes(
    make_cluster_settings: Callable[..., Settings], cluster: DevCluster
) -> None:
    """Rooms whose slots live on all three masters: moves on one node reach the
    spectator on the other, results reach everyone, and no stream repeats an offset."""
    seed = str(WON.seed)
    async with (
        running(make_cluster_settings(), seed_source=lambda: seed) as one,
        running(make_cluster_settings(), seed_source=lambda: seed) as two,
    ):
        redis = await open_redis(cluster.url)
        owners: set[str] = set()
        clients: list[Client] = []
        try:
            for _ in range(6):
                room, group = await race_across(one.ws_url, two.ws_url)
                clients += group
                alice, bob, carol = group
                owners.add(redis.get_node_from_key(keys.room(room)).name)  # type: ignore[union-attr]
                for token in WON.moves[:5]:
                    await alice.move(room, token)
                await carol.expect(
                    lambda m, r=room: (
                        m["t"] == "diff" and m["room"] == r and m["seat"] == 0 and m["off"] == 5
                    )
                )
                await alice.resign(room)
                await bob.resign(room)
                for client in group:
                    await client.expect(lambda m, r=room: m["t"] == "results" and m["room"] == r)
            assert len(owners) >= 2, "the rooms should spread over the shards"
            for client in clients:
                offsets_follow(client)
        finally:
            for client in clients:
                await client.close()
            await redis.aclose()


async def test_a_master_failover_mid_race_loses_no_acknowledged_move(
    make_cluster_settings: Callable[..., Settings], cluster: DevCluster
) -> None:
    """Kill the master that owns the room mid-race: its replica takes over; moves made
    meanwhile are refused with a retryable code, never `illegal_move`; every move that
    was acknowledged is in the store afterwards, and everyone gets the results."""
    seed = str(WON.seed)
    async with (
        running(make_cluster_settings(), seed_source=lambda: seed) as one,
        running(make_cluster_settings(), seed_source=lambda: seed) as two,
    ):
        room, clients = await race_across(one.ws_url, two.ws_url)
        alice, bob, _ = clients
        acknowledged: list[str] = []
        try:
            for token in WON.moves[:3]:
                await alice.move(room, token)
                acknowledged.append(token)
            redis = await open_redis(cluster.url)
            owner = redis.get_node_from_key(keys.room(room))  # type: ignore[union-attr]
            await redis.aclose()
            cluster.kill_master(cluster.master_ports().index(owner.port))
            for token in WON.moves[3:8]:
                move_id = alice._new_id()
                for _ in range(300):
                    try:
                        await alice.move(room, token, move_id)
                        acknowledged.append(token)
                        break
                    except ServerError as exc:
                        assert exc.code in ("unavailable", "busy"), exc.message
                        await asyncio.sleep(0.1)
                else:
                    raise AssertionError(f"{token} never acknowledged")
            cluster.wait_healthy()
            await alice.resign(room)
            await bob.resign(room)
            for client in clients:
                results = await client.expect(lambda m: m["t"] == "results", timeout=30)
            rows = {row["seat"]: row for row in results["ranking"]}
            assert rows[0]["moves"] == len(acknowledged) == 8
            for client in clients:
                offsets_follow(client)
        finally:
            for client in clients:
                await client.close()
