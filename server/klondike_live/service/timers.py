"""Time on one node: the tick loop, due timers and coalesced progress.

    timers = Timers(settings, rooms, boards, hub)
    await timers.run_ticks()        # until cancelled: ticks, clock syncs, timers

Due work sits in the store's timer sets (`keys.timers`, 16 buckets by room), so that it
survives the loss of any node: each tick a node polls a few buckets in turn, and the
node whose removal succeeds runs the item (late by at most one round of buckets). Kinds:

    begin <gen>       the countdown is over: the race is on
    deadline <gen>    the time limit: boards still playing time out, the race ends
    end <gen>         a board ended a while ago: the race ends if no board plays on (the
                      second look of `service.ending.board_ended`; again while the store
                      cannot decide it)
    grace <user>      a racer's connection closed `grace_seconds` ago: what follows is
                      `race.rules.grace_expiry` (leave the lobby, resign, forfeit a
                      match, or nothing)
    next <gen>        a match goes on: its next deal is dealt (`RoomState.next_deal`)
    tournament <arg>  a tournament's heat (its id in place of a room's): `open:<n>`,
                      `start:<n>`, `check:<n>` (`service.tournaments`)

Each tick also sends the coalesced `progress` of the local rooms that changed, and once
a second reports and reads spectator counts.

This module must never block the tick on one room (timer work runs as hub tasks) and
never lets one failed tick stop the loop.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import assert_never

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.errors import Refusal
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING, RoomState, Step
from klondike_live.race.rules import GraceExpiry, grace_expiry
from klondike_live.race.status import BoardOp
from klondike_live.service.boards import Boards
from klondike_live.service.catchup import progress_frame
from klondike_live.service.ending import RECHECK_MS, check_end
from klondike_live.service.hub import Hub
from klondike_live.service.rooms import Rooms
from klondike_live.service.ticking import tick_forever
from klondike_live.store import Conflict, StoreError, TimerKind

log = logging.getLogger(__name__)

BUCKETS_PER_TICK = 4
"""Timer buckets (of `keys.TIMER_BUCKETS`) each tick polls: at the default tick of 0.2 s
every bucket is looked at every 0.8 s by each node."""


class Timers:
    """The tick loop and due timers of one node (see the module docstring)."""

    def __init__(self, settings: Settings, rooms: Rooms, boards: Boards, hub: Hub) -> None:
        # Each tick polls a few timer buckets in turn, from a place of its own: every
        # bucket is polled once every `1 / BUCKETS_PER_TICK` ticks by each node.
        self._bucket = random.randrange(keys.TIMER_BUCKETS)
        self.settings = settings
        self.rooms = rooms
        self.boards = boards
        self.store = rooms.store
        self.hub = hub
        # Tournament timers (their id in place of a room's) go to the tournaments' part.
        self.on_tournament: Callable[[str, str], Awaitable[None]] | None = None

    async def run_timer(self, room_id: str, kind: TimerKind, arg: str) -> None:
        """A due timer this node won: begin a race, end it at its limit, or apply the
        end of an absent racer's grace period (`race.rules.grace_expiry`); or a
        tournament's heat timer."""
        if kind is TimerKind.TOURNAMENT:
            if self.on_tournament is not None:
                await self.on_tournament(room_id, arg)
            return
        try:
            state = await self.rooms.load(room_id)
        except Refusal:
            return
        match kind:
            case TimerKind.BEGIN:
                if state.state == COUNTDOWN and str(state.gen) == arg:
                    await self.rooms.transition(
                        room_id, lambda s, _now: s.begin() if s.gen == state.gen else s
                    )
            case TimerKind.DEADLINE:
                if str(state.gen) == arg and state.state in (COUNTDOWN, RACING):
                    due = state.deadline_ms()
                    if due == 0:
                        return  # its clock stands still: running again sets the limit anew
                    if self.rooms.now_ms() < due:  # the clock stood meanwhile: later
                        await self.store.add_timer(room_id, TimerKind.DEADLINE, arg, due)
                        return
                    await self.boards.end_playing(state, BoardOp.TIMEOUT)
            case TimerKind.END:
                if str(state.gen) == arg and state.state in (COUNTDOWN, RACING):
                    try:
                        await check_end(self.rooms, room_id)
                    except (StoreError, Conflict):  # not decided: look again later
                        due = self.rooms.now_ms() + RECHECK_MS
                        await self.store.add_timer(room_id, TimerKind.END, arg, due)
                        raise
            case TimerKind.GRACE:
                user = arg
                connected = await self.store.current_connection(room_id, user) is not None
                match grace_expiry(state, user, connected=connected):
                    case GraceExpiry.LEAVE:
                        await self.rooms.transition(
                            room_id,
                            lambda s, _now: s.leave(user) if s.seat_of(user) is not None else s,
                        )
                    case GraceExpiry.RESIGN:
                        seat = state.seat_of(user)
                        await self.boards.end_playing(state, BoardOp.RESIGN, only_seat=seat)
                    case GraceExpiry.FORFEIT:
                        if state.start_at_ms > self.rooms.now_ms():  # a board moves once on
                            await self.store.add_timer(
                                room_id, TimerKind.GRACE, user, state.start_at_ms
                            )
                        else:
                            await self.forfeit(state, user)
                    case GraceExpiry.LATER:
                        due = state.next_at_ms or self.rooms.now_ms() + 1000
                        await self.store.add_timer(room_id, TimerKind.GRACE, user, due)
                    case GraceExpiry.NOTHING:
                        pass
                    case unknown:
                        assert_never(unknown)
            case TimerKind.NEXT_DEAL:
                if state.state == FINISHED and str(state.gen) == arg and state.match_on:
                    await self.next_deal(state)
            case TimerKind.TOURNAMENT:  # pragma: no cover - handled above
                pass
            case unknown_kind:
                assert_never(unknown_kind)

    async def next_deal(self, state: RoomState) -> None:
        """Deal a match's next race: a fresh seed (certified when the room asks for it),
        the countdown, the same seats."""
        countdown = int(self.settings.countdown_seconds * 1000)
        seed, certified = await self.rooms.deal(state.variant, state.deal)

        def deal(s: RoomState, now: int) -> RoomState | Step:
            if s.gen != state.gen or s.state != FINISHED or not s.match_on:
                return s  # dealt already, or the match ended meanwhile
            return s.next_deal(now, countdown, seed, certified)

        await self.rooms.transition(state.id, deal)

    async def forfeit(self, state: RoomState, user: str) -> None:
        """`user` left the match under way: the match is over (`RoomState.leave_match`)
        and its board in the deal being played is resigned."""
        await self.rooms.transition(state.id, lambda s, _now: s.leave_match(user))
        seat = state.seat_of(user)
        await self.boards.end_playing(state, BoardOp.RESIGN, only_seat=seat)

    async def tick(self, *, count_watchers: bool = True) -> None:
        """Per tick: due timers and coalesced progress; spectator counts when asked."""
        now = self.rooms.now_ms()
        for room_id, kind, arg in await self.store.take_due_timers(self._next_buckets(), now):
            self.hub.spawn(self.run_timer(room_id, kind, arg), f"timer-{kind}-{room_id}")
        rooms = list(self.hub.rooms.values())
        if count_watchers:
            counts = {
                local.room_id: len(local.spectators())
                for local in rooms
                if local.spectators() or local.spectators_total
            }
            if counts:
                totals = await self.store.report_watchers(self.settings.node_id, counts, now)
                for local in rooms:
                    total = totals.get(local.room_id, local.spectators_total)
                    if total != local.spectators_total:
                        local.spectators_total = total
                        local.progress_dirty = local.spectator_progress_dirty = True
        for local in rooms:
            if local.progress_dirty and local.loaded:
                local.progress_dirty = False
                # Spectators see every move in its diff: a change of move counts alone
                # is news to the racers only.
                if local.spectator_progress_dirty:
                    local.spectator_progress_dirty = False
                    viewers = list(local.viewers)
                else:
                    viewers = local.all_racers()
                if viewers:
                    self.hub.deliver(viewers, progress_frame(local), None)

    def _next_buckets(self) -> list[int]:
        first = self._bucket
        self._bucket = (first + BUCKETS_PER_TICK) % keys.TIMER_BUCKETS
        return [(first + i) % keys.TIMER_BUCKETS for i in range(BUCKETS_PER_TICK)]

    async def run_ticks(self) -> None:
        """The node's tick loop (runs until cancelled)."""
        counter = 0
        per_second = max(1, round(1 / self.settings.tick_seconds))

        async def step() -> None:
            nonlocal counter
            if counter % (60 * per_second) == 0:
                await self.rooms.sync_clock()
            # Spectator counts change slowly: report and read them once a second.
            await self.tick(count_watchers=counter % per_second == 0)
            counter += 1

        await tick_forever(self.settings.tick_seconds, step, "tick")
