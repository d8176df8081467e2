"""Request handling for one node: what each client request does, and who does it.

    service = RaceService(settings, store, hub, metrics, pool=pool, clock=clock)
    await service.sync_clock()
    ticks = asyncio.create_task(service.run_ticks())
    await service.join(session, request)          # a session's decoded requests
    await service.disconnected(session)           # its connection closed

`RaceService` checks who may ask (membership, racer or spectator), turns room requests
into room transitions, and hands the rest to its parts, one concern each:

    rooms.py     the shared clock; loading rooms, transitions, new rooms and deals
    catchup.py   what a joining, resuming or lagging viewer is sent; the start reveal
    boards.py    board writes (move, undo, resign, hint; timeouts and abandonments)
    ending.py    the end of a game and its results
    timers.py    the tick loop: due timers (begin, deadline, grace), progress, counts
    daily.py     daily challenges: attempts, the spoiler gate, leaderboard watchers

The service holds no truth that is not also in Redis: its local copies (writer boards,
knowledge masks, progress) are caches that are reloaded whenever the store says they are
stale.

Hidden cards: every board frame comes from `LiveBoard` (views per audience) or from
`race.results` (only once a race is finished); error messages quote only the mover's own
visible cards (the engine's reasons). This module must never send a board frame itself.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

from klondike_live.config import Settings
from klondike_live.daily.pool import DealPool
from klondike_live.engine import Move, NotationError
from klondike_live.gateway.hub import Hub, LocalRoom, Viewer
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.race.room import FINISHED, LOBBY, RoomError, RoomState, new_room
from klondike_live.service.boards import Boards
from klondike_live.service.catchup import CatchUp
from klondike_live.service.daily import Clock, DailyService, system_clock
from klondike_live.service.errors import RequestError
from klondike_live.service.rooms import Rooms
from klondike_live.service.timers import Timers
from klondike_live.store import Store

if TYPE_CHECKING:
    from klondike_live.gateway.session import Session

__all__ = ["RaceService", "RequestError"]

log = logging.getLogger(__name__)


class RaceService:
    """Everything a node does for its connections, given the store and the hub."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        hub: Hub,
        metrics: Metrics,
        *,
        seed_source: Callable[[], str] | None = None,
        pool: DealPool | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.settings = settings
        self.store = store
        self.hub = hub
        self.metrics = metrics
        self.pool = pool
        self.sessions: set[Session] = set()
        # The daily part opens rooms and reads the clock through this service, once
        # requests come: by then `rooms` exists.
        self.daily = DailyService(
            settings, store, clock, metrics, now_ms=self.now_ms, open_room=self.open_room
        )
        self.rooms = Rooms(store, hub, self.daily, pool=pool, new_seed=seed_source or _new_seed)
        self.catchup = CatchUp(self.rooms, metrics, self._session_of)
        self.boards = Boards(self.rooms, metrics)
        self.timers = Timers(settings, self.rooms, self.boards)
        hub.on_mask = self.boards.on_mask
        hub.on_status = self.boards.on_status
        hub.on_takeover = self._on_takeover
        hub.on_resync = self.catchup.resync
        hub.on_room_frame = self.catchup.on_room_frame
        hub.on_daily = self.daily.on_update

    # ------------------------------------------------------------ clock and background

    async def sync_clock(self) -> None:
        """Measure this process's offset to the shared (Redis) clock."""
        await self.rooms.sync_clock()

    def now_ms(self) -> int:
        """The shared clock, read locally."""
        return self.rooms.now_ms()

    async def run_ticks(self) -> None:
        """The node's tick loop (runs until cancelled)."""
        await self.timers.run_ticks()

    async def open_room(self, state: RoomState) -> bool:
        """Write a room that starts at once (solo, daily) with its boards and timers;
        False when a room of that id exists already."""
        return await self.rooms.open_room(state)

    # ------------------------------------------------------------ rooms

    async def create(self, session: Session, request: msg.Create) -> None:
        if request.kind == "daily":
            room_id, info = await self.daily.open_attempt(
                session.user, session.name, request.variant
            )
            await session.send(outgoing.created(request.rid, room_id, daily=info))
            return
        room_id = secrets.token_urlsafe(16)
        now = self.now_ms()
        state = new_room(
            room_id,
            kind=request.kind,
            variant=request.variant,
            capacity=request.seats,
            time_limit=request.time_limit,
            public=request.public,
            host=session.user,
            host_name=session.name,
            now_ms=now,
            deal=request.deal,
        )
        if request.kind == "solo":
            seed, certified = await self.rooms.deal(request.variant, request.deal)
            state = state.set_ready(session.user, True).start(session.user, now, 0, seed, certified)
            if not await self.open_room(state):
                raise RequestError(ErrorCode.BUSY, "could not create the room; try again")
            if request.public:
                await self.store.set_live(room_id, True, state.start_at_ms)
        else:
            if await self.store.write_room(state, 0) is None:
                raise RequestError(ErrorCode.BUSY, "could not create the room; try again")
            if request.public:
                await self.store.set_public(room_id, True, now)
        await session.send(outgoing.created(request.rid, room_id))

    async def ready(self, session: Session, request: msg.Ready) -> None:
        self._viewer(session, request.room, racer=True)
        await self.rooms.transition(
            request.room, lambda s, _now: s.set_ready(session.user, request.ready)
        )

    async def start(self, session: Session, request: msg.Start) -> None:
        self._viewer(session, request.room, racer=True)
        countdown = int(self.settings.countdown_seconds * 1000)
        state = await self.rooms.load(request.room)
        try:  # a refused start must not use up a certified deal
            state.start(session.user, 0, countdown, "0")
        except RoomError as exc:
            raise RequestError(exc.code, exc.message) from None
        seed, certified = await self.rooms.deal(state.variant, state.deal)
        await self.rooms.transition(
            request.room, lambda s, now: s.start(session.user, now, countdown, seed, certified)
        )

    async def rematch(self, session: Session, request: msg.Rematch) -> None:
        self._viewer(session, request.room, racer=True)
        await self.rooms.transition(request.room, lambda s, _now: s.rematch(session.user))

    # ------------------------------------------------------------ joining and leaving

    async def join(self, session: Session, request: msg.Join) -> None:
        state = await self.rooms.load(request.room)
        await self.daily.check_join(session.user, state, request.role)  # the spoiler gate
        if request.room in session.rooms:
            await self.leave(session, request.room)
            state = await self.rooms.load(request.room)
        seat = state.seat_of(session.user)
        if request.role == "spectator" and seat is not None and state.state != FINISHED:
            raise RequestError(ErrorCode.OWN_RACE, "a racer cannot watch their own race")
        local = await self.hub.enter(request.room, spectating=request.role == "spectator")
        viewer = Viewer(
            session.connection, session.conn_id, session.user, request.role, seat, catching_up=[]
        )
        local.add(viewer)
        session.rooms[request.room] = viewer
        try:
            if request.role == "racer":
                _, state = await self.rooms.transition(
                    request.room, lambda s, _now: s.join(session.user, session.name)
                )
                local.reseat(viewer, state.seat_of(session.user))
                await self.store.claim_connection(request.room, session.user, session.conn_id)
            await self.catchup.catch_up(session, local, viewer, state, request.since)
        except BaseException:
            session.rooms.pop(request.room, None)
            await self.hub.leave(local, viewer)
            raise

    async def leave(self, session: Session, room_id: str) -> None:
        viewer = session.rooms.pop(room_id, None)
        if viewer is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "you are not in that room")
        await self._drop_viewer(session, room_id, viewer, leaving=True)

    async def disconnected(self, session: Session) -> None:
        """A connection closed: leave its rooms; a racer keeps the seat for the grace period."""
        for room_id, viewer in list(session.rooms.items()):
            session.rooms.pop(room_id, None)
            try:
                await self._drop_viewer(session, room_id, viewer, leaving=False)
            except Exception:
                log.exception("cleaning up %s in room %s failed", session.conn_id, room_id)

    async def _drop_viewer(
        self, session: Session, room_id: str, viewer: Viewer, *, leaving: bool
    ) -> None:
        local = self.hub.rooms.get(room_id)
        if viewer.role == "racer":
            if local is not None and viewer.seat is not None:
                local.writers.pop(viewer.seat, None)
            if await self.store.release_connection(room_id, session.user, session.conn_id):
                user = session.user
                if leaving:
                    await self._leave_seat(room_id, user)
                else:
                    with contextlib.suppress(RequestError):
                        await self.rooms.transition(
                            room_id, lambda s, _now: s.set_online(user, False)
                        )
                    due = self.now_ms() + int(self.settings.grace_seconds * 1000)
                    await self.store.add_timer(room_id, "grace", user, due)
        if local is not None:
            await self.hub.leave(local, viewer)

    async def _leave_seat(self, room_id: str, user: str) -> None:
        state = await self.rooms.load(room_id)
        if state.state == LOBBY:
            await self.rooms.transition(room_id, lambda s, _now: s.leave(user))
        else:
            await self.rooms.transition(room_id, lambda s, _now: s.set_online(user, False))

    def _viewer(self, session: Session, room_id: str, *, racer: bool) -> Viewer:
        viewer = session.rooms.get(room_id)
        if viewer is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "join the room first")
        if racer and viewer.role != "racer":
            raise RequestError(ErrorCode.NOT_A_RACER, "spectators cannot do that")
        return viewer

    def _session_of(self, viewer: Viewer) -> Session | None:
        return next((s for s in self.sessions if s.conn_id == viewer.conn_id), None)

    def _on_takeover(self, local: LocalRoom, user: str, conn_id: str) -> None:
        for viewer in list(local.viewers):
            if viewer.user == user and viewer.role == "racer" and viewer.conn_id != conn_id:
                session = self._session_of(viewer)
                if session is not None:
                    session.close_soon(CloseCode.REPLACED, "a newer connection took over")

    # ------------------------------------------------------------ boards

    async def move(self, session: Session, request: msg.MoveRequest) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        try:
            move = Move.parse(request.move)
        except NotationError as exc:
            raise RequestError(ErrorCode.BAD_MOVE, exc.message) from None
        await self.boards.write(session, viewer, request.room, "move", move, request.id)

    async def undo(self, session: Session, request: msg.Undo) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        await self.boards.write(session, viewer, request.room, "undo", None, request.id)

    async def resign(self, session: Session, request: msg.Resign) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        await self.boards.write(session, viewer, request.room, "resign", None, 0)

    async def hint(self, session: Session, request: msg.HintRequest) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        await self.boards.hint(session, viewer, request)


def _new_seed() -> str:
    """A fresh secret seed with 128 bits of randomness."""
    return secrets.token_hex(16)
