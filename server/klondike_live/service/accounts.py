"""Accounts' requests: make a guest an account, sign in and out, check a token's session.

    accounts = Accounts(settings, store.accounts, AccountRecords(history), now_ms, erasure)
    await accounts.check(identity)                    # at hello and on API requests
    options, ceremony = await accounts.passkey_options(caller, "Ann")
    signed = await accounts.register(caller, "Ann", password=None, passkey=answer,
                                     ceremony=ceremony)
    signed = await accounts.sign_in(caller, username="Ann", password="...")
    ended = await accounts.sign_out(caller, only=None)   # None: every session
    kept = await accounts.delete_account(caller, "Ann")  # the username typed again

A `Caller` is what the transport knows of who asks (the connection's identity, its
address, the relying party of its page, its browser). An account keeps the user id of
the guest that made it, so its games, statistics, streaks, daily attempts, unfinished
games and tournament entries are the account's as they were the guest's: nothing is
copied. Signing in gives the device a session token (`auth.mint_session_token`): a
new session row (history database) and its live key (Valkey, `store.accounts`). A
device that was another guest keeps that guest's history under that guest's id (not
merged: docs/operations.md, "Accounts", says why).

Sign-in answers never tell an unknown username from a wrong password (`sign_in_failed`,
the same argon2 work), and failures are limited per address and per username key in a
window shared by every node (`sign_in_per_address`, `sign_in_per_account`,
`sign_in_window_seconds`); account creations count against the address's limit too.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from klondike_live.accounts import passkeys, passwords
from klondike_live.accounts.origins import RelyingParty
from klondike_live.accounts.passkeys import NewPasskey, PasskeyError
from klondike_live.accounts.usernames import check_username, username_key
from klondike_live.auth import AuthError, Identity, KeyRing, mint_session_token
from klondike_live.config import Settings
from klondike_live.errors import Refusal
from klondike_live.history.accounts import AccountRecords, AccountTaken, SessionRow
from klondike_live.history.bots import BotRecords
from klondike_live.history.players import PlayerRecords
from klondike_live.protocol.codes import ErrorCode
from klondike_live.service.erasure import LiveErasure
from klondike_live.store.accounts import AccountStore

__all__ = ["Accounts", "Caller", "Ceremony", "SignedIn"]

log = logging.getLogger(__name__)

CEREMONY_SECONDS: Final = 150.0
"""How long a passkey challenge may be answered (the browser gives up after 120 s)."""
ENDED_MEMORY: Final = 60.0
"""Seconds a node remembers the sessions it heard end (`Accounts.check`)."""
MAX_AGENT: Final = 160
FAILED: Final = "wrong username or password"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks: the connection's identity and what its transport knows of it."""

    identity: Identity
    address: str
    party: RelyingParty | None  # None: the request came from another site's page
    agent: str = ""


@dataclass(frozen=True, slots=True)
class Ceremony:
    """A passkey challenge given to a connection: to create an account (`username`)
    or to sign in (`username` None)."""

    challenge: bytes
    username: str | None
    party: RelyingParty
    expires: float

    def open(self) -> bool:
        return time.monotonic() < self.expires


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A device signed in: its new token and session."""

    user: str
    username: str
    token: str
    session: str

    def wire(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "username": self.username,
            "token": self.token,
            "session": self.session,
        }


def _refuse(code: ErrorCode, message: str) -> Refusal:
    return Refusal(code, message)


def _name_subject(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Accounts:
    """Account requests over the history database and Valkey (module docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: AccountStore,
        records: AccountRecords,
        now_ms: Callable[[], int],
        erasure: LiveErasure,
    ) -> None:
        self.settings = settings
        self.store = store
        self.records = records
        self.now_ms = now_ms
        self.erasure = erasure
        """Erases a deleted account from what Valkey shows (`service.erasure`)."""
        self.on_ended: Callable[[set[str]], None] | None = None
        """Called with the ids of ended sessions (from the bus): the gateway closes
        their connections."""
        self._ended: dict[str, float] = {}
        """Sessions this node heard end in the last `ENDED_MEMORY` seconds: a `hello`
        whose Valkey read came back just before the session ended, and resumes after
        the news, is refused all the same."""

    @property
    def keys(self) -> KeyRing:
        return self.settings.keys

    # ------------------------------------------------------------ tokens

    async def check(self, identity: Identity) -> str | None:
        """A verified token's standing: its session's username for an account's
        session; `AuthError(token_revoked)` for an ended session or for a guest token
        of a guest that is an account now; None for any other token (a guest's, a
        bot's, an operator's). `HistoryError` when Valkey has no word on a session and
        the database cannot say."""
        sid = identity.session
        if sid is None:
            if identity.guest and await self.store.is_account(identity.user_id):
                raise AuthError(
                    ErrorCode.TOKEN_REVOKED, "this guest is an account now: sign in to it"
                )
            return None
        found = await self.store.session(sid)
        if found is None:
            found = await self._session_from_database(sid)
        if found is None or found[0] != identity.user_id or sid in self._ended:
            raise AuthError(ErrorCode.TOKEN_REVOKED, "this session has ended: sign in again")
        return found[1]

    async def _session_from_database(self, sid: str) -> tuple[str, str] | None:
        """A session Valkey does not hold, as the history database has it (user id and
        username), held in Valkey again for the rest of its life; None when it ended.

        Ending a session deletes its row, then its key: the row is read once more after
        the key is written, so a sign-out that ran in between (its key deletion before
        this write) is not undone by it."""
        now = self.now_ms()
        row = await self.records.session_alive(sid, now)
        account = await self.records.by_user(row.user_id) if row is not None else None
        if row is None or account is None:
            return None
        await self.store.keep_session(sid, row.user_id, account.username, row.expires_at - now)
        if await self.records.session_alive(sid, now) is None:
            await self.store.end_sessions([sid])
            return None
        return row.user_id, account.username

    def ended(self, payload: bytes) -> None:
        """A `keys.SESSIONS_ENDED` message: the sessions whose connections close (and
        `keys.ENDED_USER` items: the users whose connections all close)."""
        sids = set(payload.decode("ascii", "replace").split())
        now = time.monotonic()
        self._ended = {s: at for s, at in self._ended.items() if at > now - ENDED_MEMORY}
        self._ended.update(dict.fromkeys(sids, now))
        if sids and self.on_ended is not None:
            self.on_ended(sids)

    # ------------------------------------------------------------ limits

    async def _limit(self, caller: Caller, key: str | None) -> None:
        """Refuse (`rate_limited`) once the address or the username key failed too
        often in the current window."""
        settings = self.settings
        over = await self.store.failures("addr", caller.address) >= settings.sign_in_per_address
        if not over and key is not None:
            over = (
                await self.store.failures("name", _name_subject(key))
                >= settings.sign_in_per_account
            )
        if over:
            raise _refuse(
                ErrorCode.RATE_LIMITED,
                "too many failed attempts; try again in a few minutes",
            )

    async def _failed(self, caller: Caller, key: str | None) -> None:
        window = int(self.settings.sign_in_window_seconds * 1000)
        await self.store.fail("addr", caller.address, window)
        if key is not None:
            await self.store.fail("name", _name_subject(key), window)

    # ------------------------------------------------------------ passkeys

    async def passkey_options(self, caller: Caller, username: str | None) -> tuple[str, Ceremony]:
        """Creation options for a new account of `username`, or request options to
        sign in (`username` None); the ceremony the answer must match."""
        party = self._party(caller)
        if party.origin is None:
            raise _refuse(ErrorCode.BAD_ORIGIN, "passkeys need a browser page of this site")
        if not party.named:
            raise _refuse(
                ErrorCode.BAD_ORIGIN,
                "passkeys need the site opened by its host name (localhost, not 127.0.0.1)",
            )
        if username is None:
            options, challenge = passkeys.request_options(party)
        else:
            shown, key = self._new_username(caller, username)
            await self._limit(caller, None)
            if await self.records.by_username(key) is not None:
                await self._failed(caller, None)
                raise _refuse(ErrorCode.USERNAME_TAKEN, "that username is taken")
            options, challenge = passkeys.creation_options(party, caller.identity.user_id, shown)
            username = shown
        ceremony = Ceremony(challenge, username, party, time.monotonic() + CEREMONY_SECONDS)
        return options, ceremony

    # ------------------------------------------------------------ accounts

    def _party(self, caller: Caller) -> RelyingParty:
        if caller.party is None:
            raise _refuse(ErrorCode.BAD_ORIGIN, "account requests come from this site's pages")
        return caller.party

    def _new_username(self, caller: Caller, username: str) -> tuple[str, str]:
        identity = caller.identity
        if not identity.guest or identity.bot:
            raise _refuse(ErrorCode.NOT_A_GUEST, "only a guest can be made an account")
        try:
            return check_username(username)
        except ValueError as exc:
            raise _refuse(ErrorCode.BAD_USERNAME, str(exc)) from None

    async def register(
        self,
        caller: Caller,
        username: str,
        *,
        password: str | None = None,
        passkey: str | None = None,
        ceremony: Ceremony | None = None,
    ) -> SignedIn:
        """Make the caller's guest an account with this username and a password or
        the passkey answering `ceremony`; sign this device in."""
        party = self._party(caller)
        shown, key = self._new_username(caller, username)
        await self._limit(caller, None)
        new_passkey: NewPasskey | None = None
        password_hash: str | None = None
        if passkey is not None:
            if ceremony is None or not ceremony.open() or ceremony.username != shown:
                raise _refuse(ErrorCode.SIGN_IN_FAILED, "ask for passkey options first")
            try:
                new_passkey = passkeys.verify_creation(party, ceremony.challenge, passkey)
            except PasskeyError as exc:
                await self._failed(caller, None)
                raise _refuse(ErrorCode.SIGN_IN_FAILED, str(exc)) from None
        else:
            try:
                checked = passwords.check_password(password)
            except ValueError as exc:
                raise _refuse(ErrorCode.BAD_PASSWORD, str(exc)) from None
            password_hash = await passwords.hash_password(checked)
        user = caller.identity.user_id
        try:
            await self.records.create(user, shown, key, password_hash, new_passkey, self.now_ms())
        except AccountTaken as exc:
            await self._failed(caller, None)
            if exc.which == "user":
                raise _refuse(ErrorCode.NOT_A_GUEST, "this guest is an account already") from None
            raise _refuse(ErrorCode.USERNAME_TAKEN, "that username is taken") from None
        await self.store.mark_account(user)
        log.info("account %s made (%s)", user, "passkey" if new_passkey else "password")
        return await self._start(caller, user, shown, "passkey" if new_passkey else "password")

    async def sign_in(
        self,
        caller: Caller,
        *,
        username: str | None = None,
        password: str | None = None,
        passkey: str | None = None,
        ceremony: Ceremony | None = None,
    ) -> SignedIn:
        """Sign this device in with a username and password, or with the passkey
        answering `ceremony`; `sign_in_failed` whatever the reason."""
        self._party(caller)
        if passkey is not None:
            await self._limit(caller, None)
            return await self._passkey_sign_in(caller, passkey, ceremony)
        key = username_key(username) if isinstance(username, str) else ""
        await self._limit(caller, key)
        account = await self.records.by_username(key) if key else None
        good, rehash = await passwords.verify(
            account.password if account is not None else None, password or ""
        )
        if account is None or not good:
            await self._failed(caller, key)
            raise _refuse(ErrorCode.SIGN_IN_FAILED, FAILED)
        if rehash and password:
            await self.records.set_password(
                account.user_id, await passwords.hash_password(password)
            )
        return await self._start(caller, account.user_id, account.username, "password")

    async def _passkey_sign_in(
        self, caller: Caller, answer: str, ceremony: Ceremony | None
    ) -> SignedIn:
        failed = _refuse(ErrorCode.SIGN_IN_FAILED, "the passkey could not be verified")
        if ceremony is None or not ceremony.open() or ceremony.username is not None:
            raise _refuse(ErrorCode.SIGN_IN_FAILED, "ask for passkey options first")
        try:
            stored = await self.records.passkey(passkeys.answer_id(answer))
            if stored is None:
                raise PasskeyError("unknown passkey")
            count = passkeys.verify_request(
                ceremony.party, ceremony.challenge, answer, stored.public_key, stored.sign_count
            )
        except PasskeyError:
            await self._failed(caller, None)
            raise failed from None
        account = await self.records.by_user(stored.user_id)
        if account is None:
            await self._failed(caller, None)
            raise failed
        await self.records.count_use(stored.credential_id, count)
        return await self._start(caller, account.user_id, account.username, "passkey")

    async def _start(self, caller: Caller, user: str, username: str, method: str) -> SignedIn:
        """A new session for this device, and its token."""
        sid = secrets.token_urlsafe(18)
        now = self.now_ms()
        lifetime = self.settings.session_days * 86_400
        token, _ = mint_session_token(self.keys, user, username, sid, lifetime=lifetime)
        row = SessionRow(sid, user, method, caller.agent[:MAX_AGENT], now, now + lifetime * 1000)
        await self.records.add_session(row)
        await self.store.keep_session(sid, user, username, lifetime * 1000)
        return SignedIn(user, username, token, sid)

    async def sign_out(self, caller: Caller, *, only: str | None) -> int:
        """End one session of the caller's account (`only`), or all of them; how many
        ended. Every node closes their connections (close code 4006)."""
        identity = caller.identity
        if identity.session is None or identity.bot:
            raise _refuse(ErrorCode.NOT_SIGNED_IN, "sign in first")
        return await self.end_sessions(identity.user_id, only)

    async def end_sessions(self, user: str, only: str | None = None) -> int:
        """End the account's sessions (or the one `only`): their rows, their Valkey keys,
        and, on every node, their connections; how many ended. Whatever removes an
        account calls this first, so that no node accepts its tokens from then on."""
        ended = await self.records.end_sessions(user, only)
        await self.store.end_sessions(ended)
        return len(ended)

    async def delete_bots(self, owner: str) -> None:
        """Delete the bot accounts `owner` owns: their tokens end on every node first,
        then their rows go (their games stay under their names)."""
        bots = BotRecords(self.records.history)
        for bot in await bots.of(owner):
            await self.end_sessions(bot.user_id)
            await bots.delete(bot.user_id)

    async def delete_account(self, caller: Caller, typed: str) -> int:
        """Delete the caller's account, confirmed by its username typed again (any
        case): its sessions end on every node first (their tokens refused from then
        on, and every connection of its user id closed) and its bot accounts are
        deleted, then its account, credentials and statistics are erased and its seat in
        the games it played, its rows on the daily leaderboards and its place in
        tournaments become "deleted player", in the history database
        (`history.players`, where it is recorded erased, so that what reaches it later
        is erased too) and then in what Valkey shows (`service.erasure`); how many
        games are kept for their other players. The guest id stays marked an account,
        so its guest tokens stay refused too."""
        self._party(caller)
        identity = caller.identity
        if identity.session is None or identity.bot:
            raise _refuse(ErrorCode.NOT_SIGNED_IN, "sign in first")
        account = await self.records.by_user(identity.user_id)
        if account is None:
            raise _refuse(ErrorCode.NOT_SIGNED_IN, "this account is deleted already")
        if username_key(typed) != username_key(account.username):
            raise _refuse(ErrorCode.NOT_CONFIRMED, "type the account's username to confirm")
        claimed = await self.erasure.claimed(identity.user_id)  # while they are open
        await self.end_sessions(identity.user_id)
        # Its other connections too (a guest token's, made before the account): none
        # writes under its user id from now on.
        await self.store.end_user(identity.user_id)
        await self.delete_bots(identity.user_id)
        erased = await PlayerRecords(self.records.history).erase(identity.user_id, self.now_ms())
        await self.erasure.erase(identity.user_id, erased, claimed)
        log.info("account %s deleted (%d games kept for others)", identity.user_id, len(erased))
        return len(erased)

    async def overview(self, identity: Identity) -> dict[str, Any] | None:
        """The account of a signed-in token with its sessions (GET /api/me/account);
        None for any other token (a bot account's included)."""
        if identity.session is None or identity.bot:
            return None
        account = await self.records.by_user(identity.user_id)
        if account is None:
            return None
        rows = await self.records.sessions_of(identity.user_id, self.now_ms())
        return {
            "user": account.user_id,
            "username": account.username,
            "password": account.password is not None,
            "passkeys": len(await self.records.passkeys_of(account.user_id)),
            "sessions": [{**row.wire(), "current": row.id == identity.session} for row in rows],
        }
