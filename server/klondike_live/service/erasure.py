"""A deleted account erased from what Valkey shows and archives, at once.

    erasure = LiveErasure(store, daily, rooms)
    claimed = await erasure.claimed(user)     # before its connections close
    await erasure.erase(user, games, claimed)  # after `PlayerRecords.erase`

`history.players.PlayerRecords.erase` erases the account from the history database and
records it there (its marker, in `erased_players`), so that whatever reaches the database
later from Valkey is erased as it is written (`history.erasure`). What Valkey shows
meanwhile is rewritten here, in the same way (its user id `deleted_id(user)`, its name
`DELETED_NAME`), so that a deleted player disappears from it at once:

- the cached results of the games the database had (`games`, as `erase` returned them)
  and of the finished games still in the outbox;
- its entries on the daily leaderboards Valkey holds (today's and the closed days not
  yet kept or still cached), each put in place under the marker with its rank, and a
  `daily_update` sent to their watchers;
- every tournament Valkey holds that it entered, organized or played in (each written by
  its compare-and-set, so its watchers get it again), over or not;
- its seat in every room Valkey still holds that it sat in (the rooms of those games,
  of its daily attempts, of its unfinished games, and every room where it holds a
  connection claim: races being played or finished within `race_ms`), shown with no
  name (`RoomState.rename`, its viewers told) under its user id until the room expires
  (the client shows "deleted player" and links it nowhere); a race being played goes
  on, and its results are erased when the outbox drains them (`service.archive`);
- its unfinished games' index and its presence (its connections closed with its
  sessions).

Every write here may be done again (`erase` twice changes nothing more).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Sequence
from datetime import date
from typing import Any, Final

import msgpack

from klondike_live import keys
from klondike_live.bus.messages import DailyUpdate
from klondike_live.daily.variants import slug_variant
from klondike_live.errors import Refusal
from klondike_live.history.erasure import (
    DELETED_NAME,
    deleted_id,
    erased_blob,
    erased_tournament,
)
from klondike_live.protocol.codes import ErrorCode
from klondike_live.race.tournament import TournamentState
from klondike_live.service.daily import DailyService
from klondike_live.service.rooms import Rooms
from klondike_live.store import Conflict, Store
from klondike_live.store.friends import FriendStore
from klondike_live.store.scan import scan_keys
from klondike_live.store.tournaments import TournamentStore

__all__ = ["LiveErasure"]

log = logging.getLogger(__name__)

DAYS: Final = 60
"""Daily challenges (days and variants) looked at, newest first: more than Valkey holds
(today, the days ahead, the closed days until kept and their cache)."""


_GLOB_ROOM: Final = "*"
_CLAIM_KEY: Final = re.compile(
    rf"^{re.escape(keys.PREFIX)}:\{{r:({keys.ROOM_ID.pattern[1:-1]})\}}:conn:(.+)$"
)


def _glob_escaped(text: str) -> str:
    """`text` matched literally by a SCAN pattern."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _plays(blob: bytes, user: str) -> bool:
    """Whether stored results name `user` among their players."""
    try:
        results: dict[str, Any] = msgpack.unpackb(blob, raw=False)
        return any(row.get("user") == user for row in results.get("ranking", ()))
    except (ValueError, TypeError, AttributeError, msgpack.UnpackException):
        return False


class LiveErasure:
    """Erasing a deleted account from Valkey (see the module docstring)."""

    def __init__(self, store: Store, daily: DailyService, rooms: Rooms) -> None:
        self.store = store
        self.daily = daily
        self.rooms = rooms
        self.tournaments = TournamentStore(store.redis, store.retention, store.latency)
        self.friends = FriendStore(store.redis, store.latency)

    async def erase(
        self,
        user: str,
        games: Sequence[tuple[str, int, bytes]],
        claimed: Collection[str] = (),
    ) -> None:
        """Erase `user` from Valkey; `games` are the erased results of the games the
        database keeps (`PlayerRecords.erase`), `claimed` the rooms it held a claim in
        before its connections closed (`claimed`)."""
        rooms = {room_id for room_id, _, _ in games} | set(claimed)
        for room_id, gen, data in games:
            await self.store.replace_results(room_id, gen, data)
        rooms |= await self._outbox(user)
        rooms |= await self._daily(user)
        await self._tournaments(user)
        rooms |= set(await self.store.players.unfinished(user, self.rooms.now_ms()))
        rooms |= await self.claimed(user)
        for room_id in sorted(rooms):
            await self._unnamed(room_id, user)
        await self.store.players.forget(user)
        await self.friends.clear_presence(user)

    async def _outbox(self, user: str) -> set[str]:
        """Erase the player from the results of the finished games waiting in the
        outbox; their rooms."""
        rooms = set()
        for room_id, gen in await self.store.outbox.entries():
            blob, _ = await self.store.load_finished(room_id, gen)
            if blob is not None and _plays(blob, user):
                await self.store.replace_results(room_id, gen, erased_blob(blob, user))
                rooms.add(room_id)
        return rooms

    async def _daily(self, user: str) -> set[str]:
        """Put the player's daily entries (and attempts) under its marker; the rooms of
        its attempts."""
        marker = deleted_id(user)
        rooms = set()
        through = date.fromordinal(self.daily.today().toordinal() + 1)
        for day_text, slug in await self.daily.daily_store.indexed_days(through, DAYS):
            try:
                day, variant = date.fromisoformat(day_text), slug_variant(slug)
            except ValueError:
                continue  # not a challenge this release knows
            attempt = await self.daily.daily_store.attempt_room(day, variant, user)
            if attempt is not None:
                rooms.add(attempt)
            board = self.daily.leaderboard(day, variant)
            if await board.erase(user, marker, DELETED_NAME):
                update = DailyUpdate(day.isoformat(), str(variant), await board.count())
                await self.daily.daily_store.publish_update(update)
        return rooms

    async def _tournaments(self, user: str) -> None:
        def change(state: TournamentState) -> TournamentState:
            return erased_tournament(state, user)

        async for ids in self.tournaments.ids():
            for tournament_id in ids:
                try:
                    await self.tournaments.update(tournament_id, change, keep_expiry=True)
                except LookupError:
                    continue  # expired since the scan
                except Conflict:
                    # Its archive is erased all the same (`History.add_tournament`).
                    log.warning("tournament %s too busy to erase a deleted account", tournament_id)

    async def claimed(self, user: str) -> set[str]:
        """The rooms where the player holds a seat's connection claim (`keys.connection`:
        every room it sat in that is being played, or finished within `race_ms`, while
        its connection is open: asked before they close, and again after)."""
        pattern = keys.connection(_GLOB_ROOM, _glob_escaped(user))
        rooms = set()
        async for names in scan_keys(self.store.redis, self.store.latency, pattern, 500):
            for name in names:
                found = _CLAIM_KEY.match(name)
                if found is not None and found.group(2) == user:
                    rooms.add(found.group(1))
        return rooms

    async def _unnamed(self, room_id: str, user: str) -> None:
        """The player's seat in the room shown with no name (`RoomState.rename`), its
        viewers told; a room gone or too busy is left (it expires)."""
        try:
            await self.rooms.transition(room_id, lambda s, _now: s.rename(user, DELETED_NAME))
        except Refusal as exc:
            if exc.code is not ErrorCode.NO_ROOM:
                log.warning("room %s: the seat of a deleted account not renamed: %s", room_id, exc)
