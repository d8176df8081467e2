"""Passwords: argon2id hashes (`argon2-cffi`), made and checked off the event loop.

`verify(stored, password)` takes the stored hash or None (no such account, or an
account without a password) and does the same argon2 work either way, against a hash
made once at start for that purpose: an unknown username and a wrong password cost the
same time, and answer the same. A hash made with weaker parameters than today's is
reported (`needs_rehash`) so the caller can store a new one at the next sign-in.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_LENGTH: Final = 8
MAX_LENGTH: Final = 256

_HASHER: Final = PasswordHasher()
"""argon2id with the library's default parameters (RFC 9106's second recommendation:
3 passes over 64 MiB, 4 lanes)."""


def check_password(text: object) -> str:
    """The password as given, or `ValueError`: 8 to 256 characters, not only spaces."""
    if not isinstance(text, str) or not MIN_LENGTH <= len(text) <= MAX_LENGTH:
        raise ValueError(f"a password has {MIN_LENGTH} to {MAX_LENGTH} characters")
    if not text.strip():
        raise ValueError("a password is more than spaces")
    return text


@functools.cache
def _stand_in() -> str:
    """The hash checked when there is none to check (made once, of a random secret)."""
    return _HASHER.hash(secrets.token_urlsafe(24))


async def warm() -> None:
    """Make the stand-in hash now (at start), so the first unknown username costs
    what any other does."""
    await asyncio.to_thread(_stand_in)


async def hash_password(password: str) -> str:
    """The argon2id hash of `password` (PHC string), made in a thread."""
    return await asyncio.to_thread(_HASHER.hash, password)


def _verify(stored: str | None, password: str) -> tuple[bool, bool]:
    target = stored if stored is not None else _stand_in()
    try:
        _HASHER.verify(target, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False, False
    if stored is None:
        return False, False
    return True, _HASHER.check_needs_rehash(stored)


async def verify(stored: str | None, password: str) -> tuple[bool, bool]:
    """Whether `password` matches `stored` (None: never), and whether the hash should be
    made again with today's parameters; the same argon2 work either way."""
    return await asyncio.to_thread(_verify, stored, password)
