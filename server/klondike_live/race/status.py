"""Closed sets of a race's boards: each board's status and the operations that change it.

The values are the strings stored in Redis and sent on the wire, so a `StrEnum` member
compares and serialises as its text.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class BoardStatus(StrEnum):
    """Where a racer's game stands."""

    PLAYING = "playing"
    WON = "won"
    RESIGNED = "resigned"
    TIMEOUT = "timeout"

    @property
    def done(self) -> bool:
        """The game is over for this racer (won, resigned or out of time)."""
        return self is not BoardStatus.PLAYING


class BoardOp(StrEnum):
    """What a board event does (the store's board script checks some of them)."""

    MOVE = "move"  # the racer's move (and any auto-completion)
    UNDO = "undo"  # the racer takes back its last move (practice only)
    REFRESH = "refresh"  # spectators may know more: their view is re-published
    RESIGN = "resign"  # the racer resigned, or was away past the grace period
    TIMEOUT = "timeout"  # the race's time limit ran out
    WIN = "win"  # a practice board was won (a race board wins with its move)


ENDING_STATUS: Final = {
    BoardOp.RESIGN: BoardStatus.RESIGNED,
    BoardOp.TIMEOUT: BoardStatus.TIMEOUT,
    BoardOp.WIN: BoardStatus.WON,
}
"""The status each ending operation leaves a board in."""
