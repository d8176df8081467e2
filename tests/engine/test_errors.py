"""Bad input to every parsing and constructing entry point raises one class of the tree."""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable
from typing import TypedDict, TypeVar, Unpack, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import klondike_live.engine as engine
from klondike_live.engine import (
    Board,
    Card,
    Deal,
    GameRecord,
    IllegalMoveError,
    InvalidMoveError,
    InvalidValueError,
    KlondikeError,
    Move,
    NotationError,
    RecordResultError,
    ReplayError,
    UndoError,
    Variant,
    format_position,
    format_view,
    parse_position,
    parse_view,
    time_bonus,
    view_of,
)
from klondike_live.engine.deal import kd1_shuffle, parse_deal_lines
from klondike_live.engine.moves import ALL_MOVES, T2T, W2T

from testdata import DATA

E = TypeVar("E", bound=KlondikeError)

HUGE = "9" * 5000  # longer than int()'s own digit limit: int(HUGE) raises ValueError


def raises(cls: type[E], text: str = "") -> pytest.RaisesExc[E]:
    """`pytest.raises` of exactly `cls` (not a subclass), its message quoting `text`."""
    return pytest.raises(cls, match=re.escape(text) or None, check=lambda e: type(e) is cls)


# ---------------------------------------------------------------- the tree


def test_every_engine_exception_is_in_the_tree() -> None:
    """Each exception class the engine exports is a KlondikeError, hence a ValueError."""
    classes = [v for v in vars(engine).values() if isinstance(v, type) and issubclass(v, Exception)]
    assert len(classes) == 8
    assert all(issubclass(c, KlondikeError) and issubclass(c, ValueError) for c in classes)


def test_undo_error_is_also_an_index_error() -> None:
    """Callers that catch IndexError around pop(), as for a list, still catch UndoError."""
    assert issubclass(UndoError, IndexError)


# ---------------------------------------------------------------- cards


@pytest.mark.parametrize("bad", ["", " AS", "AS ", "A\u017f", "\u0663H", "1OH", "##", "#AS"])
def test_bad_card_text_is_a_notation_error(bad: str) -> None:
    """Card.parse refuses anything but rank and suit in ASCII (no Unicode look-alikes)."""
    with raises(NotationError, repr(bad)):
        Card.parse(bad)


@pytest.mark.parametrize(("rank", "suit"), [(0, 0), (14, 0), (1, 4), (1, -1)])
def test_card_of_out_of_range_is_an_invalid_value(rank: int, suit: int) -> None:
    """Card.of with a rank outside 1..13 or a suit outside 0..3 names both."""
    with raises(InvalidValueError, f"rank {rank} and suit {suit}"):
        Card.of(rank, suit)


@pytest.mark.parametrize("index", [-1, 52, 1000])
def test_card_index_out_of_range_is_an_invalid_value(index: int) -> None:
    """Card(index) outside 0..51 is refused, not a card that cannot print."""
    with raises(InvalidValueError, f"index {index}"):
        Card(index)


# ---------------------------------------------------------------- variants


@pytest.mark.parametrize(
    ("bad", "quoted"),
    [
        ("draw=2", "bad draw '2'"),
        ("draw=", "bad draw ''"),
        ("draw", "bad variant setting 'draw'"),
        ("passes=0", "bad passes '0'"),
        ("passes=-1", "bad passes '-1'"),
        ("passes=+3", "bad passes '+3'"),
        ("passes=\u0663", "bad passes '\u0663'"),
        (f"passes={HUGE}", "bad passes '999"),
        ("f2t=maybe", "bad f2t 'maybe'"),
        ("colour=red", "bad variant setting 'colour=red'"),
        ("draw=1 draw=3", "variant setting 'draw' given twice"),
    ],
)
def test_bad_variant_text_is_a_notation_error(bad: str, quoted: str) -> None:
    """Variant.parse refuses unknown settings and values, quoting the setting."""
    with raises(NotationError, quoted):
        Variant.parse(bad)


@pytest.mark.parametrize(
    ("draw", "passes", "quoted"),
    [(2, -1, "bad draw 2"), (0, -1, "bad draw 0"), (1, -2, "bad passes -2")],
)
def test_bad_variant_options_are_an_invalid_value(draw: int, passes: int, quoted: str) -> None:
    """Variant() with a draw other than 1 or 3, or negative passes, names the option."""
    with raises(InvalidValueError, quoted):
        Variant(draw=draw, passes=passes)


# ---------------------------------------------------------------- deals


def deal_text(seed: str = "1") -> str:
    """A valid deal text to spoil."""
    return str(Deal.from_seed(seed))


@pytest.mark.parametrize(
    ("bad", "quoted"),
    [
        ("", "empty deal text"),
        ("klondike-deal 2\n", "'klondike-deal 2'"),
        (deal_text().replace("stock:", "stack:"), "stack:"),
        (deal_text().replace("1: TC", "1: AH"), "line 3: duplicate card AH (already on line 2)"),
        (deal_text().replace("1: TC", "1: T\u017f"), "'T\u017f'"),
        (deal_text() + "8: AS\n", "found 9"),
    ],
)
def test_bad_deal_text_is_a_notation_error(bad: str, quoted: str) -> None:
    """Deal.parse names the problem and quotes what it found."""
    with raises(NotationError, quoted):
        Deal.parse(bad)


def test_empty_deal_lines_are_a_notation_error() -> None:
    """parse_deal_lines with no line at all says the text is empty."""
    with raises(NotationError, "empty deal text"):
        parse_deal_lines([])


def test_deal_from_bad_parts_is_an_invalid_value() -> None:
    """Deal(...) refuses wrong pile sizes, a short stock and a repeated card, saying which."""
    deal = Deal.from_seed("1")
    with raises(InvalidValueError, "found pile sizes [1, 2, 3, 4, 5, 6]"):
        Deal(deal.tableau[:6], deal.stock)
    with raises(InvalidValueError, "found 23"):
        Deal(deal.tableau, deal.stock[1:])
    twice = (*deal.stock[:-1], deal.stock[0])
    with raises(InvalidValueError, f"more than once: {deal.stock[0]}; missing: {deal.stock[-1]}"):
        Deal(deal.tableau, twice)


def test_seed_that_is_not_utf8_is_an_invalid_value() -> None:
    """A seed with a lone surrogate cannot be hashed as UTF-8: refused, not UnicodeEncodeError."""
    for deal_from in (Deal.from_seed, Board.from_seed, kd1_shuffle):
        with raises(InvalidValueError, "'\\ud800'"):
            deal_from("\ud800")


# ---------------------------------------------------------------- moves


@pytest.mark.parametrize(
    "bad",
    ["", "11", "W8", "8F", "FX1", "36:0", "36:14", "3F:1", f"36:{HUGE}", "F\u017f3", "W\uff13"],
)
def test_bad_move_token_is_an_invalid_move(bad: str) -> None:
    """Move.parse refuses tokens outside the notation, huge counts and look-alike letters."""
    with raises(InvalidMoveError, repr(bad)[:30]):
        Move.parse(bad)


@pytest.mark.parametrize(
    "bad", [Move(9), Move(W2T, 0, 7), Move(T2T, 2, 2), Move(T2T, 0, 1, 14), Move(T2T, -1, 0)]
)
def test_move_value_out_of_range_is_an_invalid_move(bad: Move) -> None:
    """play() refuses a hand-built Move whose fields are out of range, quoting the fields."""
    board = Board.from_seed("1")
    with raises(InvalidMoveError, repr(tuple(bad))):
        board.play(bad)
    assert board.illegal_reason(bad) is not None
    assert not board.is_legal(bad)


def test_all_moves_are_exactly_the_moves_with_a_token() -> None:
    """ALL_MOVES is the set of well-formed moves: each round-trips through its token."""
    assert all(Move.parse(str(m)) == m for m in ALL_MOVES)
    assert len(ALL_MOVES) == 3 + 7 + 7 + 42 * 14 + 28


def test_illegal_move_is_an_illegal_move_error() -> None:
    """A well-formed move the rules refuse is an IllegalMoveError with the reason."""
    with raises(IllegalMoveError, "the waste is empty"):
        Board.from_seed("1").play("WF")


def test_pop_with_no_move_is_an_undo_error() -> None:
    """pop() on a fresh board raises UndoError, not IndexError from an empty list."""
    with raises(UndoError, "no move to undo"):
        Board.from_seed("1").pop()


# ---------------------------------------------------------------- records


def record_text(**lines: str) -> str:
    """A record text with the given lines replaced (variant, seed, moves, result)."""
    fields = {"variant": "draw=1", "seed": "1", "moves": "D", "result": "unfinished"} | lines
    return "klondike-game 1\n" + "".join(f"{k}: {v}\n" for k, v in fields.items())


@pytest.mark.parametrize(
    ("bad", "quoted"),
    [
        ("", "empty record"),
        ("klondike-game 1\n", "missing the 'variant:' line"),
        (record_text(variant="draw=2"), "line 2: bad draw '2'"),
        (record_text(variant=f"passes={HUGE}"), "line 2: bad passes"),
        (record_text(seed=""), "line 3: empty seed"),
        (record_text(seed="a\udcffb"), "line 3: bad seed 'a\\udcffb': not UTF-8 text"),
        (record_text(result="lost"), "line 5: unknown result 'lost'"),
        (record_text() + "player: bob\n", "line 6: unknown record line 'player: bob'"),
    ],
)
def test_bad_record_text_is_a_notation_error(bad: str, quoted: str) -> None:
    """GameRecord.parse names the line and quotes what is wrong."""
    with raises(NotationError, quoted):
        GameRecord.parse(bad)


def test_record_from_bad_parts_is_an_invalid_value() -> None:
    """GameRecord() with both a seed and a deal, neither, or an unknown result is refused."""
    variant = Variant()
    with raises(InvalidValueError, "not both"):
        GameRecord(variant, seed="1", deal=Deal.from_seed("1"))
    with raises(InvalidValueError, "not neither"):
        GameRecord(variant)
    with raises(InvalidValueError, "unknown result 'lost'"):
        GameRecord(variant, seed="1", result="lost")


def test_records_that_do_not_replay_raise_replay_and_result_errors() -> None:
    """A bad or illegal token is a ReplayError; a false declared result a RecordResultError."""
    with raises(ReplayError, "move 2 'XX'"):
        GameRecord.parse(record_text(moves="D XX")).replay()
    with raises(ReplayError, "move 1 'WF'"):
        GameRecord.parse(record_text(moves="WF")).replay()
    with raises(RecordResultError, "says won"):
        GameRecord.parse(record_text(result="won")).replay()


# ---------------------------------------------------------------- positions and views


class Parts(TypedDict, total=False):
    """Keyword arguments of Board.from_parts."""

    variant: Variant
    tableau: tuple[tuple[Card, ...], ...]
    face_down: tuple[int, ...]
    stock: tuple[Card, ...]
    waste: tuple[Card, ...]
    foundations: tuple[int, ...]
    pass_number: int


def position_parts() -> Parts:
    """The parts of a valid position, as keyword arguments of Board.from_parts."""
    board = Board.from_seed("1")
    return {
        "variant": board.variant,
        "tableau": board.tableau,
        "face_down": board.face_down,
        "stock": board.stock,
        "waste": board.waste,
        "foundations": board.foundations,
    }


def spoil(**changes: Unpack[Parts]) -> Parts:
    """Valid position parts with some replaced."""
    return position_parts() | changes


@pytest.mark.parametrize(
    ("parts", "quoted"),
    [
        (spoil(tableau=position_parts()["tableau"][:6]), "found 6 and 7"),
        (spoil(foundations=(0, 0, 14, 0)), "found (0, 0, 14, 0)"),
        (spoil(foundations=(1, 0, 0, 0)), "more than once: AC"),
        (spoil(stock=position_parts()["stock"][1:]), "missing: 4S"),
        (spoil(stock=(*position_parts()["stock"], cast(Card, 52))), "not cards: 52"),
        (spoil(face_down=(0, 1, 2, 3, 4, 5, 7)), "pile 7: its top card must be face up"),
        (spoil(face_down=(0, 1, 2, 3, 4, 5, -1)), "pile 7: -1 face-down cards"),
        (spoil(face_down=(0, 0, 2, 3, 4, 5, 6)), "pile 2: face-up 7C AH is not a run"),
        (spoil(pass_number=2), "bad pass 2: expected 1..1"),
        (spoil(pass_number=0), "bad pass 0"),
    ],
)
def test_board_from_bad_parts_is_an_invalid_value(parts: Parts, quoted: str) -> None:
    """Board.from_parts says what keeps the parts from being a position."""
    with raises(InvalidValueError, quoted):
        Board.from_parts(**parts)


def position_text() -> str:
    """A valid full position text to spoil."""
    board = Board.from_seed("1")
    board.play("D")
    return format_position(board)


@pytest.mark.parametrize(
    ("old", "new", "quoted"),
    [
        ("pass: 1", f"pass: {HUGE}", "line 3: bad pass '999"),
        ("pass: 1", "pass: \u0661", "line 3: bad pass '\u0661'"),
        ("foundations: C0", f"foundations: C{HUGE}", "bad foundation 'C999"),
        ("foundations: C0", "foundations: \u212a0", "bad foundation '\u212a0'"),
        ("foundations: C0", "foundations: C14", "a suit holds 0..13"),
        ("waste: 4S", "waste: 4S 4S", "more than once: 4S"),
        ("2: #7C AH", "2: 7C AH", "line 13: pile 2: face-up 7C AH is not a run"),
        ("1: TC", "1: #TC", "line 13: pile 1: its top card must be face up (TC is face down)"),
        ("1: TC", "1: ## ", "'##' (an unknown card)"),
    ],
)
def test_bad_position_text_is_a_notation_error(old: str, new: str, quoted: str) -> None:
    """parse_position reports bad counts and impossible positions as NotationError."""
    text = position_text()
    assert old in text
    with raises(NotationError, quoted):
        parse_position(text.replace(old, new, 1))


def view_text() -> str:
    """A valid racer's view text to spoil."""
    board = Board.from_seed("1")
    board.play("D")
    return format_view(view_of(board, board.seen))


@pytest.mark.parametrize(
    ("old", "new", "quoted"),
    [
        ("stock: 23", f"stock: {HUGE}", "a viewer's stock is a count 0..24, found '999"),
        ("stock: 23", "stock: 25", "found '25'"),
        ("stock: 23", "stock: \u0662\u0663", "found '\u0662\u0663'"),
        ("stock: 23", "stock: ##", "found '##'"),
        ("pass: 1", f"pass: {HUGE}", "bad pass"),
        ("foundations: C0", "foundations: C-1", "bad foundation 'C-1'"),
        ("waste: 4S", "waste: 4X", "bad card '4X'"),
        ("2: ## AH", "2: AH #AH", "face-down card above a face-up one in pile 2"),
    ],
)
def test_bad_view_text_is_a_notation_error(old: str, new: str, quoted: str) -> None:
    """parse_view reports bad counts and cards as NotationError naming the line."""
    text = view_text()
    assert old in text
    with raises(NotationError, quoted):
        parse_view(text.replace(old, new, 1))


# ---------------------------------------------------------------- scoring


def test_time_that_is_not_a_number_is_an_invalid_value() -> None:
    """time_bonus(NaN) is refused rather than failing inside int()."""
    with raises(InvalidValueError, "bad time nan"):
        time_bonus(math.nan)
    assert time_bonus(math.inf) == 0


# ---------------------------------------------------------------- any text at all

PARSERS: dict[str, Callable[[str], object]] = {
    "card": Card.parse,
    "move": Move.parse,
    "variant": Variant.parse,
    "deal": Deal.parse,
    "position": parse_position,
    "view": parse_view,
    "record": GameRecord.parse,
    "record replay": lambda text: GameRecord.parse(text).replay(),
}

SAMPLES = [
    *(path.read_text() for path in sorted(DATA.glob("won-*.txt"))),
    str(Deal.from_seed("3")),
    position_text(),
    view_text(),
    "draw=3 passes=unlimited f2t=yes",
    "36:3",
    "10h",
]

# Pieces of the notation, so random text gets past the first checks now and then.
PIECES = st.sampled_from(
    [
        *("\n", " ", "#", "##", ":", "=", "1", "7", "13", "0", "AS", "10", "TC", "D", "W", "F"),
        *(
            "klondike-game 1\n",
            "klondike-position 1\n",
            "klondike-deal 1\n",
            "\u017f",
            "\u0663",
            HUGE,
        ),
    ]
)
TEXTS = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=30).map("".join),
)


def mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply (position, deleted length, inserted text) edits to `text`."""
    for where, length, insert in edits:
        at = where % (len(text) + 1)
        text = text[:at] + insert + text[at + length :]
    return text


EDITS = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 4), st.one_of(PIECES, st.text(max_size=3))),
    min_size=1,
    max_size=6,
)


def parse_only_klondike_errors(parser: str, text: str) -> None:
    """Feed `text` to a parser: it may succeed or raise a KlondikeError, nothing else."""
    with contextlib.suppress(KlondikeError):
        PARSERS[parser](text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PARSERS)), TEXTS)
def test_any_text_raises_only_klondike_errors(parser: str, text: str) -> None:
    """Arbitrary text fed to each parser parses or raises a KlondikeError, never a builtin."""
    parse_only_klondike_errors(parser, text)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(PARSERS)), st.sampled_from(SAMPLES), EDITS)
def test_spoiled_notation_raises_only_klondike_errors(
    parser: str, sample: str, edits: list[tuple[int, int, str]]
) -> None:
    """Valid texts with random edits parse or raise a KlondikeError, never a builtin."""
    parse_only_klondike_errors(parser, mutate(sample, edits))
