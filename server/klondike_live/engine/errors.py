"""The engine's exceptions, split by cause: the engine raises no other.

    KlondikeError              every error of the engine (a ValueError)
    ├── NotationError          text that does not parse: a card, variant, deal, position,
    │   │                      view or game record (.line names the line of multi-line text)
    │   └── InvalidMoveError   a move token, or a `Move` value, that is not in the notation
    ├── InvalidValueError      a value built from parts the game does not allow:
    │                          `Card.of(14, 0)`, `Variant(draw=2)`, a `Deal` or a
    │                          `Board.from_parts` position that misses or repeats a card,
    │                          a `GameRecord` with both a seed and a deal, a seed that is
    │                          not UTF-8 text, a time that is not a number
    ├── IllegalMoveError       a well-formed move the rules do not allow in this position
    │   └── ReplayError        a game record's move that does not replay (.index, .token)
    ├── RecordResultError      a record whose declared result is not what its moves give
    └── UndoError              `Board.pop()` with no move to undo (also an IndexError)

Every message names the cause and quotes the offending input. Parsing text raises
`NotationError` (or `InvalidMoveError`), never `InvalidValueError`: text whose cards
parse but do not make a valid deal or position is still text that does not parse.
All are `ValueError`s, so callers that only care that the input was bad can catch that;
`UndoError` is also an `IndexError`, as popping an empty list is.
"""

from __future__ import annotations


class KlondikeError(ValueError):
    """Root of every error the engine raises."""


class NotationError(KlondikeError):
    """Text that does not follow the notation standard.

    `line` is the 1-based line number in multi-line input, or None for a single token.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class InvalidMoveError(NotationError):
    """A move token, or a `Move` value, that is not in the notation (syntax, not rules)."""


class InvalidValueError(KlondikeError):
    """A value built from parts (not parsed from text) that the game does not allow."""


class IllegalMoveError(KlondikeError):
    """A well-formed move that the rules do not allow in the current position."""

    def __init__(self, token: str, reason: str) -> None:
        self.token = token
        self.reason = reason
        super().__init__(f"illegal move {token}: {reason}")


class ReplayError(IllegalMoveError):
    """A game record's move that does not replay, with its 1-based index and its token."""

    def __init__(self, index: int, token: str, reason: str) -> None:
        self.index = index
        KlondikeError.__init__(self, f"move {index} {token!r}: {reason}")
        self.token = token
        self.reason = reason


class RecordResultError(KlondikeError):
    """The moves of a game record replay, but the declared result is not what they give."""


class UndoError(KlondikeError, IndexError):
    """`Board.pop()` on a board with no move to undo."""
