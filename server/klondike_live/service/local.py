"""What one node holds for one room: its viewers here, and its cache of the race.

`LocalRoom` is the one owner of that cache. Its parts change only through its methods:

- viewers and their audience lists (`add`, `remove`, `reseat`), kept indexed so that
  fan-out never rebuilds them;
- the current race's seats, their knowledge and progress (`reset` for a new race,
  `load_seats`, `apply_progress`), from which `race.visibility` computes what
  spectators may know;
- the board writers this node holds (`writers`), created, replaced and dropped only by
  the service's `Boards`, each under its seat's lock (`seat_lock`: one board's changes
  in order; the boards of one room are written side by side);
- the winning line last found for each practice board (`hint_lines`), so that the
  next hints follow it instead of searching again (kept by `Boards.hint`);
- how far the node delivered each board stream (`fresh`, `passed`) and, with a
  viewer's catch-up entry, how far a viewer holds it (`holds`): the one record by
  which no viewer is sent a board frame at an offset it holds.

A `Viewer` is one connection's presence in one room; it knows its connection and its
room's id, so no lookup scans other connections or rooms.

This module must never decide what a viewer may see (that is `race.visibility`) and
never send anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from klondike_live.protocol.kinds import Audience, BoardPosition, Role
from klondike_live.race.live_board import LiveBoard, Progress
from klondike_live.race.status import BoardStatus
from klondike_live.race.visibility import SeatKnowledge
from klondike_live.service.connection import Connection
from klondike_live.solver.hints import KnownLine


class Held(NamedTuple):
    """A frame kept back from a viewer, with its position when it is a board frame."""

    frame: bytes
    position: BoardPosition | None


@dataclass(eq=False, slots=True)
class Viewer:
    """One connection's presence in one room."""

    conn: Connection
    room_id: str
    role: Role
    seat: int | None
    # A spectator that is its racer's own connection watching the rest of its race (its
    # board is done): it still speaks for the seat, which stays online meanwhile.
    keeps_seat: bool = False
    # Whether the room's `reactions` frames reach it (`service.reactions`).
    reactions: bool = False
    # Frames arriving while the viewer is being caught up, released after it.
    catching_up: list[Held] | None = None
    lagging: bool = False
    # Board frames wait until the viewer has its snapshots of the current race (a diff
    # must never arrive before the board it applies to): see `held`.
    boards_ready: bool = False
    # After a catch-up: per (audience, seat), the (epoch, offset) its snapshot or backlog
    # reached. A frame at or below it that arrives later (it was on its way meanwhile)
    # is not sent again; the first newer one ends the entry.
    covered: dict[tuple[Audience, int], tuple[int, int]] = field(default_factory=dict)
    # The board frames held until then; None while there are none (most viewers, most
    # of the time: no list kept for them).
    _held: list[Held] | None = field(default=None, init=False, repr=False)

    @property
    def held(self) -> list[Held]:
        """The board frames held until the viewer has its snapshots (made at the first)."""
        if self._held is None:
            self._held = []
        return self._held

    def take_held(self) -> list[Held]:
        """The board frames held so far, no longer held."""
        held, self._held = self._held, None
        return held if held is not None else []

    def already_has(self, position: BoardPosition) -> bool:
        """Whether the viewer's catch-up already covered the frame at `position`."""
        covered = self.covered
        key = position.stream
        upto = covered.get(key)
        if upto is None:
            return False
        if position.at < upto:
            return True
        del covered[key]  # this one is the last covered, or newer: live from now
        if not covered:
            covered.clear()  # an emptied dict keeps its table until cleared
        return position.at == upto


_UNKNOWN = SeatKnowledge(None, BoardStatus.PLAYING)


class ProgressChange(NamedTuple):
    """What a progress note changed: a board's status, a racer's knowledge."""

    status_changed: bool
    knowledge_grew: bool


@dataclass(eq=False)
class LocalRoom:
    """What this node knows and holds for one room (see the module docstring)."""

    room_id: str
    gen: int = 0
    revealed_gen: int = 0  # the race whose start this node has scheduled or sent
    spectators_total: int = 0
    progress_dirty: bool = False  # a `progress` frame is due to the racers
    # ... and to the spectators: something other than a move count changed (they see
    # every move in the diffs, which carry `moves`).
    spectator_progress_dirty: bool = False
    viewers: set[Viewer] = field(default_factory=set)
    writers: dict[int, LiveBoard] = field(default_factory=dict)
    hint_lines: dict[int, KnownLine] = field(default_factory=dict)
    # The last offset of each board stream (audience, seat) delivered to this node's
    # viewers in race `gen`: a frame at or below it is a repeat (a bus message after a
    # catch-up from the stream) and is dropped.
    delivered: dict[tuple[Audience, int], int] = field(default_factory=dict)
    _seat_locks: dict[int, asyncio.Lock] = field(default_factory=dict)
    _seated: tuple[int, ...] = ()
    _seats: dict[int, SeatKnowledge] = field(default_factory=dict)
    _progress: dict[int, Progress] = field(default_factory=dict)
    _spectators: list[Viewer] = field(default_factory=list)
    _racers: dict[int, list[Viewer]] = field(default_factory=dict)

    # ------------------------------------------------------------ viewers

    def add(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)
        self._index()

    def remove(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        self._index()

    def reseat(self, viewer: Viewer, seat: int | None) -> None:
        viewer.seat = seat
        self._index()

    def _index(self) -> None:
        self._spectators = [v for v in self.viewers if v.role is Role.SPECTATOR]
        racers: dict[int, list[Viewer]] = {}
        for viewer in self.viewers:
            if viewer.role is Role.RACER and viewer.seat is not None:
                racers.setdefault(viewer.seat, []).append(viewer)
        self._racers = racers

    def racers(self, seat: int) -> list[Viewer]:
        return self._racers.get(seat, [])

    def spectators(self) -> list[Viewer]:
        return self._spectators

    def all_racers(self) -> list[Viewer]:
        return [viewer for viewers in self._racers.values() for viewer in viewers]

    def seat_lock(self, seat: int) -> asyncio.Lock:
        """The lock of board `seat`'s writer: held across a write's round trip, so that
        a racer's second move waits for its first. Kept as long as the room (a new race
        keeps them: a write of the old one may still hold one)."""
        lock = self._seat_locks.get(seat)
        if lock is None:
            lock = self._seat_locks[seat] = asyncio.Lock()
        return lock

    @property
    def idle(self) -> bool:
        """No viewer and no writer here: the room can be forgotten."""
        return not self.viewers and not self.writers

    # ------------------------------------------------------------ the race

    def reset(self, gen: int) -> None:
        """A new race (`gen`) begins: forget everything cached of the previous one.
        Its boards reach every viewer with its start. A write of the old race still in
        flight is harmless: its writer is of the old epoch (`Boards` loads a new one),
        and its frames are older than the race (`fresh`)."""
        self.gen = gen
        self.writers.clear()
        self.hint_lines.clear()
        self.delivered.clear()
        self._seated = ()
        self._seats.clear()
        self._progress.clear()
        for viewer in self.viewers:
            viewer.boards_ready = False
            viewer.take_held()

    def load_seats(self, gen: int, seats: Mapping[int, Progress]) -> None:
        """Every seated racer's progress and knowledge, as read from the store. (Its
        writers are left to `reset`: a writer of an older race is never used, `Boards`
        checks its epoch.)"""
        if gen != self.gen:
            self.gen = gen
            self.delivered.clear()
            self._seats.clear()
            self._progress.clear()
        self._seated = tuple(sorted(seats))
        for progress in seats.values():
            self._store(progress)

    @property
    def loaded(self) -> bool:
        """The seats of the current race are known here."""
        return bool(self._seated)

    def seats(self) -> dict[int, SeatKnowledge]:
        """Each seated racer's knowledge and status, for `race.visibility`: a racer whose
        knowledge is not known here counts as knowing nothing; before the seats are
        loaded, there are none (so spectators may know nothing)."""
        return {seat: self._seats.get(seat, _UNKNOWN) for seat in self._seated}

    def progress_rows(self) -> list[list[int | str]]:
        return [self._progress[seat].wire() for seat in sorted(self._progress)]

    def apply_progress(self, progress: Progress) -> ProgressChange:
        """A board's progress, from its writer here or from the bus."""
        before = self._seats.get(progress.seat)
        shown = self._progress.get(progress.seat)
        self._store(progress)
        self.progress_dirty = True
        if shown is None or (shown.found, shown.down, shown.status) != (
            progress.found,
            progress.down,
            progress.status,
        ):
            self.spectator_progress_dirty = True
        after = self._seats[progress.seat]
        return ProgressChange(
            status_changed=before is None or before.status is not after.status,
            knowledge_grew=progress.seen is not None
            and (before is None or before.seen != progress.seen),
        )

    def fresh(self, position: BoardPosition) -> bool:
        """Whether a board frame at `position` is news to this node (and note it):
        False for a repeat of the current race, or a frame of an older race."""
        if position.epoch != self.gen:
            return position.epoch > self.gen  # a newer race: its room frame is on its way
        key = position.stream
        if position.offset <= self.delivered.get(key, 0):
            return False
        self.delivered[key] = position.offset
        return True

    def holds(self, viewer: Viewer, key: tuple[Audience, int]) -> tuple[int, int]:
        """How far a live viewer (its boards sent, not being caught up, not lagging)
        holds board stream `key` of the current race, as (epoch, offset): the later of
        what its catch-up sent (`Viewer.covered`) and what this node delivered since
        (every frame `fresh` passed reached it; what came before, its catch-up read)."""
        delivered = (self.gen, self.delivered.get(key, 0))
        covered = viewer.covered.get(key)
        return delivered if covered is None else max(covered, delivered)

    def passed(self, key: tuple[Audience, int], upto: tuple[int, int]) -> bool:
        """Whether every frame of board stream `key` at or below `upto` (epoch, offset)
        would now be dropped as a repeat (`fresh`): this node delivered that stream of
        the current race up to `upto` or beyond already."""
        epoch, offset = upto
        return epoch == self.gen and offset <= self.delivered.get(key, 0)

    def _store(self, progress: Progress) -> None:
        known = self._seats.get(progress.seat)
        seen = progress.seen if progress.seen is not None else (known.seen if known else None)
        self._seats[progress.seat] = SeatKnowledge(seen, BoardStatus(progress.status))
        self._progress[progress.seat] = progress
