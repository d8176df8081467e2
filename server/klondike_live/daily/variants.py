"""The daily variants, the slug that names a variant in seeds and key names, and the
solver budget that certifies daily deals.

A slug is the notation's canonical variant text with the `=` signs dropped and the
spaces turned into `-`: `draw=1 passes=1 f2t=no` is `draw1-passes1-f2tno`. It is
mechanical and one-to-one, so it can go into HMAC messages and Redis key names.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from klondike_live.engine import Variant
from klondike_live.solver.search import Budget

__all__ = [
    "DAILY_VARIANTS",
    "DEFAULT_DAILY_BUDGET",
    "DRAW1",
    "DRAW3",
    "slug_variant",
    "variant_slug",
]

DRAW1: Final = Variant(draw=1, passes=1)
"""Draw one card at a time, a single pass through the stock (the rules as written)."""

DRAW3: Final = Variant(draw=3, passes=3)
"""Draw three cards at a time, three passes in all (the rules as written)."""

DAILY_VARIANTS: Final = (DRAW1, DRAW3)
"""The variants that get a daily challenge, in display order."""

DEFAULT_DAILY_BUDGET: Final = Budget(seconds=120.0, nodes=2_000_000)
"""Per candidate seed of a day: the node limit decides (about 10 s of search), so the
choice does not depend on the machine; the time limit is only a safety net."""


def variant_slug(variant: Variant) -> str:
    """`draw=3 passes=3 f2t=no` -> `draw3-passes3-f2tno`."""
    return str(variant).replace("=", "").replace(" ", "-")


def slug_variant(slug: str) -> Variant:
    """The variant of a slug (the inverse of `variant_slug`); ValueError if malformed."""
    parts = slug.split("-")
    names = ("draw", "passes", "f2t")
    if len(parts) != 3 or not all(p.startswith(n) for p, n in zip(parts, names, strict=True)):
        raise ValueError(f"not a variant slug: {slug!r}")
    text = " ".join(f"{n}={p[len(n) :]}" for p, n in zip(parts, names, strict=True))
    variant = Variant.parse(text)
    if variant_slug(variant) != slug:
        raise ValueError(f"not a canonical variant slug: {slug!r}")
    return variant
