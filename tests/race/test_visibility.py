"""The visibility rule, property-tested on the very functions the server runs: what
spectators may know never exceeds what every racer still playing knows."""

from __future__ import annotations

import msgpack
from hypothesis import given
from hypothesis import strategies as st

from klondike_live.bots.wire import apply_wire_diff, view_from_wire
from klondike_live.engine import ALL_CARDS, Board, Move, view_of
from klondike_live.engine.view import racer_view
from klondike_live.protocol.outgoing import view_wire
from klondike_live.race.live_board import BoardEvent, LiveBoard
from klondike_live.race.status import BoardOp, BoardStatus
from klondike_live.race.visibility import (
    NOTHING,
    SeatKnowledge,
    final_knowledge,
    spectator_knowledge,
)

masks = st.integers(0, ALL_CARDS)
statuses = st.sampled_from(BoardStatus)
seat_maps = st.dictionaries(
    st.integers(0, 7),
    st.builds(SeatKnowledge, st.none() | masks, statuses),
    max_size=8,
)


@given(seat_maps, st.integers(0, 7))
def test_race_spectators_know_only_what_every_racer_still_playing_knows(
    seats: dict[int, SeatKnowledge], seat: int
) -> None:
    """Under race rules the mask is inside every playing racer's knowledge, and nothing
    at all while a playing racer's knowledge is unknown or no seat is known."""
    known = spectator_knowledge(seats, seat, race_rules=True)
    playing = [k for k in seats.values() if k.status is BoardStatus.PLAYING]
    if not seats or any(k.seen is None for k in playing):
        assert known == NOTHING
        return
    for knowledge in playing:
        assert knowledge.seen is not None
        assert known & ~knowledge.seen == 0
    expected = ALL_CARDS
    for knowledge in playing:
        assert knowledge.seen is not None
        expected &= knowledge.seen
    assert known == expected  # and no narrower than the rule says


@given(seat_maps, st.integers(0, 7), masks)
def test_a_finished_racer_never_limits_spectators(
    seats: dict[int, SeatKnowledge], seat: int, seen: int
) -> None:
    """Adding a racer whose game is over changes nothing spectators may know."""
    other = max(seats, default=-1) + 1
    if other > 7:
        return
    before = spectator_knowledge(seats, seat, race_rules=True)
    for status in (BoardStatus.WON, BoardStatus.RESIGNED, BoardStatus.TIMEOUT):
        widened = {**seats, other: SeatKnowledge(seen, status)}
        if seats:
            assert spectator_knowledge(widened, seat, race_rules=True) == before


@given(seat_maps, st.integers(0, 7))
def test_practice_spectators_know_what_the_player_has_seen(
    seats: dict[int, SeatKnowledge], seat: int
) -> None:
    """Under practice rules spectators share the board's own player's knowledge."""
    known = spectator_knowledge(seats, seat, race_rules=False)
    mine = seats.get(seat)
    assert known == (NOTHING if mine is None or mine.seen is None else mine.seen)


@given(seat_maps, st.integers(0, 7), st.builds(SeatKnowledge, st.none() | masks, statuses))
def test_the_writer_s_own_knowledge_stands_for_its_seat(
    seats: dict[int, SeatKnowledge], seat: int, own: SeatKnowledge
) -> None:
    """`own` (the writer's copy of its racer) counts exactly as the seat's entry would,
    under both rules, whether the seats list that seat or not."""
    replaced = {**seats, seat: own}
    for race_rules in (True, False):
        assert spectator_knowledge(seats, seat, race_rules=race_rules, own=own) == (
            spectator_knowledge(replaced, seat, race_rules=race_rules)
        )


@given(masks)
def test_final_boards_reveal_everything_unless_the_deal_is_secret(seen: int) -> None:
    """After a game everything shows; while its deal is secret, what its player saw."""
    assert final_knowledge(seen, deal_secret=False) == ALL_CARDS
    assert final_knowledge(seen, deal_secret=True) == seen


@given(st.lists(st.integers(0, 10_000), max_size=40), st.lists(st.integers(0, 10_000), max_size=40))
def test_the_writers_spectator_frames_show_only_common_knowledge(
    mine: list[int], theirs: list[int]
) -> None:
    """Two racers on one deal: every spectator view seat 0's writer publishes shows only
    cards both racers have seen (the writer calls the rule above with the room's seats)."""
    rival = Board.from_seed("7")
    for choice in theirs:
        legal = list(rival.legal_moves())
        if not legal:
            break
        rival.push(legal[choice % len(legal)])
    writer = LiveBoard("room-0001", 0, 1, Board.from_seed("7"), race=True)
    seats = {1: SeatKnowledge(rival.seen, BoardStatus.PLAYING)}
    for choice in mine:
        legal = [m for m in writer.board.legal_moves() if isinstance(m, Move)]
        if not legal:
            break
        writer.apply_move(legal[choice % len(legal)], 1, seats)
        writer.confirm()
        shown = writer.spec_view.cards()
        assert all(rival.seen >> c & 1 and writer.board.seen >> c & 1 for c in shown)
        assert writer.spec_view == view_of(writer.board, writer.spec_mask)


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 10_000)), max_size=80))
def test_each_frame_of_a_race_turns_the_last_view_into_the_whole_view_built_again(
    turns: list[tuple[bool, int]],
) -> None:
    """Two racers' writers on one deal, moves interleaved, each told the other's
    knowledge, a refresh after each move: every frame's diff, applied as the client and
    the bots apply it (`bots.wire.apply_wire_diff`), turns the view of the previous frame
    into the view built again from the whole board, for the racer and for spectators,
    whether the writer patched the changed piles or rebuilt the view. Then one racer
    resigns and the other plays on."""
    writers = [LiveBoard("room-0001", seat, 1, Board.from_seed("7"), race=True) for seat in (0, 1)]
    seen_own = [view_from_wire(w.board.variant, view_wire(w.own_view)) for w in writers]
    seen_spec = [view_from_wire(w.board.variant, view_wire(w.spec_view)) for w in writers]

    def seats_for(seat: int) -> dict[int, SeatKnowledge]:
        other = writers[1 - seat]
        return {other.seat: SeatKnowledge(other.board.seen, other.status)}

    def check(seat: int, event: BoardEvent | None) -> None:
        if event is None:
            return
        writer = writers[seat]
        writer.confirm()
        if event.own_frame is not None:
            own = msgpack.unpackb(event.own_frame)["d"]
            seen_own[seat] = apply_wire_diff(seen_own[seat], own)
            assert seen_own[seat] == racer_view(writer.board)
        spec = msgpack.unpackb(event.spec_frame)["d"]
        seen_spec[seat] = apply_wire_diff(seen_spec[seat], spec)
        assert seen_spec[seat] == view_of(writer.board, writer.spec_mask)
        assert writer.spec_mask == writer.spectator_mask(seats_for(seat))

    for index, (second, choice) in enumerate(turns):
        seat = int(second)
        if index == len(turns) // 2 and writers[1].status is BoardStatus.PLAYING:
            check(1, writers[1].apply_ending(BoardOp.RESIGN, seats_for(1)))
            continue
        writer = writers[seat]
        legal = writer.board.legal_moves()
        if writer.status is not BoardStatus.PLAYING or not legal:
            continue
        check(seat, writer.apply_move(legal[choice % len(legal)], index + 1, seats_for(seat)))
        check(1 - seat, writers[1 - seat].apply_refresh(seats_for(1 - seat)))
