"""One client connection: handshake, rate limits, decoding and dispatch.

The first message must be `hello` (within `HELLO_TIMEOUT` seconds): it carries the
protocol version and either a token (a guest token from an earlier `welcome`, or one
minted by the operator's own site with the same secret) or nothing, in which case a
guest account is created. After that, each binary frame is decoded strictly and
dispatched to the service; a refusal becomes an `error` frame with a stable code.

Abuse: messages beyond the rate limit are refused with `rate_limited` (a client that
backs off is fine); `abuse_limit` such refusals in a row, or that many malformed
messages within `abuse_window_seconds`, close the connection with 1008. Oversized
frames are closed with 1009 by websockets itself (`max_size`). No handler failure ever
reaches the client as a traceback: it is logged, and the client gets `internal`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
import time
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from klondike_live.auth import AuthError, mint_guest_token, validate_display_name, verify_token
from klondike_live.gateway.hub import Viewer
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.incoming import PROTOCOL_VERSION, ProtocolError, decode_client
from klondike_live.service.errors import RequestError

if TYPE_CHECKING:
    from klondike_live.service.live import RaceService

log = logging.getLogger(__name__)

HELLO_TIMEOUT = 10.0


class TokenBucket:
    """`rate` messages per second on average, bursts up to `burst`."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Session:
    """A connected client and the rooms it is in."""

    def __init__(self, connection: ServerConnection, service: RaceService) -> None:
        self.connection = connection
        self.service = service
        settings = service.settings
        self.conn_id = secrets.token_urlsafe(12)
        self.user = ""
        self.name = ""
        self.rooms: dict[str, Viewer] = {}
        self.bucket = TokenBucket(settings.rate_per_second, settings.rate_burst)
        self.strikes: collections.deque[float] = collections.deque()
        self.limited_in_a_row = 0
        self._closing: asyncio.Task[None] | None = None

    async def send(self, frame: bytes) -> None:
        """Send one frame to this client; a closed connection is not an error here."""
        try:
            await self.connection.send(frame)
            self.service.metrics.frames_out.inc()
        except ConnectionClosed:
            pass

    def close_soon(self, code: int, reason: str) -> None:
        """Close the connection without waiting for it (from bus callbacks)."""
        if self._closing is None:
            self._closing = asyncio.create_task(self.connection.close(code, reason))

    async def _refuse(
        self,
        code: ErrorCode,
        message: str,
        *,
        rid: int | None = None,
        move_id: int | None = None,
        strike: bool,
    ) -> bool:
        """Send an error; count a strike for abuse. False when the connection must close."""
        self.service.metrics.error(str(code))
        await self.send(outgoing.error(code, message, rid=rid, move_id=move_id))
        if not strike:
            return True
        now = time.monotonic()
        window = self.service.settings.abuse_window_seconds
        self.strikes.append(now)
        while self.strikes and self.strikes[0] < now - window:
            self.strikes.popleft()
        if len(self.strikes) >= self.service.settings.abuse_limit:
            self.service.metrics.rate_limit_closes.inc()
            await self.connection.close(CloseCode.POLICY, "too many bad or excess messages")
            return False
        return True

    # ------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Serve the connection until it closes."""
        metrics = self.service.metrics
        metrics.connections.inc()
        self.service.sessions.add(self)
        try:
            if await self._handshake():
                log.info("connection %s open: user %s", self.conn_id, self.user)
                await self._serve()
        except ConnectionClosed:
            pass
        finally:
            metrics.connections.dec()
            self.service.sessions.discard(self)
            self.service.daily.forget(self)
            await self.service.disconnected(self)
            if self.user:
                log.info("connection %s closed: user %s", self.conn_id, self.user)

    async def _handshake(self) -> bool:
        try:
            frame = await asyncio.wait_for(self.connection.recv(), HELLO_TIMEOUT)
        except TimeoutError:
            await self.connection.close(CloseCode.HELLO_TIMEOUT, "no hello")
            return False
        if isinstance(frame, str):
            await self._refuse(ErrorCode.TEXT_FRAME, "frames are binary msgpack", strike=False)
            await self.connection.close(CloseCode.POLICY, "expected hello")
            return False
        try:
            hello = decode_client(frame)
        except ProtocolError as exc:
            await self._refuse(exc.code, exc.message, strike=False)
            await self.connection.close(CloseCode.POLICY, "expected hello")
            return False
        if not isinstance(hello, msg.Hello):
            await self._refuse(ErrorCode.NOT_HELLO, "the first message must be hello", strike=False)
            await self.connection.close(CloseCode.POLICY, "expected hello")
            return False
        if hello.version != PROTOCOL_VERSION:
            await self._refuse(
                ErrorCode.VERSION, f"this server speaks protocol {PROTOCOL_VERSION}", strike=False
            )
            await self.connection.close(CloseCode.VERSION, "unsupported protocol version")
            return False
        name = None
        if hello.name is not None:
            try:
                name = validate_display_name(hello.name)
            except ValueError as exc:
                await self._refuse(ErrorCode.BAD_NAME, str(exc), strike=False)
                await self.connection.close(CloseCode.POLICY, "bad display name")
                return False
        secret = self.service.settings.secret
        if hello.token is not None:
            try:
                identity = verify_token(secret, hello.token)
            except AuthError as exc:
                await self._refuse(ErrorCode(exc.code), exc.message, strike=False)
                await self.connection.close(CloseCode.AUTH_FAILED, exc.code)
                return False
            token = hello.token
        else:
            token, identity = mint_guest_token(secret, name or f"Guest {secrets.token_hex(2)}")
        self.user = identity.user_id
        self.name = name or identity.name
        await self.send(outgoing.welcome(self.user, self.name, token, self.service.now_ms()))
        return True

    async def _serve(self) -> None:
        async for frame in self.connection:
            if isinstance(frame, str):
                if not await self._refuse(
                    ErrorCode.TEXT_FRAME, "frames are binary msgpack", strike=True
                ):
                    return
                continue
            try:
                message = decode_client(frame)
            except ProtocolError as exc:
                if not await self._refuse(exc.code, exc.message, rid=exc.rid, strike=True):
                    return
                continue
            if not self.bucket.take():
                # Decoded first, so the refusal names the request (`rid`, move `id`).
                await self._refuse(
                    ErrorCode.RATE_LIMITED,
                    "slow down",
                    rid=getattr(message, "rid", None),
                    move_id=getattr(message, "id", None),
                    strike=False,
                )
                self.limited_in_a_row += 1
                if self.limited_in_a_row >= self.service.settings.abuse_limit:
                    # Refused again and again without backing off: a flood.
                    self.service.metrics.rate_limit_closes.inc()
                    await self.connection.close(CloseCode.POLICY, "flooding")
                    return
                continue
            self.limited_in_a_row = 0
            await self._dispatch(message)

    async def _dispatch(self, message: msg.ClientMessage) -> None:
        service = self.service
        rid = getattr(message, "rid", None)
        try:
            match message:
                case msg.Ping():
                    await self.send(outgoing.pong(message.rid, service.now_ms()))
                case msg.Hello():
                    await self._refuse(ErrorCode.WRONG_STATE, "hello was already said", strike=True)
                case msg.Create():
                    await service.create(self, message)
                case msg.Join():
                    await service.join(self, message)
                case msg.Leave():
                    await service.leave(self, message.room)
                case msg.Ready():
                    await service.ready(self, message)
                case msg.Start():
                    await service.start(self, message)
                case msg.MoveRequest():
                    await service.move(self, message)
                case msg.Undo():
                    await service.undo(self, message)
                case msg.Resign():
                    await service.resign(self, message)
                case msg.HintRequest():
                    await service.hint(self, message)
                case msg.Rematch():
                    await service.rematch(self, message)
                case msg.DailyWatch():
                    await service.daily.watch(self, message)
                case msg.DailyUnwatch():
                    service.daily.unwatch(self, message)
        except RequestError as exc:
            service.metrics.error(str(exc.code))
            room = getattr(message, "room", None)
            move_id = getattr(message, "id", None)
            await self.send(
                outgoing.error(exc.code, exc.message, rid=rid, room=room, move_id=move_id)
            )
        except (ConnectionClosed, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("handling %s from %s failed", type(message).__name__, self.conn_id)
            service.metrics.error(str(ErrorCode.INTERNAL))
            await self.send(
                outgoing.error(
                    ErrorCode.INTERNAL, "the server failed to handle that message", rid=rid
                )
            )
