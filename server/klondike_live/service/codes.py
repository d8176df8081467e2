"""Room codes: each race gets one as it is created; a code leads back to its room.

    codes = RoomCodes(store)
    code = await codes.allocate(room_id)     # before the room's first write
    room_id = await codes.resolve("ACDEFG")  # an open race's id, or None

Which rooms get a code: races created by a player or a bot (`create` of kind `race`),
race-the-machine rooms aside (a person and the machine: nobody to invite). A solo game, a
daily attempt and a tournament's heat have none: nobody joins them by typing.

A code is unique among live rooms: it is claimed with a create-if-absent on its key,
and a taken one is drawn again (`ATTEMPTS` times in all). The key expires with its room
(`Store.write_room` copies the room's expiry onto it). It lives in a Cluster slot of its
own, so it is not written in the room's script: a lookup checks that the room exists,
still carries the code and is open (in its lobby, or racing: a finished race's code
resolves again if a rematch reopens it), so a stale key never leads anyone to a wrong
room; a key whose room is gone is deleted on the way.
"""

from __future__ import annotations

from collections.abc import Callable

from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.race import codes
from klondike_live.race.room import FINISHED
from klondike_live.store import Store

ATTEMPTS = 10
"""Codes drawn for one room before giving up (with 64 million codes, a second draw is
already rare)."""


class RoomCodes:
    """Allocation and lookup of room codes in the store."""

    def __init__(self, store: Store, new_code: Callable[[], str] = codes.new_code) -> None:
        self.store = store
        self.new_code = new_code

    async def allocate(self, room_id: str) -> str:
        """A code claimed for `room_id`; `Refusal` (`busy`) when every draw was taken."""
        for _ in range(ATTEMPTS):
            code = self.new_code()
            if await self.store.claim_code(code, room_id):
                return code
        raise Refusal(ErrorCode.BUSY, "could not find a free room code; try again")

    async def release(self, code: str, room_id: str) -> None:
        """Free a code whose room was not written after all."""
        await self.store.drop_code(code, room_id)

    async def resolve(self, code: str) -> str | None:
        """The id of the open race that carries `code` (canonical form), or None."""
        room_id = await self.store.code_room(code)
        if room_id is None:
            return None
        loaded = await self.store.load_room(room_id)
        if loaded is None:
            await self.store.drop_code(code, room_id)
            return None
        state, _ = loaded
        if state.code != code or state.state == FINISHED:
            return None
        return room_id
