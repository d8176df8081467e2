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
    InvalidValueError,
    KlondikeError,
    NotationError,
    RecordResultError,
    ReplayError,
    UndoError,
)
from klondike_live.engine.moves import Move
from klondike_live.engine.position import format_position, parse_position
from klondike_live.engine.record import GameRecord
from klondike_live.engine.scoring import standard_score, time_bonus, vegas_score
from klondike_live.engine.variant import UNLIMITED, Variant
from klondike_live.engine.view import (
    ALL_CARDS,
    UNKNOWN,
    View,
    ViewDiff,
    diff,
    format_view,
    parse_view,
    view_of,
)

__all__ = [
    "ALL_CARDS",
    "CARDS",
    "UNKNOWN",
    "UNLIMITED",
    "Board",
    "Card",
    "Deal",
    "GameRecord",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidValueError",
    "KlondikeError",
    "Move",
    "NotationError",
    "Outcome",
    "RecordResultError",
    "ReplayError",
    "UndoError",
    "Variant",
    "View",
    "ViewDiff",
    "diff",
    "format_position",
    "format_view",
    "parse_position",
    "parse_view",
    "standard_score",
    "time_bonus",
    "vegas_score",
    "view_of",
]
