"""Room state as the node's requests see it: the shared clock, loads and transitions.

    rooms = Rooms(store, hub, daily, pool=pool, new_seed=new_seed)
    state = await rooms.load(room_id)                                  # or NO_ROOM
    step = await rooms.transition(room_id, lambda s, now: s.begin())   # new state, events
    await rooms.open_room(state)           # a room that starts at once (solo, daily)
    seed, certified = await rooms.deal(variant, "certified")   # pooled if one waits

A transition is a pure `RoomState` method applied with a compare-and-set in the store,
which publishes the new room frame with it; the start of a race writes its fresh boards
in the same step and schedules its timers (begin, time limit). `sync_local` reloads a
`LocalRoom`'s caches (knowledge masks, statuses, progress) of the current race.

Room frames and results frames are made here (`room_frame`, `shown`): a daily room's seed
only once its day has closed; results as `race.redaction` says.

This module must never write a board event (only `boards.py` does, as the board's single
writer) and never sends a frame to a connection: room frames reach viewers through the
store's publish and every node's hub.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any, assert_never

from klondike_live import keys
from klondike_live.bus.messages import RoomFrame
from klondike_live.daily.pool import DealPool
from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.live_board import Progress
from klondike_live.race.redaction import disclosure, results_for
from klondike_live.race.results import board_after
from klondike_live.race.room import LOBBY, RoomEvent, RoomState, Step
from klondike_live.race.rules import absence_resigns
from klondike_live.race.status import BoardStatus
from klondike_live.service.daily import DailyService
from klondike_live.service.hub import Hub
from klondike_live.service.local import LocalRoom
from klondike_live.store import BoardRecord, Conflict, Expiry, Store, StoreError, TimerKind

log = logging.getLogger(__name__)

CLOCK_SAMPLES = 3
"""Round trips to Redis per reading of the shared clock (the shortest one counts)."""

Change = Callable[[RoomState, int], RoomState | Step]
"""A pure room transition: the next state (with its events) from the current one and
the shared time."""

Hashes = list[tuple[str, dict[str, str | int] | None]]
"""Hashes written with a room transition: (key, fields), or (key, None) to delete."""


class Rooms:
    """Rooms in the store, and this node's reading of the shared clock."""

    def __init__(
        self,
        store: Store,
        hub: Hub,
        daily: DailyService,
        *,
        pool: DealPool | None,
        new_seed: Callable[[], str],
        grace_ms: int = 60_000,
        match_interval_ms: int = 6_000,
    ) -> None:
        self.store = store
        self.grace_ms = grace_ms
        # Between a match's deals: the results shown, then the next deal.
        self.match_interval_ms = match_interval_ms
        self.hub = hub
        self.daily = daily
        self.pool = pool
        self.new_seed = new_seed
        self.clock_offset_ms = 0
        # Called with (room id, gen) once this node has finished a game (its analysis).
        self.on_finished: Callable[[str, int], None] | None = None

    # ------------------------------------------------------------ clock

    async def sync_clock(self) -> None:
        """Measure this process's offset to the shared (Redis) clock, from the sample
        with the shortest round trip of `CLOCK_SAMPLES` (a pause of the event loop
        during one sample, a slow callback or a collection, skews that sample alone)."""
        best_trip, offset = math.inf, 0
        for _ in range(CLOCK_SAMPLES):
            before = time.time()
            server = await self.store.now_ms()
            after = time.time()
            if after - before < best_trip:
                best_trip, offset = after - before, server - int((before + after) * 500)
        self.clock_offset_ms = offset

    def now_ms(self) -> int:
        """The shared clock, read locally."""
        return int(time.time() * 1000) + self.clock_offset_ms

    # ------------------------------------------------------------ reading and changing

    async def load(self, room_id: str) -> RoomState:
        if not keys.is_room_id(room_id):
            raise Refusal(ErrorCode.NO_ROOM, "no such room")
        loaded = await self.store.load_room(room_id)
        if loaded is None:
            raise Refusal(ErrorCode.NO_ROOM, "no such room")
        return loaded[0]

    async def transition(self, room_id: str, change: Change) -> Step:
        """Apply a pure room transition atomically, publish the new room state, and do
        what its events call for (a race dealt: its boards, timers and listing; a race
        reopened: listed again)."""
        events: list[RoomEvent] = []

        def stepped(state: RoomState, now_ms: int) -> RoomState:
            result = change(state, now_ms)
            step = result if isinstance(result, Step) else Step(result)
            events[:] = step.events  # the last attempt is the one written
            return step.state

        def clock_moved() -> bool:
            return RoomEvent.PAUSED in events or RoomEvent.RESUMED in events

        def extras(_old: RoomState, new: RoomState) -> tuple[list[RoomFrame], Hashes]:
            hashes = self._board_inits(new) if RoomEvent.DEALT in events else []
            if clock_moved():
                hashes = self._board_clocks(new)
            frame = self.room_frame(new)
            return [RoomFrame(frame, new.gen, new.state, new.start_at_ms)], hashes

        def expiries(_old: RoomState, new: RoomState) -> list[Expiry]:
            return self.store.waiting_expiries(new) if clock_moved() else []

        try:
            old, new = await self.store.update_room(room_id, stepped, extras, expiries)
        except LookupError:
            raise Refusal(ErrorCode.NO_ROOM, "no such room") from None
        except Conflict:  # others kept changing the room: the client tries again
            raise Refusal(ErrorCode.BUSY, "the room is busy; try again") from None
        if new != old and new.state == LOBBY and new.public_room and new.kind is RoomKind.RACE:
            # Listed as long as the lobby is kept: from its last change.
            await self.store.set_public(room_id, True, self.now_ms())
        for event in events:
            match event:
                case RoomEvent.DEALT:
                    log.info(
                        "race %s gen %d starts at %d with %d racers",
                        room_id,
                        new.gen,
                        new.start_at_ms,
                        len(new.seated()),
                    )
                    await self._schedule_race_timers(new)
                    if new.public_room:
                        await self.store.set_public(room_id, False)
                        await self.store.set_live(room_id, True, new.start_at_ms)
                case RoomEvent.REOPENED:
                    pass  # listed again below, as a lobby changed
                case RoomEvent.FINISHED:
                    pass  # finished by `ending.check_end`, which stores the results
                case RoomEvent.PAUSED:
                    pass  # its boards' clock and keys' expiry were written with it
                case RoomEvent.RESUMED:
                    if new.time_limit:  # the limit moved with the start
                        await self.store.add_timer(
                            room_id, TimerKind.DEADLINE, str(new.gen), new.deadline_ms()
                        )
                case unknown:
                    assert_never(unknown)
        return Step(new, tuple(events))

    async def open_room(self, state: RoomState) -> bool:
        """Write a room that starts at once (solo, daily) with its boards and timers;
        False when a room of that id exists already."""
        expiries = self.store.waiting_expiries(state) if state.paused else []
        if await self.store.write_room(state, 0, (), self._board_inits(state), expiries) is None:
            return False
        await self._schedule_race_timers(state)
        return True

    async def deal(self, variant: Variant, mode: str) -> tuple[str, bool]:
        """A seed for a new game and whether it is certified: a pooled deal when asked
        for and one is waiting (never waiting for the solver), else a random seed."""
        pool = self.pool
        if mode == "certified" and pool is not None and variant in pool.variants:
            try:
                deal = await pool.take(variant)
            except StoreError as exc:
                log.warning("deal pool unavailable: %s", exc)
                deal = None
            if deal is not None:
                return deal.seed, True
        if mode == "certified" and pool is not None and pool.metrics is not None:
            label = str(variant) if variant in pool.variants else "unpooled"
            pool.metrics.empty.labels(variant=label).inc()
        return self.new_seed(), False

    def _board_inits(self, state: RoomState) -> Hashes:
        """Fresh board hashes for every seated racer, written with the start transition."""
        board = board_after(state, ())
        deadline = state.deadline_ms()
        out: Hashes = []
        for seat, _ in state.seated():
            out.append(
                (
                    keys.board(state.id, state.gen, seat),
                    {
                        "seq": 0,
                        "own_offset": 0,
                        "spec_offset": 0,
                        "seen": str(board.seen),
                        "spec_mask": str(board.seen),
                        "status": str(BoardStatus.PLAYING),
                        "start_at": state.start_at_ms,
                        "deadline": deadline,
                        "paused_at": state.paused_at_ms,
                        "found": 0,
                        "found_ms": 0,
                        "down": board.face_down_count,
                        "moves": 0,
                        "last_move_id": 0,
                    },
                )
            )
        return out

    def _board_clocks(self, state: RoomState) -> Hashes:
        """Every board's clock fields, written with the room when its clock stops or runs
        again (the board script times moves by them)."""
        fields: dict[str, str | int] = {
            "start_at": state.start_at_ms,
            "deadline": state.deadline_ms(),
            "paused_at": state.paused_at_ms,
        }
        return [(keys.board(state.id, state.gen, seat), dict(fields)) for seat, _ in state.seated()]

    async def _schedule_race_timers(self, state: RoomState) -> None:
        await self.store.add_timer(state.id, TimerKind.BEGIN, str(state.gen), state.start_at_ms)
        if state.time_limit:
            await self.store.add_timer(
                state.id, TimerKind.DEADLINE, str(state.gen), state.deadline_ms()
            )

    # ------------------------------------------------------------ frames

    def room_frame(self, state: RoomState, *, rid: int | None = None) -> bytes:
        """The room frame, the one every viewer gets (published with each transition,
        sent by a catch-up with the join's `rid`): a daily room's seed only once its day
        closed; in a race under way also `grace`, how long an away racer keeps its seat
        (ms)."""
        data = state.public(
            spectators=self._spectators(state.id), day_closed=self.daily.day_closed(state)
        )
        if absence_resigns(state):
            data["grace"] = self.grace_ms
        if rid is not None:
            data["rid"] = rid
        return outgoing.Room(data).encode()

    def shown(self, state: RoomState, results: dict[str, Any]) -> dict[str, Any]:
        """Results as sent in the room, under the policy of `race.redaction` (a daily
        game's as its player saw it while its day is open)."""
        daily = state.kind is RoomKind.DAILY
        day_open = daily and not self.daily.day_closed(state)
        return results_for(results, disclosure(daily=daily, day_open=day_open))

    def _spectators(self, room_id: str) -> int:
        local = self.hub.rooms.get(room_id)
        return local.spectators_total if local else 0

    # ------------------------------------------------------------ local caches

    async def sync_local(self, local: LocalRoom, state: RoomState) -> None:
        """Load every racer's knowledge, status and progress of the current race."""
        seats = [seat for seat, _ in state.seated()]
        records = await self.store.load_boards(state.id, state.gen, seats)
        local.load_seats(state.gen, {seat: progress_of(seat, r) for seat, r in records.items()})


def progress_of(seat: int, record: BoardRecord) -> Progress:
    """A stored board's progress and its racer's knowledge."""
    return Progress(
        seat,
        record.int("found"),
        record.int("down"),
        record.int("moves"),
        BoardStatus(record.fields["status"]),
        int(record.fields["seen"]),
    )
