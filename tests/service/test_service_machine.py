"""A state machine over one race room, driven through the live service of one or two
nodes on the test Valkey.

Rules: clients join (as racers or spectators, on either node, resuming with their
last offsets or not), leave (not a racer of a race under way: see `_leavers`), lose
their connection, lag and drain, take over a racer's seat from a second connection, ask
to watch their own race; racers ready and start, play legal moves (from the engine's
replay of their board), some of them at the same time, illegal and malformed ones,
repeat a move id, resign, ask for a rematch; time passes (the grace period, the time
limit) and a node ticks; a second node starts.

Each rule says what the service must answer, from the room as stored before it. After
every step, beyond the checks every settle runs on every frame (no card a viewer may
not know, no gap or repeat in any board stream; service_checks.py):

- every stored board is the engine's replay of its stored moves (seen cards,
  foundations, face-down count, move count), and its spectator mask shows nothing
  a racer still playing has not seen;
- the stored moves and statuses are the model's: an accepted move added exactly its
  token (and a won board's auto-completion), nothing else changed anything;
- the race is over exactly when every board is done;
- every connection still in the room, not lagging, is at the stored offset of every
  board it watches, or has the results once the race is over (nothing lost); none was
  closed but by its client or a takeover.

The machine is synchronous; each rule runs its coroutine on the machine's own event
loop (`asyncio.Runner`), which holds the nodes of one example. Every example starts on a
flushed Valkey. `KLONDIKE_SERVICE_EXAMPLES` (default 40, of up to 40 steps each) sets
how many examples run.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from klondike_live.config import Settings
from klondike_live.engine import Move
from klondike_live.engine.moves import ALL_MOVES, T2F
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.kinds import Role
from klondike_live.race.room import COUNTDOWN, FINISHED, LOBBY, RACING
from klondike_live.race.status import BoardStatus
from klondike_live.store.connect import open_redis

from race_support import board_of
from service_checks import RaceNow
from service_fixtures import GRACE_SECONDS, Cluster, MemoryConnection

T = TypeVar("T")

USERS = ("ann", "bob", "cat", "dan", "eve")
"""Who may connect: `ann` creates the room (and so holds seat 0)."""

TOKENS = sorted({str(move) for move in ALL_MOVES})
GRACE_MS = int(GRACE_SECONDS * 1000)
PLAYING_PHASES = (COUNTDOWN, RACING)

MACHINE_SETTINGS = settings(
    max_examples=int(os.environ.get("KLONDIKE_SERVICE_EXAMPLES", "40")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    # Not `explain`: its line tracing slows every rule down many times (Python < 3.12).
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)


@dataclass(frozen=True)
class Planned:
    """A move a racer is about to send: its board, the move and its id."""

    user: str
    seat: int
    move: Move
    move_id: int


def since_of(
    conn: MemoryConnection | None, cluster: Cluster, audience: str
) -> tuple[msg.Since, ...]:
    """The offsets a client resuming from `conn` sends (its streams of that audience)."""
    if conn is None:
        return ()
    streams = cluster.streams[conn.conn_id].at
    return tuple(
        msg.Since(seat, epoch, offset)
        for (_room, seat, aud, epoch), offset in sorted(streams.items())
        if aud == audience
    )


class RaceMachine(RuleBasedStateMachine):
    """One race room on one or two nodes (see the module docstring)."""

    def __init__(self, url: str, settings_for: Callable[[int], Settings]) -> None:
        super().__init__()
        self.url = url
        self.settings_for = settings_for
        self.loop = asyncio.Runner()
        self.cluster: Cluster | None = None
        self.room = ""
        self.seed = ""
        self.time_limit = 0
        # Each user's connection that is in the room, and its last one that is not.
        self.live: dict[str, MemoryConnection] = {}
        self.past: dict[str, tuple[MemoryConnection, Role]] = {}
        # Racers whose connection closed since the last grace timers ran.
        self.away: set[str] = set()
        # The model of the race: each seat's moves and status, set at the start.
        self.moves: dict[int, list[str]] = {}
        self.status: dict[int, BoardStatus] = {}
        self._now: RaceNow | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run one action on the machine's loop (the room as stored may change)."""
        self._now = None
        try:
            return self.loop.run(coro)
        finally:
            self._now = None

    @property
    def c(self) -> Cluster:
        assert self.cluster is not None
        return self.cluster

    def now(self) -> RaceNow:
        """The room as stored now (read once between actions)."""
        if self._now is None:
            self._now = self.loop.run(self.c.race(self.room))
        return self._now

    def teardown(self) -> None:
        try:
            if self.cluster is not None:
                self.run(self.cluster.stop())
        finally:
            self.loop.close()

    # ------------------------------------------------------------ the room

    @initialize(
        seats=st.integers(2, 3),
        variant=st.sampled_from(["draw=1", "draw=3"]),
        time_limit=st.sampled_from([0, 600]),
        deal=st.integers(0, 2**64),
        nodes=st.integers(1, 2),
        begin=st.sampled_from(["lobby", "seated", "racing", "racing"]),
    )
    def open_room(
        self, seats: int, variant: str, time_limit: int, deal: int, nodes: int, begin: str
    ) -> None:
        """`ann` creates the room on a flushed Valkey; every seat is taken (`seated`), and
        the race started (`racing`), or only `ann` is in (`lobby`)."""
        self.seed = hashlib.sha256(str(deal).encode()).hexdigest()[:32]
        self.time_limit = time_limit

        async def open_room() -> None:
            redis = await open_redis(self.url)
            try:
                await redis.flushall()
            finally:
                await redis.aclose()
            self.cluster = await Cluster.start(self.url, self.settings_for, lambda: self.seed)
            if nodes == 2:
                await self.c.add_node()
            ann = self.c.connect("ann")
            self.room = await self.c.create_race(ann, seats, variant=variant, time_limit=time_limit)
            racers = USERS[:seats] if begin != "lobby" else USERS[:1]
            for index, user in enumerate(racers):
                conn = ann if user == "ann" else self.c.connect(user, index % nodes)
                assert await self.c.request(conn, msg.Join(self.room, Role.RACER)) is None
                self.live[user] = conn

        self.run(open_room())
        if begin == "racing":
            self._start()

    @precondition(lambda self: len(self.c.nodes) == 1)
    @rule()
    def second_node(self) -> None:
        """A second node starts on the same Valkey."""
        self.run(self.c.add_node())

    # ------------------------------------------------------------ joining and leaving

    def _absent(self) -> list[str]:
        return [user for user in USERS if user not in self.live]

    @precondition(lambda self: bool(self._absent()))
    @rule(data=st.data(), role=st.sampled_from(Role), resume=st.booleans())
    def join(self, data: st.DataObject, role: Role, resume: bool) -> None:
        """A client connects to a node and joins (resuming from its last connection's
        offsets or not): the refusals the rules give, else it is in."""
        user = data.draw(st.sampled_from(self._absent()), label="user")
        node = data.draw(st.integers(0, len(self.c.nodes) - 1), label="node")
        before = self.now()
        state = before.state
        seat = state.seat_of(user)
        expected: ErrorCode | None = None
        if role is Role.RACER:
            if seat is None and state.state != LOBBY:
                expected = ErrorCode.WRONG_STATE
            elif seat is None and all(s is not None for s in state.seats):
                expected = ErrorCode.ROOM_FULL
        elif seat is not None and state.state != FINISHED and not self._done(seat):
            expected = ErrorCode.OWN_RACE
        last = self.past.get(user)
        since: tuple[msg.Since, ...] = ()
        if resume and last is not None and last[1] is role:
            since = since_of(last[0], self.c, "own" if role is Role.RACER else "spectator")
        conn = self.c.connect(user, node)
        code = self.run(self.c.request(conn, msg.Join(self.room, role, since)))
        assert code == expected, f"{user} joining as {role}: {code}, expected {expected}"
        if code is None:
            self.live[user] = conn
            return
        after = self.now()
        assert after.state == before.state, "a refused join changed the room"
        self.run(self.c.disconnect(conn))

    def _done(self, seat: int) -> bool:
        """The model's board of `seat` is done (won, resigned, out of time)."""
        status = self.status.get(seat)
        return status is not None and status.done

    def _leavers(self) -> list[str]:
        """Who may leave: anyone but a racer of a race under way, whose leaving is
        pinned by `test_a_racer_who_left_a_race_and_stays_away_is_resigned` (the
        service keeps its board playing, with no grace timer: the race never ends)."""
        state = self.now().state
        under_way = state.state in PLAYING_PHASES
        return [
            user
            for user, conn in sorted(self.live.items())
            if not (under_way and self.c.role(conn, self.room) is Role.RACER)
        ]

    @precondition(lambda self: bool(self._leavers()))
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        """A client leaves the room (a racer its lobby seat), then closes."""
        user = data.draw(st.sampled_from(self._leavers()), label="user")
        conn = self.live.pop(user)
        role = self.c.role(conn, self.room)
        assert role is not None
        assert self.run(self.c.request(conn, msg.Leave(self.room))) is None
        self.past[user] = (conn, role)
        self.run(self.c.disconnect(conn))
        state = self.now().state
        if role is Role.RACER and state.state == LOBBY:
            assert state.seat_of(user) is None, "a racer left the lobby and kept its seat"

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    def lose_connection(self, data: st.DataObject) -> None:
        """A client's connection closes: a seated racer is offline, its grace runs."""
        user = data.draw(st.sampled_from(sorted(self.live)), label="user")
        conn = self.live.pop(user)
        role = self.c.role(conn, self.room)
        assert role is not None
        self.past[user] = (conn, role)
        self.run(self.c.disconnect(conn))
        state = self.now().state
        seat = state.seat_of(user)
        if role is Role.RACER and seat is not None:
            self.away.add(user)
            occupant = state.seats[seat]
            assert occupant is not None and not occupant.online, f"{user} still online"

    def _racers_live(self) -> list[str]:
        return sorted(
            user for user, conn in self.live.items() if self.c.role(conn, self.room) is Role.RACER
        )

    @precondition(lambda self: bool(self._racers_live()))
    @rule(data=st.data(), resume=st.booleans())
    def take_over(self, data: st.DataObject, resume: bool) -> None:
        """A racer joins again from a second connection: the first one is replaced."""
        user = data.draw(st.sampled_from(self._racers_live()), label="user")
        node = data.draw(st.integers(0, len(self.c.nodes) - 1), label="node")
        old = self.live[user]
        since = since_of(old, self.c, "own") if resume else ()
        conn = self.c.connect(user, node)
        assert self.run(self.c.request(conn, msg.Join(self.room, Role.RACER, since))) is None
        assert old.closed is not None and old.closed[0] == CloseCode.REPLACED, old.closed
        assert self.c.gone(old)
        self.live[user] = conn
        self.past[user] = (old, Role.RACER)

    @precondition(lambda self: bool(self._racers_live()))
    @rule(data=st.data())
    def spectate_own_race(self, data: st.DataObject) -> None:
        """A racer asks to watch its own race on its connection: refused with `own_race`
        (nothing changes: it races on), unless the race is over or its own board is done
        (then it watches)."""
        user = data.draw(st.sampled_from(self._racers_live()), label="racer")
        conn = self.live[user]
        before = self.now()
        seat = before.state.seat_of(user)
        code = self.run(self.c.request(conn, msg.Join(self.room, Role.SPECTATOR)))
        if before.finished or (seat is not None and self._done(seat)):
            assert code is None, code
            assert self.c.role(conn, self.room) is Role.SPECTATOR
            return
        assert code == ErrorCode.OWN_RACE, code
        after = self.now()
        assert after.state == before.state, "a refused join changed the room"
        assert self.c.role(conn, self.room) is Role.RACER

    @precondition(lambda self: any(not c.lagging() for c in self.live.values()))
    @rule(data=st.data())
    def lag(self, data: st.DataObject) -> None:
        """A client's send buffer fills up: the hub skips it."""
        users = sorted(u for u, c in self.live.items() if not c.lagging())
        self.live[data.draw(st.sampled_from(users), label="user")].lag()

    @precondition(lambda self: any(c.lagging() for c in self.live.values()))
    @rule(data=st.data())
    def drain(self, data: st.DataObject) -> None:
        """A lagging client's buffer drains: it gets fresh snapshots."""
        users = sorted(u for u, c in self.live.items() if c.lagging())
        self.live[data.draw(st.sampled_from(users), label="user")].drain()
        self.run(self.c.settle())

    # ------------------------------------------------------------ the start

    def _can_start(self) -> bool:
        state = self.now().state
        seated = state.seated()
        return (
            state.state == LOBBY
            and len(seated) >= 2
            and state.host in self.live
            and all(
                s.user in self.live and self.c.role(self.live[s.user], self.room) is Role.RACER
                for _, s in seated
            )
        )

    @precondition(lambda self: self._can_start())
    @rule()
    def start(self) -> None:
        """Every seated racer says it is ready, and the host starts the race."""
        self._start()

    def _start(self) -> None:
        state = self.now().state
        for _, seat in state.seated():
            conn = self.live[seat.user]
            assert self.run(self.c.request(conn, msg.Ready(self.room, True))) is None
        host = self.live[state.host]
        assert self.run(self.c.request(host, msg.Start(self.room))) is None
        now = self.now()
        assert now.state.state in PLAYING_PHASES
        self.moves = {seat: [] for seat, _ in now.state.seated()}
        self.status = dict.fromkeys(self.moves, BoardStatus.PLAYING)

    def _rematchers(self) -> list[str]:
        state = self.now().state
        if state.state != FINISHED:
            return []
        return [user for user in self._racers_live() if state.seat_of(user) is not None]

    @precondition(lambda self: bool(self._rematchers()))
    @rule(data=st.data())
    def rematch(self, data: st.DataObject) -> None:
        """A racer asks for a rematch of the finished race: back to the lobby, next gen."""
        user = data.draw(st.sampled_from(self._rematchers()), label="racer")
        before = self.now().state
        assert self.run(self.c.request(self.live[user], msg.Rematch(self.room))) is None
        state = self.now().state
        assert (state.state, state.gen) == (LOBBY, before.gen + 1)
        self.moves, self.status = {}, {}

    # ------------------------------------------------------------ moves

    def _movers(self) -> list[str]:
        """Racers in the room with a board still playing in a race under way."""
        if not self.status:
            return []
        state = self.now().state
        if state.state not in PLAYING_PHASES:
            return []
        out = []
        for user in self._racers_live():
            seat = state.seat_of(user)
            if seat is not None and self.status.get(seat) is BoardStatus.PLAYING:
                out.append(user)
        return out

    def _mover(self, data: st.DataObject) -> tuple[MemoryConnection, int, RaceNow]:
        """A racer who may move, its seat and the room as stored."""
        user = data.draw(st.sampled_from(self._movers()), label="racer")
        now = self.now()
        seat = now.state.seat_of(user)
        assert seat is not None
        return self.live[user], seat, now

    @precondition(lambda self: bool(self._movers()))
    @rule(data=st.data(), count=st.integers(1, 6))
    def move(self, data: st.DataObject, count: int) -> None:
        """A racer plays `count` legal moves, one request each (while its board plays)."""
        user = data.draw(st.sampled_from(self._movers()), label="racer")
        for _ in range(count):
            if user not in self._movers():
                break
            self._play(data, user)

    def _draw_move(self, data: st.DataObject, user: str, before: RaceNow) -> Planned | None:
        """A legal move for `user`'s board and its id (None when it has none left)."""
        seat = before.state.seat_of(user)
        assert seat is not None
        board = board_of(before, seat)
        if not board.legal_moves():
            return None  # stuck: nothing left to play but resigning
        move = data.draw(st.sampled_from(board.legal_moves()), label=f"{user}'s move")
        return Planned(user, seat, move, int(before.fields[seat]["last_move_id"]) + 1)

    def _play(self, data: st.DataObject, user: str) -> None:
        before = self.now()
        planned = self._draw_move(data, user, before)
        if planned is None:
            return
        request = msg.MoveRequest(self.room, planned.move_id, str(planned.move))
        code = self.run(self.c.request(self.live[user], request))
        assert code is None, f"legal move {planned.move} refused: {code}"
        self._applied(planned, before)

    @precondition(lambda self: len(self._movers()) >= 2)
    @rule(data=st.data())
    def moves_at_once(self, data: st.DataObject) -> None:
        """Every racer who may move plays a legal move, all at the same time (on their
        nodes); the nodes settle after the last one. (The leak check of this step reads
        the racers' knowledge after all of them.)"""
        before = self.now()
        moves = [p for u in self._movers() if (p := self._draw_move(data, u, before))]

        async def play() -> list[ErrorCode | None]:
            codes = await asyncio.gather(
                *(
                    self.c.request(
                        self.live[p.user],
                        msg.MoveRequest(self.room, p.move_id, str(p.move)),
                        settle=False,
                    )
                    for p in moves
                )
            )
            await self.c.settle()
            return list(codes)

        codes = self.run(play())
        assert codes == [None] * len(moves), codes
        for planned in moves:
            self._applied(planned, before)

    def _applied(self, planned: Planned, before: RaceNow) -> None:
        """The store holds exactly the move (and any auto-completion), acknowledged once."""
        seat = planned.seat
        stored = self.now().moves[seat]
        played = len(self.moves[seat])
        assert stored[: played + 1] == [*self.moves[seat], str(planned.move)], stored
        extra = stored[played + 1 :]
        if extra:  # auto-completion of a trivially won board
            assert all(Move.parse(t).kind == T2F for t in extra), extra
        self.moves[seat] = stored
        board = board_of(self.now(), seat)
        if board.is_won():
            self.status[seat] = BoardStatus.WON
        conn = self.live[planned.user]
        if not conn.lagging():
            mine = (before.state.gen, planned.move_id)
            acks = [m for m in conn.of_kind("diff") if (m["epoch"], m.get("id")) == mine]
            assert len(acks) == 1, f"move {planned.move_id} acknowledged {len(acks)} times"

    @precondition(lambda self: bool(self._movers()))
    @rule(data=st.data(), malformed=st.booleans())
    def illegal_move(self, data: st.DataObject, malformed: bool) -> None:
        """An illegal (or malformed) move is refused with its code; nothing changes."""
        conn, seat, before = self._mover(data)
        board = board_of(before, seat)
        if malformed:
            token = data.draw(st.sampled_from(["zz", "8F", "W0", "F"]), label="token")
            expected = ErrorCode.BAD_MOVE
        else:
            illegal = [t for t in TOKENS if not board.is_legal(Move.parse(t))]
            token = data.draw(st.sampled_from(illegal), label="token")
            expected = ErrorCode.ILLEGAL_MOVE
        move_id = int(before.fields[seat]["last_move_id"]) + 1
        code = self.run(self.c.request(conn, msg.MoveRequest(self.room, move_id, token)))
        assert code == expected, f"{token}: {code}, expected {expected}"
        after = self.now()
        assert after.moves == before.moves and after.fields == before.fields

    def _repeaters(self) -> list[str]:
        if not self.status:
            return []
        now = self.now()
        out = []
        for user in self._racers_live():
            seat = now.state.seat_of(user)
            if seat in now.fields and int(now.fields[seat]["last_move_id"]) > 0:
                out.append(user)
        return out

    @precondition(lambda self: bool(self._repeaters()))
    @rule(data=st.data())
    def repeat_move(self, data: st.DataObject) -> None:
        """A move resent with the last id (a client retrying): acknowledged, not applied."""
        user = data.draw(st.sampled_from(self._repeaters()), label="racer")
        conn = self.live[user]
        before = self.now()
        seat = before.state.seat_of(user)
        assert seat is not None
        last = int(before.fields[seat]["last_move_id"])
        assert self.run(self.c.request(conn, msg.MoveRequest(self.room, last, "D"))) is None
        ack = conn.of_kind("ack")[-1]
        assert (ack["id"], ack["off"]) == (last, before.offset(seat, "own"))
        after = self.now()
        assert after.moves == before.moves and after.fields == before.fields

    @precondition(lambda self: bool(self.status) and bool(self._racers_live()))
    @rule(data=st.data())
    def resign(self, data: st.DataObject) -> None:
        """A racer resigns: accepted while its board plays in a race under way."""
        user = data.draw(st.sampled_from(self._racers_live()), label="racer")
        conn = self.live[user]
        before = self.now()
        seat = before.state.seat_of(user)
        playing = (
            before.state.state in PLAYING_PHASES
            and seat is not None
            and self.status.get(seat) is BoardStatus.PLAYING
        )
        code = self.run(self.c.request(conn, msg.Resign(self.room)))
        if playing:
            assert code is None, code
            assert seat is not None
            self.status[seat] = BoardStatus.RESIGNED
        else:
            assert code == ErrorCode.WRONG_STATE, code

    # ------------------------------------------------------------ time

    @precondition(lambda self: bool(self.away))
    @rule(data=st.data())
    def grace_passes(self, data: st.DataObject) -> None:
        """Every clock moves past the grace period and a node runs the due timers: each
        racer still away leaves the lobby, or is resigned from a race under way."""
        node = data.draw(st.integers(0, len(self.c.nodes) - 1), label="node")
        before = self.now()
        self.run(self.c.fire_timers(GRACE_MS + 1000, node))
        after = self.now()
        for user in self.away:
            seat = before.state.seat_of(user)
            if user in self.live or seat is None:
                continue
            occupant = before.state.seats[seat]
            assert occupant is not None
            if occupant.online:
                continue
            if before.state.state == LOBBY:
                assert after.state.seat_of(user) is None, f"{user} kept its lobby seat"
            elif before.state.state in PLAYING_PHASES and self.status[seat] is BoardStatus.PLAYING:
                self.status[seat] = BoardStatus.RESIGNED
        self.away.clear()

    def _timed_race_on(self) -> bool:
        return bool(self.time_limit and self.status) and self.now().state.state in PLAYING_PHASES

    @precondition(lambda self: self._timed_race_on())
    @rule(data=st.data())
    def time_runs_out(self, data: st.DataObject) -> None:
        """Every clock moves past the time limit (and any grace period): every board
        still playing times out (or, for a racer away, is resigned), the race is over."""
        node = data.draw(st.integers(0, len(self.c.nodes) - 1), label="node")
        self.run(self.c.fire_timers(self.time_limit * 1000 + GRACE_MS, node))
        after = self.now()
        assert after.state.state == FINISHED
        for seat, status in self.status.items():
            if status is not BoardStatus.PLAYING:
                continue
            stored = after.status(seat)
            user = after.state.seats[seat]
            away = user is not None and user.user in self.away and user.user not in self.live
            allowed = {BoardStatus.TIMEOUT, BoardStatus.RESIGNED} if away else {BoardStatus.TIMEOUT}
            assert stored in allowed, f"seat {seat} {stored} after the time limit"
            self.status[seat] = stored
        self.away.clear()

    @precondition(lambda self: bool(self.status))
    @rule(data=st.data())
    def tick(self, data: st.DataObject) -> None:
        """A node ticks: progress frames, spectator counts, and what timers fell due."""
        self.run(self.c.tick(data.draw(st.integers(0, len(self.c.nodes) - 1), label="node")))

    # ------------------------------------------------------------ invariants

    @invariant()
    def boards_are_their_moves_replayed(self) -> None:
        now = self.now()
        if not now.dealt:
            return
        spectators = now.spectators_may_know()
        for seat, fields in now.fields.items():
            board = board_of(now, seat)
            assert int(fields["seen"]) == board.seen, f"board {seat}: seen"
            assert int(fields["found"]) == board.foundation_count, f"board {seat}: foundations"
            assert int(fields["down"]) == board.face_down_count, f"board {seat}: face down"
            assert int(fields["moves"]) == len(board.moves), f"board {seat}: moves"
            assert (now.status(seat) is BoardStatus.WON) == board.is_won(), f"board {seat}"
            shown = int(fields["spec_mask"]) & ~spectators
            assert not shown, f"board {seat}: spectator mask shows {shown:#x}"

    @invariant()
    def the_store_holds_the_model_s_race(self) -> None:
        now = self.now()
        if not self.status:
            assert not now.dealt
            return
        assert now.moves == self.moves
        assert {seat: now.status(seat) for seat in now.fields} == self.status
        over = all(status.done for status in self.status.values())
        assert (now.state.state == FINISHED) == over, (now.state.state, self.status)

    @invariant()
    def viewers_in_the_room_are_up_to_date(self) -> None:
        now = self.now()
        for user, conn in self.live.items():
            assert conn.closed is None, f"{conn!r} closed: {conn.closed}"
            if conn.lagging():
                continue
            role = self.c.role(conn, self.room)
            seat = now.state.seat_of(user) if role is Role.RACER else None
            if now.finished:
                # The results stand for every board's end (a viewer catching up after it
                # gets them instead of its boards).
                gens = [m.get("gen") for m in conn.of_kind("results")]
                assert now.state.gen in gens, f"{conn!r} has no results of this race"
                continue
            streams = self.c.streams[conn.conn_id]
            behind = now.lagging_behind(streams, seat=seat)
            assert not behind, f"{conn!r} is behind: {behind}"


@pytest.mark.timeout(600)  # a failure's shrinking may take Hypothesis's five minutes
def test_races_through_the_service(
    valkey_url: str, service_settings: Callable[[int], Settings]
) -> None:
    """Joins, moves, resumes, takeovers and timers on two nodes keep every invariant above."""

    class Machine(RaceMachine):
        def __init__(self) -> None:
            super().__init__(valkey_url, service_settings)

    run_state_machine_as_test(Machine, settings=MACHINE_SETTINGS)
