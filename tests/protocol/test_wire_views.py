"""Board frames as a client applies them: what a diff's `keep` counts, the waste's
face-down count, wire diffs decoded and applied by `ViewDiff.apply`, and board events at
or below the last applied offset."""

from __future__ import annotations

from typing import Any

import pytest

from klondike_live.client import BoardMirror, apply_diff, diff_from_wire, view_from_wire
from klondike_live.engine import Board, GameRecord, View, diff
from klondike_live.engine.view import WASTE, racer_view
from klondike_live.protocol.kinds import Audience
from klondike_live.protocol.outgoing import diff_wire, view_wire

from testdata import DATA

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())


def steps() -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(old view, diff, new view) as wire data for every move of a won game, as its
    racer sees it."""
    assert WON.seed is not None
    board = Board.from_seed(WON.seed, WON.variant)
    out = []
    for token in WON.moves:
        before = racer_view(board)
        board.play(token)
        after = racer_view(board)
        out.append((view_wire(before), diff_wire(diff(before, after)), view_wire(after)))
    return out


def test_keep_counts_face_down_entries_of_a_pile() -> None:
    """`keep` counts a pile's leading entries, face-down ones (-1 to the racer) included."""
    turned = 0
    for old, change, new in steps():
        for pile, keep, down, cards in change["piles"]:
            if pile == WASTE:
                continue
            old_down, old_cards = old["tableau"][pile]
            assert new["tableau"][pile] == [down, old_cards[:keep] + cards]
            if down < old_down:  # a face-down card was turned: kept entries are backs
                turned += 1
                assert keep == down and old_cards[:keep] == [-1] * down
                assert cards[0] != -1
    assert turned >= 5


def test_waste_entry_has_face_down_zero() -> None:
    """The waste's entry (pile 7) keeps `keep` cards, appends the rest; face_down is 0."""
    seen = 0
    for old, change, new in steps():
        for pile, keep, down, cards in change["piles"]:
            if pile == WASTE:
                seen += 1
                assert down == 0
                assert new["waste"] == old["waste"][:keep] + cards
    assert seen > 10


def engine(data: dict[str, Any]) -> View:
    """A wire view decoded as the client decodes a `board` frame's."""
    return view_from_wire(WON.variant, data)


def test_applying_every_diff_gives_every_view() -> None:
    """apply_diff (docs/protocol.md, section 3) turns each view into the next: the
    decoded diff is the engine's, and the decoded views round-trip."""
    for old, change, new in steps():
        assert view_wire(engine(old)) == old
        assert diff_wire(diff_from_wire(change)) == change
        assert diff_from_wire(change) == diff(engine(old), engine(new))
        assert apply_diff(engine(old), change) == engine(new)


def frame(kind: str, epoch: int, off: int) -> dict[str, Any]:
    return {"t": kind, "room": "R" * 8, "seat": 0, "audience": "own", "epoch": epoch, "off": off}


def test_mirror_ignores_events_at_or_below_its_offset() -> None:
    """A diff whose (epoch, off) is at or below the last applied is ignored; a board
    snapshot always replaces the copy, whatever its offset."""
    (old, change, new), (_, change2, new2) = steps()[:2]
    first = {**frame("board", 1, 4), "view": old, "moves": 4, "status": "playing"}
    mirror = BoardMirror.from_board(first, WON.variant)
    assert (mirror.audience, mirror.epoch, mirror.offset, mirror.moves) == (Audience.OWN, 1, 4, 4)
    assert mirror.apply({**frame("diff", 1, 5), "d": change, "moves": 5, "status": "playing"})
    for stale in (
        {**frame("diff", 1, 5), "d": change, "moves": 5, "status": "playing"},
        {**frame("diff", 1, 3), "d": change2, "moves": 3, "status": "playing"},
    ):
        assert not mirror.apply(stale)
        assert (mirror.epoch, mirror.offset, mirror.view, mirror.moves) == (1, 5, engine(new), 5)
    assert mirror.apply({**frame("diff", 1, 6), "d": change2, "moves": 6, "status": "playing"})
    assert mirror.view == engine(new2)
    # A snapshot below (the store lost events in a failover): it is the truth now.
    assert mirror.apply({**frame("board", 1, 4), "view": old, "moves": 4, "status": "playing"})
    assert (mirror.offset, mirror.view, mirror.moves) == (4, engine(old), 4)


def test_mirror_refuses_a_gap_and_takes_a_new_epoch() -> None:
    """A diff past the next offset is a broken copy; a newer epoch's snapshot replaces."""
    (old, _, new), (_, change2, _) = steps()[:2]
    first = {**frame("board", 1, 4), "view": old, "moves": 4, "status": "playing"}
    mirror = BoardMirror.from_board(first, WON.variant)
    with pytest.raises(ValueError, match="does not follow"):
        mirror.apply({**frame("diff", 1, 6), "d": change2, "moves": 6, "status": "playing"})
    assert mirror.apply({**frame("board", 2, 0), "view": new, "moves": 0, "status": "playing"})
    assert (mirror.epoch, mirror.offset, mirror.view) == (2, 0, engine(new))
