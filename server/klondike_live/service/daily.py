"""Daily challenges in a running node: attempts, the spoiler gate, results, watchers.

    daily = DailyService(settings, store, history, clock, metrics, now_ms=..., open_room=...)
    room, ranked = await daily.open_attempt(user, name, variant)   # `create` kind daily
    await daily.check_join(user, state, role)                      # the spoiler gate
    await daily.record_result(state, board)                        # a ranked attempt ended
    board = await daily.standings(day, variant)                    # a day's leaderboard
    await daily.keep_closed_days()                                 # to the history database

Today is the UTC date of `clock()` (an aware datetime; tests pass their own clock). Each
account has one ranked attempt per day and daily variant: `kl:{d:D:S}:attempts` maps the
user to the room of that attempt, claimed with HSETNX (`DailyStore.claim_attempt`) so
that two requests at once get the same room. While it is being played, `open_attempt`
returns it again (a resume); once it is over, every call opens a new unranked practice
room on the same deal.

The spoiler gate: while the day is open, a daily room of that day (ranked or not) may be
watched only by an account that finished its own ranked attempt of the day and variant
(its leaderboard entry exists); the seed and deal are never sent while the day is open
(`RoomState.public(day_closed=...)`, `race.results.redact_results`).

An account's daily statistics (streaks, days played and won, best times) are computed
from its leaderboard rows, kept and live (`player_stats`, `daily.stats`).

Closed days: once a day has closed its leaderboard never changes, and the day (record
and final leaderboard) goes to the history database (`keep_closed_days`, on start and
every ten minutes on any node; `history.daily`); Valkey keeps its keys two more days as
a cache. A closed day's record and leaderboard are read from the database once it is
kept there (`stored_record`, `standings`), from Valkey before.

Leaderboard updates: when a ranked result is recorded, `[date, variant, count]` is
published on `keys.DAILY_UPDATES`; every node's hub hands it to `on_update`, which sends
`daily_update` to the local connections watching that day and variant.

This module must never send a card, seed or deal of an open day's challenge to anyone.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Any, Final

from klondike_live.bus.messages import DailyUpdate
from klondike_live.config import Settings
from klondike_live.daily.certify import CertificateError
from klondike_live.daily.days import (
    DailyError,
    DayRecord,
    day_of,
    is_closed,
    load_day,
    prepare_day,
    run_prepare,
)
from klondike_live.daily.leaderboard import MAX_PAGE, DailyResult, Leaderboard, LeaderboardRow
from klondike_live.daily.stats import Attempt, PlayerStats, check_user, stats_of
from klondike_live.daily.variants import DAILY_VARIANTS, slug_variant, variant_slug
from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.history import History, HistoryError
from klondike_live.history.daily import KeptDays, KeptLeaderboard
from klondike_live.history.erasure import DELETED_NAME, deleted_id
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.redaction import Disclosure, disclosure
from klondike_live.race.results import board_after
from klondike_live.race.room import FINISHED, RoomState, new_room
from klondike_live.race.rules import attempt_outcome, new_game_clock
from klondike_live.race.status import BoardStatus
from klondike_live.service.connection import Broadcast, Connection
from klondike_live.service.watchers import Watchers
from klondike_live.solver import Budget, SolverError
from klondike_live.solver.worker import WorkerError
from klondike_live.store import BoardRecord, Store, StoreError
from klondike_live.store.daily import DailyStore
from klondike_live.tasks import cancel_requested

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
"""The node's notion of now: an aware datetime. Today is its UTC date."""

MAX_WATCHES: Final = 8
"""Day-and-variant leaderboards one connection may watch at once."""

_RECORD_CACHE: Final = 64

KEEP_SECONDS: Final = 600.0
"""How often a node looks for closed days to keep in the history database."""

KEEP_BATCH: Final = 20
"""Days and variants one round keeps at most (the oldest first)."""

LIVE_DAYS: Final = 60
"""How many of the latest listed days and variants a player's statistics look for in
Valkey (those the history database does not keep yet: today, and days closed since the
last keeping round)."""

DAY_CACHE_MS: Final = 2 * 86_400_000
"""How long Valkey keeps a closed day's keys once the history database keeps the day."""


def system_clock() -> datetime:
    """The real time, in UTC."""
    return datetime.now(UTC)


def to_ms(moment: datetime) -> int:
    """Milliseconds since the epoch of an aware datetime."""
    return int(moment.timestamp() * 1000)


class DailyService:
    """The daily part of one node (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        history: History,
        clock: Clock,
        metrics: Metrics,
        *,
        now_ms: Callable[[], int],
        open_room: Callable[[RoomState], Awaitable[bool]],
    ) -> None:
        self.settings = settings
        self.store = store
        self.daily_store = DailyStore(store.redis, store.latency)
        self.kept = KeptDays(history)
        self._kept: set[tuple[date, Variant]] = set()  # days the database keeps
        self.clock = clock
        self.metrics = metrics
        self.now_ms = now_ms
        self.open_room = open_room
        self.budget = Budget(settings.daily_budget_seconds, settings.daily_budget_nodes)
        self._records: dict[tuple[date, Variant], DayRecord] = {}
        self._preparing: dict[tuple[date, Variant], asyncio.Task[DayRecord]] = {}
        self._boards: dict[tuple[date, Variant], Leaderboard] = {}
        self._watchers = Watchers[tuple[str, str]](limit=MAX_WATCHES, what="days")
        self._background: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        """Stop every preparation still running (their solver processes with them)."""
        tasks: list[asyncio.Task[Any]] = [*self._preparing.values(), *self._background]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------ days

    def today(self) -> date:
        return day_of(self.clock())

    def is_open(self, day: date) -> bool:
        """True until 00:00 UTC of the next date (by this node's clock)."""
        return not is_closed(day, self.clock())

    def day_closed(self, state: RoomState) -> bool:
        """For a daily room: whether its day has closed (False for any other room)."""
        return state.kind is RoomKind.DAILY and not self.is_open(date.fromisoformat(state.daily))

    def hidden(self, results: dict[str, Any]) -> bool:
        """Results of a daily game whose day is still open (kept off public lists)."""
        daily = results.get("daily")
        return isinstance(daily, dict) and self.is_open(date.fromisoformat(daily["date"]))

    def leaderboard(self, day: date, variant: Variant) -> Leaderboard:
        board = self._boards.get((day, variant))
        if board is None:
            if len(self._boards) >= _RECORD_CACHE:
                self._boards.clear()
            board = self._boards[(day, variant)] = Leaderboard(self.daily_store, day, variant)
        return board

    async def standings(self, day: date, variant: Variant) -> Leaderboard | KeptLeaderboard:
        """A day's leaderboard to read: the history database's once the day is kept
        there, else the live one in Valkey."""
        if not self.is_open(day) and await self._is_kept(day, variant):
            return self.kept.leaderboard(day, variant)
        return self.leaderboard(day, variant)

    async def entries(self, day: date, variant: Variant, users: list[str]) -> dict[str, str]:
        """The entries (JSON) of those of `users` on the day's leaderboard."""
        board = await self.standings(day, variant)
        if isinstance(board, KeptLeaderboard):
            return await board.entries(users)
        return await self.daily_store.entries(day, variant, users)

    async def _is_kept(self, day: date, variant: Variant) -> bool:
        if (day, variant) in self._kept:
            return True
        record = await self.kept.record(day, variant)
        if record is None:
            return False
        self._kept.add((day, variant))
        self._records.setdefault((day, variant), record)
        return True

    async def stored_record(self, day: date, variant: Variant) -> DayRecord | None:
        """The day's record if it is prepared (records never change: cached): from
        Valkey, else from the history database (a closed day kept there)."""
        record = self._records.get((day, variant))
        if record is None:
            record = await load_day(self.daily_store, day, variant)
            if record is None and not self.is_open(day):
                record = await self.kept.record(day, variant)
            if record is not None:
                if len(self._records) >= _RECORD_CACHE:
                    self._records.clear()
                self._records[(day, variant)] = record
        return record

    async def record(self, day: date, variant: Variant) -> DayRecord:
        """The day's record, prepared now if needed (which may take a while). Requests
        and the background task waiting for the same day share one preparation."""
        stored = await self.stored_record(day, variant)
        if stored is not None:
            return stored
        key = (day, variant)
        task = self._preparing.get(key)
        if task is None:
            task = asyncio.create_task(
                prepare_day(self.daily_store, self.settings.secret, day, variant, self.budget),
                name=f"prepare-{day.isoformat()}-{variant_slug(variant)}",
            )
            self._preparing[key] = task
            task.add_done_callback(lambda _: self._preparing.pop(key, None))
        # A caller that stops waiting leaves the preparation running for the others.
        return await asyncio.shield(task)

    def prepare_soon(self, day: date, variant: Variant) -> None:
        """Start preparing the day in the background (an HTTP request does not wait)."""

        async def prepare() -> None:
            try:
                await self.record(day, variant)
            except (StoreError, WorkerError, DailyError, SolverError, CertificateError) as exc:
                log.warning("preparing the daily challenge of %s failed: %s", day, exc)

        if (day, variant) not in self._preparing:
            task = asyncio.get_running_loop().create_task(prepare())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def run_prepare(self) -> None:
        """Keep today and the next `daily_days_ahead` days ready, until cancelled."""
        await run_prepare(
            self.clock,
            self.daily_store,
            self.settings.secret,
            budget=self.budget,
            days_ahead=self.settings.daily_days_ahead,
            interval=self.settings.daily_prepare_seconds,
            prepare=self.record,
        )

    async def keep_closed_days(self, limit: int = KEEP_BATCH) -> int:
        """Keep in the history database the closed days Valkey still lists that it
        does not keep yet (up to `limit` days and variants, oldest first), then let
        their Valkey keys expire (`DAY_CACHE_MS`); how many were kept now."""
        yesterday = date.fromordinal(self.today().toordinal() - 1)
        listed = await self.daily_store.indexed_days(yesterday, limit * 4)
        kept = 0
        for day_text, slug in reversed(listed):
            if kept >= limit:
                break
            try:
                day, variant = date.fromisoformat(day_text), slug_variant(slug)
            except ValueError:
                continue  # not a challenge this release knows
            if self.is_open(day) or await self._is_kept(day, variant):
                continue
            record = await load_day(self.daily_store, day, variant)
            if record is None:
                continue
            board = self.leaderboard(day, variant)
            rows: list[LeaderboardRow] = []
            while len(rows) < await board.count():
                page = await board.page(len(rows), MAX_PAGE)
                if not page:
                    break
                rows += page
            await self.kept.keep(record, rows)
            await self.daily_store.expire_day(day, variant, DAY_CACHE_MS)
            self._kept.add((day, variant))
            kept += 1
            log.info("daily %s %s kept in the history database (%d rows)", day, variant, len(rows))
        return kept

    async def player_stats(self, user: str) -> PlayerStats:
        """An account's daily statistics as of today (`daily.stats`): from its rows of
        the days the history database keeps, and of those Valkey still has."""
        check_user(user)
        attempts = [
            Attempt(day, variant, entry.won, entry.time_ms)
            for day, variant, entry in await self.kept.entries_of(user)
        ]
        today = self.today()
        for day_text, slug in await self.daily_store.indexed_days(today, LIVE_DAYS):
            try:
                day, variant = date.fromisoformat(day_text), slug_variant(slug)
            except ValueError:
                continue
            if not self.is_open(day) and await self._is_kept(day, variant):
                continue
            entry = await self.leaderboard(day, variant).entry(user)
            if entry is not None:
                attempts.append(Attempt(day, variant, entry.won, entry.time_ms))
        return stats_of(attempts, today)

    async def run_keep(self) -> None:
        """`keep_closed_days` now and every `KEEP_SECONDS`, until cancelled; a failed
        round is logged and tried again."""
        while not cancel_requested():
            try:
                await self.keep_closed_days()
            except (HistoryError, StoreError, OSError) as exc:
                log.warning("keeping closed daily challenges failed: %s", exc)
            except Exception:
                log.exception("keeping closed daily challenges failed")
            if cancel_requested():  # a driver may have swallowed the cancellation
                break
            await asyncio.sleep(KEEP_SECONDS)

    # ------------------------------------------------------------ attempts

    async def open_attempt(
        self, user: str, name: str, variant: Variant
    ) -> tuple[str, dict[str, Any]]:
        """The room of today's attempt and what it is (`date`, `variant`, `ranked`): the
        ranked attempt, resumed while it is played; once over, a new practice room."""
        if variant not in DAILY_VARIANTS:
            texts = " or ".join(repr(str(v)) for v in DAILY_VARIANTS)
            raise Refusal(ErrorCode.BAD_FIELD, f"create: a daily variant is {texts}")
        day = self.today()
        try:
            record = await self.record(day, variant)
        except (DailyError, WorkerError, SolverError, CertificateError) as exc:
            log.error("the daily challenge of %s %s is not ready: %s", day, variant, exc)
            raise Refusal(
                ErrorCode.UNAVAILABLE, "today's challenge is not ready yet; try again shortly"
            ) from None
        fresh = secrets.token_urlsafe(16)
        claimed = await self.daily_store.claim_attempt(day, variant, user, fresh)
        room_id = fresh if claimed else await self.attempt_room(user, day, variant)
        if room_id is None:  # pragma: no cover - the field was just there
            raise Refusal(ErrorCode.BUSY, "could not open the attempt; try again")
        info = {"date": day.isoformat(), "variant": str(variant), "ranked": True}
        loaded = await self.store.load_room(room_id)
        if loaded is None:
            # Claimed just now (or the room was never written): open it.
            if await self.open_room(self._new_room(room_id, user, name, record, ranked=True)):
                return room_id, info
            loaded = await self.store.load_room(room_id)
            if loaded is None:
                raise Refusal(ErrorCode.BUSY, "could not open the attempt; try again")
        if loaded[0].state != FINISHED:
            return room_id, info
        practice = self._new_room(secrets.token_urlsafe(16), user, name, record, ranked=False)
        if not await self.open_room(practice):
            raise Refusal(ErrorCode.BUSY, "could not create the room; try again")
        return practice.id, info | {"ranked": False}

    def _new_room(
        self, room_id: str, user: str, name: str, record: DayRecord, *, ranked: bool
    ) -> RoomState:
        """A daily room playing from now: one seat, the day's deal, started at once."""
        now = self.now_ms()
        state = new_room(
            room_id,
            kind=RoomKind.DAILY,
            variant=record.variant,
            capacity=1,
            time_limit=self.settings.daily_time_limit_seconds if ranked else 0,
            public=False,
            host=user,
            host_name=name,
            now_ms=now,
            daily=record.day.isoformat(),
            ranked=ranked,
        )
        started = state.set_ready(user, True).start(user, now, 0, record.seed, certified=True)
        return new_game_clock(started.state)

    async def attempt_room(self, user: str, day: date, variant: Variant) -> str | None:
        """The room of the account's ranked attempt of that day, if it started one."""
        return await self.daily_store.attempt_room(day, variant, user)

    async def has_finished(self, user: str, day: date, variant: Variant) -> bool:
        """Whether the account's ranked attempt of that day is over (it has its entry)."""
        return await self.leaderboard(day, variant).has_entry(user)

    async def may_see(self, user: str | None, day: date, variant: Variant) -> bool:
        """The spoiler gate: whether `user` may see the daily games of that day and
        variant (anyone once the day closed; while it is open, only an account whose
        ranked attempt of the day is over)."""
        if not self.is_open(day):
            return True
        return user is not None and await self.has_finished(user, day, variant)

    async def disclosure(self, results: dict[str, Any], user: str | None) -> Disclosure | None:
        """How much of a finished game's results and replay `user` is shown
        (`race.redaction`), or None when the spoiler gate keeps the game from it: a
        daily game of an open day is shown as played to those who may see it."""
        daily = results.get("daily")
        if not isinstance(daily, dict):
            return disclosure(daily=False, day_open=False)
        day = date.fromisoformat(daily["date"])
        if not await self.may_see(user, day, Variant.parse(daily["variant"])):
            return None
        return disclosure(daily=True, day_open=self.is_open(day))

    async def check_join(self, user: str, state: RoomState, role: str) -> None:
        """The spoiler gate of a daily room (no-op for other rooms)."""
        if state.kind is not RoomKind.DAILY:
            return
        if state.seat_of(user) is not None:
            return  # its own room (a player cannot watch its own game: `own_race`)
        if not await self.may_see(user, date.fromisoformat(state.daily), state.variant):
            raise Refusal(
                ErrorCode.SPOILER,
                "today's daily games can be watched once you have finished your own "
                "ranked attempt, or after the day closes",
            )
        if role == "racer":
            raise Refusal(
                ErrorCode.WRONG_STATE, "a daily attempt has one player; watch it as a spectator"
            )

    async def record_result(self, state: RoomState, board: BoardRecord | None) -> None:
        """A ranked attempt ended: its leaderboard entry and the player's statistics, under
        the attempt's own date (whenever it ends), then a `daily_update`. A deleted
        account's attempt is recorded under its marker (`history.erasure`)."""
        if state.kind is not RoomKind.DAILY or not state.ranked or board is None:
            return
        occupant = state.seats[0]
        if occupant is None:
            return
        day = date.fromisoformat(state.daily)
        outcome = attempt_outcome(
            state,
            BoardStatus(board.fields["status"]),
            finish_ms=board.int("finish_ms") if "finish_ms" in board.fields else None,
            found_ms=board.int("found_ms"),
            moves=len(board.moves),
            found=board_after(state, board.moves).foundation_count,
            now_ms=self.now_ms(),
        )
        # No display name is empty: a seat with none is a deleted account's (its seat
        # renamed by `service.erasure`), recorded under its marker.
        deleted = occupant.name == DELETED_NAME
        result = DailyResult(
            user=deleted_id(occupant.user) if deleted else occupant.user,
            name=occupant.name,
            won=outcome.won,
            time_ms=outcome.time_ms,
            moves=outcome.moves,
            found=outcome.found,
            finished_at=outcome.finished_at,
            room=state.id,
            gen=state.gen,
        )
        leaderboard = self.leaderboard(day, state.variant)
        count = await leaderboard.record_counted(result)
        if count:
            await self.daily_store.publish_update(
                DailyUpdate(day.isoformat(), str(state.variant), count)
            )
            log.info("daily %s %s: %s ranked %s", day, state.variant, result.user, count)

    # ------------------------------------------------------------ watchers

    async def watch(self, session: Connection, request: msg.DailyWatch) -> None:
        if request.variant not in DAILY_VARIANTS:
            raise Refusal(ErrorCode.BAD_FIELD, "daily_watch: not a daily variant")
        key = (request.date.isoformat(), str(request.variant))
        self._watchers.add(session, key)
        count = await (await self.standings(request.date, request.variant)).count()
        await session.send(outgoing.DailyUpdate(key[0], key[1], count, request.rid).encode())

    def unwatch(self, session: Connection, request: msg.DailyUnwatch) -> None:
        self._watchers.remove(session, (request.date.isoformat(), str(request.variant)))

    def forget(self, session: Connection) -> None:
        """A connection closed: drop its watches."""
        self._watchers.forget(session)

    def on_update(self, update: DailyUpdate, broadcast: Broadcast) -> None:
        """A leaderboard got an entry (from any node): tell the local watchers."""
        connections = self._watchers.of((update.day, update.variant))
        if not connections:
            return
        broadcast(
            connections, outgoing.DailyUpdate(update.day, update.variant, update.count).encode()
        )
        self.metrics.frames_out.inc(len(connections))
