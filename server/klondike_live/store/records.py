"""The store's values: what it reads (board records), answers (write results), keeps
for how long (retention, expiries) and the kinds of due work it holds.

Plain values with no I/O; `store.py` makes and uses them.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from klondike_live.errors import LiveError

if TYPE_CHECKING:
    from klondike_live.config import Settings

WATCHERS_FRESH_MS = 10_000
"""A node's spectator count of a room counts while it is younger than this."""

WATCHERS_KEEP_MS = 60_000
"""A room's spectator counts expire this long after the last report of any node."""

DAY_MS = 86_400_000

ANALYSIS_COMPRESSION = 6
"""zlib level of stored analyses (9 makes them no smaller)."""


def pack_analysis(data: bytes) -> bytes:
    """A game's analysis (msgpack) as stored, in Redis and in the history database:
    compressed, as every winnable ply carries its whole winning line, mostly the next
    ply's line again, so the raw blob grows with the square of the game's length (about
    20 KB for a board of 106 moves, 1 KB compressed)."""
    return zlib.compress(data, ANALYSIS_COMPRESSION)


def unpack_analysis(stored: bytes) -> bytes:
    """An analysis as saved: stored compressed (a zlib stream starts with 0x78), or as
    written before analyses were compressed (a msgpack map starts with 0x80-0x8f)."""
    return zlib.decompress(stored) if stored[:1] == b"\x78" else stored


@dataclass(frozen=True, slots=True)
class Retention:
    """How long finished games stay in Redis (all durations in ms).

    `race_ms`: a finished race's volatile keys (its boards' hashes, move and time lists,
    own and spectator streams, its racers' connection claims) and its room hash, from
    the finish: long enough for late reconnects to get their results. A rematch keeps
    the room (and the claims).
    `results_cache_ms`: the stored results (ranking, records, move times; replays are
    built from them) once the history database has the game; until then they are kept
    whatever the time (`store.outbox`). A ranked daily attempt's room is kept as long,
    and at least `daily_room_ms` (the day's attempts record points at it: a second
    ranked attempt of the day is refused while it is there).
    `tournament_ms`: a tournament that is over, from its end (0: for ever).
    `unfinished_ms`: a practice game whose clock stands still (its player left, or never
    moved) keeps its keys this long from then, and its player's index of unfinished
    games keeps it as long; it is kept for ever again once its clock runs.
    `lobby_ms`: a lobby (a race's room before it is dealt, a tournament's heat aside)
    is kept this long after its last write, and is listed publicly as long.
    """

    race_ms: int = 3_600_000
    results_cache_ms: int = 3_600_000
    daily_room_ms: int = 2 * DAY_MS
    tournament_ms: int = 90 * DAY_MS
    unfinished_ms: int = 30 * DAY_MS
    lobby_ms: int = DAY_MS

    @classmethod
    def from_settings(cls, settings: Settings) -> Retention:
        return cls(
            results_cache_ms=round(settings.results_cache_minutes * 60_000),
            unfinished_ms=settings.unfinished_days * DAY_MS,
            lobby_ms=round(settings.lobby_hours * 3_600_000),
        )


@dataclass(frozen=True, slots=True)
class Expiry:
    """Keys that a room write gives a time to live: they expire `after_ms` after the
    write, or, with `after_ms == 0`, lose any expiry (they are kept)."""

    keys: tuple[str, ...]
    after_ms: int


class Conflict(LiveError):
    """A compare-and-set kept losing to concurrent writers."""


@dataclass(frozen=True, slots=True)
class BoardRecord:
    """A board as stored: its hash fields and its move tokens (and, when asked for, the
    time of each move in ms since the race's start), read atomically."""

    fields: dict[str, str]
    moves: list[str]
    times: list[int] = field(default_factory=list)

    def int(self, name: str, default: int = 0) -> int:
        value = self.fields.get(name)
        return int(value) if value is not None else default


class TimerKind(StrEnum):
    """Due work in the timer set (any node may run it, exactly one does)."""

    BEGIN = "begin"  # the countdown is over (arg: the race's gen)
    DEADLINE = "deadline"  # the time limit ran out (arg: the race's gen)
    END = "end"  # a board ended: is the race over? (arg: the race's gen; `service.ending`)
    GRACE = "grace"  # a racer's grace period after its connection closed (arg: user)
    NEXT_DEAL = "next"  # a match's next deal is due (arg: the finished deal's gen)
    TOURNAMENT = "tournament"  # a tournament's heat (id in place of the room): open:<n>,
    # start:<n> or check:<n>


class WriteStatus(StrEnum):
    """The board script's answer to a board event."""

    OK = "ok"  # stored and published
    STALE = "stale"  # the board's sequence number moved on: another writer got there
    REPLACED = "replaced"  # a newer connection speaks for the racer
    DONE = "done"  # the board's game is over (`detail`: its status)
    EARLY = "early"  # the race has not started (`detail`: ms to go)
    LATE = "late"  # the time limit ran out
    PAUSED = "paused"  # the game's clock stands still: run it (a room transition), then retry
    MISSING = "missing"  # no such board


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The store's answer to a board event: `ok`, or why it was refused."""

    status: WriteStatus
    now_ms: int = 0
    detail: str = ""


CAS_ATTEMPTS = 20
"""Compare-and-set attempts of one write before it gives up (`Conflict`)."""


def cas_backoff(attempt: int) -> float:
    """Seconds to wait before compare-and-set attempt `attempt` (0-based) after losing
    one: nothing at first, then a random pause up to 1, 2, 4 ... 32 ms, so that writers
    of one busy key (a hundred racers joining one heat) stop colliding in lock-step."""
    if attempt == 0:
        return 0.0
    return random.random() * min(0.032, 0.001 * 2.0 ** (attempt - 1))
