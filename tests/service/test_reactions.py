"""Reactions through the live service on two nodes: who may send them, the rate limit,
and one `reactions` frame per room and window to each viewer that has them on.

The nodes' reaction windows run on a clock the test moves by hand (`StepClock`), so
"many reactions within one second" is exactly that, whatever the machine's speed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Reaction, Role
from klondike_live.service.reactions import BURST, RATE, WINDOW

from race_support import start_race
from service_fixtures import Cluster, MemoryConnection
from waits import wait_for


class StepClock:
    """A monotonic clock that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def use_clock(cluster: Cluster) -> StepClock:
    clock = StepClock()
    for node in cluster.nodes:
        node.service.reactions.clock = clock
    return clock


async def reactions_settled(cluster: Cluster) -> None:
    """Every node sent what its windows allow at the clock's time, and heard what the
    others published."""
    for _ in range(3):
        await wait_for(lambda: not any(n.service.reactions.busy() for n in cluster.nodes))
        for node in cluster.nodes:
            await node.barrier.cross(node.redis)


async def windows_end(cluster: Cluster, clock: StepClock) -> None:
    """Time passes until every window ended, and the nodes settle. What waited goes as
    its window ends, which opens another: published (a window), heard and shown (one
    more), then a window with nothing in it."""
    for _ in range(3):
        clock.now += WINDOW
        await reactions_settled(cluster)
    await cluster.settle()


def reaction_frames(conn: MemoryConnection) -> list[dict[str, Any]]:
    return conn.of_kind("reactions")


def total(conn: MemoryConnection) -> Counter[str]:
    counts: Counter[str] = Counter()
    for frame in reaction_frames(conn):
        counts.update(frame["counts"])
    return counts


async def react(
    cluster: Cluster, conn: MemoryConnection, room: str, reaction: Reaction
) -> ErrorCode | None:
    return await cluster.request(conn, msg.React(room, reaction), settle=False)


async def test_a_crowd_on_two_nodes_costs_each_viewer_one_frame_a_window(pair: Cluster) -> None:
    """Twelve spectators on two nodes react within one window: every spectator with
    reactions on gets at most one frame per window, and the frames add up to exactly
    what was sent; a spectator who turned them off, and racers (off by default), get
    none; a racer still playing is refused, one whose board is done may react."""
    race = await start_race(pair, spectators=())
    ann, bob = race.racers
    crowd = [pair.connect(f"fan{i}", node=i % 2) for i in range(12)]
    for fan in crowd:
        assert await pair.request(fan, msg.Join(race.room, Role.SPECTATOR)) is None
    quiet = pair.connect("quiet", node=1)
    assert await pair.request(quiet, msg.Join(race.room, Role.SPECTATOR, reactions=False)) is None
    assert await pair.request(bob, msg.Resign(race.room)) is None
    clock = use_clock(pair)

    sent: Counter[str] = Counter()
    for fan in crowd:
        for reaction in (Reaction.CLAP, Reaction.FIRE, Reaction.CLAP):
            assert await react(pair, fan, race.room, reaction) is None
            sent[reaction] += 1
    assert await react(pair, bob, race.room, Reaction.PARTY) is None  # its board is done
    sent[Reaction.PARTY] += 1
    assert await react(pair, ann, race.room, Reaction.WOW) is ErrorCode.STILL_PLAYING

    seen = {fan.conn_id: 0 for fan in crowd}
    for _ in range(4):
        await reactions_settled(pair)
        for fan in crowd:
            arrived = len(reaction_frames(fan))
            assert arrived - seen[fan.conn_id] <= 1, f"{fan!r}: two frames in one window"
            seen[fan.conn_id] = arrived
        clock.now += WINDOW
    await windows_end(pair, clock)

    for fan in crowd:
        assert total(fan) == sent, fan
        assert all(
            f["room"] == race.room and set(f) == {"t", "room", "counts"}
            for f in fan.received
            if f["t"] == "reactions"
        )
        assert len(reaction_frames(fan)) <= 4
    for conn in (quiet, ann, bob):
        assert reaction_frames(conn) == [], conn


async def test_reactions_are_rate_limited_per_connection(cluster: Cluster) -> None:
    """A burst of `BURST` goes through, the next is refused with `rate_limited`, and a
    reaction is allowed again once the bucket refilled one."""
    race = await start_race(cluster)
    (sue,) = race.spectators
    clock = use_clock(cluster)
    for _ in range(BURST):
        assert await react(cluster, sue, race.room, Reaction.WOW) is None
    assert await react(cluster, sue, race.room, Reaction.WOW) is ErrorCode.RATE_LIMITED
    clock.now += 1 / RATE
    assert await react(cluster, sue, race.room, Reaction.WOW) is None
    assert await react(cluster, sue, race.room, Reaction.WOW) is ErrorCode.RATE_LIMITED
    await windows_end(cluster, clock)
    assert total(sue) == {"wow": BURST + 1}


async def test_reactions_follow_each_viewer_s_setting(cluster: Cluster) -> None:
    """A racer turns reactions on and gets them; a spectator turns them off and gets no
    more; only a viewer of the room may react or choose."""
    race = await start_race(cluster, spectators=("sue", "tom"))
    ann, _bob = race.racers
    sue, tom = race.spectators
    clock = use_clock(cluster)
    assert await cluster.request(ann, msg.ShowReactions(race.room, True)) is None
    assert await cluster.request(tom, msg.ShowReactions(race.room, False)) is None
    assert await react(cluster, sue, race.room, Reaction.SAD) is None
    await windows_end(cluster, clock)
    assert total(ann) == total(sue) == {"sad": 1}
    assert reaction_frames(tom) == []

    stranger = cluster.connect("zed")
    assert await react(cluster, stranger, race.room, Reaction.SAD) is ErrorCode.NOT_IN_ROOM
    show = msg.ShowReactions(race.room, True)
    assert await cluster.request(stranger, show) is ErrorCode.NOT_IN_ROOM


async def test_a_racer_may_react_once_the_race_is_over(cluster: Cluster) -> None:
    """Both racers resign: the race is over, and its racers may react (one that turned
    them on sees them)."""
    race = await start_race(cluster)
    ann, bob = race.racers
    (sue,) = race.spectators
    clock = use_clock(cluster)
    assert await react(cluster, ann, race.room, Reaction.LAUGH) is ErrorCode.STILL_PLAYING
    for racer in race.racers:
        assert await cluster.request(racer, msg.Resign(race.room)) is None
    assert (await cluster.race(race.room)).finished
    assert await cluster.request(bob, msg.ShowReactions(race.room, True)) is None
    assert await react(cluster, ann, race.room, Reaction.LAUGH) is None
    await windows_end(cluster, clock)
    assert total(bob) == total(sue) == {"laugh": 1}
    assert reaction_frames(ann) == []
