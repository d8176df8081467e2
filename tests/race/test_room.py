"""Rooms driven directly (no network): lobby, start, race, finish, rematch."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from klondike_live.engine import Deal, Variant
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.room import (
    COUNTDOWN,
    FINISHED,
    LOBBY,
    RACING,
    RoomEvent,
    RoomState,
    new_room,
)


def lobby(capacity: int = 3) -> RoomState:
    room = new_room(
        "room-0001",
        kind=RoomKind.RACE,
        variant=Variant(draw=3),
        capacity=capacity,
        time_limit=600,
        public=True,
        host="u1",
        host_name="Ann",
        now_ms=1_000,
    )
    return room.join("u2", "Bob")


def refused(code: ErrorCode) -> pytest.RaisesExc[Refusal]:
    return pytest.raises(Refusal, check=lambda e: e.code == code)


def test_creator_holds_seat_zero_and_hosts() -> None:
    """The creator is seated first and is the host."""
    room = lobby()
    assert room.host == "u1"
    assert [s.user for _, s in room.seated()] == ["u1", "u2"]


def test_joining_again_keeps_the_seat() -> None:
    """A racer who joins again (a reconnect) keeps its seat and takes its new name."""
    room = lobby().join("u2", "Bobby")
    assert room.seat_of("u2") == 1 and room.seats[1] is not None and room.seats[1].name == "Bobby"


def test_a_rename_shows_the_seat_s_new_name_in_every_state() -> None:
    """`rename` changes only the name of the player's seat, in the lobby, the countdown,
    the race and once finished; a room without its seat is left as it is."""
    room = lobby().set_ready("u1", True).set_ready("u2", True)
    counting = room.start("u1", 0, 3000, "seed").state
    racing = counting.begin()
    states = [room, counting, racing, racing.finish(9_000).state]
    assert [s.state for s in states] == [LOBBY, COUNTDOWN, RACING, FINISHED]
    for state in states:
        renamed = state.rename("u2", "Bobby")
        seat = renamed.seats[1]
        assert seat is not None and seat.name == "Bobby"
        assert replace(renamed, seats=state.seats) == state  # nothing else changed
        assert renamed.seats[0] == state.seats[0]
        assert renamed.public()["seats"][1]["name"] == "Bobby"
        assert state.rename("u9", "Nobody") is state


def test_full_room_refuses_another_racer() -> None:
    """Seats are limited to the room's capacity."""
    room = lobby(capacity=2)
    with refused(ErrorCode.ROOM_FULL):
        room.join("u3", "Cy")


def test_start_needs_the_host_and_everyone_ready() -> None:
    """Only the host starts, and only when two or more racers are all ready."""
    room = lobby().set_ready("u1", True)
    with refused(ErrorCode.NOT_HOST):
        room.start("u2", 0, 3000, "seed")
    with refused(ErrorCode.NOT_READY):
        room.start("u1", 0, 3000, "seed")
    alone = new_room(
        "room-0002",
        kind=RoomKind.RACE,
        variant=Variant(),
        capacity=2,
        time_limit=0,
        public=False,
        host="u1",
        host_name="Ann",
        now_ms=0,
    ).set_ready("u1", True)
    with refused(ErrorCode.NOT_READY):
        alone.start("u1", 0, 3000, "seed")


def test_a_start_without_a_countdown_is_racing_at_once() -> None:
    """Solo and daily games start with no countdown: racing from the deal on, with no
    begin step to wait for."""
    room = lobby().set_ready("u1", True).set_ready("u2", True).start("u1", 5_000, 0, "s").state
    assert room.state is RACING
    assert room.start_at_ms == 5_000
    assert room.is_live(5_000)


def test_start_sets_the_countdown_and_commits_to_the_deal() -> None:
    """Start fixes start_at on the server clock and the SHA-256 commitment of the deal."""
    room = (
        lobby().set_ready("u1", True).set_ready("u2", True).start("u1", 5_000, 3_000, "s33d").state
    )
    assert room.state == COUNTDOWN and room.start_at_ms == 8_000
    expected = hashlib.sha256(str(Deal.from_seed("s33d")).encode()).hexdigest()
    assert room.commitment == expected
    assert room.deadline_ms() == 8_000 + 600_000


def test_seed_is_public_only_when_finished() -> None:
    """The public room names the commitment from the countdown, the seed only at the end."""
    room = lobby().set_ready("u1", True).set_ready("u2", True).start("u1", 0, 3000, "s33d").state
    assert "seed" not in room.public() and room.public()["commitment"] == room.commitment
    racing = room.begin()
    assert racing.state == RACING and "seed" not in racing.public()
    done = racing.finish(99_000).state
    assert done.state == FINISHED and done.public()["seed"] == "s33d"
    assert "s33d" not in repr(racing.public())


def test_lobby_only_transitions() -> None:
    """Ready and leave belong to the lobby; a started race cannot be joined as racer."""
    room = lobby().set_ready("u1", True).set_ready("u2", True).start("u1", 0, 3000, "x").state
    with refused(ErrorCode.WRONG_STATE):
        room.set_ready("u1", False)
    with refused(ErrorCode.WRONG_STATE):
        room.leave("u2")
    with refused(ErrorCode.WRONG_STATE):
        room.join("u3", "Cy")
    with refused(ErrorCode.WRONG_STATE):
        room.rematch("u1")


def test_host_leaving_passes_the_role() -> None:
    """When the host leaves the lobby the next seated racer hosts."""
    room = lobby().leave("u1")
    assert room.host == "u2" and room.seat_of("u1") is None


def test_spectators_cannot_act_as_racers() -> None:
    """A user without a seat cannot ready, leave or ask for a rematch."""
    with refused(ErrorCode.NOT_A_RACER):
        lobby().set_ready("u9", True)


def test_rematch_returns_to_the_lobby_with_the_same_racers() -> None:
    """Rematch: a new race number, the same racers, nobody ready, no seed yet."""
    room = lobby().set_ready("u1", True).set_ready("u2", True).start("u1", 0, 3000, "x").state
    again = room.begin().finish(10).state.rematch("u2").state
    assert again.state == LOBBY and again.gen == 2
    assert [(s.user, s.ready) for _, s in again.seated()] == [("u1", False), ("u2", False)]
    assert again.seed == "" and again.commitment == ""


def test_blob_round_trip() -> None:
    """The stored form reads back equal, secrets included (it never leaves the server)."""
    room = lobby().set_ready("u1", True).set_ready("u2", True).start("u1", 7, 3000, "s").state
    assert RoomState.from_blob(room.to_blob()) == room


def test_transitions_that_do_more_than_change_a_field_say_so() -> None:
    """Dealing, finishing and reopening a race return their event with the new state;
    the service acts on the events instead of comparing states."""
    ready = lobby().set_ready("u1", True).set_ready("u2", True)
    dealt = ready.start("u1", 0, 3000, "x")
    assert dealt.events == (RoomEvent.DEALT,) and dealt.state.state == COUNTDOWN
    finished = dealt.state.begin().finish(10)
    assert finished.events == (RoomEvent.FINISHED,) and finished.state.state == FINISHED
    reopened = finished.state.rematch("u1")
    assert reopened.events == (RoomEvent.REOPENED,) and reopened.state.state == LOBBY


def test_a_lobby_every_racer_left_is_hosted_by_the_next_to_join() -> None:
    """The host leaving an otherwise empty lobby leaves it hostless; whoever joins next
    hosts it and can start it."""
    empty = lobby(capacity=2).leave("u2").leave("u1")
    assert empty.host == ""
    joined = empty.join("u3", "Cy").join("u4", "Di")
    assert joined.host == "u3"
    ready = joined.set_ready("u3", True).set_ready("u4", True)
    assert ready.start("u3", 0, 3_000, "x").state.state == COUNTDOWN


def test_bots_take_seats_only_where_allowed_and_are_labelled() -> None:
    closed = lobby()
    with refused(ErrorCode.BOTS_NOT_ALLOWED):
        closed.join("b1", "Steady bot", "steady")
    room = replace(lobby(), bots=True).join("b1", "Steady bot", "steady")
    seats = room.public()["seats"]
    assert seats[2]["bot"] is True and seats[2]["level"] == "steady"
    assert seats[0]["bot"] is False and "level" not in seats[0]
    assert room.public()["bots"] is True
    again = RoomState.from_blob(room.to_blob())
    assert again == room and again.bots


def test_a_host_may_add_a_bot_exactly_when_a_bot_could_join() -> None:
    """`check_add_bot` (what the service asks before starting a bot) refuses what `join`
    would refuse a bot, and a non-host."""
    allowed = replace(lobby(), bots=True)
    allowed.check_add_bot("u1")
    cases = {
        ErrorCode.NOT_HOST: (allowed, "u2"),
        ErrorCode.BOTS_NOT_ALLOWED: (lobby(), "u1"),
        ErrorCode.ROOM_FULL: (allowed.join("b1", "Bot", "steady"), "u1"),
        ErrorCode.WRONG_STATE: (replace(allowed, state=RACING), "u1"),
    }
    for code, (room, user) in cases.items():
        with refused(code):
            room.check_add_bot(user)
        if code is not ErrorCode.NOT_HOST:
            with refused(code):
                room.join("b9", "Bot", "steady")


def test_the_host_removes_a_bot_from_its_seat_in_the_lobby_only() -> None:
    """`remove_bot` frees a bot's seat; refusals: not the host, a seat with no bot (free,
    a person's, out of range), a race under way."""
    room = replace(lobby(), bots=True).join("b1", "Bot", "steady")
    freed = room.remove_bot("u1", 2)
    assert freed.seats[2] is None and freed.seat_of("b1") is None and freed.host == "u1"
    cases = [
        (room, "u2", 2, ErrorCode.NOT_HOST),
        (freed, "u1", 2, ErrorCode.NOT_A_BOT),
        (room, "u1", 1, ErrorCode.NOT_A_BOT),
        (room, "u1", 0, ErrorCode.NOT_A_BOT),
        (room, "u1", 7, ErrorCode.NOT_A_BOT),
        (replace(room, state=RACING), "u1", 2, ErrorCode.WRONG_STATE),
    ]
    for state, user, seat, code in cases:
        with refused(code):
            state.remove_bot(user, seat)


def test_check_start_refuses_what_start_refuses_and_deals_nothing() -> None:
    """The service asks `check_start` before it takes a deal; `start` applies the same
    rule."""
    ready = lobby().set_ready("u1", True).set_ready("u2", True)
    ready.check_start("u1")
    for room, user, code in (
        (ready, "u2", ErrorCode.NOT_HOST),
        (lobby().set_ready("u1", True), "u1", ErrorCode.NOT_READY),
        (replace(ready, state=RACING), "u1", ErrorCode.WRONG_STATE),
    ):
        with refused(code):
            room.check_start(user)
        with refused(code):
            room.start(user, 0, 3000, "seed")


def test_a_bot_never_becomes_the_host() -> None:
    room = replace(lobby(), bots=True).join("b1", "Bot", "api")
    assert room.leave("u1").host == "u2"
    only_bot = room.leave("u1").leave("u2")
    assert only_bot.host == "" and only_bot.seated()[0][1].user == "b1"
    assert only_bot.join("b2", "Other bot", "expert").host == ""


def test_autostart_needs_every_seat_taken_and_ready() -> None:
    room = replace(lobby(), bots=True, autostart=True).set_ready("u2", True)
    assert not room.all_ready()
    room = room.join("b1", "Bot", "relaxed").set_ready("b1", True)
    assert not room.all_ready()
    assert room.set_ready("u1", True).all_ready()
