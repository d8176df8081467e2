"""Build boards from a few lines of position text, for rule tests."""

from __future__ import annotations

from klondike_live.engine import Board, Card, parse_position

_SUITS = "CDHS"


def board(
    piles: dict[int, str],
    *,
    stock: str | None = None,
    waste: str = "",
    variant: str = "draw=1 passes=1 f2t=no",
    pass_number: int = 1,
    foundations: dict[str, int] | None = None,
) -> Board:
    """A board with the given piles (1-based, position-text tokens), stock and waste.

    Foundations hold, per suit, every card below the lowest one placed (or the given
    heights). Cards neither placed nor on a foundation make up the stock when `stock`
    is None; when the test gives the stock, such leftovers are an error in the test.
    """
    placed = [
        Card.parse(t.lstrip("#"))
        for text in [*piles.values(), stock or "", waste]
        for t in text.split()
    ]
    if foundations is None:
        heights = [
            min((c.rank for c in placed if c.suit == suit), default=14) - 1 for suit in range(4)
        ]
    else:
        heights = [foundations.get(s, 0) for s in _SUITS]
    on_foundations = {Card.of(r + 1, s) for s in range(4) for r in range(heights[s])}
    leftovers = [
        str(Card.of(r, s))
        for s in range(4)
        for r in range(1, 14)
        if Card.of(r, s) not in placed and Card.of(r, s) not in on_foundations
    ]
    lines = ["klondike-position 1", f"variant: {variant}", f"pass: {pass_number}"]
    lines += [f"{k}: {piles.get(k, '')}" for k in range(1, 8)]
    if stock is not None and leftovers:
        raise AssertionError(f"cards neither placed nor on a foundation: {leftovers}")
    lines.append(f"stock: {' '.join(leftovers) if stock is None else stock}")
    lines.append(f"waste: {waste}")
    lines.append(
        "foundations: " + " ".join(f"{s}{h}" for s, h in zip(_SUITS, heights, strict=True))
    )
    return parse_position("\n".join(lines))
