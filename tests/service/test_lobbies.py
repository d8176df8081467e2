"""Lobbies expire: an abandoned lobby is gone after `lobby_hours`, and so is its entry in
the public list; a lobby that changes is kept from its last change; a dealt race is kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.kinds import Role, RoomKind

from service_fixtures import SEED, SERVICE_SETTINGS, Cluster, MemoryConnection, SettingsFactory

if TYPE_CHECKING:
    from conftest import WaitFor

LOBBY_SECONDS = 1.5  # a lobby is kept this long after its last change (times the scale)


@pytest.fixture
def lobby_ms(timeout_scale: float) -> int:
    return round(LOBBY_SECONDS * 1000 * timeout_scale)


@pytest.fixture
async def brief(
    valkey_url: str, redis: Redis, make_settings: SettingsFactory, lobby_ms: int
) -> AsyncIterator[Cluster]:
    """One node whose lobbies are kept `lobby_ms`."""

    def settings(index: int) -> Settings:
        hours = lobby_ms / 3_600_000
        return make_settings(**SERVICE_SETTINGS, node_id=f"n{index}", lobby_hours=hours)

    async with Cluster.running(valkey_url, settings, lambda: SEED) as started:
        yield started


async def public_race(cluster: Cluster, host: MemoryConnection) -> str:
    create = msg.Create(
        rid=1, kind=RoomKind.RACE, variant=DRAW1, seats=2, time_limit=0, public=True
    )
    assert await cluster.request(host, create) is None
    room = host.of_kind("created")[-1]["room"]
    assert isinstance(room, str)
    return room


async def listed(cluster: Cluster) -> list[str]:
    return [row["room"] for row in await cluster.nodes[0].service.queries.public_rooms()]


async def test_an_abandoned_lobby_expires_and_leaves_the_public_list(
    brief: Cluster, redis: Redis, wait_for: WaitFor, lobby_ms: int
) -> None:
    ann = brief.connect("ann")
    room = await public_race(brief, ann)
    assert await listed(brief) == [room]
    assert 0 < await redis.pttl(keys.room(room)) <= lobby_ms

    async def gone() -> bool:
        return await listed(brief) == [] and not await redis.exists(keys.room(room))

    await wait_for(gone)
    assert await redis.zcard(keys.PUBLIC_ROOMS) == 0  # pruned, not only hidden


async def test_a_lobby_is_kept_from_its_last_change_and_a_dealt_race_for_good(
    brief: Cluster, redis: Redis, wait_for: WaitFor, lobby_ms: int
) -> None:
    ann, bob = brief.connect("ann"), brief.connect("bob")
    room = await public_race(brief, ann)
    first = await redis.zscore(keys.PUBLIC_ROOMS, room)
    assert first is not None

    async def aged() -> bool:  # some of the lobby's time has passed
        return 0 < await redis.pttl(keys.room(room)) < lobby_ms * 3 // 4

    await wait_for(aged)
    for conn in (ann, bob):
        assert await brief.request(conn, msg.Join(room=room, role=Role.RACER)) is None
    assert await redis.pttl(keys.room(room)) > lobby_ms * 3 // 4  # the join was a change
    changed = await redis.zscore(keys.PUBLIC_ROOMS, room)
    assert changed is not None and changed > first
    claims = [keys.connection(room, user) for user in ("ann", "bob")]
    for conn in (ann, bob):
        assert await brief.request(conn, msg.Ready(room=room, ready=True)) is None
    assert await brief.request(ann, msg.Start(room=room)) is None
    assert await redis.pttl(keys.room(room)) == -1
    assert [await redis.pttl(claim) for claim in claims] == [-1, -1]
    assert await listed(brief) == []
