"""Room codes on a real Valkey: every race created gets one, it leads back to its room
while the room is open, and never to a room that is gone, finished or carries another
code; a code already taken is drawn again."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind
from klondike_live.race import codes
from klondike_live.service.codes import ATTEMPTS, RoomCodes

from race_support import start_race
from service_fixtures import SEED, SERVICE_SETTINGS, Cluster, MemoryConnection, SettingsFactory

if TYPE_CHECKING:
    from conftest import WaitFor


def service_codes(cluster: Cluster) -> RoomCodes:
    return cluster.nodes[0].service.codes


async def create(cluster: Cluster, host: MemoryConnection, **options: Any) -> str:
    request = msg.Create(
        rid=1, kind=RoomKind.RACE, variant=DRAW1, seats=2, time_limit=0, public=False
    )
    assert await cluster.request(host, dataclasses.replace(request, **options)) is None
    room = host.of_kind("created")[-1]["room"]
    assert isinstance(room, str)
    return room


async def code_of(cluster: Cluster, room: str) -> str:
    now = await cluster.race(room)
    return now.state.code


def drawing(*drawn: str) -> Iterator[str]:
    """The codes a test's allocator draws, in order (then the last one for ever)."""
    yield from drawn
    while True:
        yield drawn[-1]


async def test_a_created_race_has_a_code_that_leads_to_it(cluster: Cluster, redis: Redis) -> None:
    ann = cluster.connect("ann")
    room = await create(cluster, ann)
    code = await code_of(cluster, room)
    assert codes.is_code(code)
    assert await redis.hget(keys.code(code), "room") == room.encode()
    # The code key lives as long as the lobby (both a day on the test nodes).
    room_ttl, code_ttl = await redis.pttl(keys.room(room)), await redis.pttl(keys.code(code))
    assert room_ttl > 0 and abs(code_ttl - room_ttl) < 5_000
    assert await service_codes(cluster).resolve(code) == room
    # Every viewer's room frame shows it.
    assert await cluster.request(ann, msg.Join(room, Role.RACER)) is None
    assert ann.of_kind("room")[-1]["code"] == code
    # A second race gets a code of its own.
    other = await create(cluster, cluster.connect("bob"))
    assert await code_of(cluster, other) != code


async def test_a_solo_game_has_no_code(cluster: Cluster, redis: Redis) -> None:
    solo = await create(cluster, cluster.connect("ann"), kind=RoomKind.SOLO, seats=1)
    assert await code_of(cluster, solo) == ""
    assert [key async for key in redis.scan_iter(match="kl:code:*")] == []


async def test_a_code_follows_its_race_until_it_finishes(cluster: Cluster, redis: Redis) -> None:
    race = await start_race(cluster)
    code = await code_of(cluster, race.room)
    # Racing: the room is kept, and so is its code.
    assert await redis.pttl(keys.room(race.room)) == -1
    assert await redis.pttl(keys.code(code)) == -1
    assert await service_codes(cluster).resolve(code) == race.room
    for conn in race.racers:
        assert await cluster.request(conn, msg.Resign(race.room)) is None
    assert (await cluster.race(race.room)).state.state == "finished"
    # Finished: not resolved, and the key expires with the room.
    assert await service_codes(cluster).resolve(code) is None
    room_ttl, code_ttl = await redis.pttl(keys.room(race.room)), await redis.pttl(keys.code(code))
    assert room_ttl > 0 and code_ttl > 0 and abs(code_ttl - room_ttl) < 5_000
    # A rematch reopens the room, with the same code: it leads there again.
    assert await cluster.request(race.racers[0], msg.Rematch(race.room)) is None
    assert await code_of(cluster, race.room) == code
    assert await service_codes(cluster).resolve(code) == race.room
    assert await redis.pttl(keys.code(code)) > 0  # a lobby again: it expires with it


async def test_a_code_whose_room_is_gone_or_elsewhere_leads_nowhere(
    cluster: Cluster, redis: Redis
) -> None:
    ann = cluster.connect("ann")
    room = await create(cluster, ann)
    code = await code_of(cluster, room)
    await redis.delete(keys.room(room))  # as when the room expires
    assert await service_codes(cluster).resolve(code) is None
    assert not await redis.exists(keys.code(code))  # deleted on the way: free again
    # A code key naming a room that carries another code (or none) is not followed.
    other = await create(cluster, ann)
    await redis.hset(keys.code("QQQQQQ"), mapping={"room": other, "rev": 0})
    assert await service_codes(cluster).resolve("QQQQQQ") is None
    assert await service_codes(cluster).resolve("WWWWWW") is None  # never allocated


async def test_a_taken_code_is_drawn_again(cluster: Cluster) -> None:
    ann = cluster.connect("ann")
    service_codes(cluster).new_code = drawing("ACDEFG").__next__
    first = await create(cluster, ann)
    assert await code_of(cluster, first) == "ACDEFG"
    drawn = drawing("ACDEFG", "ACDEFG", "HJKMNP")
    service_codes(cluster).new_code = drawn.__next__
    second = await create(cluster, ann)
    assert await code_of(cluster, second) == "HJKMNP"
    assert await service_codes(cluster).resolve("ACDEFG") == first
    assert await service_codes(cluster).resolve("HJKMNP") == second


async def test_a_race_is_refused_when_every_draw_is_taken(cluster: Cluster, redis: Redis) -> None:
    ann = cluster.connect("ann")
    service_codes(cluster).new_code = drawing("ACDEFG").__next__
    await create(cluster, ann)
    taken: list[str] = []

    def draw() -> str:
        taken.append("ACDEFG")
        return "ACDEFG"

    service_codes(cluster).new_code = draw
    request = msg.Create(
        rid=2, kind=RoomKind.RACE, variant=DRAW1, seats=2, time_limit=0, public=False
    )
    assert await cluster.request(ann, request) is ErrorCode.BUSY
    assert len(taken) == ATTEMPTS
    assert len([key async for key in redis.scan_iter(match="kl:{r:*}:room")]) == 1


# ------------------------------------------------------------ a lobby that expires

LOBBY_SECONDS = 1.5


@pytest.fixture
async def brief(
    valkey_url: str, redis: Redis, make_settings: SettingsFactory, timeout_scale: float
) -> AsyncIterator[Cluster]:
    """One node whose lobbies are kept `LOBBY_SECONDS`."""

    def settings(index: int) -> Settings:
        hours = LOBBY_SECONDS * timeout_scale / 3600
        return make_settings(**SERVICE_SETTINGS, node_id=f"n{index}", lobby_hours=hours)

    async with Cluster.running(valkey_url, settings, lambda: SEED) as started:
        yield started


async def test_the_code_of_an_abandoned_lobby_expires_with_it(
    brief: Cluster, redis: Redis, wait_for: WaitFor
) -> None:
    room = await create(brief, brief.connect("ann"))
    code = await code_of(brief, room)
    assert await service_codes(brief).resolve(code) == room

    async def gone() -> bool:
        return not await redis.exists(keys.room(room)) and not await redis.exists(keys.code(code))

    await wait_for(gone)
    assert await service_codes(brief).resolve(code) is None
