"""The leaderboard of one day's challenge in one variant, in Redis.

    board = Leaderboard(DailyStore(redis), day, DRAW1)
    await board.record(DailyResult(user, name, won, time_ms, moves, found, finished_at,
                                   room=room, gen=gen))
    rows = await board.page(0, 50)          # LeaderboardRow(rank, entry), best first
    mine = await board.around(user, 5)      # own row and up to 5 rows either side
    await board.erase(user, marker, "")     # a deleted account: its row, renamed

Order (`DailyResult.sort_key`): winners first, by `time_ms` (lower is better), then
`moves` (fewer), then `finished_at` (earlier); then everyone else by `found` (cards on
the foundations, more is better), then `time_ms` (for a non-winner: when that count was
reached, earlier is better). Two entries tie only when the whole key is equal: winners
with equal time, moves and `finished_at`, or non-winners with equal found and time
(`finished_at` does not separate non-winners). Ties share a rank and the next rank
skips (competition ranking: 1, 1, 3); tied rows are listed by user id.

Encoding. A float64 zset score has 53 exact bits, and (won, time up to 10^10 ms, moves
up to 10^7, finished_at a ms timestamp) needs about 77, so the key is not a score: it
is a fixed-width decimal string at the front of the member, and every score is 0, so
Redis orders the set by the members' bytes, which is the key's order exactly at any
size. Member = 33-character key + user id. A row's rank is 1 + the number of members
below its key (`ZLEXCOUNT board - (<key>`), computed from the key itself, so tied rows
always show the same rank whatever their position. Rows are read by one Lua script, a
consistent snapshot.

Redis, through `store.daily.DailyStore`: `keys.daily_board` (that sorted set) and
`keys.daily_entries` (user -> JSON entry). One ranked entry per account: `record`
refuses a second one and returns False. Entries are never changed or removed, but for a
deleted account's, which `erase` puts under another user id and name in place; which
attempts may be recorded (the day is open, the attempt was the account's first) is the
caller's decision.

This module holds results only (never a seed or a card) and never decides who may
record: that is the caller's rule.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Final

from klondike_live.engine import Variant
from klondike_live.store.daily import DailyStore

__all__ = [
    "KEY_WIDTH",
    "MAX_AROUND",
    "MAX_PAGE",
    "Around",
    "DailyResult",
    "Leaderboard",
    "LeaderboardRow",
    "check_around",
    "check_page",
    "competition_ranks",
]

CARDS: Final = 52
MAX_TIME_MS: Final = 10**10 - 1
MAX_MOVES: Final = 10**7 - 1
MAX_FINISHED_AT: Final = 10**15 - 1
MAX_USER: Final = 128
MAX_NAME: Final = 256
MAX_ROOM: Final = 64
MAX_GEN: Final = 10**9
KEY_WIDTH: Final = 33
MAX_PAGE: Final = 200
MAX_AROUND: Final = 50


@dataclass(frozen=True, slots=True)
class DailyResult:
    """One account's ranked attempt. `finished_at` is server time in ms.

    For a winner `found` is 52 and `time_ms` the time to win; for anyone else
    `time_ms` is when the final foundation count was reached. `room` and `gen` name
    the game the attempt was played in (for its replay; "" and 0 when unknown); they
    take no part in the order.
    """

    user: str
    name: str
    won: bool
    time_ms: int
    moves: int
    found: int
    finished_at: int
    room: str = ""
    gen: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.user, str) or not 0 < len(self.user) <= MAX_USER:
            raise ValueError(f"user must be 1..{MAX_USER} characters, not {self.user!r}")
        if not isinstance(self.name, str) or len(self.name) > MAX_NAME:
            raise ValueError(f"name must be at most {MAX_NAME} characters")
        if not isinstance(self.won, bool):
            raise ValueError(f"won must be a bool, not {self.won!r}")
        for name, high in (
            ("time_ms", MAX_TIME_MS),
            ("moves", MAX_MOVES),
            ("found", CARDS),
            ("finished_at", MAX_FINISHED_AT),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
                raise ValueError(f"{name} must be an integer 0..{high}, not {value!r}")
        if not isinstance(self.room, str) or len(self.room) > MAX_ROOM:
            raise ValueError(f"room must be at most {MAX_ROOM} characters, not {self.room!r}")
        if isinstance(self.gen, bool) or not isinstance(self.gen, int):
            raise ValueError(f"gen must be an integer, not {self.gen!r}")
        if not 0 <= self.gen <= MAX_GEN:
            raise ValueError(f"gen must be 0..{MAX_GEN}, not {self.gen!r}")
        if self.won and self.found != CARDS:
            raise ValueError(f"a won attempt has all {CARDS} cards up, not {self.found}")

    def sort_key(self) -> tuple[int, int, int, int]:
        """Smaller is better; equal keys are ties."""
        if self.won:
            return (0, self.time_ms, self.moves, self.finished_at)
        return (1, CARDS - self.found, self.time_ms, 0)

    def encoded_key(self) -> str:
        """`sort_key` as a fixed-width string whose byte order is the key's order."""
        won, a, b, c = self.sort_key()
        if won == 0:
            return f"0{a:010d}{b:07d}{c:015d}"
        return f"1{a:02d}{b:010d}" + "0" * 20

    def member(self) -> str:
        return self.encoded_key() + self.user

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: bytes | str) -> DailyResult:
        data = json.loads(text)
        return cls(
            user=str(data["user"]),
            name=str(data["name"]),
            won=bool(data["won"]),
            time_ms=int(data["time_ms"]),
            moves=int(data["moves"]),
            found=int(data["found"]),
            finished_at=int(data["finished_at"]),
            room=str(data.get("room", "")),
            gen=int(data.get("gen", 0)),
        )


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """A ranked entry: `rank` is 1 + the number of entries with a better key."""

    rank: int
    entry: DailyResult


@dataclass(frozen=True, slots=True)
class Around:
    """An account's own row and the rows around it (its own included), in order."""

    me: LeaderboardRow
    rows: list[LeaderboardRow]


def competition_ranks(entries: list[DailyResult]) -> list[LeaderboardRow]:
    """The leaderboard of `entries` computed in memory (the reference the store matches)."""
    ordered = sorted(entries, key=lambda e: (e.sort_key(), e.user.encode()))
    rows: list[LeaderboardRow] = []
    for index, entry in enumerate(ordered):
        if rows and rows[-1].entry.sort_key() == entry.sort_key():
            rows.append(LeaderboardRow(rows[-1].rank, entry))
        else:
            rows.append(LeaderboardRow(index + 1, entry))
    return rows


def check_page(offset: int, limit: int) -> None:
    """A page's bounds, as every leaderboard takes them (ValueError otherwise)."""
    if offset < 0:
        raise ValueError(f"offset must be >= 0, not {offset!r}")
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1..{MAX_PAGE}, not {limit!r}")


def check_around(n: int) -> None:
    """How many rows either side of one's own every leaderboard gives (ValueError)."""
    if not 0 <= n <= MAX_AROUND:
        raise ValueError(f"n must be 0..{MAX_AROUND}, not {n!r}")


class Leaderboard:
    """The leaderboard of `day` in `variant`."""

    def __init__(self, store: DailyStore, day: date, variant: Variant) -> None:
        self.store = store
        self.day = day
        self.variant = variant

    async def record(self, result: DailyResult) -> bool:
        """Add the account's ranked entry; False (nothing changed) if it has one."""
        return await self.record_counted(result) > 0

    async def record_counted(self, result: DailyResult) -> int:
        """As `record`, atomically: how many entries the board has with this one, or 0
        when nothing changed (the account has an entry)."""
        return await self.store.add_entry(
            self.day, self.variant, result.user, result.to_json(), result.member()
        )

    async def erase(self, user: str, marker: str, name: str) -> bool:
        """A deleted account's entry, shown from now on as `marker` named `name` (its
        result and rank unchanged), and its attempt under `marker`; False when it has
        no entry."""
        entry = await self.entry(user)
        if entry is None:
            # Its attempt, if it has one, is renamed all the same (nothing to show).
            await self.store.rename_entry(self.day, self.variant, user, (marker, "", "", ""))
            return False
        erased = replace(entry, user=marker, name=name)
        return await self.store.rename_entry(
            self.day,
            self.variant,
            user,
            (marker, erased.to_json(), entry.member(), erased.member()),
        )

    async def count(self) -> int:
        """How many accounts are on the leaderboard."""
        return await self.store.count_entries(self.day, self.variant)

    async def entry(self, user: str) -> DailyResult | None:
        """The account's entry, or None."""
        raw = await self.store.entry(self.day, self.variant, user)
        return None if raw is None else DailyResult.from_json(raw)

    async def has_entry(self, user: str) -> bool:
        """Whether the account has an entry (its ranked attempt is over)."""
        return await self.store.has_entry(self.day, self.variant, user)

    async def rank_of(self, user: str) -> int | None:
        """The account's rank (ties share one), or None when it has no entry."""
        entry = await self.entry(user)
        if entry is None:
            return None
        return await self.store.count_below(self.day, self.variant, entry.encoded_key()) + 1

    async def page(self, offset: int = 0, limit: int = 50) -> list[LeaderboardRow]:
        """Rows `offset` .. `offset + limit - 1` (0-based, best first)."""
        check_page(offset, limit)
        rows = await self.store.rows(self.day, self.variant, KEY_WIDTH, offset, offset + limit - 1)
        return _ranked(rows)

    async def around(self, user: str, n: int = 5) -> Around | None:
        """The account's row with up to `n` rows before and after; None without entry."""
        check_around(n)
        entry = await self.entry(user)
        if entry is None:
            return None
        rows = _ranked(
            await self.store.rows_around(self.day, self.variant, KEY_WIDTH, entry.member(), n)
        )
        mine = [row for row in rows if row.entry.user == user]
        return Around(mine[0], rows) if mine else None


def _ranked(rows: list[tuple[int, str]]) -> list[LeaderboardRow]:
    """Rows as the store reads them (entries below the key, entry JSON), ranked."""
    return [LeaderboardRow(below + 1, DailyResult.from_json(entry)) for below, entry in rows]
