"""Cards: 52 small integers with a two-character text form.

A card is its index in the canonical deck of the notation standard: suit-major
`C, D, H, S`, rank-minor `A..K`, so `0` is `AC`, `12` is `KC`, `13` is `AD` and `51` is
`KS`. `Card` subclasses `int` so piles are plain tuples of small integers that hash and
compare at C speed, while `str(card)` gives the canonical text (`"TH"`). The 52
instances are created once; `CARDS[i]` is the card with index `i`.

Lookup tables (`RANK`, `SUIT`, `RED`) let hot loops avoid attribute access.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mypy_extensions import mypyc_attr

from klondike_live.engine.errors import InvalidValueError, NotationError

SUITS: Final = "CDHS"
RANKS: Final = "A23456789TJQK"
SUIT_SYMBOLS: Final = "♣♦♥♠"

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


# An int subclass cannot be a native (compiled) class; its methods are compiled all the same.
@mypyc_attr(native_class=False)
class Card(int):
    """One of the 52 cards; an `int` in `0..51` with rank/suit accessors and text form."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        """The card of index `index` (0..51); `CARDS[index]` is the shared instance."""
        if not 0 <= index < 52:
            raise InvalidValueError(f"no card with index {index!r}: expected 0..51")
        return int.__new__(cls, index)

    @property
    def rank(self) -> int:
        """Rank from 1 (ace) to 13 (king)."""
        return self % 13 + 1

    @property
    def suit(self) -> int:
        """Suit index: 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
        return self // 13

    @property
    def is_red(self) -> bool:
        """Diamonds and hearts are red; clubs and spades are black."""
        return self // 13 in (DIAMONDS, HEARTS)

    @classmethod
    def of(cls, rank: int, suit: int) -> Card:
        """The card of `rank` (1..13) and `suit` (0..3); `InvalidValueError` otherwise."""
        if not (1 <= rank <= 13 and 0 <= suit <= 3):
            raise InvalidValueError(
                f"no card with rank {rank!r} and suit {suit!r}: expected rank 1..13, suit 0..3"
            )
        return CARDS[suit * 13 + rank - 1]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse `AS`, `th`, `10H`...; raise `NotationError` quoting the text otherwise."""
        # ASCII only: `str.upper` maps a few other letters onto ASCII (long s to "S").
        card = _BY_TEXT.get(text.upper()) if text.isascii() else None
        if card is None:
            raise NotationError(f"bad card {text!r}: expected rank A23456789TJQK and suit CDHS")
        return card

    def __str__(self) -> str:
        return _TEXT[self]

    def __repr__(self) -> str:
        return f"Card.parse({_TEXT[self]!r})"

    def __format__(self, spec: str) -> str:
        return format(_TEXT[self], spec)


_TEXT: Final = tuple(r + s for s in SUITS for r in RANKS)
CARDS: Final = tuple(Card(i) for i in range(52))
_BY_TEXT: Final = {text: CARDS[i] for i, text in enumerate(_TEXT)} | {
    "10" + s: CARDS[i * 13 + 9] for i, s in enumerate(SUITS)
}

RANK: Final = tuple(i % 13 + 1 for i in range(52))
SUIT: Final = tuple(i // 13 for i in range(52))
RED: Final = tuple(i // 13 in (DIAMONDS, HEARTS) for i in range(52))


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse a whitespace-separated list of cards."""
    return tuple(Card.parse(token) for token in text.split())


def census(cards: Iterable[int]) -> str:
    """What keeps `cards` from being the 52 cards once each ("" when nothing does):
    `more than once: TC; missing: 4S`."""
    counts = [0] * 52
    strangers = []
    for card in cards:
        if 0 <= card < 52:
            counts[card] += 1
        else:
            strangers.append(repr(card))
    parts = []
    if any(n > 1 for n in counts):
        parts.append("more than once: " + " ".join(_TEXT[c] for c in range(52) if counts[c] > 1))
    if not all(counts):
        parts.append("missing: " + " ".join(_TEXT[c] for c in range(52) if not counts[c]))
    if strangers:
        parts.append("not cards: " + " ".join(strangers))
    return "; ".join(parts)


def format_cards(cards: tuple[Card, ...] | list[Card]) -> str:
    """Space-separated canonical text of `cards`."""
    return " ".join(_TEXT[c] for c in cards)
