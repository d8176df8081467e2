"""Quick races on a real Valkey with two nodes: the queue fills for the fill window (or
up to the seat limit), every queued player is placed in exactly one race of two or
more, once, however the nodes' matches interleave; leaving and disconnecting take the
entry out; a dead node's entries expire; a lost queue is put back at its places; a
match whose room never appears puts its players back."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from redis.asyncio import Redis

from klondike_live import keys
from klondike_live.daily.variants import DRAW1, DRAW3, variant_slug
from klondike_live.engine import Variant
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind
from klondike_live.race.room import COUNTDOWN, RACING
from klondike_live.store.connect import text

from service_fixtures import GRACE_SECONDS, Cluster, MemoryConnection

SLUG = variant_slug(DRAW1)
FILL_MS = 4_000  # the default fill window (`quick_fill_seconds`)
LEASE_MS = 10_000  # the default lease (`quick_lease_seconds`)


async def tick(cluster: Cluster, *nodes: int) -> None:
    """The quick race tick of the given nodes, at once, then settle. By default every
    node's, twice at the same time on the clock: a node whose renewal ran before
    another node wrote the race it made tells its players at its next tick (as nodes do
    every `quick_tick_seconds`), so after this every player of a race made is told."""
    chosen = nodes or tuple(range(len(cluster.nodes)))
    for _ in range(1 if nodes else 2):
        await asyncio.gather(*(cluster.nodes[i].service.quick.tick() for i in chosen))
        await cluster.settle()


async def queue(cluster: Cluster, conn: MemoryConnection, variant: Variant = DRAW1) -> None:
    assert await cluster.request(conn, msg.Queue(variant, rid=7)) is None


def matched(conn: MemoryConnection) -> list[str]:
    return [m["room"] for m in conn.of_kind("matched")]


async def waiting_users(redis: Redis, slug: str = SLUG) -> list[str]:
    return [
        text(u) for u in await redis.zrange(keys.queue_order(slug), 0, -1) if isinstance(u, bytes)
    ]


async def test_a_second_player_starts_the_fill_window_then_both_race(pair: Cluster) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await queue(pair, ann)
    first = ann.of_kind("queued")[-1]
    assert first["rid"] == 7 and first["waiting"] == 1 and first["offer"] is False
    assert first["variant"] == str(DRAW1)
    await queue(pair, bob)
    assert bob.of_kind("queued")[-1]["waiting"] == 2
    await tick(pair)
    assert ann.of_kind("queued")[-1]["waiting"] == 2  # told the count changed
    assert matched(ann) == matched(bob) == []  # the window is open
    pair.advance(FILL_MS)
    await tick(pair, 0)
    [room] = matched(ann)  # this node made it: told at once
    assert matched(bob) == []
    await tick(pair, 1)
    assert matched(bob) == [room]  # the other node told its player
    now = await pair.race(room)
    state = now.state
    assert state.kind is RoomKind.RACE and state.state in (COUNTDOWN, RACING)
    assert {s.user for _, s in state.seated()} == {"ann", "bob"}
    assert state.code and state.public_room and state.capacity == 2
    for conn in (ann, bob):
        assert await pair.request(conn, msg.Join(room, Role.RACER)) is None
    state = (await pair.race(room)).state
    assert all(seat.online for _, seat in state.seated())
    # Both have their board of the same deal.
    assert {m["seat"] for c in (ann, bob) for m in c.of_kind("board")} == {0, 1}
    assert await pair.nodes[0].redis.zcard(keys.queue_order(SLUG)) == 0


async def test_a_full_queue_races_at_once_and_the_next_waits(pair: Cluster, redis: Redis) -> None:
    people = [pair.connect(f"p{i}", node=i % 2) for i in range(5)]
    for conn in people:
        await queue(pair, conn)
    await tick(pair)  # the fill window is still open: four seats taken, a race at once
    rooms = Counter(room for conn in people for room in matched(conn))
    assert list(rooms.values()) == [4]
    assert matched(people[4]) == []  # the fifth place waits
    assert await waiting_users(redis) == ["p4"]
    assert people[4].of_kind("queued")[-1]["waiting"] == 1
    [room] = rooms
    assert (await pair.race(room)).state.capacity == 4


async def test_the_fill_window_seats_those_who_came_in_time(pair: Cluster, redis: Redis) -> None:
    ann, bob, cid, dan = (pair.connect(u, node=i % 2) for i, u in enumerate("abcd"))
    await queue(pair, ann)
    await queue(pair, bob)
    pair.advance(FILL_MS - 1_000)
    await tick(pair)
    await queue(pair, cid)  # within the window
    pair.advance(1_000)
    await tick(pair)
    room = matched(ann)[0]
    assert matched(bob) == matched(cid) == [room]
    await queue(pair, dan)  # too late: alone in the queue now
    await tick(pair)
    assert matched(dan) == [] and await waiting_users(redis) == ["d"]
    assert (await pair.race(room)).state.capacity == 3


async def test_two_hundred_players_over_two_nodes_are_each_placed_once(
    pair: Cluster, redis: Redis
) -> None:
    rng = random.Random(28)
    people: list[MemoryConnection] = []
    while len(people) < 200:
        for _ in range(min(rng.randint(1, 9), 200 - len(people))):
            conn = pair.connect(f"q{len(people)}", node=rng.randrange(2))
            people.append(conn)
            await queue(pair, conn)
        if rng.random() < 0.4:
            pair.advance(rng.choice([1_000, FILL_MS]))
        await tick(pair)  # both nodes match at once
    for _ in range(3):  # the last window closes; both nodes tell their players
        pair.advance(FILL_MS)
        await tick(pair)
    left = await waiting_users(redis)
    assert len(left) <= 1
    if left:  # one alone at the end: a last player comes
        last = pair.connect("q200", node=0)
        people.append(last)
        await queue(pair, last)
        pair.advance(FILL_MS)
        await tick(pair)
        await tick(pair)
    seated: Counter[str] = Counter()
    rooms = {room for conn in people for room in matched(conn)}
    for room in rooms:
        state = (await pair.race(room)).state
        racers = [seat.user for _, seat in state.seated()]
        assert len(racers) >= 2, f"room {room} has {racers}"
        assert len(racers) <= 4
        seated.update(racers)
    for conn in people:
        assert len(matched(conn)) == 1, f"{conn} told {matched(conn)}"
        assert seated[conn.user] == 1, f"{conn.user} seated {seated[conn.user]} times"
        (room,) = matched(conn)
        assert (await pair.race(room)).state.seat_of(conn.user) is not None
    assert sum(seated.values()) == len(people)
    assert await waiting_users(redis) == []
    assert await redis.hlen(keys.queue_placed(SLUG)) == 0  # every node told its players


async def test_leaving_and_disconnecting_take_the_entry_out(pair: Cluster, redis: Redis) -> None:
    ann, bob, cid = pair.connect("ann", node=0), pair.connect("bob", node=1), pair.connect("cid")
    await queue(pair, ann)
    await queue(pair, bob)
    assert await pair.request(ann, msg.Unqueue(rid=3)) is None
    assert ann.of_kind("unqueued")[-1] == {
        "t": "unqueued",
        "variant": str(DRAW1),
        "reason": "left",
        "rid": 3,
    }
    assert await pair.request(ann, msg.Unqueue()) is ErrorCode.NOT_QUEUED
    await queue(pair, cid)
    await pair.disconnect(cid)
    pair.advance(FILL_MS)
    await tick(pair)
    assert matched(ann) == matched(bob) == []
    assert await waiting_users(redis) == ["bob"]
    assert bob.of_kind("queued")[-1]["waiting"] == 1
    assert not await redis.exists(keys.queue_fill(SLUG))


async def test_a_player_alone_is_offered_the_machine(pair: Cluster) -> None:
    ann = pair.connect("ann")
    await queue(pair, ann)
    pair.advance(19_000)
    await tick(pair)
    assert ann.of_kind("queued")[-1]["offer"] is False
    pair.advance(1_000)
    await tick(pair)
    assert ann.of_kind("queued")[-1]["offer"] is True
    # Another player comes: no offer any more, and the race is made as usual.
    bob = pair.connect("bob", node=1)
    await queue(pair, bob)
    await tick(pair)
    latest = ann.of_kind("queued")[-1]
    assert (latest["waiting"], latest["offer"]) == (2, False)
    pair.advance(FILL_MS)
    await tick(pair)
    assert matched(ann) == matched(bob) != []


async def test_one_queue_per_connection_and_people_only(pair: Cluster) -> None:
    ann = pair.connect("ann")
    await queue(pair, ann)
    assert await pair.request(ann, msg.Queue(DRAW3)) is ErrorCode.WRONG_STATE
    assert await pair.request(ann, msg.Queue(Variant(draw=1, passes=2))) is ErrorCode.BAD_FIELD
    bot = pair.connect("bot_x")
    pair.nodes[0].service.connected(bot, bot="api")
    assert await pair.request(bot, msg.Queue(DRAW1)) is ErrorCode.BOTS_NOT_ALLOWED


async def test_a_newer_connection_of_the_account_takes_the_place(
    pair: Cluster, redis: Redis
) -> None:
    old = pair.connect("ann", node=0)
    await queue(pair, old)
    since = old.of_kind("queued")[-1]["since"]
    pair.advance(2_000)
    new = pair.connect("ann", node=1)
    await queue(pair, new)
    assert new.of_kind("queued")[-1]["since"] == since  # the same place
    await tick(pair)
    assert old.of_kind("unqueued")[-1]["reason"] == "replaced"
    assert await waiting_users(redis) == ["ann"]


async def test_a_dead_nodes_entries_expire(pair: Cluster, redis: Redis) -> None:
    bob = pair.connect("bob", node=1)
    await queue(pair, bob)
    dead = pair.nodes.pop(1)  # node 1 dies: nobody tells its service anything
    await dead.stop()
    pair.advance(LEASE_MS // 2)
    await tick(pair)
    assert await waiting_users(redis) == ["bob"]  # its lease still runs
    pair.advance(LEASE_MS // 2 + 1)
    await tick(pair)
    assert await waiting_users(redis) == []
    ann = pair.connect("ann", node=0)
    await queue(pair, ann)
    assert ann.of_kind("queued")[-1]["waiting"] == 1  # nobody to race but the dead entry
    pair.advance(FILL_MS)
    await tick(pair)
    assert matched(ann) == []


async def test_a_lost_queue_is_put_back_at_its_places(pair: Cluster, redis: Redis) -> None:
    ann, cid = pair.connect("ann", node=0), pair.connect("cid", node=1)
    await queue(pair, ann)
    pair.advance(1_000)
    await queue(pair, cid, DRAW3)
    ann_since, cid_since = ann.of_kind("queued")[-1]["since"], cid.of_kind("queued")[-1]["since"]
    await redis.flushall()  # the store lost everything, as a restart without persistence
    pair.advance(1_000)
    bob = pair.connect("bob", node=1)
    await queue(pair, bob)  # a newcomer before the nodes notice
    await tick(pair)
    assert await redis.zscore(keys.queue_order(SLUG), "ann") == ann_since
    assert await redis.zscore(keys.queue_order(variant_slug(DRAW3)), "cid") == cid_since
    assert await waiting_users(redis) == ["ann", "bob"]  # ann keeps her place ahead
    pair.advance(FILL_MS)
    await tick(pair)
    assert matched(ann) == matched(bob) != []
    assert matched(cid) == []


async def test_a_match_whose_room_never_appears_puts_its_players_back(
    pair: Cluster, redis: Redis
) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await queue(pair, ann)
    await queue(pair, bob)
    pair.advance(FILL_MS)
    # A node takes the group, then dies before it writes the room.
    store = pair.nodes[0].store
    now = pair.nodes[0].service.now_ms()
    _, group = await store.queue.match(SLUG, now, FILL_MS, 4, "never-written-room", 60_000)
    assert [e.user for e in group] == ["ann", "bob"]
    await tick(pair)
    assert matched(ann) == matched(bob) == []  # not yet: the room may be on its way
    assert await waiting_users(redis) == []
    pair.advance(5_000)
    await tick(pair)
    pair.advance(6_000)
    await tick(pair)  # the room never came: back at their places
    assert await waiting_users(redis) == ["ann", "bob"]
    pair.advance(FILL_MS)
    await tick(pair)
    [room] = matched(ann)
    assert matched(bob) == [room] and room != "never-written-room"


async def test_a_matched_player_who_never_comes_is_resigned_after_the_grace(
    pair: Cluster,
) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await queue(pair, ann)
    await queue(pair, bob)
    pair.advance(FILL_MS)
    await tick(pair)
    await tick(pair)
    [room] = matched(ann)
    assert await pair.request(ann, msg.Join(room, Role.RACER)) is None
    await pair.fire_timers(int(GRACE_SECONDS * 1000) + 1_000)
    now = await pair.race(room)
    bob_seat = now.state.seat_of("bob")
    assert bob_seat is not None
    assert now.status(bob_seat) == "resigned"


async def test_unqueue_after_a_match_answers_with_the_race(pair: Cluster) -> None:
    ann, bob = pair.connect("ann", node=0), pair.connect("bob", node=1)
    await queue(pair, ann)
    await queue(pair, bob)
    pair.advance(FILL_MS)
    await tick(pair, 0)  # node 0 made the race; bob's node has not told him yet
    assert await pair.request(bob, msg.Unqueue(rid=5)) is ErrorCode.NOT_QUEUED
    assert matched(bob) == matched(ann) != []
    assert bob.of_kind("unqueued") == []
