"""Friends on a real Valkey with two nodes: follows and the friends list with presence
read across nodes (a private room never named); a challenge accepted seats both in a
race, declined or expired it leaves no key; one pending per pair; blocks refuse follows
and challenges both ways and hide the blocked player from the blocker's lists."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind

from auditor import audit_friends
from service_fixtures import SEED, SERVICE_SETTINGS, Cluster, MemoryConnection
from waits import wait_for


async def audited(cluster: Cluster, redis: Redis) -> None:
    """The leak auditor reads every friends frame the cluster's clients got."""
    checked = 0
    for conn in cluster.connections:
        checked += await audit_friends(redis, conn)
    assert checked


async def refresh(cluster: Cluster) -> None:
    """Every node renews its players' presence."""
    for node in cluster.nodes:
        await node.service.friends.refresh()


async def friends(cluster: Cluster, conn: MemoryConnection) -> dict[str, Any]:
    assert await cluster.request(conn, msg.FriendsList(rid=3)) is None
    return conn.of_kind("friends")[-1]


async def relate(
    cluster: Cluster, conn: MemoryConnection, action: str, user: str, name: str | None = None
) -> ErrorCode | None:
    kinds: dict[str, type[msg.Follow | msg.Unfollow | msg.Block | msg.Unblock]] = {
        "follow": msg.Follow,
        "unfollow": msg.Unfollow,
        "block": msg.Block,
        "unblock": msg.Unblock,
    }
    return await cluster.request(conn, kinds[action](user, name, rid=5))


async def lobby(cluster: Cluster, host: MemoryConnection, *, public: bool) -> str:
    """A race room the host made and joined (its lobby); its id."""
    create = msg.Create(
        rid=1, kind=RoomKind.RACE, variant=DRAW1, seats=2, time_limit=0, public=public
    )
    assert await cluster.request(host, create) is None
    room = host.of_kind("created")[-1]["room"]
    assert isinstance(room, str)
    assert await cluster.request(host, msg.Join(room, Role.RACER)) is None
    return room


async def challenge_keys(redis: Redis) -> list[bytes]:
    return [k async for k in redis.scan_iter(match=f"{keys.PREFIX}:challenge:*")]


async def test_follows_and_presence_across_nodes(pair: Cluster, redis: Redis) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    cy = pair.connect("cy", node=1)
    assert await relate(pair, ann, "follow", "bob", "Bob") is None
    assert ann.of_kind("relation")[-1] == {
        "t": "relation",
        "user": "bob",
        "following": True,
        "blocked": False,
        "rid": 5,
    }
    assert await relate(pair, ann, "follow", "cy", "Cy") is None
    assert await relate(pair, ann, "follow", "ann") is ErrorCode.NOT_YOURSELF
    listed = await friends(pair, ann)
    assert [(f["user"], f["online"]) for f in listed["following"]] == [
        ("cy", False),
        ("bob", False),
    ]
    assert (await friends(pair, bob))["followers"] == [{"user": "ann", "name": "Ann"}]
    # Bob hosts a public lobby, Cy a private one: on node 1, read from node 0.
    public = await lobby(pair, bob, public=True)
    await lobby(pair, cy, public=False)
    await refresh(pair)
    by_user = {f["user"]: f for f in (await friends(pair, ann))["following"]}
    assert by_user["bob"] == {
        "user": "bob",
        "name": "Bob",
        "online": True,
        "doing": "lobby",
        "room": public,
    }
    assert by_user["cy"] == {"user": "cy", "name": "Cy", "online": True, "doing": "lobby"}
    await pair.disconnect(cy)
    by_user = {f["user"]: f for f in (await friends(pair, ann))["following"]}
    assert by_user["cy"]["online"] is False and "doing" not in by_user["cy"]
    assert await relate(pair, ann, "unfollow", "bob") is None
    assert [f["user"] for f in (await friends(pair, ann))["following"]] == ["cy"]
    await audited(pair, redis)


async def test_a_challenge_accepted_seats_both_in_a_private_race(
    pair: Cluster, redis: Redis
) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    bob_too = pair.connect("bob", node=0)
    await refresh(pair)
    assert await pair.request(ann, msg.Challenge("bob", DRAW3)) is ErrorCode.NOT_FOLLOWING
    await relate(pair, ann, "follow", "bob", "Bob")
    assert await pair.request(ann, msg.Challenge("bob", DRAW3, rid=9)) is None
    sent = ann.of_kind("challenge_sent")[-1]
    assert sent["user"] == "bob" and sent["variant"] == str(DRAW3) and sent["rid"] == 9
    for conn in (bob, bob_too):  # every connection of Bob, on both nodes
        [offer] = conn.of_kind("challenged")
        assert offer == {
            "t": "challenged",
            "user": "ann",
            "name": "Ann",
            "variant": str(DRAW3),
            "expires_at": sent["expires_at"],
        }
    again = await pair.request(ann, msg.Challenge("bob", DRAW1))
    assert again is ErrorCode.CHALLENGE_PENDING
    assert await pair.request(bob, msg.Challenge("ann", DRAW1)) is ErrorCode.NOT_FOLLOWING
    # The challenger cannot answer its own challenge.
    assert await pair.request(ann, msg.ChallengeAnswer("bob", True)) is ErrorCode.NO_CHALLENGE
    assert await pair.request(bob, msg.ChallengeAnswer("ann", True)) is None
    [ended] = ann.of_kind("challenge_ended")
    room = ended["room"]
    assert ended == {"t": "challenge_ended", "user": "bob", "reason": "accepted", "room": room}
    assert bob.of_kind("challenge_ended") == [
        {"t": "challenge_ended", "user": "ann", "reason": "accepted", "room": room}
    ]
    assert await pair.request(bob_too, msg.ChallengeAnswer("ann", True)) is ErrorCode.NO_CHALLENGE
    assert await challenge_keys(redis) == []
    state = (await pair.race(room)).state
    assert state.kind is RoomKind.RACE and not state.public_room and state.variant == DRAW3
    assert {s.user for _, s in state.seated()} == {"ann", "bob"}
    for conn in (ann, bob):
        assert await pair.request(conn, msg.Join(room, Role.RACER)) is None
    await refresh(pair)
    by_user = {f["user"]: f for f in (await friends(pair, ann))["following"]}
    assert by_user["bob"]["doing"] == "racing" and "room" not in by_user["bob"]
    await audited(pair, redis)


async def test_a_declined_challenge_leaves_nothing(pair: Cluster, redis: Redis) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await refresh(pair)
    await relate(pair, ann, "follow", "bob", "Bob")
    assert await pair.request(ann, msg.Challenge("bob", DRAW1)) is None
    assert len(await challenge_keys(redis)) == 1
    assert await pair.request(bob, msg.ChallengeAnswer("ann", False)) is None
    assert ann.of_kind("challenge_ended") == [
        {"t": "challenge_ended", "user": "bob", "reason": "declined"}
    ]
    assert bob.of_kind("challenge_ended")[-1]["reason"] == "declined"
    assert await challenge_keys(redis) == []
    assert await pair.request(ann, msg.Challenge("bob", DRAW1)) is None  # free again
    await audited(pair, redis)


async def test_challenging_a_player_not_online_is_refused(pair: Cluster, redis: Redis) -> None:
    ann = pair.connect("ann", node=0)
    await relate(pair, ann, "follow", "bob", "Bob")
    assert await pair.request(ann, msg.Challenge("bob", DRAW1)) is ErrorCode.NOT_ONLINE
    await audited(pair, redis)


@pytest.fixture
async def quick_expiry(
    valkey_url: str, redis: Redis, make_settings: Callable[..., Settings]
) -> AsyncIterator[Cluster]:
    """Two nodes whose challenges wait one second."""

    def settings(index: int) -> Settings:
        return make_settings(**SERVICE_SETTINGS, node_id=f"n{index}", challenge_seconds=1.0)

    async with Cluster.running(valkey_url, settings, lambda: SEED, nodes=2) as started:
        yield started


async def test_an_expired_challenge_leaves_nothing(quick_expiry: Cluster, redis: Redis) -> None:
    pair = quick_expiry
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await refresh(pair)
    await relate(pair, ann, "follow", "bob", "Bob")
    assert await pair.request(ann, msg.Challenge("bob", DRAW1)) is None
    [key] = await challenge_keys(redis)
    assert 0 < await redis.pttl(key) <= 1000

    async def gone() -> bool:
        return await redis.exists(key) == 0

    await wait_for(gone, 5)
    assert await pair.request(bob, msg.ChallengeAnswer("ann", True)) is ErrorCode.NO_CHALLENGE
    assert await challenge_keys(redis) == []
    await audited(quick_expiry, redis)


async def test_a_block_refuses_follows_and_challenges_and_hides(
    pair: Cluster, redis: Redis
) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await refresh(pair)
    await relate(pair, ann, "follow", "bob", "Bob")
    await relate(pair, bob, "follow", "ann", "Ann")
    assert await pair.request(bob, msg.Challenge("ann", DRAW1)) is None
    assert await relate(pair, ann, "block", "bob", "Bob") is None
    assert ann.of_kind("relation")[-1]["blocked"] is True
    assert await challenge_keys(redis) == []  # the pending challenge withdrawn
    listed = await friends(pair, ann)
    assert listed["following"] == listed["followers"] == []
    assert listed["blocked"] == [{"user": "bob", "name": "Bob"}]
    assert (await friends(pair, bob))["following"] == []
    assert await relate(pair, bob, "follow", "ann") is ErrorCode.BLOCKED
    assert await relate(pair, ann, "follow", "bob") is ErrorCode.BLOCKED
    assert await pair.request(bob, msg.Challenge("ann", DRAW1)) is ErrorCode.BLOCKED
    assert await pair.request(ann, msg.Challenge("bob", DRAW1)) is ErrorCode.BLOCKED
    assert await relate(pair, ann, "unblock", "bob") is None
    assert await relate(pair, bob, "follow", "ann") is None
    assert (await friends(pair, ann))["followers"] == [{"user": "bob", "name": "Bob"}]
    await audited(pair, redis)


class Recorded:
    """Frames a client is said to have received (for the auditor's own checks)."""

    def __init__(self, user: str, received: list[dict[str, Any]]) -> None:
        self.user = user
        self.received = received


async def test_the_auditor_refuses_a_friends_frame_that_says_too_much(
    pair: Cluster, redis: Redis
) -> None:
    ann, bob, cy = (pair.connect(u, node=0) for u in ("ann", "bob", "cy"))
    await refresh(pair)
    await relate(pair, ann, "follow", "bob", "Bob")
    assert await pair.request(ann, msg.Challenge("bob", DRAW1)) is None
    assert await pair.request(bob, msg.ChallengeAnswer("ann", True)) is None
    [ended] = ann.of_kind("challenge_ended")
    # Cy is not seated in that race: a frame naming it to Cy is a leak.
    with pytest.raises(AssertionError, match="not seated"):
        await audit_friends(redis, Recorded("cy", [ended]))
    with pytest.raises(AssertionError, match="fields"):
        await audit_friends(redis, Recorded("ann", [{**ended, "seed": "00"}]))
    private = {"user": "bob", "name": "Bob", "online": True, "doing": "racing"}
    listing = {"t": "friends", "rid": 1, "followers": [], "blocked": []}
    with pytest.raises(AssertionError, match="private room"):
        await audit_friends(
            redis, Recorded("cy", [{**listing, "following": [{**private, "room": ended["room"]}]}])
        )
    assert cy.of_kind("challenged") == cy.of_kind("challenge_ended") == []  # only the two
    await audited(pair, redis)
