"""The end of a game: once every racer is done or time is up, finish it with its results.

    await board_ended(rooms, room_id, gen)   # a board of race `gen` just ended
    await check_end(rooms, room_id)          # is the race over? (any time, any node)

A board's end is looked at twice: at once, by the node that wrote it, and again
`RECHECK_MS` later from the timer set (`TimerKind.END`), by whichever node takes it. A
first look that failed (the store refused a write, the node died) cannot leave a race
whose boards are all done running until its time limit, or forever if it has none.

Any node may call it, as often as it likes: it finishes the current race only if it is
over, in one compare-and-set that also stores the results (ranking, seed, boards,
records, move times; built once, here; a match's deal is scored in that same step,
`race.match`, and its next deal timed), publishes the room and results frames and sets
the expiry of the race's keys (`Store.finished_expiries`: its volatile keys soon, its
results kept until the history database has the game). The game is put in the outbox
first (`store.outbox`): a node that dies right after the compare-and-set leaves it
there for any node to drain (`service.archive`). A ranked daily attempt's leaderboard
entry is recorded first too, so that by the time its player sees the end, the
leaderboard and the spoiler gate know it.

This module must never finish a race that is still being played, and never sends the
results of an open day's daily game unredacted (`Rooms.shown`).
"""

from __future__ import annotations

import logging
from typing import Any

import msgpack

from klondike_live import keys
from klondike_live.bus.messages import RoomFrame
from klondike_live.errors import Refusal
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.race.match import winner_of
from klondike_live.race.results import build_results
from klondike_live.race.room import COUNTDOWN, RACING, RoomState
from klondike_live.race.rules import race_over
from klondike_live.race.status import BoardStatus
from klondike_live.service.archive import FIRST_TRY_MS
from klondike_live.service.players import forget_unfinished
from klondike_live.service.rooms import Hashes, Rooms
from klondike_live.store import TimerKind

log = logging.getLogger(__name__)

RECHECK_MS = 2000
"""How long after a board's end its race's end is looked at again (`board_ended`)."""


async def board_ended(rooms: Rooms, room_id: str, gen: int) -> None:
    """A board of race `gen` ended: the second look is in the timer set before the
    first one runs."""
    await rooms.store.add_timer(room_id, TimerKind.END, str(gen), rooms.now_ms() + RECHECK_MS)
    await check_end(rooms, room_id)


async def check_end(rooms: Rooms, room_id: str) -> None:
    """Finish the race when every racer is done or time is up; publish the results."""
    store = rooms.store
    state = await rooms.load(room_id)
    if state.state not in (COUNTDOWN, RACING):
        return
    seats = [seat for seat, _ in state.seated()]
    statuses = [BoardStatus(s) for s in await store.board_statuses(room_id, state.gen, seats)]
    now = await store.now_ms()
    if not race_over(statuses, state.deadline_ms(), now):
        return  # the usual answer: a board finished, others play on
    records = await store.load_boards(room_id, state.gen, seats, with_times=True)
    await store.outbox.add(room_id, state.gen, now + FIRST_TRY_MS)
    # A ranked daily attempt's entry first: once the player sees its end, the
    # leaderboard (and the spoiler gate) already know it.
    await rooms.daily.record_result(state, records.get(0))

    boards = {s: (r.fields, r.moves, r.times) for s, r in records.items()}
    # A match's deal goes to its race's first (`race.match`): scored in the same step.
    winner = winner_of(build_results(state, boards)["ranking"]) if state.is_match else 0

    def change(s: RoomState, now_ms: int) -> RoomState:
        if s.gen != state.gen:
            raise Refusal(ErrorCode.WRONG_STATE, "a newer race")
        return s.finish(now_ms).state.score_deal(winner, now_ms + rooms.match_interval_ms)

    built: list[dict[str, Any]] = []

    def extras(_old: RoomState, new: RoomState) -> tuple[list[RoomFrame], Hashes]:
        payload = build_results(new, boards)
        built[:] = [payload]  # the last attempt is the one written
        blob = msgpack.packb(payload, use_bin_type=True)
        frames = [
            RoomFrame(rooms.room_frame(new), new.gen, new.state, new.start_at_ms),
            RoomFrame(
                outgoing.Results(room_id, rooms.shown(new, payload)).encode(),
                new.gen,
                new.state,
                new.start_at_ms,
            ),
        ]
        return frames, [(keys.results(room_id, new.gen), {"data": blob})]

    try:
        _, new = await store.update_room(
            room_id, change, extras, lambda _old, new: store.finished_expiries(new)
        )
    except Refusal:
        return
    if new.public_room:
        await store.set_live(room_id, False)
    await forget_unfinished(store.players, new)
    log.info("race %s gen %d finished", room_id, new.gen)
    if new.next_at_ms:  # a match goes on: its next deal (`Timers`)
        await store.add_timer(room_id, TimerKind.NEXT_DEAL, str(new.gen), new.next_at_ms)
    if rooms.on_finished is not None:  # to the database, its analysis: in the background
        rooms.on_finished(room_id, new.gen)
