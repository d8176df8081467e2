"""Friends on a Valkey Cluster, with the two players on different nodes: a follow made
through one node lists the other player's presence written by the other node (its keys
in whichever shards hold them, read in one pipeline); a challenge sent through one node
reaches the player on the other, is accepted there, and both are seated in the race;
a declined one leaves no key on any shard."""

from __future__ import annotations

from collections.abc import Callable

from klondike_live.client import Client, Message
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.store.connect import open_redis
from klondike_live.store.devcluster import DevCluster

from auditor import audit_friends
from waits import connect_client, wait_for


async def ask(client: Client, message: Message, rid: int) -> Message:
    """A request's answer (by its rid) or its error."""
    await client.send({**message, "rid": rid})
    return await client.expect(lambda m: m.get("rid") == rid and m["t"] != "pong")


async def test_presence_and_challenges_across_nodes_of_a_cluster(
    make_cluster_settings: Callable[..., Settings], cluster: DevCluster
) -> None:
    fast = {"presence_seconds": 0.2}
    async with (
        running(make_cluster_settings(**fast)) as one,
        running(make_cluster_settings(**fast)) as two,
    ):
        ann = await connect_client(one.ws_url, name="Ann")
        bob = await connect_client(two.ws_url, name="Bob")
        redis = await open_redis(cluster.url)
        try:
            follow = {"t": "follow", "user": bob.user, "name": "Bob"}
            assert (await ask(ann, follow, 1))["following"] is True

            async def bob_online() -> bool:
                listed = await ask(ann, {"t": "friends"}, 2)
                return [(f["user"], f["online"]) for f in listed["following"]] == [(bob.user, True)]

            await wait_for(bob_online)
            challenge = {"t": "challenge", "user": bob.user, "variant": "draw=1"}
            sent = await ask(ann, challenge, 3)
            assert sent["t"] == "challenge_sent"
            offer = await bob.expect(lambda m: m["t"] == "challenged")
            assert offer["user"] == ann.user and offer["name"] == "Ann"
            await bob.send({"t": "challenge_answer", "user": ann.user, "accept": True})
            ended = [
                await client.expect(lambda m: m["t"] == "challenge_ended") for client in (ann, bob)
            ]
            room = ended[0]["room"]
            assert ended[1]["room"] == room and {e["reason"] for e in ended} == {"accepted"}
            for client in (ann, bob):
                state = await client.join(room)
                seated = {s["user"] for s in state["seats"] if s}
                assert seated == {ann.user, bob.user}
            # A declined challenge leaves no key on any shard.
            assert (await ask(ann, challenge, 4))["t"] == "challenge_sent"
            await bob.expect(lambda m: m["t"] == "challenged")
            await bob.send({"t": "challenge_answer", "user": ann.user, "accept": False})
            declined = await ann.expect(lambda m: m["t"] == "challenge_ended")
            assert declined["reason"] == "declined"
            left = [key async for key in redis.scan_iter(match="kl:challenge:*")]
            assert left == []
            for client in (ann, bob):
                assert await audit_friends(redis, client)
        finally:
            for client in (ann, bob):
                await client.close()
            await redis.aclose()
