"""Notation forms: cards, moves, variants, deals (kd1 vectors), positions; parse and format."""

from __future__ import annotations

import re

import pytest

from klondike_live.engine import (
    CARDS,
    Board,
    Card,
    Deal,
    InvalidMoveError,
    Move,
    NotationError,
    Variant,
    format_position,
    parse_position,
)
from klondike_live.engine.deal import kd1_shuffle
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T, W2F, W2T
from klondike_live.engine.variant import UNLIMITED

from testdata import DATA


def kd1_vectors() -> list[tuple[str, str]]:
    """(seed, deal text) pairs from the notation standard's test vectors."""
    text = (DATA / "kd1-vectors.txt").read_text()
    parts = re.split(r'^seed "(.*)"$', text, flags=re.MULTILINE)
    return [(parts[i], parts[i + 1].strip() + "\n") for i in range(1, len(parts), 2)]


# ---------------------------------------------------------------- cards


def test_card_indices_follow_the_canonical_deck() -> None:
    """Index 0 is AC, 12 KC, 13 AD, 51 KS."""
    assert [str(CARDS[i]) for i in (0, 12, 13, 51)] == ["AC", "KC", "AD", "KS"]


def test_every_card_round_trips() -> None:
    """Card.parse(str(c)) == c for all 52 cards."""
    assert all(Card.parse(str(c)) == c for c in CARDS)


def test_card_input_accepts_ten_and_lowercase() -> None:
    """`10H`, `th` and `Th` all read as TH; output is canonical."""
    assert Card.parse("10H") == Card.parse("th") == Card.parse("Th") == Card.of(10, 2)
    assert str(Card.parse("10h")) == "TH"


@pytest.mark.parametrize("bad", ["", "1H", "XH", "AX", "A", "ASS", "11H", "0H"])
def test_bad_cards_are_rejected(bad: str) -> None:
    """Anything but a rank and a suit is a NotationError quoting the input."""
    with pytest.raises(NotationError, match=re.escape(repr(bad))):
        Card.parse(bad)


def test_card_colours_and_suits() -> None:
    """Diamonds and hearts are red; clubs and spades black."""
    assert [Card.parse(t).is_red for t in ("AC", "AD", "AH", "AS")] == [False, True, True, False]
    assert Card.parse("QH").rank == 12 and Card.parse("QH").suit == 2


# ---------------------------------------------------------------- moves

ALL_TOKENS = ["D", "R", "WF"]
ALL_TOKENS += [f"W{d}" for d in range(1, 8)] + [f"{s}F" for s in range(1, 8)]
ALL_TOKENS += [f"{s}{d}" for s in range(1, 8) for d in range(1, 8) if s != d]
ALL_TOKENS += [f"{s}{d}:{n}" for s in (1, 7) for d in (2, 6) for n in (1, 13)]
ALL_TOKENS += [f"F{suit}{d}" for suit in "CDHS" for d in range(1, 8)]


@pytest.mark.parametrize("token", ALL_TOKENS)
def test_move_tokens_round_trip(token: str) -> None:
    """str(Move.parse(t)) == t, and the move's repr evaluates back to it."""
    move = Move.parse(token)
    assert str(move) == token
    assert eval(repr(move)) == move


def test_move_fields() -> None:
    """Each token form maps to its kind and 0-based piles."""
    assert Move.parse("D").kind == DRAW and Move.parse("R").kind == RECYCLE
    assert Move.parse("W3") == Move(W2T, 0, 2)
    assert Move.parse("WF") == Move(W2F)
    assert Move.parse("3F") == Move(T2F, 2)
    assert Move.parse("36") == Move(T2T, 2, 5)
    assert Move.parse("36:3") == Move(T2T, 2, 5, 3)
    assert Move.parse("FH3") == Move(F2T, 2, 2)
    assert Move.parse("36:3").uncounted == Move.parse("36")


def test_move_input_is_case_insensitive() -> None:
    """`wf`, `fh3` and `d` parse; output is canonical upper case."""
    assert str(Move.parse("wf")) == "WF" and str(Move.parse("fh3")) == "FH3"
    assert str(Move.parse(" d ")) == "D"


@pytest.mark.parametrize(
    "bad", ["", "X", "W8", "W0", "80", "33", "3", "F3", "FX3", "FH8", "36:0", "36:14", "3F:1", "DD"]
)
def test_bad_move_tokens_are_rejected(bad: str) -> None:
    """Tokens outside the notation raise InvalidMoveError quoting the token."""
    with pytest.raises(InvalidMoveError, match=re.escape(repr(bad))):
        Move.parse(bad)


# ---------------------------------------------------------------- variants


def test_variant_defaults_follow_the_rules_as_written() -> None:
    """Draw-1 has one pass, draw-3 three; f2t is off."""
    assert Variant() == Variant.parse("draw=1") == Variant(1, 1, False)
    assert Variant(draw=3) == Variant.parse("draw=3") == Variant(3, 3, False)
    assert str(Variant(draw=3)) == "draw=3 passes=3 f2t=no"


@pytest.mark.parametrize(
    "text", ["draw=1 passes=1 f2t=no", "draw=3 passes=unlimited f2t=yes", "draw=1 passes=7 f2t=no"]
)
def test_variants_round_trip(text: str) -> None:
    """Variant.parse(str(v)) == v and str(Variant.parse(t)) == t."""
    assert str(Variant.parse(text)) == text
    assert Variant.parse("passes=unlimited").passes == UNLIMITED


@pytest.mark.parametrize(
    "bad",
    ["draw=2", "draw=x", "passes=0", "passes=-1", "f2t=maybe", "speed=3", "draw", "draw=1 draw=3"],
)
def test_bad_variants_are_rejected(bad: str) -> None:
    """Unknown keys, bad values and repeated keys are NotationErrors."""
    with pytest.raises(NotationError):
        Variant.parse(bad)


# ---------------------------------------------------------------- deals


@pytest.mark.parametrize(("seed", "text"), kd1_vectors())
def test_kd1_test_vectors(seed: str, text: str) -> None:
    """The three test vectors of the notation standard, exactly."""
    assert str(Deal.from_seed(seed)) == text


def test_kd1_vectors_are_all_present() -> None:
    """The vector file holds the standard's three seeds."""
    assert [seed for seed, _ in kd1_vectors()] == ["1", "42", "hello world"]


def test_kd1_seeds_are_utf8() -> None:
    """A non-ASCII seed shuffles from its UTF-8 bytes and still gives 52 distinct cards."""
    deck = kd1_shuffle("día 🂡")
    assert sorted(deck) == list(range(52))
    assert deck != kd1_shuffle("dia")


@pytest.mark.parametrize("seed", ["1", "42", "hello world", "", "x" * 500])
def test_deal_text_round_trips(seed: str) -> None:
    """Deal.parse(str(d)) == d."""
    deal = Deal.from_seed(seed)
    assert Deal.parse(str(deal)) == deal


def test_deal_text_ignores_blank_and_comment_lines() -> None:
    """Blank lines and # comments anywhere are skipped."""
    text = str(Deal.from_seed("7")).replace("\n3:", "\n\n# a comment\n   \n3:")
    assert Deal.parse("# header comment\n" + text) == Deal.from_seed("7")


def test_deal_text_accepts_ten_and_lowercase() -> None:
    """Card input rules apply inside deal text."""
    text = str(Deal.from_seed("1")).replace("TC", "10c", 1)
    assert Deal.parse(text) == Deal.from_seed("1")


def _deal_lines(seed: str = "1") -> list[str]:
    return str(Deal.from_seed(seed)).splitlines()


def test_duplicate_card_names_its_line() -> None:
    """A card given twice is refused, naming the line of the second."""
    lines = _deal_lines()
    lines[8] = lines[8].replace("4S", "TC")  # stock's first card becomes pile 1's card
    with pytest.raises(NotationError, match=r"line 9: duplicate card TC \(already on line 2\)"):
        Deal.parse("\n".join(lines))


def test_bad_card_token_names_its_line() -> None:
    """A token that is not a card is refused, naming the line."""
    lines = _deal_lines()
    lines[3] = "3: TD XX 8H"
    with pytest.raises(NotationError, match=r"line 4: bad card 'XX'"):
        Deal.parse("\n".join(lines))


def test_wrong_pile_size_names_its_line() -> None:
    """A pile with the wrong number of cards is refused."""
    lines = _deal_lines()
    lines[2] = "2: 7C"
    with pytest.raises(NotationError, match=r"line 3: wrong pile size: pile 2 holds 2 cards"):
        Deal.parse("\n".join(lines))


def test_missing_line_and_bad_header_are_refused() -> None:
    """A deal needs its header and exactly its eight labelled lines, in order."""
    lines = _deal_lines()
    with pytest.raises(NotationError, match="line 1: expected 'klondike-deal 1'"):
        Deal.parse("\n".join(["klondike-deal 2", *lines[1:]]))
    with pytest.raises(NotationError, match="found 7"):
        Deal.parse("\n".join(lines[:-1]))
    swapped = [lines[0], lines[2], lines[1], *lines[3:]]
    with pytest.raises(NotationError, match="line 2: expected '1:'"):
        Deal.parse("\n".join(swapped))
    with pytest.raises(NotationError, match="empty"):
        Deal.parse("\n# only a comment\n")


def test_missing_card_is_named() -> None:
    """Removing one card (stock 23 cards) is refused as a wrong size, naming the stock line."""
    lines = _deal_lines()
    lines[8] = lines[8].rsplit(" ", 1)[0]
    with pytest.raises(NotationError, match="line 9: wrong pile size: the stock holds 24"):
        Deal.parse("\n".join(lines))


# ---------------------------------------------------------------- positions


def test_position_text_of_a_new_game() -> None:
    """The start of seed 1 in position text: # marks face-down cards, waste empty."""
    text = format_position(Board.from_seed("1"))
    assert text.splitlines()[:5] == [
        "klondike-position 1",
        "variant: draw=1 passes=1 f2t=no",
        "pass: 1",
        "1: TC",
        "2: #7C AH",
    ]
    assert "\nwaste:\nfoundations: C0 D0 H0 S0\n" in text


@pytest.mark.parametrize("path", sorted(DATA.glob("won-*.txt")))
def test_positions_round_trip_along_whole_games(path: object) -> None:
    """parse_position(format_position(b)) has the same key, pass and foundations, move by move."""
    from klondike_live.engine import GameRecord

    record = GameRecord.parse(DATA.joinpath(str(path)).read_text())
    board = Board(record.starting_deal(), record.variant)
    for token in record.moves:
        board.play(token)
        text = format_position(board)
        again = parse_position(text)
        assert again.key() == board.key()
        assert again.foundations == board.foundations
        assert format_position(again) == text


def test_position_errors_name_the_line() -> None:
    """Bad positions are refused with the line and the problem."""
    text = format_position(Board.from_seed("1"))
    with pytest.raises(NotationError, match="line 4: bad card"):
        parse_position(text.replace("1: TC", "1: TX"))
    with pytest.raises(NotationError, match="more than once: TC"):
        parse_position(text.replace("2: #7C AH", "2: #7C TC"))
    with pytest.raises(NotationError, match="top card must be face up"):
        parse_position(text.replace("1: TC", "1: #TC"))
    with pytest.raises(NotationError, match="pass 2 is beyond"):
        parse_position(text.replace("pass: 1", "pass: 2"))
    with pytest.raises(NotationError, match="missing the 'foundations:' line"):
        parse_position(text.rsplit("\n", 2)[0])
    with pytest.raises(NotationError, match="'##'"):
        parse_position(text.replace("#7C", "##"))
