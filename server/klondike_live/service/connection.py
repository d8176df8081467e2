"""The narrow interface between the live service and the transport that carries it.

The service never sees a socket: it knows a client as a `Connection` (who it is, its
name and how to change it, a way to send one frame, a way to close it, whether it keeps
up) and reaches many at once through a `Broadcast` function that must never wait for a
slow client. The gateway implements both over websockets; the service's tests implement
them in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from klondike_live.protocol.codes import CloseCode


class Connection(Protocol):
    """One client connection as the live service sees it."""

    @property
    def conn_id(self) -> str:
        """Unique per connection (also across nodes)."""
        ...

    @property
    def user(self) -> str:
        """The account speaking on it."""
        ...

    @property
    def name(self) -> str:
        """Its display name."""
        ...

    def rename(self, name: str) -> None:
        """Take a new display name (already checked): what later requests use."""
        ...

    async def send(self, frame: bytes) -> None:
        """Send one encoded frame (a closed connection is not an error)."""
        ...

    def close_soon(self, code: CloseCode, reason: str) -> None:
        """Close without waiting (from bus callbacks)."""
        ...

    def lagging(self) -> bool:
        """Its send buffer is past the write limit: skip it until it drains."""
        ...

    async def drained(self) -> bool:
        """Wait until its send buffer drained; False if it closed meanwhile."""
        ...


Broadcast = Callable[[Sequence[Connection], bytes], None]
"""Send one encoded frame to many connections at once, never awaiting any of them."""


class InProcess:
    """A connection that lives in this process (an in-server bot): the transport's
    `broadcast` hands it frames with `deliver`, which must never block."""

    def deliver(self, frame: bytes) -> None:
        raise NotImplementedError
