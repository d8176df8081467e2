"""The server's own exceptions: one root, and the one refusal that carries a stable code.

`Refusal` is what the race rules, the live service and the protocol's decoding raise
when they refuse something a client asked for: its `code` is the protocol's stable
`ErrorCode` (a client acts on it), its `message` a sentence a person can read, safe to
send as it is (it quotes only what the asker may know). The gateway turns every refusal
into one `error` frame; nothing translates one refusal class into another.

The rest of the tree names causes that are not a client's request: a configuration, the
embedded Valkey, a daily preparation, the solver. The whole tree is in the package's
docstring (`klondike_live/__init__.py`).

This module imports nothing of the server but the protocol's codes.
"""

from __future__ import annotations

from klondike_live.protocol.codes import ErrorCode

__all__ = ["InputError", "LiveError", "Refusal"]


class LiveError(Exception):
    """The root of every exception Klondike Live raises of its own (the engine's rule
    errors have their own root, `engine.KlondikeError`, as the engine stands alone)."""


class Refusal(LiveError):
    """A request refused: `code` for programs, `message` for people."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r})"


class InputError(LiveError):
    """Input a command-line tool cannot use: its message is shown as is, and the command
    exits with status 2."""
