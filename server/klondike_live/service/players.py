"""Players' games outside the room: the index of their unfinished practice games.

    await note_unfinished(store.players, user, room_id, now_ms)   # created / paused
    await forget_unfinished(store.players, state)                  # at a game's end

What a finished game counts for is the history database's (`service.archive` drains
each game there, `race.stats` says what it counts for).

This module must never fail a game's end: a store error here is logged, not raised.
"""

from __future__ import annotations

import logging

from klondike_live.auth import USER_ID
from klondike_live.race.room import RoomState
from klondike_live.race.rules import clock_waits
from klondike_live.store import StoreError
from klondike_live.store.players import PlayerStore

log = logging.getLogger(__name__)


async def forget_unfinished(players: PlayerStore, state: RoomState) -> None:
    """A finished practice game (`state`: the finished room) leaves its players' lists."""
    if not clock_waits(state):
        return
    try:
        for _, seat in state.seated():
            if USER_ID.fullmatch(seat.user):  # it is spelled into key names
                await players.remove_unfinished(seat.user, state.id)
    except (StoreError, OSError) as exc:
        log.warning("unfinished game %s not unlisted: %s", state.id, exc)


async def note_unfinished(players: PlayerStore, user: str, room_id: str, at_ms: int) -> None:
    """A practice game (`race.rules.clock_waits`) its player may come back to: listed
    (again) as of `at_ms`, its creation or when its clock stopped."""
    if not USER_ID.fullmatch(user):
        return
    try:
        await players.add_unfinished(user, room_id, at_ms)
    except (StoreError, OSError) as exc:
        log.warning("unfinished game %s not indexed: %s", room_id, exc)
