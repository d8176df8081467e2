"""Board frames as the protocol sends them, decoded into the engine's `View` and `ViewDiff`.

    view = view_from_wire(variant, frame["view"])       # a `board` frame's view
    view = apply_wire_diff(view, frame["d"])            # then each `diff` of its stream

The inverses of `protocol.outgoing.view_wire` and `diff_wire`. A diff is applied by the
engine's `ViewDiff.apply` and nowhere else: the in-server bots, the Python client's board
mirrors (`klondike_live.client`) and programs written with this package (docs/examples/)
follow a stream through this module, so what they decide from is exactly what the
server's views are.

This module must stay pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from klondike_live.engine import Variant, View, ViewDiff


def view_from_wire(variant: Variant, data: Mapping[str, Any]) -> View:
    """An engine `View` from a board frame's `view` (cards 0..51, -1 unknown); the wire
    does not carry the variant: the room frame does."""
    return View(
        variant=variant,
        tableau=tuple(tuple(int(c) for c in pile[1]) for pile in data["tableau"]),
        face_down=tuple(int(pile[0]) for pile in data["tableau"]),
        stock=int(data["stock"]),
        waste=tuple(int(c) for c in data["waste"]),
        foundations=tuple(int(r) for r in data["foundations"]),
        foundation_hidden=int(data.get("foundations_hidden", 0)),
        pass_number=int(data["pass"]),
    )


def _optional_int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    return None if value is None else int(value)


def diff_from_wire(data: Mapping[str, Any]) -> ViewDiff:
    """An engine `ViewDiff` from a `diff` frame's `d` (docs/protocol.md, section 3):
    pile entries as they are (tableau 0..6, `engine.view.WASTE`), absent keys unchanged."""
    foundations = data.get("foundations")
    return ViewDiff(
        piles=tuple(
            (int(pile), int(keep), int(down), tuple(int(c) for c in cards))
            for pile, keep, down, cards in data["piles"]
        ),
        stock=_optional_int(data, "stock"),
        foundations=None if foundations is None else tuple(int(r) for r in foundations),
        foundation_hidden=_optional_int(data, "foundations_hidden"),
        pass_number=_optional_int(data, "pass"),
    )


def apply_wire_diff(view: View, data: Mapping[str, Any]) -> View:
    """The view a `diff` frame's `d` turns `view` into: `diff_from_wire(data).apply(view)`."""
    return diff_from_wire(data).apply(view)
