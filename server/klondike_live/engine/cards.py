"""Cards: 52 small integers with a two-character text form.

A card is its index in the canonical deck of the notation standard: suit-major
`C, D, H, S`, rank-minor `A..K`, so `0` is `AC`, `12` is `KC`, `13` is `AD` and `51` is
`KS`. `Card` subclasses `int` so piles are plain tuples of small integers that hash and
compare at C speed, while `str(card)` gives the canonical text (`"TH"`). The 52
instances are created once; `CARDS[i]` is the card with index `i`.

Lookup tables (`RANK`, `SUIT`, `RED`) let hot loops avoid attribute access.
"""

from __future__ import annotations

from typing import Final

from klondike_live.engine.errors import NotationError

SUITS: Final = "CDHS"
RANKS: Final = "A23456789TJQK"
SUIT_SYMBOLS: Final = "♣♦♥♠"

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


class Card(int):
    """One of the 52 cards; an `int` in `0..51` with rank/suit accessors and text form."""

    __slots__ = ()

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
        """The card of `rank` (1..13) and `suit` (0..3)."""
        if not (1 <= rank <= 13 and 0 <= suit <= 3):
            raise ValueError(f"no card with rank {rank} and suit {suit}")
        return CARDS[suit * 13 + rank - 1]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse `AS`, `th`, `10H`...; raise `NotationError` quoting the text otherwise."""
        card = _BY_TEXT.get(text.upper())
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


def format_cards(cards: tuple[Card, ...] | list[Card]) -> str:
    """Space-separated canonical text of `cards`."""
    return " ".join(_TEXT[c] for c in cards)
