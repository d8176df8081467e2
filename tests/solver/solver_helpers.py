"""Helpers for the solver tests: constructed and random near-end positions."""

from __future__ import annotations

import random

from klondike_live.engine import CARDS, Board, Card, Variant
from klondike_live.engine.variant import UNLIMITED

VARIANTS = (
    Variant(draw=1, passes=1),
    Variant(draw=3, passes=3),
    Variant(draw=1, passes=UNLIMITED),
    Variant(draw=3, passes=1),
    Variant(draw=1, passes=2, f2t=True),
    Variant(draw=3, passes=UNLIMITED, f2t=True),
)


def cards(text: str) -> tuple[Card, ...]:
    """Cards from their text, e.g. `cards("AS TH")`."""
    return tuple(Card.parse(t) for t in text.split())


def position(
    variant: Variant,
    piles: list[str],
    *,
    stock: str = "",
    waste: str = "",
    foundations: tuple[int, int, int, int] = (0, 0, 0, 0),
    pass_number: int = 1,
) -> Board:
    """A board from pile texts in which `#` marks face-down cards (`"#KH 5H"`)."""
    tableau = []
    down = []
    for text in piles + [""] * (7 - len(piles)):
        tokens = text.split()
        down.append(sum(t.startswith("#") for t in tokens))
        tableau.append(tuple(Card.parse(t.lstrip("#")) for t in tokens))
    return Board.from_parts(
        variant,
        tuple(tableau),
        tuple(down),
        cards(stock),
        cards(waste),
        foundations,
        pass_number,
    )


def random_position(rng: random.Random, left: int, variant: Variant | None = None) -> Board:
    """A random position with `left` cards off the foundations.

    The remaining cards of each suit are its highest ranks; they are shuffled into the
    stock, the waste and up to four piles, where a card often extends a face-up run it
    fits on, and otherwise turns the cards under it face down.
    """
    if variant is None:
        variant = rng.choice(VARIANTS)
    counts = [0, 0, 0, 0]
    for _ in range(left):
        suit = rng.choice([s for s in range(4) if counts[s] < 13])
        counts[suit] += 1
    foundations = tuple(13 - n for n in counts)
    rest = [CARDS[s * 13 + r] for s in range(4) for r in range(foundations[s], 13)]
    rng.shuffle(rest)
    talon_size = rng.randint(0, len(rest) // 2)
    talon, tableau_cards = rest[:talon_size], rest[talon_size:]
    waste_size = rng.randint(0, len(talon))
    waste, stock = talon[:waste_size], talon[waste_size:]
    piles: list[list[Card]] = [[] for _ in range(7)]
    down = [0] * 7
    used = rng.randint(1, 4)
    for card in tableau_cards:
        fits = [k for k in range(7) if piles[k] and _fits(card, piles[k][-1])]
        if fits and rng.random() < 0.7:
            piles[rng.choice(fits)].append(card)  # extends a face-up run
            continue
        k = rng.randrange(used)
        down[k] = len(piles[k])
        piles[k].append(card)
    order = list(range(7))
    rng.shuffle(order)
    piles = [piles[k] for k in order]
    down = [down[k] for k in order]
    passes = variant.passes
    pass_number = rng.randint(1, passes) if passes != UNLIMITED else rng.randint(1, 3)
    return Board.from_parts(
        variant,
        tuple(tuple(p) for p in piles),
        tuple(down),
        tuple(stock),
        tuple(waste),
        (foundations[0], foundations[1], foundations[2], foundations[3]),
        pass_number,
    )


def _fits(card: Card, top: Card) -> bool:
    return top.rank == card.rank + 1 and top.is_red != card.is_red
