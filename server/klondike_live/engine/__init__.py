"""The Klondike rules engine: pure values and functions, no I/O.

Cards, seeded deals (`kd1`), moves, variants, the board with checked `play` and unchecked
`push`, scoring, position text, game records, and viewer-specific views and diffs. It
never imports asyncio, sockets, Redis or msgpack: the solver and the server both call it
in hot loops, and everything here is testable without a network.
"""

from klondike_live.engine.board import Board, Outcome
from klondike_live.engine.cards import CARDS, Card
from klondike_live.engine.deal import Deal
from klondike_live.engine.errors import (
    IllegalMoveError,
    InvalidMoveError,
    KlondikeError,
    NotationError,
    ReplayError,
)
from klondike_live.engine.moves import Move
from klondike_live.engine.variant import UNLIMITED, Variant

__all__ = [
    "CARDS",
    "UNLIMITED",
    "Board",
    "Card",
    "Deal",
    "IllegalMoveError",
    "InvalidMoveError",
    "KlondikeError",
    "Move",
    "NotationError",
    "Outcome",
    "ReplayError",
    "Variant",
]
