"""A game's clock: a practice game's stands still until the first move and while its
player is away; a race's and a ranked daily attempt's run from the start."""

from __future__ import annotations

from dataclasses import replace

from klondike_live.engine import Variant
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.room import RoomEvent, RoomState, new_room
from klondike_live.race.rules import (
    clock_waits,
    move_starts_clock,
    new_game_clock,
    player_back,
    player_left,
)


def game(kind: RoomKind, *, ranked: bool = False, time_limit: int = 600) -> RoomState:
    """A one-seat game of `kind` dealt at t = 1000 ms, as `create` makes it."""
    state = new_room(
        "room-0001",
        kind=kind,
        variant=Variant(),
        capacity=1,
        time_limit=time_limit,
        public=False,
        host="ann",
        host_name="Ann",
        now_ms=0,
        ranked=ranked,
    )
    return new_game_clock(state.set_ready("ann", True).start("ann", 1_000, 0, "42").state)


def test_only_practice_games_wait_for_their_player() -> None:
    """Solo and unranked daily games wait; races and ranked attempts do not."""
    assert clock_waits(game(RoomKind.SOLO))
    assert clock_waits(game(RoomKind.DAILY))
    assert not clock_waits(game(RoomKind.DAILY, ranked=True))
    assert not clock_waits(replace(game(RoomKind.SOLO), kind=RoomKind.RACE))


def test_a_solo_clock_stands_at_zero_until_the_first_move() -> None:
    """Dealt, the clock shows 0 however long it waits, has no deadline, and a rejoin
    does not start it; the first move runs it from that instant."""
    dealt = game(RoomKind.SOLO)
    assert dealt.paused and not dealt.clock_started
    assert dealt.clock_ms(60_000) == 0 and dealt.deadline_ms() == 0
    assert player_back(dealt, "ann", "Ann", 30_000).state == dealt
    moved = move_starts_clock(dealt, 61_000)
    assert moved.events == (RoomEvent.RESUMED,)
    running = moved.state
    assert not running.paused and running.start_at_ms == 61_000
    assert running.clock_ms(61_500) == 500 and running.deadline_ms() == 661_000


def test_away_the_clock_stops_and_back_it_runs_on_from_where_it_stood() -> None:
    """Leaving at 10 s of play stops the clock at 10 s; coming back an hour later it
    runs on from 10 s, and the time limit moves by the hour too."""
    running = move_starts_clock(game(RoomKind.SOLO), 2_000).state
    left = player_left(running, "ann", 12_000)
    assert left.events == (RoomEvent.PAUSED,)
    away = left.state
    seat = away.seats[0]
    assert seat is not None and not seat.online
    assert away.clock_ms(3_600_000) == 10_000 and away.deadline_ms() == 0
    back = player_back(away, "ann", "Ann", 3_612_000)
    assert back.events == (RoomEvent.RESUMED,)
    assert back.state.clock_ms(3_612_000) == 10_000
    assert back.state.deadline_ms() == 3_612_000 + 590_000
    assert back.state.seats[0] is not None and back.state.seats[0].online


def test_a_finish_while_the_clock_stands_ends_when_it_stopped() -> None:
    """A game ended while its clock stands still (given up before a first move) ends
    at the time its clock shows."""
    dealt = game(RoomKind.SOLO)
    over = dealt.finish(50_000).state
    assert over.ended_ms == dealt.start_at_ms and not over.paused


def test_races_and_ranked_attempts_never_stop_their_clock() -> None:
    """A racer leaving a ranked attempt only shows away; its clock runs on."""
    ranked = game(RoomKind.DAILY, ranked=True)
    assert not ranked.paused
    left = player_left(ranked, "ann", 5_000)
    assert left.events == () and not left.state.paused
    assert left.state.deadline_ms() == 601_000


def test_the_clock_survives_the_room_blob() -> None:
    """`paused_at` is stored with the room and shown in its frame while it stands."""
    away = player_left(move_starts_clock(game(RoomKind.SOLO), 2_000).state, "ann", 9_000).state
    assert RoomState.from_blob(away.to_blob()) == away
    assert away.public()["paused_at"] == 9_000
    assert "paused_at" not in player_back(away, "ann", "Ann", 20_000).state.public()
