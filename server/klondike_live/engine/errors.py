"""The engine's exceptions, split by cause.

    KlondikeError
    ├── NotationError        text that does not parse (a card, a deal, a position, a record)
    │   └── InvalidMoveError a move token that does not parse
    └── IllegalMoveError     a well-formed move the rules do not allow in this position
        └── ReplayError      a game record whose moves do not replay (carries index and token)

Every message quotes the offending input; `NotationError` also names the line when the
input was multi-line text. All are `ValueError`s, so callers that only care that the
input was bad can catch that.
"""

from __future__ import annotations


class KlondikeError(ValueError):
    """Root of every error the engine raises on bad input."""


class NotationError(KlondikeError):
    """Text that does not follow the notation standard.

    `line` is the 1-based line number in multi-line input, or None for a single token.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class InvalidMoveError(NotationError):
    """A move token that is not in the notation (syntax, not rules)."""


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
