"""Matches of several deals, as pure values: who takes a deal, the score, the end."""

from __future__ import annotations

import pytest

from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.match import DRAWN, deal_winner, majority, match_winner, score, winner_of
from klondike_live.race.ranking import Standing
from klondike_live.race.room import COUNTDOWN, FINISHED, LOBBY, RoomEvent, RoomState, new_room
from klondike_live.race.rules import GraceExpiry, grace_expiry


def won(seat: int, ms: int) -> Standing:
    return Standing(seat=seat, won=True, finish_ms=ms, found=52, found_ms=ms)


def stuck(seat: int, found: int, found_ms: int = 1_000) -> Standing:
    return Standing(seat=seat, won=False, finish_ms=0, found=found, found_ms=found_ms)


def test_the_majority_of_each_length() -> None:
    """Best of 3, 5 and 7 are won with 2, 3 and 4 deals."""
    assert [majority(n) for n in (1, 3, 5, 7)] == [1, 2, 3, 4]


def test_a_deal_goes_to_the_fastest_finisher() -> None:
    """The first to finish takes the deal, whatever the others have home."""
    assert deal_winner([stuck(0, 51), won(1, 90_000), won(2, 80_000)]) == 2


def test_a_deal_nobody_finished_goes_to_the_most_cards_home() -> None:
    """With no finisher, more cards home takes the deal."""
    assert deal_winner([stuck(0, 20), stuck(1, 31), stuck(2, 12)]) == 1


def test_equal_cards_home_at_the_top_is_a_drawn_deal() -> None:
    """Level on cards home (reached at different times) counts for nobody, and so do
    two finishers with the same time."""
    assert deal_winner([stuck(0, 31, 5_000), stuck(1, 31, 9_000), stuck(2, 3)]) == DRAWN
    assert deal_winner([won(0, 70_000), won(1, 70_000)]) == DRAWN
    assert deal_winner([]) == DRAWN


def test_winner_of_ranking_rows() -> None:
    """The same rule read from stored ranking rows."""
    rows = [
        {"seat": 0, "status": "resigned", "time_ms": None, "found": 40, "found_ms": 3},
        {"seat": 1, "status": "timeout", "time_ms": None, "found": 41, "found_ms": 9},
    ]
    assert winner_of(rows) == 1
    rows[0]["found"] = 41
    assert winner_of(rows) == DRAWN


def test_score_and_match_winner() -> None:
    """Deals won per seat; the match is over once one racer has the majority; drawn
    deals count for nobody and the match goes on."""
    assert score([0, DRAWN, 1, 0], 3) == [2, 1, 0]
    assert match_winner(3, [0, DRAWN, 1], [0, 1]) is None
    assert match_winner(3, [0, DRAWN, 1, 0], [0, 1]) == 0
    assert match_winner(5, [1, 1, 0, 1], [0, 1]) == 1


def test_a_forfeit_ends_the_match_for_the_leader_of_the_others() -> None:
    """The racer who left loses; the sole leader of the rest wins, level leaders draw."""
    assert match_winner(7, [0, 0], [0, 1], forfeit=0) == 1
    assert match_winner(5, [1, 2, 1], [0, 1, 2], forfeit=0) == 1
    assert match_winner(5, [1, 2], [0, 1, 2], forfeit=0) == DRAWN


def match_room(best_of: int = 3) -> RoomState:
    room = new_room(
        "room-0001",
        kind=RoomKind.RACE,
        variant=Variant(),
        capacity=3,
        time_limit=0,
        public=False,
        host="u1",
        host_name="Ann",
        now_ms=1_000,
        best_of=best_of,
    )
    return room.join("u2", "Bob").set_ready("u1", True).set_ready("u2", True)


def finished(room: RoomState, winner: int, now: int) -> RoomState:
    racing = room.begin() if room.state == COUNTDOWN else room
    return racing.finish(now).state.score_deal(winner, now + 5_000)


def test_a_best_of_3_plays_deals_until_the_majority() -> None:
    """Each deal is scored; the next deal is dealt on the same seats with a fresh
    seed and its commitment; the match ends at two deals won and then allows a rematch."""
    first = match_room().start("u1", 2_000, 3_000, "seed-a").state
    assert first.match_from == first.gen == 1 and first.match_on
    one = finished(first, 0, 10_000)
    assert one.match_deals == (0,) and one.next_at_ms == 15_000 and one.match_on
    with pytest.raises(Refusal, check=lambda e: e.code == ErrorCode.WRONG_STATE):
        one.rematch("u1")
    step = one.next_deal(15_000, 3_000, "seed-b")
    two = step.state
    assert step.events == (RoomEvent.DEALT,)
    assert (two.state, two.gen, two.start_at_ms, two.seed) == (COUNTDOWN, 2, 18_000, "seed-b")
    assert two.commitment != first.commitment and two.seats == one.seats
    public = two.public()
    assert "seed" not in public and public["commitment"] == two.commitment
    assert public["match"]["score"] == [1, 0, 0] and public["best_of"] == 3
    drawn = finished(two, DRAWN, 30_000)
    assert drawn.match_on and drawn.public()["match"]["deals"] == [0, None]
    last = finished(drawn.next_deal(35_000, 0, "seed-c").state, 0, 50_000)
    summary = last.public()["match"]
    assert (summary["over"], summary["winner"], summary["score"]) == (True, 0, [2, 0, 0])
    assert last.next_at_ms == 0 and "next_at" not in summary
    with pytest.raises(Refusal, check=lambda e: e.code == ErrorCode.WRONG_STATE):
        last.next_deal(60_000, 0, "seed-d")
    again = last.rematch("u2").state
    assert again.state == LOBBY and again.match_from == 0 and "match" not in again.public()


def test_leaving_the_match_forfeits_it() -> None:
    """A racer gone for good during a deal forfeits at once; between deals its
    forfeit waits for the next deal (so that deal's results record it)."""
    racing = match_room().start("u1", 2_000, 0, "seed-a").state
    away = racing.set_online("u2", False, 3_000)
    assert grace_expiry(away, "u2", connected=False) is GraceExpiry.FORFEIT
    gone = away.leave_match("u2")
    summary = gone.public()["match"]
    assert (summary["over"], summary["winner"], summary["forfeit"]) == (True, 0, 1)
    between = finished(racing, 1, 9_000).set_online("u2", False, 9_500)
    assert between.state == FINISHED
    assert grace_expiry(between, "u2", connected=False) is GraceExpiry.LATER


def test_a_blob_keeps_the_match() -> None:
    """The stored form round-trips every match field."""
    room = finished(match_room(5).start("u1", 2_000, 0, "seed-a").state, DRAWN, 9_000)
    assert RoomState.from_blob(room.to_blob()) == room


def test_a_single_race_is_no_match() -> None:
    """Best of 1 (and every solo or daily room) keeps no match: no score, no next deal."""
    room = finished(match_room(1).start("u1", 2_000, 0, "seed-a").state, 0, 9_000)
    assert not room.match_on and room.match_deals == () and "match" not in room.public()
    solo = new_room(
        "room-0002",
        kind=RoomKind.SOLO,
        variant=Variant(),
        capacity=1,
        time_limit=0,
        public=False,
        host="u1",
        host_name="Ann",
        now_ms=1_000,
        best_of=3,
    )
    assert solo.best_of == 1
