"""The daily challenges' HTTP JSON API (routing and responses: `http.py`).

    GET /api/daily                                today's challenges, and your attempts
    GET /api/daily/<date>/<slug>/leaderboard      one leaderboard page, and your rank
    GET /api/daily/archive?limit=30               closed days with their seeds and deals
    GET /api/daily/stats                          your daily statistics (token required)

"Your" needs `Authorization: Bearer <token>` (a websocket token); a missing or invalid
token is treated as anonymous. `access` is the spoiler gate of `/api/results` and
`/api/replay` for daily games; what those who pass it are shown is `race.redaction`'s
policy (docs/rules.md, "What each viewer may see"). Shapes: docs/daily.md.

Nothing here reveals a seed or deal of a day that has not closed: seeds come only from
`DayRecord.reveal`, which refuses an open day.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date
from http import HTTPStatus
from typing import Any, Final

from klondike_live import keys
from klondike_live.daily.days import day_end, day_of, is_closed
from klondike_live.daily.leaderboard import LeaderboardRow
from klondike_live.daily.variants import DAILY_VARIANTS, slug_variant, variant_slug
from klondike_live.engine import Variant
from klondike_live.race.redaction import Disclosure, disclosure
from klondike_live.race.room import FINISHED
from klondike_live.service.daily import DailyService, to_ms

MAX_LIMIT: Final = 100
MAX_OFFSET: Final = 10**7
NEIGHBOURS: Final = 5
_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")

Answer = tuple[HTTPStatus, Any]


def _error(status: HTTPStatus, code: str) -> Answer:
    return status, {"error": code}


def _number(query: dict[str, list[str]], name: str, default: int, high: int) -> int | None:
    """A non-negative integer query parameter (clamped to `high`); None if malformed."""
    values = query.get(name)
    if not values:
        return default
    text = values[-1]
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        return None
    return min(int(text), high)


def row_json(row: LeaderboardRow) -> dict[str, Any]:
    entry = row.entry
    return {
        "rank": row.rank,
        "user": entry.user,
        "name": entry.name,
        "won": entry.won,
        "time_ms": entry.time_ms,
        "moves": entry.moves,
        "found": entry.found,
        "finished_at": entry.finished_at,
        "room": entry.room or None,
        "gen": entry.gen or None,
    }


def _day(text: str) -> date | None:
    if not _DATE.match(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _daily_variant(slug: str) -> Variant | None:
    try:
        variant = slug_variant(slug)
    except ValueError:
        return None
    return variant if variant in DAILY_VARIANTS else None


class DailyApi:
    """The `/api/daily...` answers and the spoiler gate of results and replays."""

    def __init__(self, daily: DailyService) -> None:
        self.daily = daily
        self.redis = daily.redis

    async def route(self, route: str, query: dict[str, list[str]], user: str | None) -> Answer:
        """`route` is the path after `/api/`: `daily` or `daily/...`."""
        parts = route.split("/")
        if parts == ["daily"]:
            return HTTPStatus.OK, await self.today(user)
        if parts == ["daily", "archive"]:
            limit = _number(query, "limit", 30, MAX_LIMIT)
            if limit is None:
                return _error(HTTPStatus.BAD_REQUEST, "bad_request")
            return HTTPStatus.OK, await self.archive(max(1, limit))
        if parts == ["daily", "stats"]:
            if user is None:
                return _error(HTTPStatus.UNAUTHORIZED, "unauthorized")
            return HTTPStatus.OK, await self.stats(user)
        if len(parts) == 4 and parts[0] == "daily" and parts[3] == "leaderboard":
            return await self.leaderboard(parts[1], parts[2], query, user)
        return _error(HTTPStatus.NOT_FOUND, "not_found")

    async def today(self, user: str | None) -> dict[str, Any]:
        now = self.daily.clock()
        day = day_of(now)
        challenges = []
        for variant in DAILY_VARIANTS:
            record = await self.daily.stored_record(day, variant)
            if record is None:
                self.daily.prepare_soon(day, variant)
            board = self.daily.leaderboard(day, variant)
            challenges.append(
                {
                    "date": day.isoformat(),
                    "variant": str(variant),
                    "slug": variant_slug(variant),
                    "commitment": record.commitment if record else None,
                    "par": record.par if record else None,
                    "ready": record is not None,
                    "players": await board.count(),
                    "closes_at": to_ms(day_end(day)),
                    "attempt": None if user is None else await self._attempt(user, day, variant),
                }
            )
        return {"now": to_ms(now), "date": day.isoformat(), "challenges": challenges}

    async def _attempt(self, user: str, day: date, variant: Variant) -> dict[str, Any] | None:
        room = await self.daily.attempt_room(user, day, variant)
        if room is None:
            return None
        board = self.daily.leaderboard(day, variant)
        entry = await board.entry(user)
        finished = entry is not None
        if not finished:
            loaded = await self.daily.store.load_room(room)
            finished = loaded is not None and loaded[0].state == FINISHED
        return {
            "room": room,
            "ranked": True,
            "state": "finished" if finished else "playing",
            "result": None
            if entry is None
            else {
                "won": entry.won,
                "time_ms": entry.time_ms,
                "moves": entry.moves,
                "found": entry.found,
            },
            "rank": None if entry is None else await board.rank_of(user),
        }

    async def leaderboard(
        self, day_text: str, slug: str, query: dict[str, list[str]], user: str | None
    ) -> Answer:
        day = _day(day_text)
        variant = _daily_variant(slug)
        if day is None or variant is None or day > self.daily.today():
            return _error(HTTPStatus.NOT_FOUND, "not_found")
        offset = _number(query, "offset", 0, MAX_OFFSET)
        limit = _number(query, "limit", 50, MAX_LIMIT)
        if offset is None or limit is None:
            return _error(HTTPStatus.BAD_REQUEST, "bad_request")
        board = self.daily.leaderboard(day, variant)
        rows = await board.page(offset, max(1, limit))
        record = await self.daily.stored_record(day, variant)
        me = None
        if user is not None:
            around = await board.around(user, NEIGHBOURS)
            if around is not None:
                me = {"rank": around.me.rank, "rows": [row_json(r) for r in around.rows]}
        return HTTPStatus.OK, {
            "date": day.isoformat(),
            "variant": str(variant),
            "slug": slug,
            "count": await board.count(),
            "closed": is_closed(day, self.daily.clock()),
            "par": record.par if record else None,
            "rows": [row_json(r) for r in rows],
            "me": me,
        }

    async def archive(self, days: int) -> list[dict[str, Any]]:
        """Closed days, newest first: every daily variant of each, seed and deal shown."""
        now = self.daily.clock()
        yesterday = day_of(now).toordinal() - 1
        members: list[Any] = await self.redis.zrevrangebyscore(
            keys.DAILY_INDEX, yesterday, "-inf", start=0, num=days * len(DAILY_VARIANTS)
        )
        found: list[tuple[date, Variant]] = []
        for member in members:
            text = member.decode() if isinstance(member, bytes) else str(member)
            day_text, _, slug = text.partition("|")
            day, variant = _day(day_text), _daily_variant(slug)
            if day is not None and variant is not None:
                found.append((day, variant))
        found.sort(key=lambda item: (-item[0].toordinal(), DAILY_VARIANTS.index(item[1])))
        kept = sorted({day for day, _ in found}, reverse=True)[:days]
        out = []
        for day, variant in found:
            record = await self.daily.stored_record(day, variant)
            if day not in kept or record is None or not is_closed(day, now):
                continue
            revealed = record.reveal(now)
            board = self.daily.leaderboard(day, variant)
            top = await board.page(0, 1)
            out.append(
                {
                    "date": day.isoformat(),
                    "variant": str(variant),
                    "slug": variant_slug(variant),
                    "commitment": record.commitment,
                    "par": record.par,
                    "seed": revealed["seed"],
                    "deal": revealed["deal"],
                    "players": await board.count(),
                    "winner": row_json(top[0]) if top and top[0].entry.won else None,
                }
            )
        return out

    async def stats(self, user: str) -> dict[str, Any]:
        mine = await self.daily.stats.get(user, self.daily.today())
        data = dataclasses.asdict(mine)
        data["last_played"] = None if mine.last_played is None else mine.last_played.isoformat()
        return data

    async def access(self, results: dict[str, Any], user: str | None) -> Disclosure | None:
        """The spoiler gate of a finished game's results and replay: how much `user` is
        shown (`race.redaction`), or None when it may not see the game at all. A daily
        game while its day is open: only an account that finished its ranked attempt of
        that day and variant (its player included), `AS_PLAYED`; anyone else, None.
        Any other game, or once the day closed: `FULL` for anyone."""
        daily = results.get("daily")
        if not isinstance(daily, dict):
            return disclosure(daily=False, day_open=False)
        day = date.fromisoformat(daily["date"])
        if not self.daily.is_open(day):
            return disclosure(daily=True, day_open=False)
        variant = Variant.parse(daily["variant"])
        if user is None or not await self.daily.has_finished(user, day, variant):
            return None
        return disclosure(daily=True, day_open=True)
