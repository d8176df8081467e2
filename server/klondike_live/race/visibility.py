"""Who may know which card: every audience's knowledge mask, in one place.

A knowledge mask is a 52-bit set of cards (bit `c` for card `c`, as in `engine.view`).
Every board frame the server sends, live or after a resume, and every finished board
it shows over HTTP, is an engine view under a mask computed here:

- **own**: a racer knows every card it has seen face up (`Board.seen`).
- **spectator** of a race (and of a ranked daily attempt): a card only if every racer
  still playing knows it. A racer whose game is over no longer limits spectators; a
  racer whose knowledge is not known here yet limits them to nothing.
- **spectator** of a practice game (solo, unranked daily): what its player has seen.
- **final** boards of a finished game: everything, unless the deal is still secret (a
  daily challenge whose day is open), then each board as its own player saw it.

Pure functions over plain values; the property tests in `tests/race` check these very
functions. Nothing here may widen a mask beyond what the rules above allow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from klondike_live.engine import ALL_CARDS
from klondike_live.race.status import BoardStatus

NOTHING: Final = 0
"""The mask of a viewer that may know no card."""


@dataclass(frozen=True, slots=True)
class SeatKnowledge:
    """What one racer knows (`seen`, None while this node has not loaded it) and whether
    it is still playing."""

    seen: int | None
    status: BoardStatus


def spectator_knowledge(
    seats: Mapping[int, SeatKnowledge],
    seat: int,
    *,
    race_rules: bool,
    own: SeatKnowledge | None = None,
) -> int:
    """What live spectators may know of the board of `seat`.

    Under race rules, the cards every racer still playing knows (the racer of `seat`
    included while it plays); `NOTHING` while any of them is unknown here, or when no
    seat is known at all. Under practice rules, what the board's own player has seen.
    `own`, when given, is the racer of `seat` as its writer knows it, in place of
    `seats[seat]` (which may be older, or missing).
    """
    mine = seats.get(seat) if own is None else own
    if not race_rules:
        return NOTHING if mine is None or mine.seen is None else mine.seen
    if mine is None and not seats:
        return NOTHING
    known = ALL_CARDS
    for other, knowledge in seats.items():
        if other == seat or knowledge.status is not BoardStatus.PLAYING:
            continue
        if knowledge.seen is None:
            return NOTHING
        known &= knowledge.seen
    if mine is not None and mine.status is BoardStatus.PLAYING:
        if mine.seen is None:
            return NOTHING
        known &= mine.seen
    return known


def final_knowledge(seen: int, *, deal_secret: bool) -> int:
    """What anyone shown a finished game may know of one of its boards: everything, or
    while the deal is still secret (an open daily day) what its player saw."""
    return seen if deal_secret else ALL_CARDS
