"""Scores shown to players: Windows standard scoring and Vegas.

The standard score is kept move by move on the board (`Board.score`, restored by undo);
this module adds what depends on the clock and gives Vegas, which depends only on the
foundations. The whole table is in docs/rules.md.
"""

from __future__ import annotations

import math
from typing import Final

from klondike_live.engine.board import Board
from klondike_live.engine.errors import InvalidValueError

TIME_BONUS_NUMERATOR: Final = 700_000
TIME_BONUS_AFTER_SECONDS: Final = 30
VEGAS_ANTE: Final = -52
VEGAS_PER_CARD: Final = 5


def time_bonus(seconds: float) -> int:
    """The bonus for a won game that took `seconds`: 700000 / seconds, over 30 s only.

    Raises `InvalidValueError` when `seconds` is not a number (NaN).
    """
    if math.isnan(seconds):
        raise InvalidValueError(f"bad time {seconds!r}: expected a number of seconds")
    if seconds <= TIME_BONUS_AFTER_SECONDS:
        return 0
    return int(TIME_BONUS_NUMERATOR / seconds)


def standard_score(board: Board, seconds: float | None = None) -> int:
    """Windows standard score; a won game timed at `seconds` gets the time bonus."""
    if seconds is not None and board.is_won():
        return board.score + time_bonus(seconds)
    return board.score


def vegas_score(board: Board) -> int:
    """Vegas score: a 52-point ante, 5 points back per card on the foundations."""
    return VEGAS_ANTE + VEGAS_PER_CARD * board.foundation_count
