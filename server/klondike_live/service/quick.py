"""Quick races: a public queue per variant, and the races made from it.

    quick = QuickRaces(settings, store, rooms, codes)
    await quick.queue(conn, request)      # `queued`; `matched` once a race is made
    await quick.unqueue(conn, request)    # `unqueued`
    await quick.forget(conn)              # its connection closed: out of the queue
    await quick.tick()                    # make due races, renew and check entries
    await quick.run()                     # `tick` every `quick_tick_seconds`

The queues live in the store (`store.queue`), shared by every node. An entry belongs
to one connection on one node, which keeps it alive: every tick the node renews the
leases of its connections' entries and learns what became of each:

- still waiting: the connection hears the count of players waiting when it changes,
  and, once alone for `quick_alone_seconds`, the offer of the machine (`offer`);
- placed in a race by a match (on any node): once the race's room exists, the
  connection gets `matched`; a room that never appears (the matching node died before
  writing it) puts the entry back at its place after `PLACE_WAIT_MS`;
- gone (the store lost its data, or this node could not renew it in time): put back
  at its original place;
- held by another connection of the account: the connection gets `unqueued`
  (`replaced`).

An entry whose node died expires after `quick_lease_seconds` (the next match drops
it). Every node also runs the matches, for every variant, each tick: a match is one
script, so two nodes never take the same player.

A race made from the queue is a normal race room (a room code, public, no bots) with
the group seated and ready but away until each joins; it starts at once with the
countdown, and each racer has the grace period from the start to come (as a heat's
entrants), then counts as resigned.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

from klondike_live.config import Settings
from klondike_live.daily.variants import variant_slug
from klondike_live.engine import Variant
from klondike_live.errors import Refusal
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import DealMode, RoomKind
from klondike_live.race.quick import MIN_RACERS, QUICK_SEATS, QUICK_TIME_LIMIT, quick_seats
from klondike_live.race.room import LOBBY, RoomState, Seat
from klondike_live.service.codes import RoomCodes
from klondike_live.service.connection import Connection
from klondike_live.service.rooms import Rooms
from klondike_live.service.ticking import tick_forever
from klondike_live.store import Store, StoreError, TimerKind
from klondike_live.store.queue import GONE, QUEUED, REPLACED, Entry, EntryState, Placed

log = logging.getLogger(__name__)

PLACE_WAIT_MS = 10_000
"""How long a player placed by a match waits for its race's room before its entry is
put back in the queue (the matching node died between the match and the room)."""

PLACED_KEEP_MS = 3_600_000
"""How long the queue remembers placed players its nodes have not told (a node that
died with them)."""

MATCHES_PER_TICK = 100
"""Races one node makes of one queue per tick at most (a queue of 200 players needs 50
at 4 seats; the rest wait for the next tick)."""


@dataclass(slots=True)
class Waiting:
    """One of this node's connections waiting in a queue, and what it was last told."""

    conn: Connection
    variant: Variant
    place_ms: int
    waiting: int = 0
    offer: bool = False

    @property
    def slug(self) -> str:
        return variant_slug(self.variant)


class QuickRaces:
    """This node's part of the quick race queues (see the module docstring)."""

    def __init__(self, settings: Settings, store: Store, rooms: Rooms, codes: RoomCodes) -> None:
        self.settings = settings
        self.store = store
        self.rooms = rooms
        self.codes = codes
        self.waiting: dict[str, Waiting] = {}  # by connection id

    # ------------------------------------------------------------ settings in ms

    def _lease_until(self, now_ms: int) -> int:
        return now_ms + int(self.settings.quick_lease_seconds * 1000)

    @property
    def _fill_ms(self) -> int:
        return int(self.settings.quick_fill_seconds * 1000)

    # ------------------------------------------------------------ requests

    async def queue(self, conn: Connection, request: msg.Queue) -> None:
        """Wait in the queue of `request.variant` (asked again: told again)."""
        if quick_seats(request.variant) is None:
            shown = ", ".join(f"'{v}'" for v in QUICK_SEATS)
            raise Refusal(ErrorCode.BAD_FIELD, f"queue: 'variant' must be one of {shown}")
        current = self.waiting.get(conn.conn_id)
        if current is not None and current.variant != request.variant:
            raise Refusal(ErrorCode.WRONG_STATE, "you wait in another queue; leave it first")
        now = self.rooms.now_ms()
        waiting = current or Waiting(conn, request.variant, now)
        entry = Entry(conn.user, conn.conn_id, self.settings.node_id, conn.name, waiting.place_ms)
        place, count = await self.store.queue.join(
            waiting.slug, entry, self._lease_until(now), now, self._fill_ms
        )
        waiting.place_ms = place
        self.waiting[conn.conn_id] = waiting
        await self._tell(waiting, count, now, rid=request.rid, always=True)

    async def unqueue(self, conn: Connection, request: msg.Unqueue) -> None:
        """Stop waiting: `unqueued`, or `not_queued` (after `matched`, when a race was
        made for the player meanwhile)."""
        waiting = self.waiting.get(conn.conn_id)
        if waiting is None:
            raise Refusal(ErrorCode.NOT_QUEUED, "you are not waiting for a quick race")
        left = await self.store.queue.leave(waiting.slug, conn.user, conn.conn_id)
        if not left:
            _, (state,) = await self.store.queue.renew(
                waiting.slug, [(conn.user, conn.conn_id)], self._lease_until(self.rooms.now_ms())
            )
            if isinstance(state, Placed) and await self._placed(waiting, state):
                raise Refusal(ErrorCode.NOT_QUEUED, "a race was made for you: join it")
        self.waiting.pop(conn.conn_id, None)
        await conn.send(outgoing.Unqueued(str(waiting.variant), "left", request.rid).encode())

    async def forget(self, conn: Connection) -> None:
        """A connection closed: its entry leaves the queue (or expires with its lease
        if the store does not answer now)."""
        waiting = self.waiting.pop(conn.conn_id, None)
        if waiting is None:
            return
        try:
            await self.store.queue.leave(waiting.slug, conn.user, conn.conn_id)
        except StoreError as exc:
            log.warning("quick race entry of %s left to expire: %s", conn.conn_id, exc)

    # ------------------------------------------------------------ the tick

    async def run(self) -> None:
        """Tick until cancelled."""
        await tick_forever(self.settings.quick_tick_seconds, self.tick, "quick race tick")

    async def tick(self) -> None:
        """Make the races that are due in every queue, then renew this node's entries
        and act on what became of them."""
        for variant, seats in QUICK_SEATS.items():
            for _ in range(MATCHES_PER_TICK):
                if not await self.match(variant, seats):
                    break
        mine: dict[str, list[Waiting]] = {}
        for waiting in self.waiting.values():
            mine.setdefault(waiting.slug, []).append(waiting)
        for slug, group in mine.items():
            now = self.rooms.now_ms()
            pairs = [(w.conn.user, w.conn.conn_id) for w in group]
            count, states = await self.store.queue.renew(slug, pairs, self._lease_until(now))
            for waiting, state in zip(group, states, strict=True):
                await self._check(waiting, state, count, now)

    async def match(self, variant: Variant, seats: int) -> bool:
        """Take one group out of the variant's queue if one is due, and make its race;
        whether a group was taken."""
        room_id = secrets.token_urlsafe(16)
        slug = variant_slug(variant)
        now = self.rooms.now_ms()
        dropped, group = await self.store.queue.match(
            slug, now, self._fill_ms, seats, room_id, PLACED_KEEP_MS
        )
        if dropped:
            log.info("quick race queue %s: %d expired entries dropped", slug, dropped)
        if not group:
            return False
        assert len(group) >= MIN_RACERS
        try:
            await self._make_race(room_id, variant, group)
        except (StoreError, Refusal) as exc:  # its players' nodes put them back in time
            log.warning("quick race %s not made: %s", room_id, exc)
            return True
        for entry in group:  # those waiting here hear it at once; the others' nodes tell them
            waiting = self.waiting.get(entry.conn_id)
            if waiting is not None and waiting.conn.user == entry.user:
                await self._matched(waiting, room_id)
        return True

    async def _make_race(self, room_id: str, variant: Variant, group: list[Entry]) -> None:
        await self.make_race(room_id, variant, [(e.user, e.name) for e in group], public=True)

    async def make_race(
        self, room_id: str, variant: Variant, racers: list[tuple[str, str]], *, public: bool
    ) -> None:
        """A race of these racers (user id, name): written with them seated and ready
        (away until each joins), then started with the countdown; each racer has the
        grace period from the start to come. Quick races are public; a friend's
        challenge is not."""
        seats = tuple(Seat(user=u, name=n, ready=True, online=False) for u, n in racers)
        code = await self.codes.allocate(room_id)
        state = RoomState(
            id=room_id,
            kind=RoomKind.RACE,
            variant=variant,
            capacity=len(seats),
            time_limit=QUICK_TIME_LIMIT,
            public_room=public,
            host=racers[0][0],
            created_ms=self.rooms.now_ms(),
            seats=seats,
            deal=DealMode.CERTIFIED,
            code=code,
        )
        if await self.store.write_room(state, 0) is None:  # pragma: no cover - a fresh id
            raise RuntimeError(f"room {room_id} exists already")
        countdown = int(self.settings.countdown_seconds * 1000)
        seed, certified = await self.rooms.deal(variant, DealMode.CERTIFIED)
        started = (
            await self.rooms.transition(
                room_id,
                lambda s, now: (
                    s.start(s.host, now, countdown, seed, certified) if s.state == LOBBY else s
                ),
            )
        ).state
        grace = int(self.settings.grace_seconds * 1000)
        for _, seat in started.seated():
            due = started.start_at_ms + grace
            await self.store.add_timer(room_id, TimerKind.GRACE, seat.user, due)
        log.info("race %s: %s for %d racers", room_id, variant, len(racers))

    # ------------------------------------------------------------ telling the players

    async def _check(self, waiting: Waiting, state: EntryState, count: int, now: int) -> None:
        """Act on what became of one of this node's entries."""
        if self.waiting.get(waiting.conn.conn_id) is not waiting:
            return  # left, or told, meanwhile
        if state == QUEUED:
            await self._tell(waiting, count, now)
        elif state == REPLACED:
            self.waiting.pop(waiting.conn.conn_id, None)
            frame = outgoing.Unqueued(str(waiting.variant), "replaced")
            await waiting.conn.send(frame.encode())
        elif state == GONE:
            await self._restore(waiting, now)
        elif isinstance(state, Placed):
            if await self._placed(waiting, state) or now - state.at_ms <= PLACE_WAIT_MS:
                return
            log.warning("quick race %s never made: %s queued again", state.room_id, waiting.conn)
            await self._restore(waiting, now)

    async def _placed(self, waiting: Waiting, placed: Placed) -> bool:
        """Tell the player its race if its room exists; whether it did."""
        if await self.store.load_room(placed.room_id) is None:
            return False
        await self._matched(waiting, placed.room_id)
        return True

    async def _matched(self, waiting: Waiting, room_id: str) -> None:
        self.waiting.pop(waiting.conn.conn_id, None)
        await waiting.conn.send(outgoing.Matched(room_id, str(waiting.variant)).encode())
        await self.store.queue.told(waiting.slug, waiting.conn.user)

    async def _restore(self, waiting: Waiting, now: int) -> None:
        """Put a lost entry back at its original place."""
        conn = waiting.conn
        entry = Entry(conn.user, conn.conn_id, self.settings.node_id, conn.name, waiting.place_ms)
        place, count = await self.store.queue.join(
            waiting.slug, entry, self._lease_until(now), now, self._fill_ms
        )
        waiting.place_ms = place
        log.info("quick race entry of %s put back in queue %s", conn.conn_id, waiting.slug)
        await self._tell(waiting, count, now)

    async def _tell(
        self,
        waiting: Waiting,
        count: int,
        now: int,
        *,
        rid: int | None = None,
        always: bool = False,
    ) -> None:
        """`queued` to the player if what it shows changed (or `always`)."""
        offer = count < MIN_RACERS and now - waiting.place_ms >= int(
            self.settings.quick_alone_seconds * 1000
        )
        if not always and (count, offer) == (waiting.waiting, waiting.offer):
            return
        waiting.waiting, waiting.offer = count, offer
        frame = outgoing.Queued(str(waiting.variant), waiting.place_ms, count, offer, rid)
        await waiting.conn.send(frame.encode())
