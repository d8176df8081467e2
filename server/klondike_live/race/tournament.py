"""A tournament as a plain value: settings, entrants, rounds, standings and transitions.

A tournament is run by its organizer for its entrants, in one of two formats:

    series   one round per day and variant over a date range, on that day's daily deal:
             each entrant's ranked daily attempt of the day is its result
    heats    K races at scheduled times, every entrant on the same certified deal at once

`TournamentState` is what the store keeps (one msgpack blob, changed only by a
compare-and-set on its revision, like a room). Every transition is a pure method that
returns the next state or raises `Refusal` with a protocol error code; the
service calls it and writes the result.

Scoring (docs/tournaments.md, "Points"). In each round the entrants who played it are
ranked by the race rules (`race.ranking` for heats, the daily leaderboard's order for a
series day): with `n` of them, place `p` scores `n - p + 1` points, and entrants tied on
places `p .. p + k - 1` share those places' points equally (each gets their average).
An entrant who did not play a round scores nothing for it. The standings order by total
points, then by rounds won (place 1, shared or not), then by rounds played; entrants
equal on all three share a rank (1, 1, 3).

The seeds of heats are secret until their heat is over (`public()` gives commitments);
a series' deals are the daily challenges', revealed by the daily rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from enum import StrEnum
from typing import Any, Final

import msgpack

from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.incoming import MAX_HEATS
from klondike_live.protocol.kinds import TournamentFormat

MAX_ENTRANTS: Final = 100
"""Entrants a tournament may take (a heat races them all at once)."""

MAX_SERIES_DAYS: Final = 31
MAX_LOG: Final = 200
"""Organizer actions kept on the tournament's page (the oldest dropped first)."""


class TournamentPhase(StrEnum):
    UPCOMING = "upcoming"  # registration may be open; no round has started
    RUNNING = "running"
    FINISHED = "finished"  # every round is over: the archive
    CANCELLED = "cancelled"  # stopped by its organizer: results so far are kept


class HeatPhase(StrEnum):
    SCHEDULED = "scheduled"  # its deal is committed; no room yet
    LOBBY = "lobby"  # its room is open: entrants take their seats
    RACING = "racing"  # countdown or race under way
    FINISHED = "finished"  # results stored and scored
    CANCELLED = "cancelled"  # stopped by the organizer: shown, never scored


@dataclass(frozen=True, slots=True)
class Entrant:
    user: str
    name: str
    entered_ms: int


@dataclass(frozen=True, slots=True)
class Result:
    """One entrant's result in one round, as the ranking rules see it."""

    user: str
    won: bool
    time_ms: int  # winners: time to win; others: when `found` was reached
    found: int
    moves: int = 0
    by_moves: bool = False  # winners with equal times: fewer moves first (a series day)
    game: str = ""  # "<room>/<gen>" of the game it was played in (its replay)

    def sort_key(self) -> tuple[int, int, int]:
        """The order of `race.ranking` (heats) or of the daily leaderboard (series)."""
        if self.won:
            return (0, self.time_ms, self.moves if self.by_moves else 0)
        return (1, -self.found, self.time_ms)


@dataclass(frozen=True, slots=True)
class Scored:
    """A result with its place and points in its round."""

    result: Result
    place: int
    points: float


@dataclass(frozen=True, slots=True)
class Heat:
    """One heat: its committed deal, its room once opened, its scored results."""

    number: int  # 1-based
    seed: str  # secret until the heat is over
    commitment: str
    certified: bool
    phase: HeatPhase = HeatPhase.SCHEDULED
    start_at_ms: int = 0  # when it is due to start (or started)
    room: str = ""
    gen: int = 0
    results: tuple[Result, ...] = ()


class LogKind(StrEnum):
    """What a log entry says, as a stable code: clients word it in their reader's
    language (`server.log.<kind>` in the web client's catalog) from the entry's `by` and
    `args`; `text` is the same in English, for a client that does not know the kind."""

    CREATED = "created"  # by the organizer
    REGISTRATION_OPENED = "registration_opened"
    REGISTRATION_CLOSED = "registration_closed"
    REMOVED = "removed"  # args: name (the entrant removed)
    CANCELLED = "cancelled"
    HEAT_STARTED_EARLY = "heat_started_early"  # args: heat (its number)
    HEAT_STARTED = "heat_started"  # by the server; args: heat
    HEAT_FINISHED = "heat_finished"  # by the server; args: heat
    TOURNAMENT_OVER = "tournament_over"  # by the server
    SERIES_OVER = "series_over"  # by the server


LOG_TEXTS: Final[dict[LogKind, str]] = {
    LogKind.CREATED: "created the tournament",
    LogKind.REGISTRATION_OPENED: "opened registration",
    LogKind.REGISTRATION_CLOSED: "closed registration",
    LogKind.REMOVED: "removed {name}",
    LogKind.CANCELLED: "cancelled the tournament",
    LogKind.HEAT_STARTED_EARLY: "started heat {heat} early",
    LogKind.HEAT_STARTED: "Heat {heat} started",
    LogKind.HEAT_FINISHED: "Heat {heat} finished",
    LogKind.TOURNAMENT_OVER: "The tournament is over",
    LogKind.SERIES_OVER: "The series is over",
}
"""Each kind's English text (after `by`, when there is one), its args filled in."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    at_ms: int
    by: str  # a display name, or "" for the server
    text: str  # in English: the fallback of a client that does not know `kind`
    kind: str = ""  # a LogKind; "" for an entry stored before kinds (its text only)
    args: tuple[tuple[str, str | int], ...] = ()  # the names and numbers `text` holds

    @classmethod
    def of(cls, at_ms: int, by: str, kind: LogKind, **args: str | int) -> LogEntry:
        """An entry of `kind`, its English text made from LOG_TEXTS."""
        return cls(at_ms, by, LOG_TEXTS[kind].format(**args), str(kind), tuple(args.items()))


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    user: str
    name: str
    points: float
    wins: int
    rounds: int


@dataclass(frozen=True, slots=True)
class TournamentState:
    """Everything the store keeps of a tournament (its rounds' results included)."""

    id: str
    name: str
    format: TournamentFormat
    variants: tuple[Variant, ...]
    public_listing: bool
    cap: int
    organizer: str
    organizer_name: str
    created_ms: int
    opens_ms: int  # registration opens
    closes_ms: int  # registration closes
    phase: TournamentPhase = TournamentPhase.UPCOMING
    registration: bool = True  # the organizer's switch (within the window)
    entrants: tuple[Entrant, ...] = ()
    removed: tuple[str, ...] = ()  # users the organizer removed (may not enter again)
    # series
    first_day: str = ""  # ISO dates, inclusive
    last_day: str = ""
    # heats
    heats: tuple[Heat, ...] = ()
    pause_s: int = 0  # between one heat's end and the next one's start
    time_limit_s: int = 0  # each heat's time limit
    ended_ms: int = 0
    log: tuple[LogEntry, ...] = ()

    # ------------------------------------------------------------ queries

    def entrant(self, user: str) -> Entrant | None:
        return next((e for e in self.entrants if e.user == user), None)

    def registration_open(self, now_ms: int) -> bool:
        """Whether a player may enter (or withdraw) now: within the window, unless the
        organizer closed it; for heats, only until the first heat's room opens (its
        seats are the entrants then)."""
        return (
            self.registration
            and self.phase in (TournamentPhase.UPCOMING, TournamentPhase.RUNNING)
            and self.opens_ms <= now_ms < self.closes_ms
            and all(h.phase is HeatPhase.SCHEDULED for h in self.heats)
        )

    @property
    def over(self) -> bool:
        return self.phase in (TournamentPhase.FINISHED, TournamentPhase.CANCELLED)

    def days(self) -> list[date]:
        """A series' dates, first to last."""
        if self.format is not TournamentFormat.SERIES:
            return []
        first, last = date.fromisoformat(self.first_day), date.fromisoformat(self.last_day)
        return [first + timedelta(days=i) for i in range((last - first).days + 1)]

    def heat(self, number: int) -> Heat:
        return self.heats[number - 1]

    def current_heat(self) -> Heat | None:
        """The first heat not over (finished or cancelled), if any."""
        return next(
            (h for h in self.heats if h.phase not in (HeatPhase.FINISHED, HeatPhase.CANCELLED)),
            None,
        )

    # ------------------------------------------------------------ transitions

    def enter(self, user: str, name: str, now_ms: int) -> TournamentState:
        """Register `user` (entering again only updates the name)."""
        known = self.entrant(user)
        if known is not None:
            entrants = tuple(replace(e, name=name) if e.user == user else e for e in self.entrants)
            return replace(self, entrants=entrants)
        if user in self.removed:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the organizer removed you")
        if not self.registration_open(now_ms):
            raise Refusal(ErrorCode.WRONG_STATE, "registration is closed")
        if len(self.entrants) >= self.cap:
            raise Refusal(ErrorCode.ROOM_FULL, "the tournament is full")
        return replace(self, entrants=(*self.entrants, Entrant(user, name, now_ms)))

    def rename(self, user: str, name: str) -> TournamentState:
        """Show `user` under a new display name: as an entrant and as the organizer
        (standings and rounds name entrants by user; the log keeps what it said)."""
        entrants = tuple(replace(e, name=name) if e.user == user else e for e in self.entrants)
        organizer_name = name if self.organizer == user else self.organizer_name
        return replace(self, entrants=entrants, organizer_name=organizer_name)

    def erased(self, user: str, marker: str, name: str) -> TournamentState:
        """`user` (a deleted account) shown as `marker` named `name` wherever it is: an
        entrant, the organizer, a removed entrant, a result of a round; in the log, the
        organizer's entries (every entry with a `by`) are by `name` when it was the
        organizer, and the entry that removed it names `name` (the removals and their
        entries pair up from the newest: the log drops only its oldest). Itself when
        `user` is in none."""
        organizer = self.organizer == user
        removed = user in self.removed
        mine = self.entrant(user) is not None
        played = any(r.user == user for h in self.heats for r in h.results)
        if not (mine or organizer or removed or played):
            return self
        removals = [i for i, e in enumerate(self.log) if e.kind == LogKind.REMOVED]
        paired = dict(zip(reversed(removals), reversed(self.removed), strict=False))

        def entry(index: int, e: LogEntry) -> LogEntry:
            by = name if organizer and e.by else e.by
            args = e.args
            if paired.get(index) == user:
                args = tuple((k, name if k == "name" else v) for k, v in args)
            if (by, args) == (e.by, e.args):
                return e
            template = next((t for k, t in LOG_TEXTS.items() if k == e.kind), None)
            text = e.text if template is None else template.format(**dict(args))
            return replace(e, by=by, text=text, args=args)

        return replace(
            self,
            organizer=marker if organizer else self.organizer,
            organizer_name=name if organizer else self.organizer_name,
            entrants=tuple(
                Entrant(marker, name, e.entered_ms) if e.user == user else e for e in self.entrants
            ),
            removed=tuple(marker if u == user else u for u in self.removed),
            heats=tuple(
                replace(
                    h,
                    results=tuple(
                        replace(r, user=marker) if r.user == user else r for r in h.results
                    ),
                )
                for h in self.heats
            ),
            log=tuple(entry(i, e) for i, e in enumerate(self.log)),
        )

    def withdraw(self, user: str, now_ms: int) -> TournamentState:
        """An entrant leaves while registration is open (results so far stay shown)."""
        if self.entrant(user) is None:
            raise Refusal(ErrorCode.NOT_A_RACER, "you have not entered")
        if not self.registration_open(now_ms):
            raise Refusal(ErrorCode.WRONG_STATE, "registration is closed")
        return replace(self, entrants=tuple(e for e in self.entrants if e.user != user))

    def set_registration(self, by: str, open_: bool, now_ms: int) -> TournamentState:
        self._organizer(by)
        self._not_over()
        if open_ and now_ms >= self.closes_ms:
            raise Refusal(
                ErrorCode.WRONG_STATE, "the registration window has passed; it cannot reopen"
            )
        kind = LogKind.REGISTRATION_OPENED if open_ else LogKind.REGISTRATION_CLOSED
        return self.logged(LogEntry.of(now_ms, self.organizer_name, kind), registration=open_)

    def remove(self, by: str, user: str, now_ms: int) -> TournamentState:
        """The organizer removes an entrant: its results no longer count."""
        self._organizer(by)
        self._not_over()
        gone = self.entrant(user)
        if gone is None:
            raise Refusal(ErrorCode.BAD_FIELD, "no such entrant")
        return self.logged(
            LogEntry.of(now_ms, self.organizer_name, LogKind.REMOVED, name=gone.name),
            entrants=tuple(e for e in self.entrants if e.user != user),
            removed=(*self.removed, user),
        )

    def cancel(self, by: str, now_ms: int) -> TournamentState:
        self._organizer(by)
        self._not_over()
        heats = tuple(
            replace(h, phase=HeatPhase.CANCELLED)
            if h.phase in (HeatPhase.SCHEDULED, HeatPhase.LOBBY, HeatPhase.RACING)
            else h
            for h in self.heats
        )
        return self.logged(
            LogEntry.of(now_ms, self.organizer_name, LogKind.CANCELLED),
            phase=TournamentPhase.CANCELLED,
            heats=heats,
            ended_ms=now_ms,
        )

    def check_organizer(self, by: str) -> None:
        self._organizer(by)
        self._not_over()

    def heat_opened(self, number: int, room: str, gen: int) -> TournamentState:
        heat = self.heat(number)
        if heat.phase is not HeatPhase.SCHEDULED:
            return self
        return self._with_heat(replace(heat, phase=HeatPhase.LOBBY, room=room, gen=gen))

    def heat_started(self, number: int, start_at_ms: int, now_ms: int) -> TournamentState:
        heat = self.heat(number)
        if heat.phase is not HeatPhase.LOBBY:
            return self
        started = self._with_heat(replace(heat, phase=HeatPhase.RACING, start_at_ms=start_at_ms))
        started = replace(started, phase=TournamentPhase.RUNNING)
        return started.logged(LogEntry.of(now_ms, "", LogKind.HEAT_STARTED, heat=number))

    def reschedule(self, number: int, start_at_ms: int) -> TournamentState:
        """Move a heat not yet started to a new start time."""
        heat = self.heat(number)
        if heat.phase not in (HeatPhase.SCHEDULED, HeatPhase.LOBBY):
            return self
        return self._with_heat(replace(heat, start_at_ms=start_at_ms))

    def heat_finished(
        self, number: int, results: Sequence[Result], now_ms: int, next_start_ms: int
    ) -> TournamentState:
        """A heat's race ended: its results are scored; the next heat is due at
        `next_start_ms`, or the tournament is over after the last one."""
        heat = self.heat(number)
        if heat.phase is not HeatPhase.RACING:
            return self
        state = self._with_heat(replace(heat, phase=HeatPhase.FINISHED, results=tuple(results)))
        state = state.logged(LogEntry.of(now_ms, "", LogKind.HEAT_FINISHED, heat=number))
        if number < len(self.heats):
            return state.reschedule(number + 1, next_start_ms)
        return state.logged(
            LogEntry.of(now_ms, "", LogKind.TOURNAMENT_OVER),
            phase=TournamentPhase.FINISHED,
            ended_ms=now_ms,
        )

    def series_progress(self, now_ms: int, today: date, closed: bool) -> TournamentState:
        """A series runs from its first day and is over once its last day has closed."""
        if self.format is not TournamentFormat.SERIES or self.over:
            return self
        if closed:
            return self.logged(
                LogEntry.of(now_ms, "", LogKind.SERIES_OVER),
                phase=TournamentPhase.FINISHED,
                ended_ms=now_ms,
            )
        if self.phase is TournamentPhase.UPCOMING and today >= date.fromisoformat(self.first_day):
            return replace(self, phase=TournamentPhase.RUNNING)
        return self

    def logged(self, entry: LogEntry, **changes: Any) -> TournamentState:
        log = (*self.log, entry)[-MAX_LOG:]
        return replace(self, log=log, **changes)

    def _with_heat(self, heat: Heat) -> TournamentState:
        heats = list(self.heats)
        heats[heat.number - 1] = heat
        return replace(self, heats=tuple(heats))

    def _organizer(self, by: str) -> None:
        if by != self.organizer:
            raise Refusal(ErrorCode.NOT_HOST, "only the organizer can do that")

    def _not_over(self) -> None:
        if self.over:
            raise Refusal(ErrorCode.WRONG_STATE, f"the tournament is {self.phase}")

    # ------------------------------------------------------------ stored form

    def to_blob(self) -> bytes:
        data = {
            "id": self.id,
            "name": self.name,
            "format": str(self.format),
            "variants": [str(v) for v in self.variants],
            "public": self.public_listing,
            "cap": self.cap,
            "organizer": [self.organizer, self.organizer_name],
            "created": self.created_ms,
            "opens": self.opens_ms,
            "closes": self.closes_ms,
            "phase": str(self.phase),
            "registration": self.registration,
            "entrants": [[e.user, e.name, e.entered_ms] for e in self.entrants],
            "removed": list(self.removed),
            "days": [self.first_day, self.last_day],
            "heats": [
                [
                    h.number,
                    h.seed,
                    h.commitment,
                    h.certified,
                    str(h.phase),
                    h.start_at_ms,
                    h.room,
                    h.gen,
                    [
                        [r.user, r.won, r.time_ms, r.found, r.moves, r.by_moves, r.game]
                        for r in h.results
                    ],
                ]
                for h in self.heats
            ],
            "pause": self.pause_s,
            "time_limit": self.time_limit_s,
            "ended": self.ended_ms,
            "log": [[e.at_ms, e.by, e.text, e.kind, dict(e.args)] for e in self.log],
        }
        blob: bytes = msgpack.packb(data, use_bin_type=True)
        return blob

    @classmethod
    def from_blob(cls, blob: bytes) -> TournamentState:
        d = msgpack.unpackb(blob, raw=False)
        return cls(
            id=d["id"],
            name=d["name"],
            format=TournamentFormat(d["format"]),
            variants=tuple(Variant.parse(v) for v in d["variants"]),
            public_listing=d["public"],
            cap=d["cap"],
            organizer=d["organizer"][0],
            organizer_name=d["organizer"][1],
            created_ms=d["created"],
            opens_ms=d["opens"],
            closes_ms=d["closes"],
            phase=TournamentPhase(d["phase"]),
            registration=d["registration"],
            entrants=tuple(Entrant(u, n, t) for u, n, t in d["entrants"]),
            removed=tuple(d["removed"]),
            first_day=d["days"][0],
            last_day=d["days"][1],
            heats=tuple(
                Heat(
                    number=h[0],
                    seed=h[1],
                    commitment=h[2],
                    certified=h[3],
                    phase=HeatPhase(h[4]),
                    start_at_ms=h[5],
                    room=h[6],
                    gen=h[7],
                    results=tuple(Result(*r) for r in h[8]),
                )
                for h in d["heats"]
            ),
            pause_s=d["pause"],
            time_limit_s=d["time_limit"],
            ended_ms=d["ended"],
            log=tuple(_log_entry(e) for e in d["log"]),
        )


def _log_entry(stored: list[Any]) -> LogEntry:
    """A stored log entry: `[at, by, text, kind, args]`, or `[at, by, text]` from before
    kinds (shown by its text)."""
    at_ms, by, text, *rest = stored
    kind, args = rest if rest else ("", {})
    return LogEntry(at_ms, by, text, kind, tuple(args.items()))


def _result_row(r: Result) -> list[Any]:
    return [r.user, r.won, r.time_ms, r.found, r.moves, r.by_moves, r.game]


# ------------------------------------------------------------ scoring


def score_round(results: Iterable[Result]) -> list[Scored]:
    """Places and points of one round's results (see the module docstring), best first."""
    ordered = sorted(results, key=lambda r: (r.sort_key(), r.user))
    n = len(ordered)
    out: list[Scored] = []
    index = 0
    while index < n:
        key = ordered[index].sort_key()
        end = index
        while end < n and ordered[end].sort_key() == key:
            end += 1
        place = index + 1
        # Places place .. place + k - 1 are worth n - place + 1 down to n - place - k + 2.
        k = end - index
        points = (n - place + 1) - (k - 1) / 2
        out.extend(Scored(r, place, points) for r in ordered[index:end])
        index = end
    return out


def standings(entrants: Sequence[Entrant], rounds: Iterable[Sequence[Scored]]) -> list[Standing]:
    """The table: every entrant, by points, then rounds won (first place with a finished
    board), then rounds played; equal entrants share a rank. Results of users who are no
    longer entrants are ignored."""
    totals: dict[str, list[float]] = {e.user: [0.0, 0, 0] for e in entrants}
    for scored in rounds:
        for item in scored:
            row = totals.get(item.result.user)
            if row is None:
                continue
            row[0] += item.points
            # A round won: first place with a finished board (all 52 home); a round in
            # which nobody finished has no winner, whoever placed first.
            row[1] += 1 if item.place == 1 and item.result.won else 0
            row[2] += 1
    names = {e.user: e.name for e in entrants}

    def key(user: str) -> tuple[float, float, float]:
        points, wins, played = totals[user]
        return (-points, -wins, -played)

    ordered = sorted(totals, key=lambda u: (key(u), names[u].casefold(), u))
    table: list[Standing] = []
    for position, user in enumerate(ordered, start=1):
        rank = table[-1].rank if table and key(table[-1].user) == key(user) else position
        points, wins, played = totals[user]
        table.append(Standing(rank, user, names[user], points, int(wins), int(played)))
    return table


@dataclass(frozen=True, slots=True)
class NewTournament:
    """What an organizer asks for (`check` says whether it makes a tournament)."""

    name: str
    format: TournamentFormat
    variants: tuple[Variant, ...]
    public: bool
    cap: int
    opens_ms: int
    closes_ms: int
    first_day: date | None = None
    last_day: date | None = None
    start_ms: int = 0
    heats: int = 0
    pause_s: int = 0
    time_limit_s: int = 0

    def check(self, now_ms: int, today: date) -> None:
        """`Refusal` for settings that do not make a tournament (the protocol checked
        types and ranges); `today` is the open daily challenge's date."""
        if self.closes_ms <= max(self.opens_ms, now_ms):
            raise Refusal(
                ErrorCode.BAD_FIELD, "registration must close after it opens, in the future"
            )
        if self.format is TournamentFormat.SERIES:
            if self.first_day is None or self.last_day is None:
                raise Refusal(ErrorCode.BAD_FIELD, "a series needs its first and last day")
            if self.first_day < today:
                raise Refusal(ErrorCode.BAD_FIELD, "a series starts today or later")
            if self.last_day < self.first_day:
                raise Refusal(ErrorCode.BAD_FIELD, "a series' last day is on or after its first")
            if (self.last_day - self.first_day).days >= MAX_SERIES_DAYS:
                raise Refusal(ErrorCode.BAD_FIELD, f"a series lasts at most {MAX_SERIES_DAYS} days")
        else:
            if self.start_ms < self.closes_ms:
                raise Refusal(
                    ErrorCode.BAD_FIELD, "the first heat starts once registration has closed"
                )
            if not 1 <= self.heats <= MAX_HEATS:
                raise Refusal(ErrorCode.BAD_FIELD, f"1..{MAX_HEATS} heats")


def new_tournament(
    tournament_id: str,
    request: NewTournament,
    deals: tuple[tuple[str, str, bool], ...],
    organizer: str,
    organizer_name: str,
    now_ms: int,
    today: date,
) -> TournamentState:
    """A tournament in its upcoming phase (`Refusal` as `NewTournament.check` says);
    `deals` are its heats' (seed, commitment, certified), one per heat, none for a
    series."""
    request.check(now_ms, today)
    series = request.format is TournamentFormat.SERIES
    if len(deals) != (0 if series else request.heats):
        raise ValueError(f"{len(deals)} deals for {request.heats} heats")
    first_day = request.first_day.isoformat() if series and request.first_day else ""
    last_day = request.last_day.isoformat() if series and request.last_day else ""
    heats = tuple(
        Heat(
            number=i,
            seed=seed,
            commitment=commit,
            certified=certified,
            start_at_ms=request.start_ms if i == 1 else 0,
        )
        for i, (seed, commit, certified) in enumerate(deals, start=1)
    )
    return TournamentState(
        id=tournament_id,
        name=request.name,
        format=request.format,
        variants=request.variants,
        public_listing=request.public,
        cap=request.cap,
        organizer=organizer,
        organizer_name=organizer_name,
        created_ms=now_ms,
        opens_ms=request.opens_ms,
        closes_ms=request.closes_ms,
        first_day=first_day,
        last_day=last_day,
        heats=heats,
        pause_s=request.pause_s,
        time_limit_s=request.time_limit_s,
        log=(LogEntry.of(now_ms, organizer_name, LogKind.CREATED),),
    )
