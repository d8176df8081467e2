"""Every rule of the game, one or more tests each (DESIGN.md section 2, notation section 4)."""

from __future__ import annotations

import pytest

from klondike_live.engine import Board, Card, IllegalMoveError, InvalidMoveError, Move, Outcome

from positions import board


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in text.split())


def test_tableau_builds_down_in_alternating_colours() -> None:
    """A card goes on a tableau card one rank higher of the other colour, and nothing else."""
    b = board({1: "9S", 2: "8H", 3: "8C", 4: "7H"})
    assert b.is_legal(Move.parse("21"))
    assert not b.is_legal(Move.parse("31"))  # same colour
    assert not b.is_legal(Move.parse("41"))  # two ranks lower
    b.play("21")
    assert b.tableau[0] == cards("9S 8H")


def test_only_a_king_goes_into_an_empty_column() -> None:
    """A queen may not go into an empty column; a king may."""
    b = board({1: "QH", 2: "KS", 3: ""})
    with pytest.raises(IllegalMoveError, match="only a king"):
        b.play("13")
    b.play("23")
    assert b.tableau[2] == cards("KS")


def test_a_king_headed_run_goes_into_an_empty_column() -> None:
    """A whole run headed by a king moves into an empty column; a run headed lower does not."""
    b = board({1: "#2C KS QH JC", 2: "", 3: "#3C QD JS"})
    assert not b.is_legal(Move.parse("32"))
    b.play("12")
    assert b.tableau[1] == cards("KS QH JC")
    assert b.tableau[0] == cards("2C") and b.face_down[0] == 0


def test_the_face_down_card_turns_up_as_part_of_the_move() -> None:
    """Uncovering a face-down card turns it face up in the same move, with no flip move."""
    b = board({1: "#5D #2C 9S", 2: "TH"})
    b.play("12")
    assert b.tableau[0] == cards("5D 2C")
    assert b.face_down[0] == 1
    assert b.seen >> Card.parse("2C") & 1


def test_uncovered_card_turns_up_after_a_move_to_the_foundation() -> None:
    """Moving a top card to its foundation turns up the card beneath it."""
    b = board({1: "#KD AS"})
    b.play("1F")
    assert b.face_down[0] == 0 and b.tableau[0] == cards("KD")


def test_a_run_can_be_split_to_move_its_lower_part() -> None:
    """The part of a run that fits moves; the rest stays; `:n` must state that part's size."""
    b = board({1: "KS QH JC TD", 2: "QD"})
    with pytest.raises(IllegalMoveError, match="has 2 cards, not 3"):
        b.play("12:3")
    b.play("12:2")
    assert b.tableau[0] == cards("KS QH")
    assert b.tableau[1] == cards("QD JC TD")


def test_moving_a_whole_pile_uncovers_nothing_when_none_is_face_down() -> None:
    """Emptying a column with no face-down cards leaves it empty."""
    b = board({1: "JC", 2: "QH"})
    b.play("12")
    assert b.tableau[0] == ()


def test_foundations_build_up_by_suit_from_the_ace() -> None:
    """Only the ace starts a foundation; then only the next rank of the same suit."""
    b = board({1: "2H", 2: "AH", 3: "AC"}, foundations={})
    assert not b.is_legal(Move.parse("1F"))
    b.play("2F")
    b.play("1F")
    assert b.foundations == (0, 0, 2, 0)
    b.play("3F")
    assert b.foundations == (1, 0, 2, 0)


def test_only_the_waste_top_is_playable() -> None:
    """The card under the waste top cannot be played."""
    b = board({1: "9S"}, waste="8H 5C")
    assert not b.is_legal(Move.parse("W1"))
    b = board({1: "9S"}, waste="5C 8H")
    b.play("W1")
    assert b.waste == cards("5C")


def test_draw_one_turns_one_card() -> None:
    """Draw-1 turns the stock's top card onto the waste."""
    b = board({1: "KS"}, stock="QD KD")
    b.play("D")
    assert b.waste == cards("QD")
    assert b.stock == cards("KD")


def test_draw_three_turns_three_cards_the_last_turned_on_top() -> None:
    """Draw-3 moves three cards one by one: the third turned is the playable top."""
    b = board({1: "KS"}, stock="TD JD QD KD", variant="draw=3")
    b.play("D")
    assert b.waste == cards("TD JD QD")
    assert b.stock == cards("KD")


def test_draw_three_with_fewer_than_three_cards_left() -> None:
    """Draw-3 with two cards left turns both."""
    b = board({1: "KS"}, stock="QD KD", variant="draw=3")
    b.play("D")
    assert b.waste == cards("QD KD")
    assert b.stock == ()
    assert not b.is_legal(Move.parse("D"))


def test_no_recycle_in_draw_one_by_default() -> None:
    """Draw-1 as written allows a single pass: the empty stock cannot be recycled."""
    b = board({1: "KS"}, stock="", waste="QD KD")
    assert b.variant.passes == 1
    with pytest.raises(IllegalMoveError, match="no pass left"):
        b.play("R")
    assert Move.parse("R") not in b.legal_moves()


def test_draw_three_allows_two_recycles_and_no_third() -> None:
    """Draw-3 as written allows three passes: recycles on pass 1 and 2, none on pass 3."""
    b = board({1: "KS"}, stock="KD", variant="draw=3")
    for expected_pass in (2, 3):
        b.play("D")
        b.play("R")
        assert b.pass_number == expected_pass
    b.play("D")
    assert not b.is_legal(Move.parse("R"))
    assert b.passes_left() == 0


def test_recycle_keeps_the_order() -> None:
    """After R, the first card turned in the last pass is again the first turned."""
    b = board({1: "KS"}, stock="JD QD KD", variant="draw=1 passes=2")
    b.play("D")
    b.play("D")
    b.play("D")
    b.play("R")
    assert b.stock == cards("JD QD KD")
    assert b.waste == ()
    b.play("D")
    assert b.waste == cards("JD")


def test_recycle_in_draw_three_keeps_the_order() -> None:
    """Draw-3: recycled stock turns the same triples again."""
    b = board({1: "KS"}, stock="9D TD JD QD KD", variant="draw=3")
    b.play("D")
    b.play("D")
    b.play("R")
    assert b.stock == cards("9D TD JD QD KD")
    b.play("D")
    assert b.waste == cards("9D TD JD")


def test_recycle_needs_an_empty_stock_and_a_waste() -> None:
    """R is refused while the stock has cards, and when the waste is empty."""
    b = board({1: "KS"}, stock="KD", variant="draw=1 passes=unlimited")
    with pytest.raises(IllegalMoveError, match="stock is not empty"):
        b.play("R")
    b = board({1: "KS", 2: "KD"}, stock="", variant="draw=1 passes=unlimited")
    with pytest.raises(IllegalMoveError, match="waste is empty"):
        b.play("R")


def test_unlimited_passes() -> None:
    """With passes=unlimited the waste may be recycled again and again."""
    b = board({1: "KS"}, stock="KD", variant="draw=1 passes=unlimited")
    for n in range(2, 12):
        b.play("D")
        b.play("R")
        assert b.pass_number == n
    assert b.passes_left() is None


def test_the_empty_stock_cannot_be_turned() -> None:
    """D with an empty stock is illegal."""
    b = board({1: "KS"}, stock="", waste="KD")
    with pytest.raises(IllegalMoveError, match="stock is empty"):
        b.play("D")


def test_foundation_cards_stay_unless_f2t() -> None:
    """A foundation card cannot come back to the tableau unless f2t=yes."""
    setup = {1: "4S"}
    b = board(setup, foundations={"H": 3, "C": 13, "D": 13, "S": 3})
    with pytest.raises(IllegalMoveError, match="f2t=no"):
        b.play("FH1")
    b = board(setup, foundations={"H": 3, "C": 13, "D": 13, "S": 3}, variant="draw=1 f2t=yes")
    b.play("FH1")
    assert b.tableau[0] == cards("4S 3H")
    assert b.foundations == (13, 13, 2, 3)


def test_f2t_needs_a_fitting_place() -> None:
    """A foundation card comes back only where a tableau card of its rank could go."""
    b = board({1: "4H"}, foundations={"C": 13, "D": 13, "H": 3, "S": 3}, variant="draw=1 f2t=yes")
    with pytest.raises(IllegalMoveError, match="does not fit"):
        b.play("FH1")
    with pytest.raises(IllegalMoveError, match="foundation is empty"):
        board({1: "KH"}, foundations={}, variant="f2t=yes").play("FC2")


def test_syntax_and_rules_errors_are_told_apart() -> None:
    """A bad token raises InvalidMoveError; a well-formed illegal move IllegalMoveError."""
    b = Board.from_seed("1")
    with pytest.raises(InvalidMoveError):
        b.play("Z9")
    with pytest.raises(IllegalMoveError):
        b.play("WF")


def test_illegal_move_leaves_the_board_unchanged() -> None:
    """A refused move changes nothing."""
    b = Board.from_seed("1")
    before = b.key()
    with pytest.raises(IllegalMoveError):
        b.play("12")
    assert b.key() == before and b.moves == []


def test_won_outcome() -> None:
    """All 52 cards on the foundations is a win."""
    b = board({1: "KS"}, stock="")
    assert b.outcome() is Outcome.IN_PROGRESS
    b.play("1F")
    assert b.is_won() and b.outcome() is Outcome.WON


def test_no_moves_outcome() -> None:
    """A position with no legal move, not won, is 'no moves left'."""
    b = board({1: "#AC 2C", 2: "#KC #QC #JC #TC #9C #8C #7C #6C #5C #4C 3C"}, stock="")
    assert b.legal_moves() == []
    assert b.outcome() is Outcome.NO_MOVES


def test_trivially_won() -> None:
    """Stock and waste empty with every card face up is trivially won; a face-down card is not."""
    assert board({1: "KS QH", 2: "KH QS"}, stock="").is_trivially_won()
    assert not board({1: "#KS QH", 2: "KH"}, stock="").is_trivially_won()
    assert not board({1: "KS"}, stock="", waste="KH").is_trivially_won()
    assert not board({1: "KS"}, stock="KH").is_trivially_won()


def test_undo_restores_position_pass_and_score() -> None:
    """pop() undoes a move exactly, including pass number and score."""
    b = board({1: "#KD QS", 2: "KH"}, stock="KS", variant="draw=1 passes=2")
    before = (b.key(), b.score, b.pass_number, b.foundations)
    b.play("12")
    b.play("D")
    b.play("R")
    assert b.pop() == Move.parse("R")
    assert b.pop() == Move.parse("D")
    assert b.pop() == Move.parse("12")
    assert (b.key(), b.score, b.pass_number, b.foundations) == before
    with pytest.raises(IndexError):
        b.pop()


def test_undo_does_not_unsee_cards() -> None:
    """Knowledge only grows: a card turned up stays seen after undo."""
    b = board({1: "#KD QS", 2: "KH"})
    b.play("12")
    b.pop()
    assert b.seen >> Card.parse("KD") & 1


def test_position_key_ignores_the_pass_only_when_passes_are_unlimited() -> None:
    """With unlimited passes, recycling back to the same layout gives the same key."""
    for variant, same in (("draw=1 passes=unlimited", True), ("draw=1 passes=3", False)):
        b = board({1: "KS"}, stock="QD KD", variant=variant)
        before = b.key()
        b.play("D")
        b.play("D")
        b.play("R")
        assert (b.key() == before) is same
