"""Finished games to the history database: the outbox's drainer, on every node.

    archive = Archive(store, history, metrics, now_ms)
    archive.finished(room_id, gen)     # this node just finished a game: drain it now
    await archive.drain()              # one pass over the due entries (any node's games)
    await archive.run()                # a pass a second until cancelled

A game enters the outbox before the compare-and-set that finishes it (`service.ending`,
`store.outbox`). Draining an entry: read the game's results (and analysis) from Valkey,
add them to the database (`History.keep_game`: one transaction, a game added twice is
added once; a player whose account was deleted meanwhile is erased from it, and from
the results Valkey caches), then give the game's kept keys their cache expiry and take
the entry out. An entry whose game has no results is either still being finished (its
room is still being played with that generation: tried again later) or never will be
(dropped).

So nothing is lost and nothing counts twice: a node killed before the database had the
game leaves its entry for any node; a node killed after leaves an entry whose game the
database has (done again, harmlessly); while the database is down the entries wait
(their results kept in Valkey, not expiring), each tried again when its lease ends. The
live path never waits for any of it. An outage is logged once when it starts and once
when it ends, with the outbox's length, not once per game.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Final

import msgpack

from klondike_live.history import History, HistoryError
from klondike_live.metrics import Metrics
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.room import COUNTDOWN, RACING
from klondike_live.store import Store, StoreError
from klondike_live.tasks import cancel_requested

log = logging.getLogger(__name__)

LEASE_MS: Final = 15_000
"""How long a claimed entry is one node's: after it (that node died, or the database
failed) any node may try it again."""

FIRST_TRY_MS: Final = 5_000
"""An entry falls due for other nodes this long after it was added: the node finishing
the game drains it at once, the others are the safety net."""

BATCH: Final = 50
"""Entries one pass claims at most."""

PASS_SECONDS: Final = 1.0
"""Seconds between two passes of `run`."""


class Archive:
    """One node's drainer of the outbox (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        history: History,
        metrics: Metrics,
        now_ms: Callable[[], int],
    ) -> None:
        self.store = store
        self.history = history
        self.metrics = metrics
        self.now_ms = now_ms
        self._failing_since: int | None = None  # when the database last stopped answering
        self._tasks: set[asyncio.Task[None]] = set()
        metrics.history_up.set(1)

    def finished(self, room_id: str, gen: int) -> None:
        """This node finished the game: drain it now, in the background."""
        task = asyncio.create_task(self._drain_now(room_id, gen), name=f"archive-{room_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain_now(self, room_id: str, gen: int) -> None:
        # A database failure is logged by `_drain_one`, a Redis one by the store's
        # metrics; either way the entry falls due for every node soon.
        with contextlib.suppress(HistoryError, StoreError, OSError):
            await self._drain_one(room_id, gen)

    async def close(self) -> None:
        """Wait for the games this node was draining (they are in the outbox anyway)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def run(self) -> None:
        """A pass every `PASS_SECONDS` until cancelled; a failed pass is logged."""
        while not cancel_requested():
            try:
                await self.drain()
            except (HistoryError, StoreError, OSError):
                pass  # said once by `_failed`; the next pass tries again
            except Exception:
                log.exception("draining the outbox failed")
            if cancel_requested():  # a driver may have swallowed the cancellation
                break
            await asyncio.sleep(PASS_SECONDS)

    async def drain(self) -> int:
        """Claim the due entries and drain each; how many games reached the database.
        Stops at the first database failure (the rest wait for their lease)."""
        now = self.now_ms()
        due = await self.store.outbox.claim(now, LEASE_MS, BATCH)
        drained = 0
        for room_id, gen in due:
            if await self._drain_one(room_id, gen):
                drained += 1
        self.metrics.outbox_games.set(await self.store.outbox.length())
        return drained

    async def _drain_one(self, room_id: str, gen: int) -> bool:
        """Drain one entry; True when its game is in the database now."""
        try:
            blob, analysis = await self.store.load_finished(room_id, gen)
            if blob is None:
                if await self.history.has_game(room_id, gen):
                    await self.store.outbox.done(room_id, gen, ())
                    return True
                if not await self._still_playing(room_id, gen):
                    log.warning("outbox: game %s gen %d has no results; dropped", room_id, gen)
                    await self.store.outbox.done(room_id, gen, ())
                return False
            kept = await self.history.keep_game(room_id, blob, analysis=analysis)
            if kept.added:
                self.metrics.history_games.inc()
            if kept.blob != blob:  # a player's account was deleted meanwhile
                await self.store.replace_results(room_id, gen, kept.blob)
            results = msgpack.unpackb(blob, raw=False)
            ranked_daily = results.get("kind") == RoomKind.DAILY and bool(
                (results.get("daily") or {}).get("ranked")
            )
            await self.store.outbox.done(
                room_id, gen, self.store.drained_expiries(room_id, gen, ranked_daily)
            )
        except HistoryError as exc:
            await self._failed(exc)
            raise
        self._recovered()
        return True

    async def _still_playing(self, room_id: str, gen: int) -> bool:
        loaded = await self.store.load_room(room_id)
        if loaded is None:
            return False
        state = loaded[0]
        return state.gen == gen and state.state in (COUNTDOWN, RACING)

    async def _failed(self, exc: HistoryError) -> None:
        self.metrics.history_errors.inc()
        self.metrics.history_up.set(0)
        if self._failing_since is not None:
            return
        self._failing_since = self.now_ms()
        try:
            waiting = await self.store.outbox.length()
        except (StoreError, OSError):
            waiting = -1
        log.error(
            "the history database failed (%s): finished games wait in the outbox "
            "(%d now) and are written when it answers again",
            exc,
            waiting,
        )

    def _recovered(self) -> None:
        if self._failing_since is None:
            return
        seconds = (self.now_ms() - self._failing_since) / 1000
        self._failing_since = None
        self.metrics.history_up.set(1)
        log.warning("the history database answers again after %.0f s", seconds)
