"""Reactions: each connection's rate limit, and their counts per room and second on
every node.

    reactions = Reactions(store, hub, metrics)
    if reactions.take(conn.conn_id):            # False past its rate limit
        await reactions.count(room_id, reaction)  # one reaction of a local sender
    reactions.heard(room_id, counts)            # a node's counts, from the bus (own too)
    reactions.forget(conn.conn_id)              # its connection closed

Who may react is the service's to check (`LiveService.react`); this module only counts.
Each node adds up its own connections' reactions per room and id and publishes them as
one `ReactionCounts` on the room's channel, at most once per `WINDOW` per room. Every
node with viewers of the room adds up what it hears (from every node, itself included)
and sends its viewers that have reactions on one `reactions` frame, at most once per
`WINDOW` per room. So a crowd of thousands reacting costs each node at most one bus
message out and one frame per viewer a second, whatever its size.

The first counts of a quiet room go at once (published as they come, shown as they are
heard); what comes within `WINDOW` of the last waits for the window's end, when a
background task (running only while something waits) sends it. Times are the node's own
monotonic clock: windows are per node, no clock is shared.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Final

from klondike_live.bus.messages import ReactionCounts
from klondike_live.metrics import Metrics
from klondike_live.protocol import outgoing
from klondike_live.protocol.kinds import Reaction
from klondike_live.service.hub import Hub
from klondike_live.store import Store, StoreError
from klondike_live.tasks import cancel_requested

log = logging.getLogger(__name__)

WINDOW: Final = 1.0
"""Seconds between two publications of one room's counts by one node, and between two
`reactions` frames of one room to one node's viewers."""

RATE: Final = 3.0
"""Reactions a connection may send a second, on average ..."""

BURST: Final = 5
"""... and at once, after a quiet while (a token bucket)."""

TICK: Final = 0.1
"""Seconds between the background task's looks at what waits for its window."""


class Reactions:
    """One node's reaction counting, publishing and delivery (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        hub: Hub,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.hub = hub
        self.metrics = metrics
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # conn id -> (tokens, stamp)
        self._outbox: dict[str, Counter[Reaction]] = {}  # room -> counts to publish
        self._inbox: dict[str, Counter[Reaction]] = {}  # room -> counts to show
        self._published_at: dict[str, float] = {}
        self._shown_at: dict[str, float] = {}
        self._running = False
        self._publishing = 0

    # ------------------------------------------------------------ senders

    def take(self, conn_id: str) -> bool:
        """Whether the connection's rate limit lets one more reaction through (and
        count it)."""
        now = self.clock()
        tokens, stamp = self._buckets.get(conn_id, (float(BURST), now))
        tokens = min(float(BURST), tokens + (now - stamp) * RATE)
        if tokens < 1:
            self._buckets[conn_id] = (tokens, now)
            return False
        self._buckets[conn_id] = (tokens - 1, now)
        return True

    def forget(self, conn_id: str) -> None:
        self._buckets.pop(conn_id, None)

    async def count(self, room_id: str, reaction: Reaction) -> None:
        """One reaction of a connection of this node: published now if the room's window
        allows, else with the next publication."""
        self.metrics.reactions.inc()
        self._outbox.setdefault(room_id, Counter())[reaction] += 1
        if self._due(self._published_at, room_id, self.clock()):
            await self._publish(room_id)
        self._wake()

    # ------------------------------------------------------------ viewers

    def heard(self, room_id: str, counts: dict[Reaction, int]) -> None:
        """A node's counts of the room, from the bus: shown now if the room's window
        allows, else added to the next frame."""
        waiting = self._inbox.setdefault(room_id, Counter())
        waiting.update(counts)
        if self._due(self._shown_at, room_id, self.clock()):
            self._show(room_id)
        self._wake()

    def busy(self) -> bool:
        """Whether counts wait whose window ended (the background task sends them within
        a tick), or a publication is on its way to the bus."""
        now = self.clock()
        return self._publishing > 0 or any(
            self._due(last, room_id, now)
            for last, waiting in ((self._published_at, self._outbox), (self._shown_at, self._inbox))
            for room_id in waiting
        )

    # ------------------------------------------------------------ windows

    @staticmethod
    def _due(last: dict[str, float], room_id: str, now: float) -> bool:
        return now - last.get(room_id, -math.inf) >= WINDOW

    async def _publish(self, room_id: str) -> None:
        counts = self._outbox.pop(room_id, None)
        if not counts:
            return
        self._published_at[room_id] = self.clock()
        self.metrics.reaction_counts.inc()
        self._publishing += 1
        try:
            await self.store.publish_reactions(room_id, ReactionCounts(dict(counts)))
        except StoreError as exc:  # a few reactions lost: nothing to retry for
            log.warning("room %s: reactions not published: %s", room_id, exc)
        finally:
            self._publishing -= 1

    def _show(self, room_id: str) -> None:
        counts = self._inbox.pop(room_id, None)
        local = self.hub.rooms.get(room_id)
        if not counts or local is None:
            return
        self._shown_at[room_id] = self.clock()
        viewers = [viewer for viewer in local.viewers if viewer.reactions]
        if viewers:
            wire = {str(reaction): n for reaction, n in sorted(counts.items())}
            frame = outgoing.Reactions(local.room_id, wire).encode()
            self.hub.deliver(viewers, frame, None)

    def _wake(self) -> None:
        """Start the background task unless it runs: a window is open."""
        if not self._running:
            self._running = True
            self.hub.spawn(self._run(), "reactions")

    async def _run(self) -> None:
        """Publish and show what waited for its window, and forget the windows that
        ended; ends once no window is open and nothing waits."""
        try:
            while self._outbox or self._inbox or self._published_at or self._shown_at:
                if cancel_requested():
                    return
                await asyncio.sleep(TICK)
                now = self.clock()
                for room_id in [r for r in self._inbox if self._due(self._shown_at, r, now)]:
                    self._show(room_id)
                for room_id in [r for r in self._outbox if self._due(self._published_at, r, now)]:
                    await self._publish(room_id)
                self._forget_windows(self.clock())
        finally:
            self._running = False

    def _forget_windows(self, now: float) -> None:
        """Drop the windows that ended with nothing waiting: a room's next counts go at
        once."""
        for last, waiting in ((self._published_at, self._outbox), (self._shown_at, self._inbox)):
            ended = [r for r, at in last.items() if now - at >= WINDOW and r not in waiting]
            for room_id in ended:
                del last[room_id]
