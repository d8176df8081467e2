"""A Valkey Cluster that asks for a password: the nodes reach every shard (the store's
node clients, the sharded subscriber) with the credentials of the one URL they got."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from klondike_live.config import Settings
from klondike_live.engine import GameRecord
from klondike_live.gateway.server import running
from klondike_live.store.devcluster import DevCluster

from racing import assert_streams_follow, start_race
from testdata import DATA
from waits import connect_client

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCluster]:
    """3 masters, no replicas, a password (the default user may only PING)."""
    directory = tmp_path_factory.mktemp("locked")
    with DevCluster(directory, replicas=0, password="a-cluster-password") as cluster:
        yield cluster


async def test_a_race_across_two_nodes_on_a_cluster_with_a_password(
    make_settings: Callable[..., Settings], locked: DevCluster, tmp_path: Path
) -> None:
    """The URL's user and password reach every shard: a race across two nodes plays to
    its results, and the spectator on the other node sees every move in order."""
    fast = {
        "redis_url": locked.url,
        "pool_target": 0,
        "daily_prepare_seconds": 0,
        "countdown_seconds": 0.2,
        "tick_seconds": 0.05,
    }
    seed = str(WON.seed)
    async with (
        running(make_settings(**fast), seed_source=lambda: seed) as one,
        running(make_settings(**fast), seed_source=lambda: seed) as two,
    ):
        alice = await connect_client(one.ws_url, name="Alice")
        bob = await connect_client(two.ws_url, name="Bob")
        carol = await connect_client(two.ws_url, name="Carol")
        clients = [alice, bob, carol]
        try:
            room = await start_race([alice, bob], [carol])
            for token in WON.moves[:4]:
                await alice.move(room, token)
            await alice.resign(room)
            await bob.resign(room)
            for client in clients:
                results = await client.expect(lambda m: m["t"] == "results")
            assert sorted(row["moves"] for row in results["ranking"]) == [0, 4]
            for client in clients:
                assert_streams_follow(client)
        finally:
            for client in clients:
                await client.close()
