"""Room codes: six letters a racer can read out, type or copy to join a race.

A code is drawn from `ALPHABET`, twenty capital letters without look-alikes (no O for
0, no I or L for 1, no S for 5, no Z for 2, no B for 8), so 20**6 = 64 million codes:
far more than rooms live at once, and too many to try one by one. Typed text is
case-insensitive and may group the letters with spaces or dashes (`ACD-EFG`); its
canonical form (`normalise`) is six capitals. Pure: no I/O (the store allocates codes,
`service.codes` resolves them).
"""

from __future__ import annotations

import re
import secrets
from typing import Final

ALPHABET: Final = "ACDEFGHJKMNPQRTUVWXY"
LENGTH: Final = 6
CODE: Final = re.compile(rf"^[{ALPHABET}]{{{LENGTH}}}$")
MAX_TEXT: Final = 32
"""Typed text longer than this is refused before it is looked at."""

_IGNORED: Final = re.compile(r"[\s\-\u2010-\u2015\u2212]+")


def is_code(text: str) -> bool:
    """True when `text` is a code in its canonical form (safe in a key name)."""
    return CODE.match(text) is not None


def normalise(text: str) -> str | None:
    """The canonical code in typed text (any case, spaces and dashes ignored), or None
    when the text is no code."""
    if len(text) > MAX_TEXT:
        return None
    code = _IGNORED.sub("", text).upper()
    return code if is_code(code) else None


def new_code() -> str:
    """A fresh random code (from the system's secure random source)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def grouped(code: str) -> str:
    """A code as shown to people: two groups of three (`ACD-EFG`)."""
    return f"{code[:3]}-{code[3:]}"
