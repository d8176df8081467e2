"""Tournaments in a running node: requests, heats' rooms and timers, standings, watchers.

    tournaments = Tournaments(settings, store, history, rooms, boards, daily, hub)
    await tournaments.create(conn, request)        # `tournament_create`
    await tournaments.handle(conn, request)        # enter, withdraw, action, watch, unwatch
    await tournaments.rename(conn, name)           # its player's new name, where it watches
    await tournaments.run_timer(tid, arg)          # a due `tournament` timer
    tournaments.room_finished(room_id, gen)        # a game this node finished
    tournaments.on_update(tid)                     # the bus: a tournament was written
    tournaments.on_daily_update(day, variant)      # the bus: a daily leaderboard grew

The rules are `race.tournament`'s (transitions, points, standings); this module applies
them with the store's compare-and-set and acts on what changed:

- A heat's room opens (`open:<n>` timer) with a seat for every entrant, ready and away
  until its entrant joins; it starts at its time (`start:<n>`) on the deal committed
  when the tournament was created; entrants still away then have the usual grace period
  to come (then they count as resigned). Its end, on whichever node finishes it (or at
  the `check:<n>` timer after its time limit, should that node die first), scores it
  and schedules the next heat after the pause.
- A series reads each day's results from the daily leaderboards (an entrant's ranked
  attempt, finished after it entered), so its standings change whenever a leaderboard
  of one of its days does; the daily spoiler gate applies to its entrants as to anyone.

Watchers (`tournament_watch`) get the `tournament` frame now and again after every
change, from any node: a write publishes `<id>|<rev>` on `keys.TOURNAMENT_UPDATES`.

A tournament that is over (finished or cancelled) goes to the history database, by the
node whose write ended it (or, should that fail, by any node that reads it while Valkey
still has it); from then on Valkey keeps it only as a cache (`TournamentStore.archived`),
and its page and the public list read it from the database.

This module never sends a heat's seed before its heat is over, nor a daily seed or deal
of an open day (`tournament_view` decides what is shown).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, Final

import msgpack

from klondike_live.config import Settings
from klondike_live.daily.leaderboard import DailyResult
from klondike_live.engine import Deal
from klondike_live.errors import Refusal
from klondike_live.history import History, HistoryError
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import DealMode, RoomKind, TournamentFormat
from klondike_live.race.room import (
    COUNTDOWN,
    FINISHED,
    LOBBY,
    RACING,
    RoomState,
    Seat,
    commitment,
)
from klondike_live.race.status import BoardOp
from klondike_live.race.tournament import (
    HeatPhase,
    LogEntry,
    LogKind,
    NewTournament,
    Result,
    TournamentState,
    new_tournament,
)
from klondike_live.race.tournament_view import SeriesRound, tournament_wire
from klondike_live.service.boards import Boards
from klondike_live.service.connection import Connection
from klondike_live.service.daily import DailyService
from klondike_live.service.ending import check_end
from klondike_live.service.hub import Hub
from klondike_live.service.rooms import Rooms
from klondike_live.service.watchers import Watchers
from klondike_live.store import Conflict, Store, StoreError, TimerKind
from klondike_live.store.tournaments import TournamentStore

log = logging.getLogger(__name__)

OPEN_LEAD_MS: Final = 120_000
"""A heat's room opens this long before its start (at once when it is due sooner)."""

CHECK_AFTER_MS: Final = 5_000
"""After a heat's time limit, a timer makes sure its end was scored."""

MAX_WATCHES: Final = 8
"""Tournaments one connection may watch at once."""

LISTED: Final = 50
"""Tournaments `GET /api/tournaments` lists."""


def _tid(text: str) -> str:
    """A tournament id from a timer or room field."""
    return text.partition("/")[0]


class Tournaments:
    """The tournament part of one node (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        history: History,
        rooms: Rooms,
        boards: Boards,
        daily: DailyService,
        hub: Hub,
    ) -> None:
        self.settings = settings
        self.store = store
        self.tournaments = TournamentStore(store.redis, store.retention, store.latency)
        self.history = history
        self._archived: set[str] = set()  # kept by the history database, as far as we know
        self.rooms = rooms
        self.boards = boards
        self.daily = daily
        self.hub = hub
        self._watchers = Watchers[str](limit=MAX_WATCHES, what="tournaments")

    # ------------------------------------------------------------ reading

    async def load(self, tournament_id: str) -> TournamentState:
        """The tournament: from Valkey (keeping it in the database if it is over and
        not kept yet), else from the history database."""
        loaded = await self.tournaments.load(tournament_id)
        if loaded is not None:
            await self._archive(loaded[0])
            return self._current(loaded[0])
        blob = await self.history.load_tournament(tournament_id)
        if blob is None:
            raise Refusal(ErrorCode.NO_ROOM, "no such tournament")
        return TournamentState.from_blob(blob)

    async def _archive(self, state: TournamentState) -> None:
        """A tournament that is over, to the history database (once per node; again
        by any node while Valkey has it, should a write fail)."""
        if not state.over or state.id in self._archived:
            return
        try:
            await self.history.add_tournament(state)
            await self.tournaments.archived(state.id)
        except (HistoryError, StoreError, OSError) as exc:
            log.warning("tournament %s not kept in the history database yet: %s", state.id, exc)
            return
        self._archived.add(state.id)

    def _current(self, state: TournamentState) -> TournamentState:
        """A series' phase follows the calendar (days start and close by the clock)."""
        if state.format is not TournamentFormat.SERIES or state.over:
            return state
        today = self.daily.today()
        closed = not self.daily.is_open(date.fromisoformat(state.last_day))
        return state.series_progress(self.rooms.now_ms(), today, closed)

    async def view(self, state: TournamentState) -> dict[str, Any]:
        """The tournament as everyone sees it: settings, entrants, rounds and standings."""
        rounds = await self._series_rounds(state) if state.format is TournamentFormat.SERIES else []
        return tournament_wire(state, rounds, now_ms=self.rooms.now_ms())

    async def _series_rounds(self, state: TournamentState) -> list[SeriesRound]:
        """Each day and variant of a series with its entrants' counted results."""
        users = [e.user for e in state.entrants]
        entered = {e.user: e.entered_ms for e in state.entrants}
        out = []
        for day in state.days():
            started = day <= self.daily.today()
            for variant in state.variants:
                record = await self.daily.stored_record(day, variant) if started else None
                closed = not self.daily.is_open(day)
                results: list[Result] = []
                if started:
                    entries = await self.daily.entries(day, variant, users)
                    for user, text in entries.items():
                        entry = DailyResult.from_json(text)
                        if entry.finished_at < entered[user]:
                            continue  # played before entering: not the tournament's
                        results.append(
                            Result(
                                user=user,
                                won=entry.won,
                                time_ms=entry.time_ms,
                                found=entry.found,
                                moves=entry.moves,
                                by_moves=True,
                                game=f"{entry.room}/{entry.gen}" if entry.room else "",
                            )
                        )
                out.append(
                    SeriesRound(
                        day=day,
                        variant=variant,
                        started=started,
                        closed=closed,
                        commitment=record.commitment if record is not None else "",
                        seed=record.seed if record is not None and closed else "",
                        results=tuple(results),
                    )
                )
        return out

    async def listed(self) -> list[dict[str, Any]]:
        """Public tournaments, newest first, in brief: those Valkey lists (to come,
        running, just over), and those the history database keeps."""
        states: dict[str, TournamentState] = {}
        for tournament_id in await self.tournaments.listed(LISTED):
            loaded = await self.tournaments.load(tournament_id)
            if loaded is None:
                await self.tournaments.unlist(tournament_id)
                continue
            states[tournament_id] = self._current(loaded[0])
        for blob in await self.history.listed_tournaments(LISTED):
            kept = TournamentState.from_blob(blob)
            states.setdefault(kept.id, kept)
        newest = sorted(states.values(), key=lambda t: t.created_ms, reverse=True)[:LISTED]
        out = []
        for state in newest:
            out.append(
                {
                    "id": state.id,
                    "name": state.name,
                    "format": str(state.format),
                    "variants": [str(v) for v in state.variants],
                    "state": str(state.phase),
                    "entrants": len(state.entrants),
                    "cap": state.cap,
                    "organizer": state.organizer_name,
                    **(
                        {"from": state.first_day, "to": state.last_day}
                        if state.format is TournamentFormat.SERIES
                        else {"start_at": state.heats[0].start_at_ms, "heats": len(state.heats)}
                    ),
                }
            )
        return out

    # ------------------------------------------------------------ requests

    async def create(self, conn: Connection, request: msg.TournamentCreate) -> None:
        now = self.rooms.now_ms()
        today = self.daily.today()
        wanted = NewTournament(
            name=request.name,
            format=request.format,
            variants=request.variants,
            public=request.public,
            cap=request.cap,
            opens_ms=request.opens_at if request.opens_at is not None else now,
            closes_ms=request.closes_at,
            first_day=request.first_day,
            last_day=request.last_day,
            start_ms=request.start_at,
            heats=request.heats,
            pause_s=request.pause,
            time_limit_s=request.time_limit,
        )
        wanted.check(now, today)  # before a certified deal is taken for it
        deals: list[tuple[str, str, bool]] = []
        if request.format is TournamentFormat.HEATS:
            for _ in range(request.heats):
                seed, certified = await self.rooms.deal(request.variants[0], DealMode.CERTIFIED)
                deals.append((seed, commitment(Deal.from_seed(seed)), certified))
        tournament_id = secrets.token_urlsafe(12)  # 96 bits: the invite link
        state = new_tournament(
            tournament_id, wanted, tuple(deals), conn.user, conn.name, now, today
        )
        if not await self.tournaments.create(state):
            raise Refusal(ErrorCode.BUSY, "could not create the tournament; try again")
        if state.format is TournamentFormat.HEATS:
            await self._schedule(state, 1, state.heats[0].start_at_ms)
        log.info("tournament %s created by %s (%s)", state.id, conn.user, state.format)
        await conn.send(outgoing.TournamentCreated(request.rid, state.id).encode())

    async def handle(
        self,
        conn: Connection,
        request: msg.TournamentEnter
        | msg.TournamentWithdraw
        | msg.TournamentAction
        | msg.TournamentWatch
        | msg.TournamentUnwatch,
    ) -> None:
        match request:
            case msg.TournamentWatch():
                await self.watch(conn, request.tournament, request.rid)
            case msg.TournamentUnwatch():
                self.unwatch(conn, request.tournament)
            case msg.TournamentEnter():
                now = self.rooms.now_ms()
                await self._change(request.tournament, lambda s: s.enter(conn.user, conn.name, now))
                await self._answer(conn, request.tournament, request.rid)
            case msg.TournamentWithdraw():
                now = self.rooms.now_ms()
                await self._change(request.tournament, lambda s: s.withdraw(conn.user, now))
                await self._answer(conn, request.tournament, request.rid)
            case msg.TournamentAction():
                await self.action(conn, request)
                await self._answer(conn, request.tournament, request.rid)

    async def _answer(self, conn: Connection, tournament_id: str, rid: int | None) -> None:
        """The requester's answer: the tournament as it is now (with its `rid`)."""
        state = await self.load(tournament_id)
        await conn.send(outgoing.Tournament(await self.view(state), rid).encode())

    async def action(self, conn: Connection, request: msg.TournamentAction) -> None:
        """An organizer's action, logged on the tournament."""
        tid = request.tournament
        user = conn.user
        now = self.rooms.now_ms()
        match request.action:
            case "open" | "close":
                opening = request.action == "open"
                await self._change(tid, lambda s: s.set_registration(user, opening, now))
            case "remove":
                target = request.user or ""
                _, new = await self._change(tid, lambda s: s.remove(user, target, now))
                await self._unseat(new, target)
            case "cancel":
                old, new = await self._change(tid, lambda s: s.cancel(user, now))
                for heat in old.heats:
                    if heat.phase is HeatPhase.RACING and heat.room:
                        await self._stop_heat_room(heat.room)
                    elif heat.phase is HeatPhase.LOBBY and heat.room:
                        await self.store.expire_room(heat.room)  # never to be played
            case "start_heat":
                state = await self.load(tid)
                state.check_organizer(user)
                waiting = state.current_heat()
                if state.format is not TournamentFormat.HEATS or waiting is None:
                    raise Refusal(ErrorCode.WRONG_STATE, "no heat is waiting to start")
                if waiting.phase is HeatPhase.RACING:
                    raise Refusal(ErrorCode.WRONG_STATE, f"heat {waiting.number} is under way")
                name = state.organizer_name
                number = waiting.number
                await self._change(
                    tid,
                    lambda s: s.reschedule(number, now).logged(
                        LogEntry.of(now, name, LogKind.HEAT_STARTED_EARLY, heat=number)
                    ),
                )
                await self._open_heat(tid, number)
                await self._start_heat(tid, number)
            case _:  # pragma: no cover - the protocol allows only these
                raise Refusal(ErrorCode.BAD_FIELD, "unknown action")

    async def _change(
        self, tournament_id: str, change: Callable[[TournamentState], TournamentState]
    ) -> tuple[TournamentState, TournamentState]:
        try:
            old, new = await self.tournaments.update(
                tournament_id, lambda s: change(self._current(s))
            )
        except LookupError:
            if await self.history.load_tournament(tournament_id) is not None:
                raise Refusal(ErrorCode.WRONG_STATE, "the tournament is over") from None
            raise Refusal(ErrorCode.NO_ROOM, "no such tournament") from None
        except Conflict:
            raise Refusal(ErrorCode.BUSY, "the tournament is busy; try again") from None
        await self._archive(new)
        return old, new

    async def rename(self, conn: Connection, name: str) -> None:
        """`conn`'s player took a new name: shown in the tournaments its connection
        watches (the tournament pages open in it) where it is an entrant or the
        organizer. An entry elsewhere keeps its name until the player enters it again
        or opens its page and renames (no index of a player's entries is kept)."""
        for tournament_id in self._watchers.watched_by(conn):
            with contextlib.suppress(Refusal):  # gone meanwhile, or busy: its name stays
                state = await self.load(tournament_id)
                if state.entrant(conn.user) is not None or state.organizer == conn.user:
                    await self._change(tournament_id, lambda s: s.rename(conn.user, name))

    # ------------------------------------------------------------ watchers

    async def watch(self, conn: Connection, tournament_id: str, rid: int | None) -> None:
        state = await self.load(tournament_id)
        self._watchers.add(conn, tournament_id)
        await conn.send(outgoing.Tournament(await self.view(state), rid).encode())

    def unwatch(self, conn: Connection, tournament_id: str) -> None:
        self._watchers.remove(conn, tournament_id)

    def forget(self, conn: Connection) -> None:
        """A connection closed: drop its watches."""
        self._watchers.forget(conn)

    def on_update(self, tournament_id: str) -> None:
        """A tournament was written (by any node): its local watchers get it again."""
        if self._watchers.of(tournament_id):
            self.hub.spawn(self._push(tournament_id), f"tournament-{tournament_id}")

    def on_daily_update(self, day: str, variant: str) -> None:
        """A daily leaderboard grew: series watched here that include it change."""
        for tournament_id in self._watchers.watched():
            self.hub.spawn(self._push(tournament_id, (day, variant)), f"tournament-{tournament_id}")

    async def _push(self, tournament_id: str, daily: tuple[str, str] | None = None) -> None:
        try:
            state = await self.load(tournament_id)
        except (Refusal, StoreError) as exc:
            log.warning("tournament %s: not sent to its watchers: %s", tournament_id, exc)
            return
        if daily is not None and (
            state.format is not TournamentFormat.SERIES
            or daily[0] not in {d.isoformat() for d in state.days()}
            or daily[1] not in {str(v) for v in state.variants}
        ):
            return
        watchers = self._watchers.of(tournament_id)
        if watchers:
            frame = outgoing.Tournament(await self.view(state)).encode()
            self.hub.broadcast(watchers, frame)

    # ------------------------------------------------------------ heats

    async def _schedule(self, state: TournamentState, number: int, start_ms: int) -> None:
        """Timers of one heat: the first heat's room opens a little before its start,
        once the registration has closed (its seats are the entrants then); a later
        heat's at once, so that its entrants wait in it during the pause."""
        opens = max(start_ms - OPEN_LEAD_MS, state.closes_ms) if number == 1 else 0
        await self.store.add_timer(state.id, TimerKind.TOURNAMENT, f"open:{number}", opens)
        tournament_id = state.id
        await self.store.add_timer(tournament_id, TimerKind.TOURNAMENT, f"start:{number}", start_ms)

    async def run_timer(self, tournament_id: str, arg: str) -> None:
        """A due tournament timer this node won: open, start or check a heat."""
        what, _, number_text = arg.partition(":")
        if not number_text.isdigit():
            log.warning("tournament %s: unknown timer %r", tournament_id, arg)
            return
        number = int(number_text)
        try:
            if what == "open":
                await self._open_heat(tournament_id, number)
            elif what == "start":
                await self._open_heat(tournament_id, number)
                await self._start_heat(tournament_id, number)
            elif what == "check":
                await self._check_heat(tournament_id, number)
        except Refusal as exc:
            log.warning("tournament %s heat %d: %s: %s", tournament_id, number, what, exc.message)

    async def _open_heat(self, tournament_id: str, number: int) -> None:
        """The heat's room, with a seat for every entrant: named in the tournament first,
        then written if it is not there yet (so a node that died between the two writes
        leaves a name that the next open or start writes)."""
        state = await self.load(tournament_id)
        if state.over or state.heat(number).phase is HeatPhase.SCHEDULED:
            if state.over:
                return
            fresh = secrets.token_urlsafe(16)
            _, state = await self._change(tournament_id, lambda s: s.heat_opened(number, fresh, 1))
        heat = state.heat(number)
        if heat.phase is not HeatPhase.LOBBY or await self.store.load_room(heat.room) is not None:
            return
        seats = tuple(
            Seat(user=e.user, name=e.name, ready=True, online=False) for e in state.entrants
        )
        room = RoomState(
            id=heat.room,
            kind=RoomKind.RACE,
            variant=state.variants[0],
            capacity=max(1, len(seats)),
            time_limit=state.time_limit_s,
            public_room=state.public_listing,
            host=state.organizer,
            created_ms=self.rooms.now_ms(),
            seats=seats or (None,),
            deal=DealMode.CERTIFIED,
            tournament=f"{tournament_id}/{number}",
        )
        await self.store.write_room(room, 0)

    async def _start_heat(self, tournament_id: str, number: int) -> None:
        """Deal the committed deal to the heat's room; the countdown starts now."""
        state = await self.load(tournament_id)
        heat = state.heat(number)
        if state.over or heat.phase is not HeatPhase.LOBBY:
            return
        if not (await self.rooms.load(heat.room)).seated():
            # Nobody entered (or every entrant was removed): over at once, no results.
            now = self.rooms.now_ms()
            await self._change(tournament_id, lambda s: s.heat_started(number, now, now))
            await self._score(tournament_id, number, [])
            return
        countdown = int(self.settings.countdown_seconds * 1000)
        step = await self.rooms.transition(
            heat.room,
            lambda s, now: (
                s.start(s.host, now, countdown, heat.seed, heat.certified)
                if s.state == LOBBY
                else s
            ),
        )
        room = step.state
        now = self.rooms.now_ms()
        await self._change(tournament_id, lambda s: s.heat_started(number, room.start_at_ms, now))
        # Entrants not there yet have the grace period to come, then count as resigned.
        grace = int(self.settings.grace_seconds * 1000)
        for _, seat in room.seated():
            if not seat.online:
                due = max(now, room.start_at_ms) + grace
                await self.store.add_timer(room.id, TimerKind.GRACE, seat.user, due)
        if room.time_limit:
            check = room.start_at_ms + room.time_limit * 1000 + CHECK_AFTER_MS
            await self.store.add_timer(
                tournament_id, TimerKind.TOURNAMENT, f"check:{number}", check
            )
        log.info("tournament %s heat %d started in room %s", tournament_id, number, room.id)

    def room_finished(self, room_id: str, gen: int) -> None:
        """A game this node finished: a heat's end is scored (in the background)."""
        self.hub.spawn(self._room_finished(room_id), f"heat-end-{room_id}")

    async def _room_finished(self, room_id: str) -> None:
        loaded = await self.store.load_room(room_id)
        if loaded is None or not loaded[0].tournament:
            return
        tournament_id, _, number = loaded[0].tournament.partition("/")
        await self._check_heat(tournament_id, int(number))

    async def _check_heat(self, tournament_id: str, number: int) -> None:
        """Score the heat if its race is over (idempotent: any node, any number of times)."""
        state = await self.load(tournament_id)
        heat = state.heat(number)
        if heat.phase is not HeatPhase.RACING:
            return
        loaded = await self.store.load_room(heat.room)
        if loaded is None:
            return
        room = loaded[0]
        if room.state in (COUNTDOWN, RACING):
            await check_end(self.rooms, heat.room)  # due, if its node died before ending it
            loaded = await self.store.load_room(heat.room)
            if loaded is None or loaded[0].state != FINISHED:
                return
            room = loaded[0]
        if room.state != FINISHED:
            return
        blob = await self.store.load_results(room.id, room.gen)
        if blob is None:
            return
        payload = msgpack.unpackb(blob, raw=False)
        await self._score(tournament_id, number, heat_results(room.id, payload))

    async def _score(self, tournament_id: str, number: int, results: Sequence[Result]) -> None:
        """Score a heat and set the next one going. The next heat's timers are written
        first: a node that dies between the two writes leaves timers that find the heat
        not scored (and do nothing) rather than a scored heat whose successor never
        opens; another node's `check` timer scores it again."""
        now = self.rooms.now_ms()
        state = await self.load(tournament_id)
        if state.heat(number).phase is not HeatPhase.RACING:
            return
        following = now + state.pause_s * 1000
        if number < len(state.heats):
            await self._schedule(state, number + 1, following)
        await self._change(
            tournament_id, lambda s: s.heat_finished(number, results, now, following)
        )
        log.info("tournament %s heat %d scored (%d results)", tournament_id, number, len(results))

    async def _stop_heat_room(self, room_id: str) -> None:
        """The organizer cancelled during a heat: its boards stop now and the race ends
        with results as they stand (kept, never scored)."""
        with contextlib.suppress(Refusal):
            room = await self.rooms.load(room_id)
            if room.state in (COUNTDOWN, RACING):
                await self.boards.end_playing(room, BoardOp.TIMEOUT)

    async def _unseat(self, state: TournamentState, user: str) -> None:
        """A removed entrant: its seat in a heat's lobby goes, its board under way resigns."""
        heat = state.current_heat()
        if heat is None or not heat.room:
            return
        with contextlib.suppress(Refusal):
            room = await self.rooms.load(heat.room)
            seat = room.seat_of(user)
            if seat is None:
                return
            if room.state == LOBBY:
                await self.rooms.transition(heat.room, lambda s, _now: s.drop_seat(user))
            elif room.state in (COUNTDOWN, RACING):
                await self.boards.end_playing(room, BoardOp.RESIGN, only_seat=seat)


def heat_results(room_id: str, payload: dict[str, Any]) -> list[Result]:
    """The results of a heat's race that count: each racer who made a move (an entrant
    who never played the heat scores nothing for it), in the race's own terms."""
    out = []
    for row in payload["ranking"]:
        if not row.get("user") or not row.get("moves"):
            continue
        won = row["status"] == "won"
        out.append(
            Result(
                user=row["user"],
                won=won,
                time_ms=int(row["time_ms"]) if won else int(row["found_ms"]),
                found=int(row["found"]),
                moves=int(row["moves"]),
                game=f"{room_id}/{payload['gen']}",
            )
        )
    return out
