"""Ranking and per-audience board events, driven directly (no network)."""

from __future__ import annotations

import msgpack
import pytest

from klondike_live.engine import Board, Card, GameRecord, Move, Variant
from klondike_live.protocol.kinds import Audience, BoardPosition
from klondike_live.race.live_board import LiveBoard, finishing_moves, snapshot
from klondike_live.race.ranking import Standing, rank
from klondike_live.race.status import BoardOp, BoardStatus
from klondike_live.race.visibility import SeatKnowledge

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


def pile_cards(frame: dict[str, object]) -> list[int]:
    """The face-up cards of every tableau pile in a diff frame (`d.piles`: rows of index,
    kept, face-down count, cards)."""
    change = frame["d"]
    assert isinstance(change, dict)
    return [c for p in change["piles"] for c in p[3]]


def rival_seat(rival: Board) -> dict[int, SeatKnowledge]:
    """The seats of a two-racer room as seat 0's writer sees them: the rival in seat 1."""
    return {1: SeatKnowledge(rival.seen, BoardStatus.PLAYING)}


def live(seed: str = "1", *, race: bool = True) -> LiveBoard:
    return LiveBoard("room-0001", 0, 1, Board.from_seed(seed), race=race)


def test_a_move_makes_one_event_per_audience_with_next_offsets() -> None:
    """A move yields an own diff (with the move id) and a spectator diff, offsets + 1."""
    board = live()
    event = board.apply_move(Move.parse("2F"), 7, {})
    own, spec = decode(event.own_frame), decode(event.spec_frame)
    assert (own["audience"], own["off"], own["id"], own["m"]) == ("own", 1, 7, "2F")
    assert (spec["audience"], spec["off"], spec["m"]) == ("spectator", 1, "2F")
    assert "id" not in spec and "score" not in spec
    assert event.fields["seq"] == 1 and event.fields["last_move_id"] == 7


def test_spectators_see_only_what_every_racer_still_playing_knows() -> None:
    """A card this racer turned but a rival has not seen stays hidden from spectators."""
    board = live()
    rival = Board.from_seed("1")  # has seen only the seven up-cards
    event = board.apply_move(Move.parse("2F"), 1, rival_seat(rival))  # turns up 7C
    board.confirm()
    spec = decode(event.spec_frame)
    own = decode(event.own_frame)
    seven_clubs = Card.parse("7C")
    assert seven_clubs in pile_cards(own)
    assert seven_clubs not in pile_cards(spec)
    rival.play("2F")  # now the rival has seen it too
    refresh = board.apply_refresh(rival_seat(rival))
    assert refresh is not None and refresh.own_frame is None
    revealed = decode(refresh.spec_frame)
    assert seven_clubs in pile_cards(revealed)


def test_solo_spectators_see_what_the_player_sees() -> None:
    """In a practice game spectators share the player's knowledge."""
    board = live(race=False)
    event = board.apply_move(Move.parse("2F"), 1, rival_seat(Board.from_seed("1")))
    spec = decode(event.spec_frame)
    assert Card.parse("7C") in pile_cards(spec)


def test_illegal_move_changes_nothing() -> None:
    """An illegal move raises before any state changes."""
    board = live()
    with pytest.raises(ValueError, match="waste is empty"):
        board.apply_move(Move.parse("WF"), 1, {})
    assert (board.seq, board.own_offset, len(board.board.moves)) == (0, 0, 0)
    assert not board.pending


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
    event = racer.apply_move(Move.parse(game.moves[index]), 1, {})
    assert event.won and racer.status is BoardStatus.WON and board.is_won()
    assert event.tokens[0] == game.moves[index] and len(event.tokens) > 1
    assert all(token.endswith("F") for token in event.tokens[1:])
    assert event.fields["status"] == "won"
    assert len(event.tokens) == 1 + len(finishing_moves(probe))


def test_resign_is_a_status_event_for_both_audiences() -> None:
    """Resigning publishes the new status to the racer and to spectators."""
    board = live()
    event = board.apply_ending(BoardOp.RESIGN, {})
    assert decode(event.own_frame)["status"] == "resigned"
    assert decode(event.spec_frame)["status"] == "resigned"
    assert board.status is BoardStatus.RESIGNED and event.tokens == ()


def test_own_snapshot_tells_the_last_move_id_and_status() -> None:
    """The racer's snapshot carries its last applied move id."""
    board = live()
    board.apply_move(Move.parse("D"), 12, {})
    board.confirm()
    at = BoardPosition(Audience.OWN, board.seat, board.epoch, board.own_offset)
    frame = decode(
        snapshot(board.room, at, board.board, board.board.seen, board.status, last_move_id=12)
    )
    assert (frame["last_id"], frame["status"], frame["off"]) == (12, "playing", 1)
    assert Variant() == board.board.variant


def published(board: LiveBoard) -> tuple[object, ...]:
    """Everything of a writer that a rollback must restore."""
    return (
        board.seq,
        board.own_offset,
        board.spec_offset,
        board.own_view,
        board.spec_view,
        board.last_move_id,
        board.status,
        list(board.board.moves),
    )


def test_rollback_restores_the_board_and_what_was_published() -> None:
    """A refused write rolls the writer back exactly: board, offsets, views, status."""
    board = live()
    board.apply_move(Move.parse("D"), 1, {})
    board.confirm()
    before = published(board)
    board.apply_move(Move.parse("D"), 2, {})
    board.rollback()
    board.apply_ending(BoardOp.RESIGN, {})
    board.rollback()
    assert published(board) == before


def test_an_undo_rolled_back_puts_the_move_back() -> None:
    """Rolling back an undo replays the move it took back."""
    board = live(race=False)
    board.apply_move(Move.parse("D"), 1, {})
    board.confirm()
    view = board.own_view
    board.apply_undo(2, {})
    assert list(board.board.moves) == []
    board.rollback()
    assert [str(m) for m in board.board.moves] == ["D"] and board.own_view == view


def test_a_pending_event_blocks_every_other_change() -> None:
    """Until the store answers, the writer refuses a second change."""
    board = live()
    board.apply_move(Move.parse("D"), 1, {})
    with pytest.raises(RuntimeError, match="pending"):
        board.apply_move(Move.parse("D"), 2, {})
    board.confirm()
    with pytest.raises(RuntimeError, match="no event"):
        board.confirm()
