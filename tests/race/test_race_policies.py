"""The race rules the live service applies, called directly."""

from __future__ import annotations

from dataclasses import replace

import pytest

from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.room import RoomPhase, RoomState, new_room
from klondike_live.race.rules import (
    GraceExpiry,
    attempt_outcome,
    check_practice,
    check_spectator,
    grace_expiry,
    race_over,
)
from klondike_live.race.status import BoardStatus

PLAYING, WON, RESIGNED, TIMEOUT = (
    BoardStatus.PLAYING,
    BoardStatus.WON,
    BoardStatus.RESIGNED,
    BoardStatus.TIMEOUT,
)


def room(kind: RoomKind = RoomKind.RACE, *, ranked: bool = False) -> RoomState:
    state = new_room(
        "room-0001",
        kind=kind,
        variant=Variant(),
        capacity=2,
        time_limit=600,
        public=False,
        host="ann",
        host_name="Ann",
        now_ms=0,
        ranked=ranked,
    )
    return state.join("bea", "Bea")


def started(state: RoomState) -> RoomState:
    ready = state.set_ready("ann", True).set_ready("bea", True)
    return ready.start("ann", 1_000, 0, "42").state  # no countdown: racing at once


def test_a_race_is_over_when_every_board_is_done_or_time_is_up() -> None:
    """All boards done ends it; one still playing does not, unless the limit passed."""
    assert race_over([WON, RESIGNED, TIMEOUT], 0, 5)
    assert not race_over([WON, PLAYING], 0, 5)
    assert not race_over([WON, PLAYING], 10, 9)
    assert race_over([WON, PLAYING], 10, 10)
    assert race_over([], 0, 0)


def test_grace_expiry_leaves_the_lobby_or_resigns_a_game_in_play() -> None:
    """An absent racer leaves a lobby, and its board resigns once the race is on."""
    lobby = room().set_online("bea", False)
    assert grace_expiry(lobby, "bea", connected=False) is GraceExpiry.LEAVE
    racing = started(room()).set_online("bea", False)
    assert grace_expiry(racing, "bea", connected=False) is GraceExpiry.RESIGN


def test_grace_expiry_does_nothing_for_a_racer_who_came_back_or_has_no_seat() -> None:
    """A reconnected, online or seatless user loses nothing."""
    racing = started(room())
    away = racing.set_online("bea", False)
    assert grace_expiry(away, "bea", connected=True) is GraceExpiry.NOTHING
    assert grace_expiry(racing, "bea", connected=False) is GraceExpiry.NOTHING
    assert grace_expiry(away, "cid", connected=False) is GraceExpiry.NOTHING
    finished = replace(away, state=RoomPhase.FINISHED)
    assert grace_expiry(finished, "bea", connected=False) is GraceExpiry.NOTHING


def test_a_ranked_daily_attempt_runs_on_while_its_player_is_away() -> None:
    """Only its time limit ends a ranked attempt; a practice game (daily or solo) waits
    for its player: never resigned for absence."""
    ranked = replace(started(room()), kind=RoomKind.DAILY, ranked=True).set_online("bea", False)
    assert grace_expiry(ranked, "bea", connected=False) is GraceExpiry.NOTHING
    practice = replace(ranked, ranked=False)
    assert grace_expiry(practice, "bea", connected=False) is GraceExpiry.NOTHING
    solo = replace(ranked, kind=RoomKind.SOLO, ranked=False)
    assert grace_expiry(solo, "bea", connected=False) is GraceExpiry.NOTHING


@pytest.mark.parametrize("what", ["undo", "hints"])
def test_races_and_ranked_attempts_have_no_undo_or_hints(what: str) -> None:
    """Practice rules allow them; race rules refuse with `not_allowed`."""
    check_practice(False, what)  # type: ignore[arg-type]
    with pytest.raises(Refusal) as refused:
        check_practice(True, what)  # type: ignore[arg-type]
    assert refused.value.code is ErrorCode.NOT_ALLOWED and what in refused.value.message


def test_a_racer_cannot_watch_its_own_race_until_it_is_over() -> None:
    """`own_race` for a seated racer while the race can be played; anyone else may."""
    racing = started(room())
    with pytest.raises(Refusal) as refused:
        check_spectator(racing, "bea")
    assert refused.value.code is ErrorCode.OWN_RACE
    check_spectator(racing, "cid")
    check_spectator(replace(racing, state=RoomPhase.FINISHED), "bea")


def test_an_attempt_is_timed_by_its_finish_when_won_else_by_its_count() -> None:
    """A winner's time is its finish; a loser's is when it reached its count; a board
    the time limit ended without a status is timed to the limit."""
    state = started(room(RoomKind.DAILY, ranked=True))
    won = attempt_outcome(
        state, WON, finish_ms=90_000, found_ms=90_000, moves=120, found=52, now_ms=0
    )
    assert (won.won, won.time_ms, won.finished_at) == (True, 90_000, 91_000)
    lost = attempt_outcome(
        state, RESIGNED, finish_ms=50_000, found_ms=20_000, moves=40, found=9, now_ms=0
    )
    assert (lost.won, lost.time_ms, lost.found) == (False, 20_000, 9)
    late = attempt_outcome(
        state, PLAYING, finish_ms=None, found_ms=1_000, moves=3, found=1, now_ms=999_999
    )
    assert late.finished_at == state.deadline_ms()
