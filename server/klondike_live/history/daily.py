"""Closed days of the daily challenge in the history database: records and leaderboards.

    days = KeptDays(history)
    added = await days.keep(record, rows)             # a closed day, once (idempotent)
    record = await days.record(day, variant)          # its DayRecord, or None
    board = days.leaderboard(day, variant)            # read like a live `Leaderboard`
    rows = await board.page(0, 50); me = await board.around(user, 5)
    listed = await days.closed(through, limit)        # [(DayRecord, players, top row)]
    mine = await days.entries_of(user)                # [(day, variant, DailyResult)]

A day is kept once it has closed: its leaderboard no longer changes, so each row is
stored with its competition rank and position (best first) as the live leaderboard
ranked it (`daily.leaderboard`), and read back in that order. What is shown of a day
(its seed and deal once closed) is the callers' business, as for a live day.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.exc import SQLAlchemyError

from klondike_live.daily.days import DayRecord
from klondike_live.daily.leaderboard import (
    Around,
    DailyResult,
    LeaderboardRow,
    check_around,
    check_page,
)
from klondike_live.engine import Variant
from klondike_live.history.database import History, HistoryError, reason
from klondike_live.history.erasure import deleted_id, erased_among, erased_value, hold
from klondike_live.history.schema import daily_days, daily_rows

__all__ = ["KeptDays", "KeptLeaderboard"]


def _key(day: date, variant: Variant) -> tuple[str, str]:
    return day.isoformat(), str(variant)


def _record(row: Any) -> DayRecord:
    return DayRecord.from_fields(
        {
            "date": row.date,
            "variant": row.variant,
            "seed": row.seed,
            "n": str(row.n),
            "par": str(row.par),
            "commitment": row.commitment,
            "moves": row.moves,
        }
    )


def _erased_entry(entry: DailyResult) -> DailyResult:
    """An entry of a deleted account, erased (`history.erasure`)."""
    data = erased_value(json.loads(entry.to_json()), entry.user, deleted_id(entry.user))
    return DailyResult.from_json(json.dumps(data))


def _row(row: Any) -> LeaderboardRow:
    return LeaderboardRow(int(row.rank), DailyResult.from_json(row.entry))


class KeptDays:
    """The closed days the history database keeps (see the module docstring)."""

    def __init__(self, history: History) -> None:
        self.history = history

    async def keep(self, record: DayRecord, rows: Sequence[LeaderboardRow]) -> bool:
        """Keep a closed day: its record and its final leaderboard (`rows`, best first),
        in one transaction; False when it is kept already (nothing changes). A row of
        an account deleted meanwhile is kept erased (`history.erasure`)."""
        day, variant = _key(record.day, record.variant)
        fields = record.to_fields()
        try:
            async with self.history.engine.begin() as conn:
                await hold(conn, exclusive=False)
                added = await conn.execute(
                    self.history.insert(daily_days)
                    .values(
                        date=day,
                        variant=variant,
                        seed=fields["seed"],
                        n=record.n,
                        par=record.par,
                        commitment=record.commitment,
                        moves=fields["moves"],
                        players=len(rows),
                    )
                    .on_conflict_do_nothing()
                )
                if added.rowcount != 1:
                    return False
                gone = await erased_among(conn, (row.entry.user for row in rows))
                entries = [
                    _erased_entry(row.entry) if row.entry.user in gone else row.entry
                    for row in rows
                ]
                if rows:
                    await conn.execute(
                        daily_rows.insert(),
                        [
                            {
                                "date": day,
                                "variant": variant,
                                "position": position,
                                "rank": row.rank,
                                "user_id": entry.user,
                                "entry": entry.to_json(),
                            }
                            for position, (row, entry) in enumerate(zip(rows, entries, strict=True))
                        ],
                    )
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot keep the day {day}: {reason(exc)}") from exc
        return True

    async def record(self, day: date, variant: Variant) -> DayRecord | None:
        """A kept day's record, or None when the day is not kept."""
        when, name = _key(day, variant)
        rows = await self.history.rows(
            select(daily_days).where(daily_days.c.date == when, daily_days.c.variant == name)
        )
        return _record(rows[0]) if rows else None

    async def closed(
        self, through: date, limit: int
    ) -> list[tuple[DayRecord, int, LeaderboardRow | None]]:
        """Kept days dated `through` or earlier, newest first (and by variant): each
        record, its number of players and its first row."""
        first = daily_rows.alias("first")
        rows = await self.history.rows(
            select(daily_days, first.c.rank, first.c.entry)
            .outerjoin(
                first,
                and_(
                    first.c.date == daily_days.c.date,
                    first.c.variant == daily_days.c.variant,
                    first.c.position == 0,
                ),
            )
            .where(daily_days.c.date <= through.isoformat())
            .order_by(daily_days.c.date.desc(), daily_days.c.variant)
            .limit(limit)
        )
        return [
            (_record(row), int(row.players), None if row.entry is None else _row(row))
            for row in rows
        ]

    async def entries_of(self, user: str) -> list[tuple[date, Variant, DailyResult]]:
        """Every kept row of one account: its day, variant and entry, oldest first."""
        rows = await self.history.rows(
            select(daily_rows.c.date, daily_rows.c.variant, daily_rows.c.entry)
            .where(daily_rows.c.user_id == user)
            .order_by(daily_rows.c.date, daily_rows.c.variant)
        )
        return [
            (
                date.fromisoformat(row.date),
                Variant.parse(row.variant),
                DailyResult.from_json(row.entry),
            )
            for row in rows
        ]

    def leaderboard(self, day: date, variant: Variant) -> KeptLeaderboard:
        return KeptLeaderboard(self.history, day, variant)


class KeptLeaderboard:
    """A kept day's final leaderboard, read as a live `Leaderboard` is (no writes)."""

    def __init__(self, history: History, day: date, variant: Variant) -> None:
        self.history = history
        self.day = day
        self.variant = variant
        self._where = and_(
            daily_rows.c.date == day.isoformat(), daily_rows.c.variant == str(variant)
        )

    async def count(self) -> int:
        (row,) = await self.history.rows(
            select(func.count()).select_from(daily_rows).where(self._where)
        )
        return int(row[0])

    async def _mine(self, user: str) -> Any | None:
        rows = await self.history.rows(
            select(daily_rows).where(self._where, daily_rows.c.user_id == user)
        )
        return rows[0] if rows else None

    async def entry(self, user: str) -> DailyResult | None:
        mine = await self._mine(user)
        return None if mine is None else DailyResult.from_json(mine.entry)

    async def has_entry(self, user: str) -> bool:
        return await self._mine(user) is not None

    async def rank_of(self, user: str) -> int | None:
        mine = await self._mine(user)
        return None if mine is None else int(mine.rank)

    async def page(self, offset: int = 0, limit: int = 50) -> list[LeaderboardRow]:
        check_page(offset, limit)
        return await self._between(offset, offset + limit - 1)

    async def _between(self, first: int, last: int) -> list[LeaderboardRow]:
        rows = await self.history.rows(
            select(daily_rows.c.rank, daily_rows.c.entry)
            .where(self._where, daily_rows.c.position.between(first, last))
            .order_by(daily_rows.c.position)
        )
        return [_row(row) for row in rows]

    async def around(self, user: str, n: int = 5) -> Around | None:
        check_around(n)
        mine = await self._mine(user)
        if mine is None:
            return None
        position = int(mine.position)
        rows = await self._between(max(0, position - n), position + n)
        me = next(row for row in rows if row.entry.user == user)
        return Around(me, rows)

    async def entries(self, users: Sequence[str]) -> dict[str, str]:
        """The entries (JSON) of those of `users` on the board, as `DailyStore.entries`."""
        if not users:
            return {}
        rows = await self.history.rows(
            select(daily_rows.c.user_id, daily_rows.c.entry).where(
                self._where, daily_rows.c.user_id.in_(list(users))
            )
        )
        return {row.user_id: row.entry for row in rows}
