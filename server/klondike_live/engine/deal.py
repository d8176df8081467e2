"""Deals: the `kd1` seeded shuffle and the deal text of the notation standard.

A `Deal` is the starting layout: seven tableau piles listed bottom to top (only the last
card of each starts face up) and the 24-card stock listed from the top (the next card
turned) down. `Deal.from_seed(seed)` is algorithm `kd1`; `Deal.parse(text)` and
`str(deal)` are the deal text, and round-trip.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from klondike_live.engine.cards import CARDS, Card, census
from klondike_live.engine.errors import InvalidValueError, NotationError

DEAL_HEADER = "klondike-deal 1"


def kd1_stream(seed: str) -> Iterator[int]:
    """The `kd1` random stream: 32-bit big-endian words of SHA-256(seed + ":" + i).

    Raises `InvalidValueError` at once for a seed that is not UTF-8 text (one holding a
    lone surrogate, as text read with `errors="surrogateescape"` can).
    """
    try:
        prefix = seed.encode("utf-8") + b":"
    except UnicodeEncodeError:
        raise InvalidValueError(f"bad seed {seed!r}: not UTF-8 text") from None
    return _words(prefix)


def _words(prefix: bytes) -> Iterator[int]:
    block = 0
    while True:
        digest = hashlib.sha256(prefix + str(block).encode("ascii")).digest()
        for offset in range(0, 32, 4):
            yield int.from_bytes(digest[offset : offset + 4], "big")
        block += 1


def kd1_shuffle(seed: str) -> list[Card]:
    """The canonical deck shuffled by `kd1` (unbiased Fisher-Yates with rejection)."""
    deck = list(CARDS)
    stream = kd1_stream(seed)
    for i in range(51, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        u = next(stream)
        while u >= limit:
            u = next(stream)
        j = u % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@dataclass(frozen=True, slots=True)
class Deal:
    """A starting layout: `tableau[k]` bottom to top, `stock` top first.

    Built from parts that are not a layout of the 52 cards, it raises `InvalidValueError`.
    """

    tableau: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]

    def __reduce__(self) -> tuple[type[Deal], tuple[object, ...]]:
        # Pickled through __init__: mypyc builds a compiled class by its __init__ alone.
        return (Deal, (self.tableau, self.stock))

    def __post_init__(self) -> None:
        problem = _layout_problem(self.tableau, self.stock)
        if problem:
            raise InvalidValueError(problem)

    @classmethod
    def from_seed(cls, seed: str) -> Deal:
        """Deal `seed` with algorithm `kd1`: row by row onto piles 1..7, the rest is stock."""
        deck = kd1_shuffle(seed)
        piles: list[list[Card]] = [[] for _ in range(7)]
        position = 0
        for row in range(7):
            for pile in range(row, 7):
                piles[pile].append(deck[position])
                position += 1
        return cls(tuple(tuple(p) for p in piles), tuple(deck[28:]))

    @classmethod
    def parse(cls, text: str) -> Deal:
        """Parse deal text; errors name the line and the problem, nothing is guessed."""
        return parse_deal_lines(content_lines(text))

    def __str__(self) -> str:
        rows = [DEAL_HEADER]
        rows += [f"{k + 1}: {' '.join(map(str, pile))}" for k, pile in enumerate(self.tableau)]
        rows.append(f"stock: {' '.join(map(str, self.stock))}")
        return "\n".join(rows) + "\n"


def content_lines(text: str, *, keep_indent: bool = False) -> list[tuple[int, str]]:
    """The lines of a notation text (deal, position, record) that are neither blank nor
    `#` comments, as `(line number, stripped text)` pairs; with `keep_indent`, only
    stripped on the right (a record's continuation lines are indented)."""
    return [
        (number, line.rstrip() if keep_indent else line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def parse_deal_lines(lines: list[tuple[int, str]]) -> Deal:
    """Parse a deal from `(line number, stripped text)` pairs with comments removed.

    The first pair must be the `klondike-deal 1` header and exactly eight lines must
    follow it (`1:` .. `7:`, `stock:`). Used by `Deal.parse` and by game records that
    carry a deal block.
    """
    if not lines:
        raise NotationError(f"empty deal text: expected the line {DEAL_HEADER!r}")
    number, header = lines[0]
    if header != DEAL_HEADER:
        raise NotationError(f"expected {DEAL_HEADER!r}, found {header!r}", line=number)
    labels = [str(k) for k in range(1, 8)] + ["stock"]
    if len(lines) != 1 + len(labels):
        last = lines[-1][0]
        raise NotationError(
            f"a deal has {len(labels)} lines after its header (1: to 7:, stock:), "
            f"found {len(lines) - 1}",
            line=last,
        )
    seen: dict[Card, int] = {}
    piles: list[tuple[Card, ...]] = []
    stock: tuple[Card, ...] = ()
    for (number, line), label in zip(lines[1:], labels, strict=True):
        name, sep, rest = line.partition(":")
        if not sep or name.strip() != label:
            raise NotationError(f"expected '{label}:', found {line!r}", line=number)
        cards = []
        for token in rest.split():
            try:
                card = Card.parse(token)
            except NotationError as exc:
                raise NotationError(exc.message, line=number) from None
            if card in seen:
                raise NotationError(
                    f"duplicate card {card} (already on line {seen[card]})", line=number
                )
            seen[card] = number
            cards.append(card)
        expected = 24 if label == "stock" else int(label)
        if len(cards) != expected:
            where = "the stock" if label == "stock" else f"pile {label}"
            raise NotationError(
                f"wrong pile size: {where} holds {expected} cards, found {len(cards)}",
                line=number,
            )
        if label == "stock":
            stock = tuple(cards)
        else:
            piles.append(tuple(cards))
    # 52 distinct cards in the right pile sizes cannot miss one, but say so plainly if so.
    missing = [str(c) for c in CARDS if c not in seen]
    if missing:
        raise NotationError(f"missing cards: {' '.join(missing)}", line=lines[-1][0])
    return Deal(tuple(piles), stock)


def _layout_problem(tableau: tuple[tuple[Card, ...], ...], stock: tuple[Card, ...]) -> str:
    sizes = [len(pile) for pile in tableau]
    if sizes != [1, 2, 3, 4, 5, 6, 7]:
        return f"a deal has seven piles of 1..7 cards, found pile sizes {sizes}"
    if len(stock) != 24:
        return f"a deal's stock holds 24 cards, found {len(stock)}"
    cards = [c for pile in tableau for c in pile] + list(stock)
    if sorted(cards) != list(range(52)):
        return f"a deal holds each of the 52 cards exactly once ({census(cards)})"
    return ""
