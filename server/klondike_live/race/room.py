"""A room's lobby and race state, and its transitions, as plain values.

`RoomState` is what Redis keeps for a room (one msgpack blob, changed only by a
compare-and-set on its revision). Every transition is a pure method that returns the
next state (a `Step` with its `RoomEvent`s when it did more than change a field: a race
dealt, finished, or reopened for a rematch) or raises `Refusal` with a protocol error
code: the store reads the state,
calls a transition, and writes the result only if nobody changed the room meanwhile, so
race-wide transitions are atomic without their rules living in Lua.

A race room with `best_of` > 1 plays a match (`race.match`): `start` begins it,
`score_deal` records each finished deal's winner, `next_deal` deals the next one (same
seats, a fresh seed and its commitment, the usual countdown) until `match_winner`
says the match is over; `leave_match` ends it for a racer who left (its forfeit).

The seed is a secret until the race is over: `public()` leaves it out while a race can
still be played, and gives the hash commitment instead. A daily attempt (`kind` "daily",
`daily` its ISO date) keeps it secret until its day has closed, finished or not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final, NamedTuple

import msgpack

from klondike_live.engine import Deal, Variant
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import DealMode, RoomKind
from klondike_live.race.match import DRAWN, match_winner, score


class RoomPhase(StrEnum):
    """Where a room's current race stands."""

    LOBBY = "lobby"  # racers take seats and say they are ready
    COUNTDOWN = "countdown"  # dealt; the race starts at `start_at_ms`
    RACING = "racing"
    FINISHED = "finished"  # results are stored; a rematch goes back to the lobby


LOBBY: Final = RoomPhase.LOBBY
COUNTDOWN: Final = RoomPhase.COUNTDOWN
RACING: Final = RoomPhase.RACING
FINISHED: Final = RoomPhase.FINISHED


class RoomEvent(StrEnum):
    """What a transition did beyond changing the state, for the service to act on."""

    DEALT = "dealt"  # a race was dealt: boards to create, its start and limit to time
    FINISHED = "finished"  # the race is over: results to store and publish
    REOPENED = "reopened"  # back to the lobby for a rematch
    PAUSED = "paused"  # a practice game's clock stopped: its boards' clock follows
    RESUMED = "resumed"  # it runs again (from a later start): boards and time limit follow


@dataclass(frozen=True, slots=True)
class Seat:
    """A racer's place in a room."""

    user: str
    name: str
    ready: bool = False
    online: bool = True
    bot: str = ""  # "" a person; a bot: its level (in-server bots) or "api" (a bot account)
    away_ms: int = 0  # when its player's last connection left (shared clock); 0 if online


def commitment(deal: Deal) -> str:
    """SHA-256 (hex) of the deal text: published at the start, checkable at the end."""
    return hashlib.sha256(str(deal).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class RoomState:
    """Everything the server knows about a room apart from its boards."""

    id: str
    kind: RoomKind
    variant: Variant
    capacity: int
    time_limit: int  # seconds; 0 for none
    public_room: bool
    host: str
    created_ms: int
    state: RoomPhase = RoomPhase.LOBBY
    gen: int = 1
    seats: tuple[Seat | None, ...] = field(default=())
    start_at_ms: int = 0
    ended_ms: int = 0
    seed: str = ""
    commitment: str = ""
    deal: DealMode = DealMode.CERTIFIED  # what the creator asked for
    certified: bool = False  # the current deal is certified winnable
    daily: str = ""  # a daily attempt: the challenge's ISO date
    ranked: bool = False  # a daily attempt: the account's one ranked attempt
    paused_at_ms: int = 0  # a practice game's clock stopped at this time (0: running)
    prefix: tuple[str, ...] = ()  # moves made on the deal before the game starts
    bots: bool = False  # bots may take seats (never in a daily attempt)
    autostart: bool = False  # "race the machine": starts once every seat is ready
    tournament: str = ""  # a tournament's heat: "<tournament id>/<heat number>"
    code: str = ""  # a race's room code (`race.codes`); "" for rooms that have none
    best_of: int = 1  # a match of this many deals at most (`race.match`); 1: one race
    match_from: int = 0  # the gen of the match's first deal (0: no match begun)
    match_deals: tuple[int, ...] = ()  # each finished deal's winner (`race.match.DRAWN`)
    forfeit: int = DRAWN  # the seat that left the match, if one did
    next_at_ms: int = 0  # between a match's deals: when the next one is dealt

    # ------------------------------------------------------------ queries

    def seat_of(self, user: str) -> int | None:
        """The seat `user` holds, or None."""
        for index, seat in enumerate(self.seats):
            if seat is not None and seat.user == user:
                return index
        return None

    def seated(self) -> list[tuple[int, Seat]]:
        """Occupied seats with their index."""
        return [(i, s) for i, s in enumerate(self.seats) if s is not None]

    def is_live(self, now_ms: int) -> bool:
        """Racing (the countdown is over) and not finished."""
        return self.state in (COUNTDOWN, RACING) and now_ms >= self.start_at_ms

    def deadline_ms(self) -> int:
        """When the race's time limit runs out (0 when there is none, or while the
        game's clock is stopped: it has no end until it runs again)."""
        if not self.time_limit or self.paused_at_ms:
            return 0
        return self.start_at_ms + self.time_limit * 1000

    @property
    def paused(self) -> bool:
        """The game's clock is stopped (a practice game waiting for its player, or one
        not started by a first move yet)."""
        return self.paused_at_ms != 0

    @property
    def clock_started(self) -> bool:
        """The game's clock has run (a stopped clock that shows more than 0)."""
        return self.paused_at_ms == 0 or self.paused_at_ms > self.start_at_ms

    def clock_ms(self, now_ms: int) -> int:
        """The game's time on its clock: from the start to now, or to when it stopped."""
        return max(0, (self.paused_at_ms or now_ms) - self.start_at_ms)

    @property
    def is_match(self) -> bool:
        """A room whose races are the deals of a match (best of 3, 5 or 7)."""
        return self.best_of > 1

    def match_winner(self) -> int | None:
        """The match's winner (a seat), `DRAWN` once it is over with no winner, None
        while it goes on (or before it begins)."""
        if not self.is_match or not self.match_from:
            return None
        racers = [seat for seat, _ in self.seated()]
        return match_winner(self.best_of, self.match_deals, racers, self.forfeit)

    @property
    def match_on(self) -> bool:
        """A match has begun and is not over: its deals follow one another."""
        return self.is_match and self.match_from != 0 and self.match_winner() is None

    # ------------------------------------------------------------ transitions

    def join(self, user: str, name: str, bot: str = "") -> RoomState:
        """Take a racer seat (lobby only); joining again keeps the same seat. A lobby
        that every racer left has no host: the next racer to join hosts it (never a
        bot). `bot` labels a bot's seat (its level, or "api"); only a room that allows
        bots seats one."""
        index = self.seat_of(user)
        if index is not None:
            seat = self.seats[index]
            assert seat is not None
            return self._with_seat(index, replace(seat, name=name, online=True, away_ms=0))
        joined = self._with_seat(
            self._free_seat(bot=bool(bot)), Seat(user=user, name=name, bot=bot)
        )
        return joined if self.host or bot else replace(joined, host=user)

    def rename(self, user: str, name: str) -> RoomState:
        """Show `user`'s seat under a new display name, in any state (a lobby, a race
        under way, a finished race whose results are written: a rematch's carry it).
        A room where `user` has no seat is left as it is."""
        index = self.seat_of(user)
        if index is None:
            return self
        seat = self.seats[index]
        assert seat is not None
        return self._with_seat(index, replace(seat, name=name))

    def check_add_bot(self, user: str) -> None:
        """`Refusal` unless `user` may seat a bot now: the host, in the lobby of a room
        that allows bots, with a seat free (`join` seats it)."""
        if user != self.host:
            raise Refusal(ErrorCode.NOT_HOST, "only the host can add a bot")
        self._free_seat(bot=True)

    def remove_bot(self, user: str, seat: int) -> RoomState:
        """The host takes the bot in `seat` off it, in the lobby; `Refusal` otherwise
        (`not_host`, `wrong_state`, `not_a_bot`: a free seat, a person's, its own)."""
        if user != self.host:
            raise Refusal(ErrorCode.NOT_HOST, "only the host can remove a bot")
        if self.state != LOBBY:
            raise Refusal(ErrorCode.WRONG_STATE, "a bot can be removed only in the lobby")
        occupant = self.seats[seat] if 0 <= seat < len(self.seats) else None
        if occupant is None or not occupant.bot or occupant.user == user:
            raise Refusal(ErrorCode.NOT_A_BOT, f"seat {seat + 1} holds no bot")
        return self._with_seat(seat, None)

    def _free_seat(self, *, bot: bool) -> int:
        """The seat a new racer takes, or `Refusal` saying why there is none."""
        if bot and not self.bots:
            raise Refusal(ErrorCode.BOTS_NOT_ALLOWED, "this room does not allow bots")
        if self.tournament:
            raise Refusal(ErrorCode.NOT_ALLOWED, "a heat's seats are its tournament's entrants'")
        if self.state != LOBBY:
            raise Refusal(ErrorCode.WRONG_STATE, "the race has started; join as a spectator")
        free = next((i for i, s in enumerate(self.seats) if s is None), None)
        if free is None:
            raise Refusal(ErrorCode.ROOM_FULL, "every racer seat is taken")
        return free

    def leave(self, user: str) -> RoomState:
        """Give up a seat in the lobby; the host role passes to the next racer."""
        index = self._require_seat(user)
        if self.state != LOBBY:
            raise Refusal(ErrorCode.WRONG_STATE, "a started race cannot be left; resign")
        state = self._with_seat(index, None)
        if state.host == user:
            people = [s for _, s in state.seated() if not s.bot]
            state = replace(state, host=people[0].user if people else "")
        return state

    def drop_seat(self, user: str) -> RoomState:
        """Take a racer's seat away in the lobby (a tournament's organizer removed its
        entrant from a heat's room)."""
        index = self.seat_of(user)
        if index is None or self.state != LOBBY:
            return self
        return self._with_seat(index, None)

    def humans(self) -> list[Seat]:
        """The seated racers that are people (not bots)."""
        return [s for _, s in self.seated() if not s.bot]

    def all_ready(self) -> bool:
        """Every seat taken and every racer ready (an autostart room's start signal)."""
        return all(s is not None and s.ready for s in self.seats)

    def set_ready(self, user: str, ready: bool) -> RoomState:
        index = self._require_seat(user)
        if self.state != LOBBY:
            raise Refusal(ErrorCode.WRONG_STATE, "ready only counts in the lobby")
        if self.tournament:
            raise Refusal(ErrorCode.WRONG_STATE, "a heat starts at its time: no ready needed")
        seat = self.seats[index]
        assert seat is not None
        return self._with_seat(index, replace(seat, ready=ready))

    def set_online(self, user: str, online: bool, now_ms: int = 0) -> RoomState:
        """Show a racer online, or away since `now_ms` (kept if it already was away)."""
        index = self.seat_of(user)
        if index is None:
            return self
        seat = self.seats[index]
        assert seat is not None
        away = 0 if online else (seat.away_ms if not seat.online else now_ms)
        return self._with_seat(index, replace(seat, online=online, away_ms=away))

    @property
    def race_rules(self) -> bool:
        """No undo and no hints (races and ranked daily attempts); else practice rules."""
        return self.kind is RoomKind.RACE or (self.kind is RoomKind.DAILY and self.ranked)

    def start(
        self,
        user: str,
        now_ms: int,
        countdown_ms: int,
        seed: str,
        certified: bool = False,
        prefix: tuple[str, ...] = (),
    ) -> Step:
        """The host starts the countdown (or, with none, the race) on the deal of
        `seed` (`check_start` says when it may)."""
        self.check_start(user)
        dealt = replace(
            self,
            # With no countdown (solo and daily games) the race is on at once: nothing
            # waits for the begin timer.
            state=COUNTDOWN if countdown_ms > 0 else RACING,
            start_at_ms=now_ms + countdown_ms,
            seed=seed,
            commitment=commitment(Deal.from_seed(seed)),
            certified=certified,
            prefix=prefix,
        )
        if self.is_match:
            dealt = replace(dealt, match_from=self.gen, match_deals=(), forfeit=DRAWN, next_at_ms=0)
        return Step(dealt, (RoomEvent.DEALT,))

    def check_start(self, user: str) -> None:
        """`Refusal` unless `user` may start the room now: the host, in the lobby, every
        seated racer ready and at least two of them in a race (a heat starts at its
        time, ready or not)."""
        if self.state != LOBBY:
            raise Refusal(ErrorCode.WRONG_STATE, f"the room is {self.state}, not in the lobby")
        if user != self.host:
            raise Refusal(ErrorCode.NOT_HOST, "only the host can start the race")
        seated = self.seated()
        if self.kind is RoomKind.RACE and len(seated) < 2 and not self.tournament:
            raise Refusal(ErrorCode.NOT_READY, "a race needs at least two racers")
        waiting = [s.name for _, s in seated if not s.ready]
        if waiting and not self.tournament:
            raise Refusal(ErrorCode.NOT_READY, "not ready yet: " + ", ".join(waiting))

    def begin(self) -> RoomState:
        """Countdown over: racing."""
        if self.state != COUNTDOWN:
            raise Refusal(ErrorCode.WRONG_STATE, f"the room is {self.state}")
        return replace(self, state=RACING)

    def finish(self, now_ms: int) -> Step:
        """Every racer is done, or the time limit ran out. A game whose clock is stopped
        ends when it stopped."""
        if self.state not in (COUNTDOWN, RACING):
            raise Refusal(ErrorCode.WRONG_STATE, f"the room is {self.state}")
        ended = self.paused_at_ms or now_ms
        return Step(
            replace(self, state=FINISHED, ended_ms=ended, paused_at_ms=0), (RoomEvent.FINISHED,)
        )

    def score_deal(self, winner: int, next_at_ms: int) -> RoomState:
        """A match's deal just finished (`finish`): `winner` takes it (`DRAWN`: nobody);
        if the match goes on, its next deal is dealt at `next_at_ms`."""
        if not self.is_match or self.state != FINISHED:
            return self
        scored = replace(self, match_deals=(*self.match_deals, winner))
        return replace(scored, next_at_ms=next_at_ms if scored.match_on else 0)

    def next_deal(self, now_ms: int, countdown_ms: int, seed: str, certified: bool = False) -> Step:
        """A match goes on: its next deal, on the same seats, with a fresh seed whose
        commitment the room frame publishes before the countdown ends."""
        if self.state != FINISHED or not self.match_on:
            raise Refusal(ErrorCode.WRONG_STATE, "no match goes on in this room")
        dealt = replace(
            self,
            state=COUNTDOWN,
            gen=self.gen + 1,
            start_at_ms=now_ms + countdown_ms,
            ended_ms=0,
            seed=seed,
            commitment=commitment(Deal.from_seed(seed)),
            certified=certified,
            prefix=(),
            next_at_ms=0,
        )
        return Step(dealt, (RoomEvent.DEALT,))

    def leave_match(self, user: str) -> RoomState:
        """`user` left the match under way (gone for good, or asked to leave): it
        forfeits, and the match is over (`race.match.match_winner`). A racer without a
        seat, or a room with no match going on, is left as it is."""
        seat = self.seat_of(user)
        if seat is None or not self.match_on:
            return self
        return replace(self, forfeit=seat, next_at_ms=0)

    def pause(self, now_ms: int) -> Step:
        """Stop the game's clock (a game being played, whose clock runs)."""
        if self.state not in (COUNTDOWN, RACING) or self.paused_at_ms:
            return Step(self)
        stopped = replace(self, paused_at_ms=max(now_ms, self.start_at_ms))
        return Step(stopped, (RoomEvent.PAUSED,))

    def resume(self, now_ms: int) -> Step:
        """Run the stopped clock again: the start moves later by the time it stood, so
        the time since the start is the time the clock ran."""
        if self.state not in (COUNTDOWN, RACING) or not self.paused_at_ms:
            return Step(self)
        stood = max(0, now_ms - self.paused_at_ms)
        running = replace(self, start_at_ms=self.start_at_ms + stood, paused_at_ms=0)
        return Step(running, (RoomEvent.RESUMED,))

    def rematch(self, user: str) -> Step:
        """Back to the lobby for a fresh deal with the same racers (any racer may ask)."""
        if self.kind is RoomKind.DAILY:
            raise Refusal(ErrorCode.WRONG_STATE, "a daily attempt has no rematch")
        if self.tournament:
            raise Refusal(ErrorCode.WRONG_STATE, "a heat has no rematch; the tournament goes on")
        if self.state != FINISHED:
            raise Refusal(ErrorCode.WRONG_STATE, "a rematch follows a finished race")
        if self.match_on:
            raise Refusal(ErrorCode.WRONG_STATE, "the match goes on: its next deal comes")
        self._require_seat(user)
        seats = tuple(None if s is None else replace(s, ready=False) for s in self.seats)
        reopened = replace(
            self,
            state=LOBBY,
            gen=self.gen + 1,
            seats=seats,
            start_at_ms=0,
            ended_ms=0,
            seed="",
            commitment="",
            certified=False,
            prefix=(),
            match_from=0,
            match_deals=(),
            forfeit=DRAWN,
            next_at_ms=0,
        )
        return Step(reopened, (RoomEvent.REOPENED,))

    def _require_seat(self, user: str) -> int:
        index = self.seat_of(user)
        if index is None:
            raise Refusal(ErrorCode.NOT_A_RACER, "you have no racer seat in this room")
        return index

    def _with_seat(self, index: int, seat: Seat | None) -> RoomState:
        seats = list(self.seats)
        seats[index] = seat
        return replace(self, seats=tuple(seats))

    # ------------------------------------------------------------ wire forms

    def public(self, *, spectators: int = 0, day_closed: bool = False) -> dict[str, Any]:
        """The room as clients see it: no seed while the race can still be played, nor
        (a daily attempt) while its day is open: `day_closed` says whether it closed."""
        data: dict[str, Any] = {
            "room": self.id,
            "kind": self.kind,
            "variant": str(self.variant),
            "state": self.state,
            "gen": self.gen,
            "host": self.host,
            "capacity": self.capacity,
            "time_limit": self.time_limit,
            "public": self.public_room,
            "seats": [
                None
                if s is None
                else {
                    "seat": i,
                    "user": s.user,
                    "name": s.name,
                    "ready": s.ready,
                    "online": s.online,
                    "bot": bool(s.bot),
                    **({"level": s.bot} if s.bot and s.bot != "api" else {}),
                    **({"away_since": s.away_ms} if not s.online and s.away_ms else {}),
                }
                for i, s in enumerate(self.seats)
            ],
            "spectators": spectators,
            "bots": self.bots,
            "certified": self.certified if self.state != LOBBY else self.deal == "certified",
        }
        if self.code:
            data["code"] = self.code
        if self.is_match:
            data["best_of"] = self.best_of
            if self.match_from:
                data["match"] = self.match_summary()
        if self.tournament:
            tournament_id, _, heat = self.tournament.partition("/")
            data["tournament"] = {"id": tournament_id, "heat": int(heat)}
        if self.kind is RoomKind.DAILY:
            data["daily"] = {
                "date": self.daily,
                "variant": str(self.variant),
                "ranked": self.ranked,
                "closed": day_closed,
            }
        if self.state in (COUNTDOWN, RACING, FINISHED):
            data["start_at"] = self.start_at_ms
            data["commitment"] = self.commitment
        if self.paused_at_ms and self.state in (COUNTDOWN, RACING):
            data["paused_at"] = self.paused_at_ms
        if self.state == FINISHED:
            data["ended_at"] = self.ended_ms
            if self.kind is not RoomKind.DAILY or day_closed:
                data["seed"] = self.seed
        return data

    def match_summary(self) -> dict[str, Any]:
        """The match as clients see it: its first deal's gen, each deal's winner (a
        seat, or None for a drawn deal), deals won per seat, whether it is over and who
        took it (None: nobody, or not yet), who forfeited, when the next deal comes."""
        winner = self.match_winner()
        return {
            "best_of": self.best_of,
            "from": self.match_from,
            "deals": [None if w == DRAWN else w for w in self.match_deals],
            "score": score(self.match_deals, self.capacity),
            "over": winner is not None,
            "winner": None if winner is None or winner == DRAWN else winner,
            "forfeit": None if self.forfeit == DRAWN else self.forfeit,
            **({"next_at": self.next_at_ms} if self.next_at_ms else {}),
        }

    def to_blob(self) -> bytes:
        data = {
            "id": self.id,
            "kind": self.kind,
            "variant": str(self.variant),
            "capacity": self.capacity,
            "time_limit": self.time_limit,
            "public": self.public_room,
            "host": self.host,
            "created": self.created_ms,
            "state": self.state,
            "gen": self.gen,
            "seats": [
                None if s is None else [s.user, s.name, s.ready, s.online, s.bot, s.away_ms]
                for s in self.seats
            ],
            "start_at": self.start_at_ms,
            "ended": self.ended_ms,
            "seed": self.seed,
            "commitment": self.commitment,
            "deal": self.deal,
            "certified": self.certified,
            "daily": self.daily,
            "ranked": self.ranked,
            "paused_at": self.paused_at_ms,
            "prefix": list(self.prefix),
            "bots": self.bots,
            "autostart": self.autostart,
            "tournament": self.tournament,
            "code": self.code,
            "best_of": self.best_of,
            "match_from": self.match_from,
            "match_deals": list(self.match_deals),
            "forfeit": self.forfeit,
            "next_at": self.next_at_ms,
        }
        blob: bytes = msgpack.packb(data, use_bin_type=True)
        return blob

    @classmethod
    def from_blob(cls, blob: bytes) -> RoomState:
        d = msgpack.unpackb(blob, raw=False)
        return cls(
            id=d["id"],
            kind=RoomKind(d["kind"]),
            variant=Variant.parse(d["variant"]),
            capacity=d["capacity"],
            time_limit=d["time_limit"],
            public_room=d["public"],
            host=d["host"],
            created_ms=d["created"],
            state=RoomPhase(d["state"]),
            gen=d["gen"],
            seats=tuple(
                None
                if s is None
                else Seat(
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4] if len(s) > 4 else "",
                    s[5] if len(s) > 5 else 0,
                )
                for s in d["seats"]
            ),
            start_at_ms=d["start_at"],
            ended_ms=d["ended"],
            seed=d["seed"],
            commitment=d["commitment"],
            deal=DealMode(d.get("deal", "any")),
            certified=d.get("certified", False),
            daily=d.get("daily", ""),
            ranked=d.get("ranked", False),
            paused_at_ms=d.get("paused_at", 0),
            prefix=tuple(d.get("prefix", ())),
            bots=d.get("bots", False),
            autostart=d.get("autostart", False),
            tournament=d.get("tournament", ""),
            code=d.get("code", ""),
            best_of=d.get("best_of", 1),
            match_from=d.get("match_from", 0),
            match_deals=tuple(d.get("match_deals", ())),
            forfeit=d.get("forfeit", DRAWN),
            next_at_ms=d.get("next_at", 0),
        )


class Step(NamedTuple):
    """A transition's result: the next state and what happened on the way."""

    state: RoomState
    events: tuple[RoomEvent, ...] = ()


def new_room(
    room_id: str,
    *,
    kind: RoomKind,
    variant: Variant,
    capacity: int,
    time_limit: int,
    public: bool,
    host: str,
    host_name: str,
    now_ms: int,
    deal: DealMode = DealMode.CERTIFIED,
    daily: str = "",
    ranked: bool = False,
    bots: bool = False,
    autostart: bool = False,
    host_bot: str = "",
    best_of: int = 1,
) -> RoomState:
    """A fresh room with its creator in seat 0 (`host_bot`: the creator is a bot)."""
    seats: list[Seat | None] = [None] * capacity
    seats[0] = Seat(user=host, name=host_name, bot=host_bot)
    return RoomState(
        id=room_id,
        kind=kind,
        variant=variant,
        capacity=capacity,
        time_limit=time_limit,
        public_room=public,
        host=host,
        created_ms=now_ms,
        seats=tuple(seats),
        deal=deal,
        daily=daily,
        ranked=ranked,
        bots=bots and kind is RoomKind.RACE,
        autostart=autostart,
        best_of=best_of if kind is RoomKind.RACE else 1,
    )
