"""Ranking and per-audience board events, driven directly (no network)."""

from __future__ import annotations

import msgpack
import pytest

from klondike_live.engine import ALL_CARDS, Board, Card, GameRecord, Move, Variant
from klondike_live.race.live_board import PLAYING, RESIGNED, WON, LiveBoard, finishing_moves
from klondike_live.race.ranking import Standing, rank

from testdata import DATA


def test_winners_rank_by_time_then_others_by_cards_then_when() -> None:
    """Winners by finish time; others by foundation cards (more first), then earlier."""
    standings = [
        Standing(seat=0, won=False, finish_ms=0, found=20, found_ms=50_000),
        Standing(seat=1, won=True, finish_ms=90_000, found=52, found_ms=90_000),
        Standing(seat=2, won=True, finish_ms=80_000, found=52, found_ms=80_000),
        Standing(seat=3, won=False, finish_ms=0, found=20, found_ms=40_000),
        Standing(seat=4, won=False, finish_ms=0, found=31, found_ms=70_000),
    ]
    assert [(r, s.seat) for r, s in rank(standings)] == [(1, 2), (2, 1), (3, 4), (4, 3), (5, 0)]


def test_ties_share_a_rank() -> None:
    """Equal keys are shown as ties and the next rank skips."""
    standings = [
        Standing(seat=0, won=True, finish_ms=1000, found=52, found_ms=1000),
        Standing(seat=1, won=True, finish_ms=1000, found=52, found_ms=1000),
        Standing(seat=2, won=False, finish_ms=0, found=3, found_ms=10),
        Standing(seat=3, won=False, finish_ms=0, found=3, found_ms=10),
        Standing(seat=4, won=False, finish_ms=0, found=0, found_ms=0),
    ]
    assert [r for r, _ in rank(standings)] == [1, 1, 3, 3, 5]


def decode(frame: bytes | None) -> dict[str, object]:
    assert frame is not None
    data: dict[str, object] = msgpack.unpackb(frame, raw=False)
    return data


def live(seed: str = "1", *, race: bool = True) -> LiveBoard:
    return LiveBoard("room-0001", 0, 1, Board.from_seed(seed), race=race)


def test_a_move_makes_one_event_per_audience_with_next_offsets() -> None:
    """A move yields an own diff (with the move id) and a spectator diff, offsets + 1."""
    board = live()
    event = board.plan_move(Move.parse("2F"), 7, ALL_CARDS)
    own, spec = decode(event.own_frame), decode(event.spec_frame)
    assert (own["audience"], own["off"], own["id"], own["m"]) == ("own", 1, 7, "2F")
    assert (spec["audience"], spec["off"], spec["m"]) == ("spectator", 1, "2F")
    assert "id" not in spec and "score" not in spec
    assert event.fields["seq"] == 1 and event.fields["last_move_id"] == 7


def test_spectators_see_only_what_every_racer_still_playing_knows() -> None:
    """A card this racer turned but a rival has not seen stays hidden from spectators."""
    board = live()
    rival = Board.from_seed("1")  # has seen only the seven up-cards
    event = board.plan_move(Move.parse("2F"), 1, rival.seen)  # turns up 7C
    spec = decode(event.spec_frame)
    own = decode(event.own_frame)
    seven_clubs = Card.parse("7C")
    assert seven_clubs in [c for p in own["d"]["piles"] for c in p[3]]  # type: ignore[index]
    assert seven_clubs not in [c for p in spec["d"]["piles"] for c in p[3]]  # type: ignore[index]
    rival.play("2F")  # now the rival has seen it too
    refresh = board.plan_refresh(rival.seen)
    assert refresh is not None and refresh.own_frame is None
    revealed = decode(refresh.spec_frame)
    assert seven_clubs in [c for p in revealed["d"]["piles"] for c in p[3]]  # type: ignore[index]


def test_solo_spectators_see_what_the_player_sees() -> None:
    """In a practice game spectators share the player's knowledge."""
    board = live(race=False)
    event = board.plan_move(Move.parse("2F"), 1, 0)
    spec = decode(event.spec_frame)
    assert Card.parse("7C") in [c for p in spec["d"]["piles"] for c in p[3]]  # type: ignore[index]


def test_illegal_move_changes_nothing() -> None:
    """An illegal move raises before any state changes."""
    board = live()
    with pytest.raises(ValueError, match="waste is empty"):
        board.plan_move(Move.parse("WF"), 1, ALL_CARDS)
    assert (board.seq, board.own_offset, len(board.board.moves)) == (0, 0, 0)


def test_trivially_won_race_board_finishes_at_once() -> None:
    """The move that leaves stock and waste empty and every card up wins the race board:
    the foundation moves are added to the same event."""
    game = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())
    probe = Board(game.starting_deal(), game.variant)
    index = 0
    while not (probe.is_trivially_won() and not probe.is_won()):
        probe.play(game.moves[index])
        index += 1
    index -= 1  # the move that made it trivially won
    board = Board(game.starting_deal(), game.variant)
    for token in game.moves[:index]:
        board.play(token)
    racer = LiveBoard("room-0001", 0, 1, board, race=True)
    event = racer.plan_move(Move.parse(game.moves[index]), 1, ALL_CARDS)
    assert event.won and racer.status == WON and board.is_won()
    assert event.tokens[0] == game.moves[index] and len(event.tokens) > 1
    assert all(token.endswith("F") for token in event.tokens[1:])
    assert event.fields["status"] == WON
    assert len(event.tokens) == 1 + len(finishing_moves(probe))


def test_resign_is_a_status_event_for_both_audiences() -> None:
    """Resigning publishes the new status to the racer and to spectators."""
    board = live()
    event = board.plan_status("resign", RESIGNED, ALL_CARDS)
    assert decode(event.own_frame)["status"] == RESIGNED
    assert decode(event.spec_frame)["status"] == RESIGNED
    assert board.status == RESIGNED and event.tokens == ()


def test_own_snapshot_tells_the_last_move_id_and_status() -> None:
    """The racer's snapshot carries its last applied move id."""
    board = live()
    event = board.plan_move(Move.parse("D"), 12, ALL_CARDS)
    board.commit(event)
    snapshot = decode(board.own_snapshot())
    assert (snapshot["last_id"], snapshot["status"], snapshot["off"]) == (12, PLAYING, 1)
    assert Variant() == board.board.variant
