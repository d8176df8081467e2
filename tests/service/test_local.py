"""A viewer's held frames and catch-up entries, and the node's record of what it
delivered (`service.local`), without a service."""

from __future__ import annotations

from klondike_live.protocol.kinds import Audience, BoardPosition, Role
from klondike_live.service.local import Held, LocalRoom, Viewer

from service_fixtures import MemoryConnection

SPECTATOR_0 = (Audience.SPECTATOR, 0)


def spectator(room: LocalRoom) -> Viewer:
    viewer = Viewer(MemoryConnection("sue", "Sue", 0), room.room_id, Role.SPECTATOR, None)
    room.add(viewer)
    return viewer


def test_held_frames_get_a_list_at_the_first_and_are_taken_in_order() -> None:
    room = LocalRoom("r1", gen=1)
    viewer = spectator(room)
    assert viewer._held is None
    assert viewer.take_held() == []
    first = Held(b"a", BoardPosition(Audience.SPECTATOR, 0, 1, 1))
    second = Held(b"b", BoardPosition(Audience.SPECTATOR, 0, 1, 2))
    viewer.held.append(first)
    viewer.held.append(second)
    assert viewer.take_held() == [first, second]
    assert viewer._held is None
    viewer.held.append(first)
    room.reset(2)  # a new race: what was held of the old one is dropped
    assert viewer._held is None
    assert not viewer.boards_ready


def test_a_stream_is_passed_once_the_node_delivered_it_that_far_in_this_race() -> None:
    room = LocalRoom("r1", gen=3)
    assert room.passed(SPECTATOR_0, (3, 0))
    assert not room.passed(SPECTATOR_0, (3, 1))
    assert room.fresh(BoardPosition(Audience.SPECTATOR, 0, 3, 1))
    assert room.fresh(BoardPosition(Audience.SPECTATOR, 0, 3, 2))
    assert room.passed(SPECTATOR_0, (3, 2))
    assert not room.passed(SPECTATOR_0, (3, 3))
    assert not room.passed((Audience.OWN, 0), (3, 1))
    assert not room.passed(SPECTATOR_0, (2, 0))  # another race
    # Everything such an entry would hold back is dropped by the node already.
    assert not room.fresh(BoardPosition(Audience.SPECTATOR, 0, 3, 2))
    assert not room.fresh(BoardPosition(Audience.SPECTATOR, 0, 2, 9))


def test_a_catch_up_entry_holds_back_repeats_and_ends_at_the_first_newer_frame() -> None:
    room = LocalRoom("r1", gen=1)
    viewer = spectator(room)
    viewer.covered[SPECTATOR_0] = (1, 5)
    assert viewer.already_has(BoardPosition(Audience.SPECTATOR, 0, 1, 4))
    assert not viewer.already_has(BoardPosition(Audience.SPECTATOR, 1, 1, 4))
    assert viewer.covered == {SPECTATOR_0: (1, 5)}
    assert not viewer.already_has(BoardPosition(Audience.SPECTATOR, 0, 1, 6))
    assert viewer.covered == {}
    assert not viewer.already_has(BoardPosition(Audience.SPECTATOR, 0, 1, 3))


def test_a_live_viewer_holds_a_stream_as_far_as_its_catch_up_or_the_node_went() -> None:
    """What a viewer holds of a board (what a resent move's answer starts after) is the
    later of its catch-up entry and what the node delivered in this race."""
    room = LocalRoom("r1", gen=2)
    viewer = spectator(room)
    assert room.holds(viewer, SPECTATOR_0) == (2, 0)  # the start snapshot
    assert room.fresh(BoardPosition(Audience.SPECTATOR, 0, 2, 3))
    assert room.holds(viewer, SPECTATOR_0) == (2, 3)
    viewer.covered[SPECTATOR_0] = (2, 5)  # a catch-up sent it further
    assert room.holds(viewer, SPECTATOR_0) == (2, 5)
    assert room.holds(viewer, (Audience.SPECTATOR, 1)) == (2, 0)
    assert room.fresh(BoardPosition(Audience.SPECTATOR, 0, 2, 6))
    assert room.holds(viewer, SPECTATOR_0) == (2, 6)
