"""Whole numbers written in notation text: ASCII digits only.

`int()` accepts what the notation does not (`+3`, ` 3`, `٣`, `1_000`) and raises its own
`ValueError` on a number longer than its digit limit, so every count the engine reads
from text goes through `parse_count`, which never raises.
"""

from __future__ import annotations

from typing import Final

MAX_DIGITS: Final = 18
"""Longer digit strings are refused: beyond any count the notation needs, and far below
`int()`'s own limit on the length of a decimal string."""


def parse_count(text: str) -> int | None:
    """The value of `text` if it is 1..18 ASCII digits, else None."""
    if text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS:
        return int(text)
    return None
