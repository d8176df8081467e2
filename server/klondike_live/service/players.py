"""Players' games outside the room: counting finished games, indexing unfinished ones.

    await record_game(store.players, state, results)                # at a game's end
    await record_game(store.players, state, results, vs_machine=True, bots={"b_1"})
    await note_unfinished(store.players, user, room_id, now_ms)        # created / paused

`record_game` is how any finished game reaches its players' statistics: what it counts
for is `race.stats.outcomes` (a race with bot racers is counted apart as "vs machine"
when its caller says so; bots, named by `bots`, are never counted as players), and the
store counts each game once per player. It also takes the game off its players'
unfinished games.

This module must never fail a game's end: a store error here is logged, not raised.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from klondike_live.auth import USER_ID
from klondike_live.race.room import RoomState
from klondike_live.race.rules import clock_waits
from klondike_live.race.stats import outcomes
from klondike_live.store import StoreError
from klondike_live.store.players import PlayerStore

log = logging.getLogger(__name__)


async def record_game(
    players: PlayerStore,
    state: RoomState,
    results: Mapping[str, Any],
    *,
    vs_machine: bool = False,
    bots: Collection[str] = (),
) -> None:
    """Count a finished game (`state`: the finished room) for each human player."""
    game_id = f"{state.id}:{state.gen}"
    try:
        for outcome in outcomes(state, results, vs_machine=vs_machine, bots=bots):
            if USER_ID.fullmatch(outcome.user):  # it is spelled into key names
                await players.record_game(outcome, game_id, state.ended_ms)
        if clock_waits(state):
            for _, seat in state.seated():
                if USER_ID.fullmatch(seat.user):
                    await players.remove_unfinished(seat.user, state.id)
    except (StoreError, OSError) as exc:
        log.warning("statistics of %s not recorded: %s", game_id, exc)


async def note_unfinished(players: PlayerStore, user: str, room_id: str, at_ms: int) -> None:
    """A practice game (`race.rules.clock_waits`) its player may come back to: listed
    (again) as of `at_ms`, its creation or when its clock stopped."""
    if not USER_ID.fullmatch(user):
        return
    try:
        await players.add_unfinished(user, room_id, at_ms)
    except (StoreError, OSError) as exc:
        log.warning("unfinished game %s not indexed: %s", room_id, exc)
