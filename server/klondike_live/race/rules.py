"""The race rules the live service applies, as pure functions of plain values.

Each rule has exactly this one home; the service calls it and acts on the answer:

    race_over(statuses, deadline_ms, now_ms)     every board done, or time is up
    grace_expiry(state, user, connected)         what a racer's absence leads to
    clock_waits(state)                           a practice game's clock waits for its player
    player_left(state, user, now) / player_back(...)   seat online, clock stopped or run
    check_practice(race_rules, "undo" | "hints") races and ranked attempts have neither
    check_spectator(state, user, own_board_done) a racer watches its own race only once done
    absence_resigns(state)                       an away racer is resigned after the grace
    attempt_outcome(state, ...)                  a ranked daily attempt's result

What spectators may see is `race.visibility`; the ranking is `race.ranking`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.room import RoomPhase, RoomState, Step
from klondike_live.race.status import BoardStatus


def race_over(statuses: Iterable[BoardStatus], deadline_ms: int, now_ms: int) -> bool:
    """A race is over once every board is done, or its time limit (if any) ran out."""
    if deadline_ms and now_ms >= deadline_ms:
        return True
    return all(status.done for status in statuses)


class GraceExpiry(StrEnum):
    """What happens when a racer's grace period after a lost connection runs out."""

    NOTHING = "nothing"  # it came back, has no seat, or its absence costs nothing
    LEAVE = "leave"  # it leaves the lobby
    RESIGN = "resign"  # its board counts as resigned
    FORFEIT = "forfeit"  # a match under way: it forfeits the match, its board resigned
    LATER = "later"  # between a match's deals: it forfeits once the next deal is dealt


def grace_expiry(state: RoomState, user: str, *, connected: bool) -> GraceExpiry:
    """The outcome of a racer's absence once its grace period ran out.

    Only a race resigns an absent racer; in a match it forfeits the match as well
    (`race.match`), during a deal, so that the deal's stored results say so: between
    deals it waits for the next one. A ranked daily attempt's clock runs on while
    its player is away (only its time limit ends it); a practice game (solo, unranked
    daily) waits for its player with its clock stopped (`clock_waits`).
    """
    seat = state.seat_of(user)
    if connected or seat is None:
        return GraceExpiry.NOTHING
    occupant = state.seats[seat]
    if occupant is None or occupant.online:
        return GraceExpiry.NOTHING
    if state.state is RoomPhase.LOBBY:
        # A heat's seat is its entrant's until the heat starts, present or not.
        return GraceExpiry.NOTHING if state.tournament else GraceExpiry.LEAVE
    if state.match_on:
        return GraceExpiry.LATER if state.state is RoomPhase.FINISHED else GraceExpiry.FORFEIT
    if absence_resigns(state):
        return GraceExpiry.RESIGN
    return GraceExpiry.NOTHING


def absence_resigns(state: RoomState) -> bool:
    """Whether a racer away for the grace period now counts as resigned: only in a race
    under way (the room frame then gives the grace period, for the away racers' countdown)."""
    return state.state in (RoomPhase.COUNTDOWN, RoomPhase.RACING) and state.kind is RoomKind.RACE


def clock_waits(state: RoomState) -> bool:
    """A practice game (solo, unranked daily) is never resigned for absence: its clock
    starts at the player's first move and stops while no connection of the player is
    in the room (as desktop solitaire stops when its window is hidden). Races and ranked
    daily attempts keep their clock running from the start."""
    return not state.race_rules


def new_game_clock(state: RoomState) -> RoomState:
    """A practice game just dealt: its clock stands still until the first move."""
    return state.pause(state.start_at_ms).state if clock_waits(state) else state


def player_left(state: RoomState, user: str, now_ms: int) -> Step:
    """No connection speaks for `user` any more: its seat shows it away and, in a
    practice game, the clock stops."""
    away = state.set_online(user, False, now_ms)
    if clock_waits(away) and away.seat_of(user) is not None:
        return away.pause(now_ms)
    return Step(away)


def player_back(state: RoomState, user: str, name: str, now_ms: int, bot: str = "") -> Step:
    """`user` (re)joins as a racer: its seat (taken, or kept) shows it online and, in a
    practice game whose clock had started, the clock runs again (one not started yet
    waits for the first move: `move_starts_clock`). `bot` labels a bot's new seat."""
    back = state.join(user, name, bot)
    if clock_waits(back) and back.paused and back.clock_started:
        return back.resume(now_ms)
    return Step(back)


def move_starts_clock(state: RoomState, now_ms: int) -> Step:
    """A move (or undo) in a game whose clock stands still runs it again."""
    return state.resume(now_ms)


def check_practice(
    race_rules: bool, what: Literal["undo", "hints", "auto-complete checks"]
) -> None:
    """Undo and hints exist only under practice rules (solo, unranked daily): not in a
    room whose `RoomState.race_rules` hold."""
    if race_rules:
        raise Refusal(ErrorCode.NOT_ALLOWED, f"races and ranked attempts have no {what}")


def check_spectator(state: RoomState, user: str, *, own_board_done: bool = False) -> None:
    """A racer may not watch its own race while its own board can still be played; once
    its board is done (won, resigned, out of time), or the race is over, it may, and then
    sees exactly what any spectator sees (`race.visibility`): the cards every racer still
    playing has seen."""
    if state.seat_of(user) is None or state.state is RoomPhase.FINISHED or own_board_done:
        return
    raise Refusal(ErrorCode.OWN_RACE, "you can watch your own race once your board is done")


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    """A ranked daily attempt's result: a winner's time, else when it reached `found`."""

    won: bool
    time_ms: int
    moves: int
    found: int
    finished_at: int


def attempt_outcome(
    state: RoomState,
    status: BoardStatus,
    *,
    finish_ms: int | None,
    found_ms: int,
    moves: int,
    found: int,
    now_ms: int,
) -> AttemptOutcome:
    """The result of a ranked daily attempt that ended with its board at `status`.

    `finish_ms` is when the board's status changed (ms since the start), None when the
    time limit ended it before its status was written (then the limit, or now, is the
    end). A winner is timed by its finish, anyone else by when it reached its count.
    """
    won = status is BoardStatus.WON
    if finish_ms is None:
        end = state.deadline_ms() or now_ms
        finish_ms = max(0, end - state.start_at_ms)
    return AttemptOutcome(
        won=won,
        time_ms=finish_ms if won else found_ms,
        moves=moves,
        found=found,
        finished_at=state.start_at_ms + finish_ms,
    )
