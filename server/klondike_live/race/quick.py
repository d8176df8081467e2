"""Quick races: the variants that have a public queue, and each one's seat limit.

A player presses *Race now* for one of these variants and waits in its queue
(`service.quick`); as soon as two wait, a fill window lets more join, up to the
variant's seat limit, and the race is made. Everything here is a plain value.
"""

from __future__ import annotations

from typing import Final

from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.engine import Variant

QUICK_SEATS: Final[dict[Variant, int]] = {DRAW1: 4, DRAW3: 4}
"""The variants with a quick race queue (those of the daily challenge, in display
order) and the most racers one of their quick races seats."""

QUICK_TIME_LIMIT: Final = 900
"""A quick race's time limit (seconds), as a race against the machine's."""

MIN_RACERS: Final = 2
"""A quick race is made only for this many waiting players or more."""


def quick_seats(variant: Variant) -> int | None:
    """The seat limit of `variant`'s quick races, or None when it has no queue."""
    return QUICK_SEATS.get(variant)
