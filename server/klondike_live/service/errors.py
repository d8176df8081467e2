"""The one exception a request handler raises to refuse a request."""

from __future__ import annotations

from klondike_live.protocol.codes import ErrorCode


class RequestError(Exception):
    """A refused request: sent to the client as an `error` frame."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
