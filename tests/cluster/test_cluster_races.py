"""Races on a Valkey Cluster: two nodes, rooms on every shard, sharded pub/sub, and a
master failover mid-race that loses no acknowledged move."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from redis.asyncio.cluster import RedisCluster

from klondike_live import keys
from klondike_live.client import Client, Message, ServerError
from klondike_live.config import Settings
from klondike_live.engine import GameRecord
from klondike_live.gateway.server import running
from klondike_live.store.connect import open_redis
from klondike_live.store.devcluster import DevCluster

from racing import assert_streams_follow, start_race
from testdata import DATA
from waits import connect_client, scaled

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())


async def race_across(node_a: str, node_b: str) -> tuple[str, list[Client]]:
    """Alice on node A, Bob and Carol (watching) on node B, racing once started."""
    alice = await connect_client(node_a, name="Alice")
    bob = await connect_client(node_b, name="Bob")
    carol = await connect_client(node_b, name="Carol")
    room = await start_race([alice, bob], [carol])
    return room, [alice, bob, carol]


async def open_cluster(url: str) -> RedisCluster:
    """A client of the cluster a node's `url` belongs to (`open_redis` finds it)."""
    client = await open_redis(url)
    assert isinstance(client, RedisCluster), "open_redis gave no cluster client"
    return client


def fifth_move_of_seat_0(room: str) -> Callable[[Message], bool]:
    """The diff of `room` that shows seat 0 after its fifth move."""
    return lambda m: m["t"] == "diff" and m["room"] == room and m["seat"] == 0 and m["off"] == 5


def reactions_of(room: str, counts: dict[str, int]) -> Callable[[Message], bool]:
    """The reactions frame of `room` with these counts."""
    return lambda m: m["t"] == "reactions" and m["room"] == room and m["counts"] == counts


def results_of(room: str) -> Callable[[Message], bool]:
    """The results of `room`."""
    return lambda m: m["t"] == "results" and m["room"] == room


async def test_races_on_every_shard_reach_racers_and_spectators_on_other_nodes(
    make_cluster_settings: Callable[..., Settings], cluster: DevCluster
) -> None:
    """Rooms whose slots live on all three masters: moves on one node reach the
    spectator on the other, a reaction and the results reach everyone, and no stream
    repeats an offset."""
    seed = str(WON.seed)
    async with (
        running(make_cluster_settings(), seed_source=lambda: seed) as one,
        running(make_cluster_settings(), seed_source=lambda: seed) as two,
    ):
        redis = await open_cluster(cluster.url)
        owners: set[str] = set()
        clients: list[Client] = []
        try:
            for _ in range(6):
                room, group = await race_across(one.ws_url, two.ws_url)
                clients += group
                alice, bob, carol = group
                owner = redis.get_node_from_key(keys.room(room))
                assert owner is not None, room
                owners.add(owner.name)
                for token in WON.moves[:5]:
                    await alice.move(room, token)
                await carol.expect(fifth_move_of_seat_0(room))
                # A reaction travels through the room's shard to both nodes' viewers.
                await alice.show_reactions(room)
                await carol.react(room, "fire")
                for client in (alice, carol):
                    await client.expect(reactions_of(room, {"fire": 1}))
                await alice.resign(room)
                await bob.resign(room)
                for client in group:
                    await client.expect(results_of(room))
            assert len(owners) >= 2, "the rooms should spread over the shards"
            for client in clients:
                assert_streams_follow(client)
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
            redis = await open_cluster(cluster.url)
            owner = redis.get_node_from_key(keys.room(room))
            await redis.aclose()
            assert owner is not None, room
            cluster.kill_master(cluster.master_ports().index(int(owner.port)))
            for token in WON.moves[3:8]:
                move_id = alice._new_id()
                for _ in range(300):
                    try:
                        await alice.move(room, token, move_id)
                        acknowledged.append(token)
                        break
                    except ServerError as exc:
                        assert exc.code in ("unavailable", "busy"), exc.message
                        await asyncio.sleep(scaled(0.1))  # a retry's pause
                else:
                    raise AssertionError(f"{token} never acknowledged")
            cluster.wait_healthy()
            await alice.resign(room)
            await bob.resign(room)
            for client in clients:
                results = await client.expect(lambda m: m["t"] == "results", timeout=scaled(30))
            rows = {row["seat"]: row for row in results["ranking"]}
            assert rows[0]["moves"] == len(acknowledged) == 8
            for client in clients:
                assert_streams_follow(client)
        finally:
            for client in clients:
                await client.close()
