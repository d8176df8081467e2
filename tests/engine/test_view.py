"""Viewer views and diffs: what each viewer may see, and the changes between views."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from klondike_live.engine import (
    ALL_CARDS,
    UNKNOWN,
    Board,
    Card,
    ViewDiff,
    diff,
    format_view,
    parse_view,
    view_of,
)
from klondike_live.engine.view import WASTE

from positions import board


def mask(*tokens: str) -> int:
    known = 0
    for token in tokens:
        known |= 1 << Card.parse(token)
    return known


def test_racer_view_hides_face_down_cards_and_stock() -> None:
    """A racer's own view shows face-up cards, `##` for face-down ones, the stock as a count."""
    b = Board.from_seed("1")
    view = view_of(b, b.seen)
    assert view.tableau[1] == (UNKNOWN, Card.parse("AH"))
    assert view.face_down == (0, 1, 2, 3, 4, 5, 6)
    assert view.stock == 24
    text = format_view(view)
    assert "\n2: ## AH\n" in text and "\nstock: 24\n" in text
    assert view.cards() == {pile[-1] for pile in b.tableau}


def test_full_view_shows_every_tableau_card() -> None:
    """With ALL_CARDS the view shows face-down cards, marked `#` in text."""
    b = Board.from_seed("1")
    view = view_of(b, ALL_CARDS)
    assert view.tableau == b.tableau
    assert "\n2: #7C AH\n" in format_view(view)


def test_a_view_under_two_racers_common_knowledge_hides_what_one_has_not_seen() -> None:
    """A card one racer has seen and another has not stays hidden under the AND of their
    masks (the spectators' mask of `race.visibility`, tested there)."""
    a = Board.from_seed("1")
    b = Board.from_seed("1")
    a.play("D")  # a sees 4S; b does not
    spectator = a.seen & b.seen
    assert not spectator >> Card.parse("4S") & 1
    assert view_of(a, spectator).waste == (UNKNOWN,)
    b.play("D")
    spectator = a.seen & b.seen
    assert view_of(a, spectator).waste == (Card.parse("4S"),)


def test_foundations_show_only_the_known_run() -> None:
    """Foundation cards the viewer may not know are counted, never named (suit and height)."""
    b = board({1: "KS"}, foundations={"C": 13, "D": 13, "H": 13, "S": 12}, stock="")
    known = mask("AC", "2C", "AD", "AS", "2S", "3S")
    view = view_of(b, known)
    assert view.foundations == (2, 1, 0, 3)
    assert view.foundation_hidden == 11 + 12 + 13 + 9
    assert view.cards() <= {c for c in range(52) if known >> c & 1}
    assert format_view(view).endswith("foundations: C2 D1 H0 S3" + " ##" * 45 + "\n")


def test_unknown_face_up_card_stays_hidden() -> None:
    """A face-up card outside the viewer's knowledge is UNKNOWN, with the face-down count kept."""
    b = board({1: "#5D KS QH", 2: "KH"})
    view = view_of(b, mask("KS", "KH"))
    assert view.tableau[0] == (UNKNOWN, Card.parse("KS"), UNKNOWN)
    assert view.face_down[0] == 1


def test_diff_keeps_a_prefix_and_appends() -> None:
    """A card moving between piles is 'keep k, append' on each; applying gives the new view."""
    b = board({1: "#5D 9S 8H", 2: "#4C TH"})
    old = view_of(b, b.seen)
    b.play("12")
    new = view_of(b, b.seen)
    change = diff(old, new)
    assert change.piles == (
        (0, 0, 0, (Card.parse("5D"),)),
        (1, 2, 1, (Card.parse("9S"), Card.parse("8H"))),
    )
    assert change.apply(old) == new


def test_diff_of_a_flip_carries_only_the_turned_card() -> None:
    """Turning up a face-down card sends that card alone, with the new face-down count."""
    b = board({1: "#5D #KS 9S", 2: "TH"})
    old = view_of(b, b.seen)
    b.play("12")
    new = view_of(b, b.seen)
    change = diff(old, new)
    assert (0, 1, 1, (Card.parse("KS"),)) in change.piles
    assert (1, 1, 0, (Card.parse("9S"),)) in change.piles
    assert change.apply(old) == new
    assert Card.parse("5D") not in change.cards()


def test_diff_of_a_draw_touches_stock_and_waste() -> None:
    """Turning the stock changes the stock count and appends to the waste."""
    b = Board.from_seed("1")
    old = view_of(b, b.seen)
    b.play("D")
    change = diff(old, view_of(b, b.seen))
    assert change.stock == 23
    assert change.piles == ((WASTE, 0, 0, (Card.parse("4S"),)),)
    assert change.foundations is None and change.pass_number is None


def test_no_change_is_an_empty_diff() -> None:
    """Two equal views differ by an empty (falsy) diff."""
    b = Board.from_seed("5")
    view = view_of(b, b.seen)
    assert not diff(view, view)
    assert diff(view, view) == ViewDiff()


def test_knowledge_growth_alone_makes_a_diff() -> None:
    """When a spectator learns a card, the diff reveals it where it lies on the board."""
    b = Board.from_seed("1")
    b.play("D")
    old = view_of(b, mask())
    new = view_of(b, mask("4S"))
    change = diff(old, new)
    assert change.piles == ((WASTE, 0, 0, (Card.parse("4S"),)),)
    assert change.apply(old) == new


def test_racer_views_round_trip_through_text() -> None:
    """parse_view(format_view(v)) == v for a racer's own view along a game."""
    b = Board.from_seed("1")
    for token in ("2F", "D", "D", "D", "D", "D", "D"):
        b.play(token)
        view = view_of(b, b.seen)
        assert parse_view(format_view(view)) == view


def test_views_and_diffs_are_frozen_values_that_pickle_and_copy() -> None:
    """A view and a diff come back equal from pickle and copy (a bot decides on a view in
    another process), hash alike, and refuse a field's assignment, compiled or not."""
    b = Board.from_seed("1")
    old = view_of(b, b.seen)
    b.play("D")
    new = view_of(b, b.seen)
    change = diff(old, new)
    for value in (old, new, change, ViewDiff()):
        again = pickle.loads(pickle.dumps(value))
        assert again == value and hash(again) == hash(value) and type(again) is type(value)
        assert copy.copy(value) == value and copy.deepcopy(value) == value
    assert repr(change).startswith("ViewDiff(piles=((7, 0, 0, (")
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.stock = 3  # type: ignore[misc]


def test_a_board_pickles_with_its_position_history_and_knowledge() -> None:
    """A board from pickle has the same position, moves, score and seen cards, and undoes
    the same moves (a bot plans on a board in another process), compiled or not."""
    b = Board.from_seed("7")
    for token in ("D", "D", "D"):
        b.play(token)
    again = pickle.loads(pickle.dumps(b))
    assert again.key() == b.key() and again.moves == b.moves
    assert (again.score, again.seen, again.deal, again.variant) == (
        b.score,
        b.seen,
        b.deal,
        b.variant,
    )
    again.pop()
    b.pop()
    assert again.key() == b.key() and again.legal_moves() == b.legal_moves()
