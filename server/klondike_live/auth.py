"""Who a connection is: signed identity tokens (JWT, HS256) and display names.

The server mints guest tokens itself; an operator's own site may mint tokens with the
same secret (`KLONDIKE_SECRET`), and those are accepted too: only `sub` is required,
`exp` is checked when present (allowing `LEEWAY_SECONDS` of clock skew), `name` is
optional and any `iss` is fine. A token with the claim `bot: true` is a bot account
(`mint_bot_token`, issued by `klondike-live token --bot NAME`): it may race only in
rooms that allow bots, and is labelled as a bot wherever it races. A token with a `sid`
claim is an account's session (`mint_session_token`, at sign-in): valid only while
that session lasts, which the caller checks (`service.accounts.Accounts.check`); a
token without one is what it was before accounts (stateless until its `exp`). A bot
token with a `sid` is a bot account that an account owns (`mint_owned_bot_token`): its
`sid` is the token's id, checked the same way. Everything a client
sends here is untrusted; failures raise `AuthError` with a stable code (`token_invalid`,
`token_expired`) and a short message.

Keys come as a `KeyRing`: the current key signs (its `key_id` goes into the token's
`kid` header), and every key of the ring verifies, so older keys keep their tokens
valid during a rotation. A token whose `kid` names no key of the ring is refused; one
without a `kid` (an operator's site may leave it out) is tried with every key.

This module must never accept an algorithm other than HS256 (`alg: none` included),
never put the secret, the token or a traceback into an error message, and never do I/O.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Final

import jwt

from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode

__all__ = [
    "ALGORITHM",
    "GUEST_LIFETIME_SECONDS",
    "ISSUER",
    "MAX_NAME_LENGTH",
    "TOKEN_EXPIRED",
    "TOKEN_INVALID",
    "USER_ID",
    "AuthError",
    "Identity",
    "KeyRing",
    "key_id",
    "mint_bot_token",
    "mint_guest_token",
    "mint_owned_bot_token",
    "mint_session_token",
    "validate_display_name",
    "verify_token",
]

ALGORITHM: Final = "HS256"
ISSUER: Final = "klondike-live"
GUEST_LIFETIME_SECONDS: Final = 30 * 24 * 3600
SESSION_LIFETIME_SECONDS: Final = 90 * 24 * 3600
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{16,32}")
"""A session id (`sid` claim): what `mint_session_token` puts there."""
BOT_LIFETIME_SECONDS: Final = 365 * 24 * 3600
MAX_NAME_LENGTH: Final = 24
MAX_TOKEN_LENGTH: Final = 4096
LEEWAY_SECONDS: Final = 5
"""Clock skew tolerated between the site that minted a token and this server: a token is
accepted until `exp + LEEWAY_SECONDS`, and `nbf`/`iat` may lie that far in the future
(docs/protocol.md, section 2)."""

TOKEN_INVALID: Final = ErrorCode.TOKEN_INVALID
TOKEN_EXPIRED: Final = ErrorCode.TOKEN_EXPIRED

# User ids end up in Redis keys and logs: plain characters only, and no `{}` that
# could clash with the hash tags of key names. Covers UUIDs, emails, "auth0|123".
USER_ID: Final = re.compile(r"[A-Za-z0-9_.:@|+-]{1,128}")
"""A user id: what `auth` issues and accepts, and nothing else reaches a key name
(match it whole, with `fullmatch`)."""


class AuthError(Refusal):
    """A token was refused; `code` is stable for clients, `message` is safe to show."""


def key_id(key: bytes) -> str:
    """The public name of a key, sent as a token's `kid`: 16 hex digits of
    SHA-256("klondike-live kid:" + key), which say nothing usable about the key."""
    return hashlib.sha256(b"klondike-live kid:" + key).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The keys of a node: `current` signs and verifies, `older` only verify."""

    current: bytes = field(repr=False)
    older: tuple[bytes, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not all(isinstance(k, bytes) and k for k in (self.current, *self.older)):
            raise ValueError("every key must be non-empty bytes")

    @property
    def current_id(self) -> str:
        return key_id(self.current)

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids of every key, the current one first."""
        return tuple(key_id(k) for k in (self.current, *self.older))

    def verifying(self, kid: object) -> tuple[bytes, ...]:
        """The keys a token with header `kid` may be signed with (None: no kid)."""
        everyone = (self.current, *self.older)
        if kid is None:
            return everyone
        return tuple(k for k in everyone if key_id(k) == kid)


def _ring(keys: bytes | KeyRing) -> KeyRing:
    return keys if isinstance(keys, KeyRing) else KeyRing(keys)


@dataclass(frozen=True, slots=True)
class Identity:
    """A verified user: stable id, display name, whether it is a guest account,
    whether it is a bot account (claim `bot: true`), and the account session its token
    names (claim `sid`), if any."""

    user_id: str
    name: str
    guest: bool
    bot: bool = False
    session: str | None = None


_REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Controls (tab and line breaks included), surrogates, private-use and unassigned code
points, line and paragraph separators."""

_JOINERS: Final = frozenset({"\u200c", "\u200d"})
"""Zero-width non-joiner and joiner: the only format characters a name may hold, and only
between two visible characters (emoji sequences, Persian and Indic words)."""

_BLANK_LETTERS: Final = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0"})
"""Hangul fillers: letters by category, invisible when drawn."""


def _visible(char: str) -> bool:
    return unicodedata.category(char)[0] not in "CZ" and char not in _BLANK_LETTERS


def _refused_at(name: str, index: int) -> bool:
    """Whether the character at `index` may not appear in a display name."""
    char = name[index]
    category = unicodedata.category(char)
    if category in _REFUSED_CATEGORIES or char in _BLANK_LETTERS:
        return True
    if category != "Cf":
        return False
    return not (
        char in _JOINERS
        and 0 < index < len(name) - 1
        and _visible(name[index - 1])
        and _visible(name[index + 1])
    )


def validate_display_name(text: str) -> str:
    """The display name in canonical form, or `ValueError` saying what is wrong.

    NFC-normalized; no control characters (tab, line feed, U+0085 included), line or
    paragraph separators, format characters (but a zero-width joiner or non-joiner
    between two visible characters), private-use, unassigned or blank (Hangul filler)
    characters; runs of spaces (category Zs) collapsed to one space, trimmed; then
    1..24 characters.
    """
    if not isinstance(text, str):
        raise ValueError("display name must be text")
    normal = unicodedata.normalize("NFC", text)
    for index, char in enumerate(normal):
        if _refused_at(normal, index):
            raise ValueError(
                "display name must not contain control, separator or invisible characters"
                f" (U+{ord(char):04X})"
            )
    name = " ".join(normal.split())  # only Zs spaces are left to split on
    if not name:
        raise ValueError("display name must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"display name must be at most {MAX_NAME_LENGTH} characters, got {len(name)}"
        )
    return name


def _sign(
    keys: bytes | KeyRing,
    identity: Identity,
    kind: dict[str, bool | str],
    now: float | None,
    lifetime: int,
) -> str:
    """A token for `identity` with its `kind` claim, valid for `lifetime` s from `now`,
    signed with the current key."""
    issued = int(time.time() if now is None else now)
    claims = {
        "sub": identity.user_id,
        "name": identity.name,
        "iat": issued,
        "exp": issued + lifetime,
        "iss": ISSUER,
        **kind,
    }
    ring = _ring(keys)
    return jwt.encode(claims, ring.current, algorithm=ALGORITHM, headers={"kid": ring.current_id})


def mint_guest_token(
    keys: bytes | KeyRing,
    name: str,
    *,
    now: float | None = None,
    lifetime: int = GUEST_LIFETIME_SECONDS,
) -> tuple[str, Identity]:
    """A new guest account: a fresh user id and a token valid for `lifetime` s, signed
    with the current key (a bare secret is a ring of one key).

    Raises `ValueError` if `name` is not a valid display name.
    """
    display = validate_display_name(name)
    identity = Identity(user_id="g_" + secrets.token_urlsafe(12), name=display, guest=True)
    return _sign(keys, identity, {"guest": True}, now, lifetime), identity


def mint_bot_token(
    keys: bytes | KeyRing,
    name: str,
    *,
    now: float | None = None,
    lifetime: int = BOT_LIFETIME_SECONDS,
) -> tuple[str, Identity]:
    """A bot account's token (claim `bot: true`): user id `bot_` + a slug of `name` and
    a random suffix, valid for `lifetime` s, signed with the current key.

    Raises `ValueError` if `name` is not a valid display name.
    """
    display = validate_display_name(name)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", display).strip("-")[:32] or "bot"
    identity = Identity(
        user_id=f"bot_{slug}_{secrets.token_hex(4)}", name=display, guest=False, bot=True
    )
    return _sign(keys, identity, {"bot": True}, now, lifetime), identity


def mint_owned_bot_token(
    keys: bytes | KeyRing,
    user_id: str,
    name: str,
    token_id: str,
    *,
    now: float | None = None,
    lifetime: int = BOT_LIFETIME_SECONDS,
) -> tuple[str, Identity]:
    """The token of a bot account that an account owns (`service.bots`): claims
    `bot: true` and `sid` (the token's id, which ends like an account's session when a
    new token is issued or the bot is deleted), valid for `lifetime` s."""
    if not USER_ID.fullmatch(user_id) or not SESSION_ID.fullmatch(token_id):
        raise ValueError("not a user id and token id")
    identity = Identity(
        user_id=user_id, name=validate_display_name(name), guest=False, bot=True, session=token_id
    )
    return _sign(keys, identity, {"bot": True, "sid": token_id}, now, lifetime), identity


def mint_session_token(
    keys: bytes | KeyRing,
    user_id: str,
    name: str,
    session: str,
    *,
    now: float | None = None,
    lifetime: int = SESSION_LIFETIME_SECONDS,
) -> tuple[str, Identity]:
    """An account's token for one session (claim `sid`), valid for `lifetime` s; the
    session itself may end sooner (signing out), which `verify_token` cannot know."""
    if not USER_ID.fullmatch(user_id) or not SESSION_ID.fullmatch(session):
        raise ValueError("not a user id and session id")
    identity = Identity(
        user_id=user_id, name=validate_display_name(name), guest=False, session=session
    )
    return _sign(keys, identity, {"sid": session}, now, lifetime), identity


def verify_token(keys: bytes | KeyRing, token: str) -> Identity:
    """The identity in a token signed with a key of `keys`, or `AuthError`.

    Codes: `token_expired` for a valid token past its `exp`; `token_invalid` for
    anything else (bad signature, unknown `kid`, wrong algorithm, malformed, missing
    or bad `sub`).
    """
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
        raise AuthError(TOKEN_INVALID, "token is missing or too long")
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.InvalidTokenError:
        raise AuthError(TOKEN_INVALID, "token is malformed") from None
    candidates = _ring(keys).verifying(kid)
    if not candidates:
        raise AuthError(TOKEN_INVALID, "token key id (kid) names no key of this server")
    claims: dict[str, Any] | None = None
    for key in candidates:
        try:
            claims = _decode(key, token)
        except jwt.InvalidSignatureError:
            continue  # signed with another key of the ring, maybe
        break
    if claims is None:
        raise AuthError(TOKEN_INVALID, "token signature does not verify")
    user_id = claims["sub"]
    if not isinstance(user_id, str) or not USER_ID.fullmatch(user_id):
        raise AuthError(TOKEN_INVALID, "token subject (sub) is not a valid user id")
    session = claims.get("sid")
    if session is not None and not (isinstance(session, str) and SESSION_ID.fullmatch(session)):
        raise AuthError(TOKEN_INVALID, "token session (sid) is malformed")
    return Identity(
        user_id=user_id,
        name=_name_from_claim(claims.get("name"), user_id),
        guest=claims.get("guest") is True and session is None,
        bot=claims.get("bot") is True,
        session=session,
    )


def _decode(key: bytes, token: str) -> dict[str, Any]:
    """The claims of a token signed with `key`; `AuthError` for any refusal but a
    signature made with another key (`jwt.InvalidSignatureError`, for the caller)."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[ALGORITHM],
            leeway=LEEWAY_SECONDS,
            options={"require": ["sub"], "verify_aud": False, "verify_iss": False},
        )
    except jwt.ExpiredSignatureError:
        raise AuthError(TOKEN_EXPIRED, "token has expired, sign in again") from None
    except jwt.ImmatureSignatureError:
        raise AuthError(TOKEN_INVALID, "token is not valid yet (nbf or iat ahead)") from None
    except jwt.InvalidSignatureError:
        raise
    except jwt.InvalidAlgorithmError:
        raise AuthError(TOKEN_INVALID, f"token algorithm must be {ALGORITHM}") from None
    except jwt.MissingRequiredClaimError:
        raise AuthError(TOKEN_INVALID, "token has no subject (sub)") from None
    except jwt.InvalidTokenError:
        raise AuthError(TOKEN_INVALID, "token is malformed") from None
    return claims


def _name_from_claim(value: object, user_id: str) -> str:
    """The token's display name, or a stable stand-in when it is absent or unusable.

    A signed token is trusted for who the user is, so a name that breaks our display
    rules (too long, invisible characters) is replaced rather than refusing the user.
    """
    if isinstance(value, str):
        try:
            return validate_display_name(value)
        except ValueError:
            pass
    tag = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:4]
    return f"Player {tag}"
