"""One client connection: handshake, rate limits, decoding and dispatch.

The first message must be `hello` (within `HELLO_TIMEOUT` seconds): it carries the
protocol version and either a token (a guest token from an earlier `welcome`, or one
minted by the operator's own site with the same secret) or nothing, in which case a
guest account is created. After that, each binary frame is decoded strictly and
dispatched to the service; a refusal becomes an `error` frame with a stable code.

A `Session` is the live service's `Connection` (`service.connection`) for this
transport, and `broadcast` its fan-out: one encoded frame handed to
`websockets.broadcast`, which writes it to every connection's buffer at once and never
waits for a slow client.

Abuse: messages beyond the rate limit are refused with `rate_limited` (a client that
backs off is fine; a `rename` costs half the burst, `_cost`); `abuse_limit` such
refusals in a row, or that many malformed messages within `abuse_window_seconds`, close
the connection with 1008. Oversized frames are closed with 1009 by websockets itself
(`max_size`). No handler failure ever reaches the client as a traceback: it is logged,
and the client gets `internal`.

Accounts: a token that names a session (`sid`) is accepted only while that session
lasts, and a guest's token no more once the guest is an account
(`service.accounts.Accounts.check`; else `token_revoked`, close 4002). The account
requests (`passkey_options`, `register`, `sign_in`, `sign_out`,
`delete_account`, and the bot account requests `bots`, `bot_create`, `bot_new_token`,
`bot_delete`) are answered here, with
what the transport knows: the page's origin (`accounts.origins`), the address, the
browser, and the passkey challenge given to this connection. A connection whose session
is ended, on any node, is closed with 4006.

Caps (`gateway.caps`): a connection from an address that already holds
`max_connections_per_address` connections to this node is closed with 4005 before its
`hello`; a `hello` for an account that already holds `max_connections_per_user` is
closed with 4005 too.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Final, cast

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import broadcast as websockets_broadcast
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from klondike_live.accounts.origins import relying_party
from klondike_live.auth import (
    AuthError,
    Identity,
    mint_guest_token,
    validate_display_name,
    verify_token,
)
from klondike_live.errors import Refusal
from klondike_live.gateway.caps import ConnectionCaps, client_address
from klondike_live.history import HistoryError
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.incoming import PROTOCOL_VERSION, ProtocolError, decode_client
from klondike_live.service.accounts import Caller, Ceremony
from klondike_live.service.connection import Connection, InProcess
from klondike_live.service.live import LiveService
from klondike_live.store import StoreError

log = logging.getLogger(__name__)

HELLO_TIMEOUT = 10.0

REQUEST_TIMEOUT = 5.0
"""Seconds a request may take before the client is told `unavailable` (a hint's search
has a budget of its own, well under this)."""

LAG_BYTES: Final = 256 * 1024
"""A connection with more than this waiting in its send buffer is lagging (the server
passes it to websockets as the write limit, so asyncio pauses writing at that point)."""

DRAIN_POLL = 0.05
"""Seconds between looks at a lagging connection's buffer."""


def broadcast(connections: Sequence[Connection], frame: bytes) -> None:
    """Send `frame` to every connection (a `Session`, or an in-server bot's `InProcess`
    connection) without waiting for any."""
    sockets = []
    for conn in connections:
        if isinstance(conn, InProcess):
            conn.deliver(frame)
        else:
            sockets.append(cast(Session, conn).websocket)
    websockets_broadcast(sockets, frame)  # imported by name: `websockets.broadcast`
    # is a lazy attribute, looked up anew on every call


class Session:
    """A connected client and the rooms it is in."""

    # One per connection, thousands per node: no per-instance dict.
    __slots__ = (
        "_close_after",
        "_closing",
        "_counted_user",
        "_deleting",
        "address",
        "bot",
        "caps",
        "ceremony",
        "conn_id",
        "identity",
        "limited_in_a_row",
        "name",
        "service",
        "sessions",
        "stamp",
        "strikes",
        "tokens",
        "user",
        "websocket",
    )

    def __init__(
        self,
        websocket: ServerConnection,
        service: LiveService,
        sessions: set[Session],
        caps: ConnectionCaps | None = None,
    ) -> None:
        self.websocket = websocket
        self.service = service
        self.sessions = sessions
        self.caps = caps
        self.address: str | None = None  # counted against its cap, when there is one
        self._counted_user: str | None = None
        settings = service.settings
        self.conn_id = secrets.token_urlsafe(12)
        self.user = ""
        self.name = ""
        self.bot = False  # a bot account (its token's `bot` claim)
        self.identity: Identity | None = None  # its token's, once it said hello
        self.ceremony: Ceremony | None = None  # the passkey challenge it was given
        # Its rate limit, a token bucket: `rate_per_second` messages per second on
        # average, bursts up to `rate_burst` (kept here, not in an object of its own).
        self.tokens = float(settings.rate_burst)
        self.stamp = time.monotonic()
        # When it was refused lately (abuse): made at the first refusal, as most
        # connections never have one.
        self.strikes: collections.deque[float] | None = None
        self.limited_in_a_row = 0
        self._closing: asyncio.Task[None] | None = None
        self._deleting = False  # answering its own account deletion (`close_soon`)
        self._close_after: tuple[int, str] | None = None

    def rename(self, name: str) -> None:
        """The service's `rename`: the name later requests of this connection use."""
        self.name = name

    def _take_token(self, cost: int = 1) -> bool:
        """Whether the rate limit lets one more message of `cost` tokens through (and
        count it)."""
        settings = self.service.settings
        now = time.monotonic()
        self.tokens = min(
            settings.rate_burst, self.tokens + (now - self.stamp) * settings.rate_per_second
        )
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def _cost(self, message: msg.ClientMessage) -> int:
        """Tokens a message takes: a rename, which every viewer of the player's rooms
        hears about, half the burst (two at once, then about one a second by default);
        any other message one."""
        if isinstance(message, msg.Rename):
            return max(1, self.service.settings.rate_burst // 2)
        return 1

    async def send(self, frame: bytes) -> None:
        """Send one frame to this client; a closed connection is not an error here."""
        try:
            await self.websocket.send(frame)
            self.service.metrics.frames_out.inc()
        except ConnectionClosed:
            pass

    def close_soon(self, code: int, reason: str) -> None:
        """Close the connection without waiting for it (from bus callbacks); while
        this connection's own account deletion is answered, once it is."""
        if self._deleting:
            self._close_after = (code, reason)
            return
        if self._closing is None:
            self._closing = asyncio.create_task(self.websocket.close(code, reason))

    def lagging(self) -> bool:
        """asyncio paused writing to this connection: its buffer passed the write limit
        (and it resumes only once drained to a quarter of it)."""
        return bool(self.websocket.paused)

    async def drained(self) -> bool:
        """Wait until the buffer drained; False if the connection closed meanwhile."""
        while self.lagging():
            if self.websocket.state is not State.OPEN:
                return False
            await asyncio.sleep(DRAIN_POLL)
        return self.websocket.state is State.OPEN

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
        await self.send(outgoing.Error(code, message, rid=rid, move_id=move_id).encode())
        if not strike:
            return True
        now = time.monotonic()
        window = self.service.settings.abuse_window_seconds
        if self.strikes is None:
            self.strikes = collections.deque()
        strikes = self.strikes
        strikes.append(now)
        while strikes and strikes[0] < now - window:
            strikes.popleft()
        if len(strikes) >= self.service.settings.abuse_limit:
            self.service.metrics.rate_limit_closes.inc()
            await self.websocket.close(CloseCode.POLICY, "too many bad or excess messages")
            return False
        return True

    # ------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Serve the connection until it closes."""
        metrics = self.service.metrics
        metrics.connections.inc()
        self.sessions.add(self)
        try:
            if await self._admit_address() and await self._handshake():
                log.info("connection %s open: user %s", self.conn_id, self.user)
                self.service.connected(self, bot="api" if self.bot else "")
                # Frames are read and answered until the connection closes
                # (`ConnectionClosed`) or is closed for abuse. Thousands of idle
                # connections wait here: no coroutine of its own, and nothing of the
                # last frame kept between frames.
                while await self._receive(await self.websocket.recv()):
                    pass
        except ConnectionClosed:
            pass
        finally:
            metrics.connections.dec()
            self.sessions.discard(self)
            if self.caps is not None:
                self.caps.release(self.address, self._counted_user)
            await self.service.disconnected(self)
            if self.user:
                log.info("connection %s closed: user %s", self.conn_id, self.user)

    def _header(self, name: str) -> str | None:
        request = self.websocket.request
        return request.headers.get(name) if request is not None else None

    def _client_address(self) -> str:
        remote = self.websocket.remote_address
        peer = str(remote[0]) if isinstance(remote, tuple) and remote else "local"
        forwarded = self._header("X-Forwarded-For")
        return client_address(peer, forwarded, self.service.settings.trusted_proxies)

    async def _admit_address(self) -> bool:
        """Count the connection against its address's cap; close it with 4005 if full."""
        if self.caps is None:
            return True
        address = self._client_address()
        if not self.caps.admit_address(address):
            self.service.metrics.connections_refused.labels(reason="address").inc()
            await self.websocket.close(
                CloseCode.TOO_MANY_CONNECTIONS, "too many connections from your address"
            )
            return False
        self.address = address
        return True

    async def _handshake(self) -> bool:
        try:
            frame = await asyncio.wait_for(self.websocket.recv(), HELLO_TIMEOUT)
        except TimeoutError:
            await self.websocket.close(CloseCode.HELLO_TIMEOUT, "no hello")
            return False
        if isinstance(frame, str):
            await self._refuse(ErrorCode.TEXT_FRAME, "frames are binary msgpack", strike=False)
            await self.websocket.close(CloseCode.POLICY, "expected hello")
            return False
        try:
            hello = decode_client(frame)
        except ProtocolError as exc:
            await self._refuse(exc.code, exc.message, strike=False)
            await self.websocket.close(CloseCode.POLICY, "expected hello")
            return False
        if not isinstance(hello, msg.Hello):
            await self._refuse(ErrorCode.NOT_HELLO, "the first message must be hello", strike=False)
            await self.websocket.close(CloseCode.POLICY, "expected hello")
            return False
        if hello.version != PROTOCOL_VERSION:
            await self._refuse(
                ErrorCode.VERSION, f"this server speaks protocol {PROTOCOL_VERSION}", strike=False
            )
            await self.websocket.close(CloseCode.VERSION, "unsupported protocol version")
            return False
        name = None
        if hello.name is not None:
            try:
                name = validate_display_name(hello.name)
            except ValueError as exc:
                await self._refuse(ErrorCode.BAD_NAME, str(exc), strike=False)
                await self.websocket.close(CloseCode.POLICY, "bad display name")
                return False
        keys = self.service.settings.keys
        if hello.token is not None:
            try:
                identity = verify_token(keys, hello.token)
            except AuthError as exc:
                await self._refuse(exc.code, exc.message, strike=False)
                await self.websocket.close(CloseCode.AUTH_FAILED, exc.code)
                return False
            token = hello.token
        else:
            token, identity = mint_guest_token(keys, name or f"Guest {secrets.token_hex(2)}")
        try:
            username = await self.service.accounts.check(identity)
        except AuthError as exc:
            await self._refuse(exc.code, exc.message, strike=False)
            await self.websocket.close(CloseCode.AUTH_FAILED, exc.code)
            return False
        except (HistoryError, StoreError) as exc:
            log.warning("cannot check the session of a hello: %s", exc)
            await self._refuse(
                ErrorCode.UNAVAILABLE, "cannot check your session now; try again", strike=False
            )
            await self.websocket.close(CloseCode.SERVER_RESTART, "try again")
            return False
        if self.caps is not None:
            if not self.caps.admit_user(identity.user_id):
                self.service.metrics.connections_refused.labels(reason="user").inc()
                await self.websocket.close(
                    CloseCode.TOO_MANY_CONNECTIONS, "too many connections for this account"
                )
                return False
            self._counted_user = identity.user_id
        self.user = identity.user_id
        self.name = name or identity.name
        self.bot = identity.bot
        self.identity = identity
        await self.send(
            outgoing.Welcome(
                self.user, self.name, token, self.service.now_ms(), username=username
            ).encode()
        )
        return True

    @property
    def session_id(self) -> str | None:
        """The account session its token names, if any."""
        return self.identity.session if self.identity is not None else None

    async def _receive(self, frame: str | bytes) -> bool:
        """Decode one frame, apply the rate limit, dispatch it; False when the
        connection was closed for abuse."""
        received = time.perf_counter()
        if isinstance(frame, str):
            return await self._refuse(
                ErrorCode.TEXT_FRAME, "frames are binary msgpack", strike=True
            )
        try:
            message = decode_client(frame)
        except ProtocolError as exc:
            return await self._refuse(exc.code, exc.message, rid=exc.rid, strike=True)
        if not self._take_token(self._cost(message)):
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
                await self.websocket.close(CloseCode.POLICY, "flooding")
                return False
            return True
        self.limited_in_a_row = 0
        await self._dispatch(message)
        if isinstance(message, msg.MoveRequest):  # answered: ack or error sent
            self.service.metrics.move_latency.observe(time.perf_counter() - received)
        return True

    async def _dispatch(self, message: msg.ClientMessage) -> None:
        service = self.service
        try:
            match message:
                case msg.Ping():
                    await self.send(outgoing.Pong(message.rid, service.now_ms()).encode())
                case msg.Hello():
                    await self._refuse(ErrorCode.WRONG_STATE, "hello was already said", strike=True)
                case (
                    msg.PasskeyOptions()
                    | msg.Register()
                    | msg.SignIn()
                    | msg.SignOut()
                    | msg.BotList()
                    | msg.BotCreate()
                    | msg.BotNewToken()
                    | msg.BotDelete()
                    | msg.DeleteAccount()
                ):
                    async with asyncio.timeout(REQUEST_TIMEOUT):
                        await self._account(message)
                case _:
                    # A store that does not answer (a failover in progress, a stalled
                    # server) must not leave the client waiting: it hears `unavailable`
                    # and sends the request again (moves are idempotent).
                    async with asyncio.timeout(REQUEST_TIMEOUT):
                        await service.handle(self, message)
        except Refusal as exc:
            await self._answer_error(message, exc.code, exc.message)
        except (ConnectionClosed, asyncio.CancelledError):
            raise
        except (StoreError, HistoryError, TimeoutError) as exc:
            # Redis is unreachable or failed mid-request: nothing the client did wrong,
            # and a retry with the same ids is safe (moves are idempotent).
            log.warning("the store failed handling %s: %s", type(message).__name__, exc)
            await self._answer_error(
                message,
                ErrorCode.UNAVAILABLE,
                "the server's store is unreachable; try again shortly",
            )
        except Exception:
            log.exception("handling %s from %s failed", type(message).__name__, self.conn_id)
            await self._answer_error(
                message, ErrorCode.INTERNAL, "the server failed to handle that message"
            )

    def _caller(self) -> Caller:
        """Who asks an account request: the hello's identity, the address, the page's
        relying party (None: another site's page) and the browser."""
        assert self.identity is not None
        party = relying_party(
            self._header("Host"), self._header("Origin"), self.service.settings.rp_id
        )
        return Caller(
            self.identity,
            self.address or self._client_address(),
            party,
            self._header("User-Agent") or "",
        )

    async def _account(self, message: msg.AccountRequest) -> None:
        """Answer an account request (module docstring)."""
        accounts = self.service.accounts
        caller = self._caller()
        match message:
            case msg.PasskeyOptions():
                options, self.ceremony = await accounts.passkey_options(caller, message.username)
                frame: bytes = outgoing.PasskeyChallenge(
                    message.rid, options, message.username is not None
                ).encode()
            case msg.Register():
                ceremony, self.ceremony = self.ceremony, None
                signed = await accounts.register(
                    caller,
                    message.username,
                    password=message.password,
                    passkey=message.passkey,
                    ceremony=ceremony,
                )
                frame = outgoing.SignedIn(message.rid, **signed.wire()).encode()
            case msg.SignIn():
                ceremony, self.ceremony = self.ceremony, None
                signed = await accounts.sign_in(
                    caller,
                    username=message.username,
                    password=message.password,
                    passkey=message.passkey,
                    ceremony=ceremony,
                )
                frame = outgoing.SignedIn(message.rid, **signed.wire()).encode()
            case msg.SignOut():
                only = None if message.everywhere else (message.session or self.session_id)
                ended = await accounts.sign_out(caller, only=only)
                frame = outgoing.SignedOut(message.rid, ended).encode()
            case msg.BotList():
                bots = await self.service.bot_accounts.listing(caller)
                frame = outgoing.BotAccounts(message.rid, bots).encode()
            case msg.BotCreate():
                made = await self.service.bot_accounts.create(caller, message.username)
                frame = outgoing.BotToken(message.rid, **made.wire()).encode()
            case msg.BotNewToken():
                made = await self.service.bot_accounts.new_token(caller, message.user)
                frame = outgoing.BotToken(message.rid, **made.wire()).encode()
            case msg.BotDelete():
                bots = await self.service.bot_accounts.delete(caller, message.user)
                frame = outgoing.BotAccounts(message.rid, bots).encode()
            case msg.DeleteAccount():
                # Its sessions end first, on every node: this connection hears the
                # answer before it closes with them.
                self._deleting = True
                try:
                    kept = await accounts.delete_account(caller, message.username)
                    await self.send(outgoing.AccountDeleted(message.rid, kept).encode())
                finally:
                    self._deleting = False
                    if self._close_after is not None:
                        self.close_soon(*self._close_after)
                return
        await self.send(frame)

    async def _answer_error(self, message: msg.ClientMessage, code: ErrorCode, text: str) -> None:
        """An `error` frame naming the request it answers (its rid, room and move id)."""
        self.service.metrics.error(str(code))
        await self.send(outgoing.Error.answering(message, code, text).encode())
