"""Races set up through the service, and moves chosen from the engine's replay.

    race = await start_race(cluster, racers=("ann", "bob"), spectators=("sue",))
    token = await play(cluster, race.racers[0], race.room)   # a legal move, acknowledged

Every request goes through `Cluster.request`, so every frame is checked as it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

from klondike_live.engine import Board, Deal, Move
from klondike_live.engine.moves import DRAW, RECYCLE
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.kinds import Role
from klondike_live.race.room import COUNTDOWN, RACING

from service_checks import RaceNow
from service_fixtures import Cluster, MemoryConnection


@dataclass
class Race:
    """A started race: its room, racers (seat order) and spectators."""

    room: str
    racers: list[MemoryConnection]
    spectators: list[MemoryConnection]


async def start_race(
    cluster: Cluster,
    *,
    racers: tuple[str, ...] = ("ann", "bob"),
    spectators: tuple[str, ...] = ("sue",),
    spectator_node: int = 0,
    time_limit: int = 0,
) -> Race:
    """The first racer creates a race, everyone joins, the racers ready, the host starts;
    returns once the start was revealed and the begin timer ran."""
    conns = [cluster.connect(user) for user in racers]
    room = await cluster.create_race(conns[0], len(conns), time_limit=time_limit)
    for conn in conns:
        assert await cluster.request(conn, msg.Join(room, Role.RACER)) is None
    watchers = [cluster.connect(user, spectator_node) for user in spectators]
    for watcher in watchers:
        assert await cluster.request(watcher, msg.Join(room, Role.SPECTATOR)) is None
    for conn in conns:
        assert await cluster.request(conn, msg.Ready(room, True)) is None
    assert await cluster.request(conns[0], msg.Start(room)) is None
    now = await cluster.race(room)
    assert now.state.state in (COUNTDOWN, RACING), now.state.state
    await cluster.fire_timers(0)  # the begin timer (countdown 0: due at once)
    assert (await cluster.race(room)).state.state == RACING
    return Race(room, conns, watchers)


def board_of(now: RaceNow, seat: int) -> Board:
    """Board `seat` replayed by the engine from the seed and its stored moves."""
    board = Board(Deal.from_seed(now.state.seed), now.state.variant)
    for token in now.moves[seat]:
        board.push(Move.parse(token))
    return board


def pick_move(board: Board) -> Move:
    """A legal move that shows the most new cards (then foundations), else a draw."""
    best: tuple[int, int, int] | None = None
    chosen = board.legal_moves()[0]
    for move in board.legal_moves():
        probe = board.copy()
        probe.push(move)
        gain = (
            probe.seen.bit_count() - board.seen.bit_count(),
            probe.foundation_count - board.foundation_count,
            1 if move.kind in (DRAW, RECYCLE) else 0,
        )
        if best is None or gain > best:
            best, chosen = gain, move
    return chosen


async def play(cluster: Cluster, conn: MemoryConnection, room: str) -> str:
    """The racer on `conn` plays a legal move with the next move id; its token, once the
    move's own diff (carrying the id) arrived."""
    now = await cluster.race(room)
    seat = now.state.seat_of(conn.user)
    assert seat is not None
    move_id = int(now.fields[seat]["last_move_id"]) + 1
    token = str(pick_move(board_of(now, seat)))
    assert await cluster.request(conn, msg.MoveRequest(room, move_id, token)) is None
    acked = [m for m in conn.of_kind("diff") if m.get("id") == move_id and m["room"] == room]
    assert len(acked) == 1, f"move {move_id} acknowledged {len(acked)} times"
    assert acked[0]["m"] == token
    return token
