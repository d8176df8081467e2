"""A racer's board as the protocol sends it, turned into the engine's `View`.

    view = view_from_wire(variant, frame["view"])       # a `board` frame's view
    wire = apply_wire_diff(wire, frame["d"])            # then each `diff` of its stream

For the in-server bots and for programs written with this package (docs/examples/
race_bot.py): what they decide from is exactly the map a client receives.

This module must stay pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from klondike_live.engine import Variant, View


def view_from_wire(variant: Variant, data: dict[str, Any]) -> View:
    """An engine `View` from a board frame's `view` (cards 0..51, -1 unknown)."""
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


def apply_wire_diff(view: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """A wire view after a wire diff (docs/protocol.md, `diff`)."""
    tableau = [[pile[0], list(pile[1])] for pile in view["tableau"]]
    waste = list(view["waste"])
    for pile, keep, down, cards in change["piles"]:
        if pile == 7:
            waste = waste[:keep] + list(cards)
        else:
            tableau[pile] = [down, tableau[pile][1][:keep] + list(cards)]
    new = dict(view, tableau=tableau, waste=waste)
    for key in ("stock", "foundations", "foundations_hidden", "pass"):
        if key in change:
            new[key] = change[key]
    return new
