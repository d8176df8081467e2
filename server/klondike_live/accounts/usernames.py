"""Usernames: what an account signs in with, unique whatever its case or look-alikes.

`check_username(text)` returns the username as shown (NFKC) and its key, or raises
`ValueError` saying what is wrong. Two usernames with the same key are the same name:
the key is the NFKC form case-folded, then each character confusable with a Latin one
(Cyrillic a, Greek omicron, the digit 0, ...) replaced by it, so `Ace`, `ACE` and
`Ace` spelt in Cyrillic letters are one name. Refused: fewer than 3 or more than 20
characters; anything but letters, digits, combining marks and `_ - .` (not first, not
last, not two in a row); letters of more than one script (but Han with Hiragana,
Katakana or Hangul, as Japanese and Korean write); and reserved names (`admin`,
`guest...`, `bot...`, the in-server bots' levels and the like), compared by key.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from klondike_live.protocol.kinds import BotLevel

MIN_LENGTH: Final = 3
MAX_LENGTH: Final = 20
PUNCTUATION: Final = frozenset("_-.")

RESERVED: Final = frozenset(
    {
        "admin",
        "administrator",
        "root",
        "system",
        "staff",
        "support",
        "moderator",
        "mod",
        "operator",
        "official",
        "server",
        "klondike",
        "klondike-live",
        "klondikelive",
        "anonymous",
        "nobody",
        "me",
        "you",
        *(str(level) for level in BotLevel),
    }
)
"""Names nobody may take (compared by key)."""

RESERVED_PREFIXES: Final = ("guest", "bot", "player", "admin")
"""No username starts with these (by key): guests are `Guest 1a2b`, bots `bot_...`,
a player without a name `Player 1a2b`."""

_CONFUSABLE: Final = str.maketrans(
    {
        # Cyrillic
        "\u0430": "a", "\u0432": "b", "\u0435": "e", "\u0451": "e", "\u043a": "k", "\u043c": "m",
        "\u043d": "h", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0442": "t", "\u0443": "y",
        "\u0445": "x", "\u0455": "s", "\u0456": "l", "\u0457": "l", "\u0458": "j", "\u0501": "d",
        "\u051b": "q", "\u051d": "w", "\u04bb": "h", "\u04cf": "l", "\u044c": "b",
        # Greek
        "\u03b1": "a", "\u03b2": "b", "\u03b5": "e", "\u03b7": "n", "\u03b9": "l", "\u03ba": "k",
        "\u03bd": "v", "\u03bf": "o", "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x",
        "\u03b3": "y", "\u03c9": "w",
        # Latin and digits that pass for one another
        "0": "o", "1": "l", "i": "l", "|": "l", "5": "s",
    }
)  # fmt: skip

_SCRIPT_WORDS: Final = {
    "CJK": "Han",
    "HIRAGANA": "Hiragana",
    "KATAKANA": "Katakana",
    "HANGUL": "Hangul",
}
_ALLOWED_MIXES: Final = (
    frozenset({"Han", "Hiragana", "Katakana"}),
    frozenset({"Han", "Hangul"}),
)


def _script(char: str) -> str:
    """The script of a letter, from the first word of its Unicode name (LATIN,
    CYRILLIC, GREEK, ARABIC, ...; CJK, HIRAGANA, KATAKANA, HANGUL named as such)."""
    word = unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]
    return _SCRIPT_WORDS.get(word, word.title())


def username_key(text: str) -> str:
    """The key two usernames share when they are the same name (see the docstring)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    skeleton = folded.translate(_CONFUSABLE).replace("rn", "m").replace("vv", "w")
    return unicodedata.normalize("NFKC", skeleton)


def check_username(text: object) -> tuple[str, str]:
    """The username as shown and its key; `ValueError` saying what is wrong."""
    if not isinstance(text, str):
        raise ValueError("a username is text")
    name = unicodedata.normalize("NFKC", text.strip())
    if not MIN_LENGTH <= len(name) <= MAX_LENGTH:
        raise ValueError(f"a username has {MIN_LENGTH} to {MAX_LENGTH} characters")
    scripts: set[str] = set()
    for index, char in enumerate(name):
        category = unicodedata.category(char)
        if char in PUNCTUATION:
            if index in (0, len(name) - 1) or name[index - 1] in PUNCTUATION:
                raise ValueError(
                    "a username may hold _ - . only between letters or digits, one at a time"
                )
        elif category[0] == "L":
            scripts.add(_script(char))
        elif category == "Nd":
            if not char.isascii():
                raise ValueError("a username's digits are 0-9")
        elif category[0] != "M" or index == 0:
            raise ValueError("a username holds letters, digits and _ - . only")
    if len(scripts) > 1 and not any(scripts <= mix for mix in _ALLOWED_MIXES):
        raise ValueError("a username's letters are of one script")
    key = username_key(name)
    if key in RESERVED or any(key.startswith(username_key(p)) for p in RESERVED_PREFIXES):
        raise ValueError("that username is reserved")
    return name, key
