"""Request handling for one node: rooms, races, moves, catch-up, timers and ticks.

The service turns decoded client messages into room transitions (compare-and-set in
the store), board events (written by the board's single writer: the node holding the
racer's connection) and frames. It holds no truth that is not also in Redis: its local
copies (writer boards, knowledge masks, progress) are caches that are reloaded whenever
the store says they are stale.

Hidden cards: every board frame comes from `LiveBoard` (views per audience) or from
`race.results` (only once a race is finished); error messages quote only the mover's own
visible cards (the engine's reasons).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack
from redis.exceptions import RedisError

from klondike_live import keys
from klondike_live.config import Settings
from klondike_live.daily.pool import DealPool
from klondike_live.engine import (
    Board,
    Deal,
    IllegalMoveError,
    Move,
    NotationError,
    Variant,
    view_of,
)
from klondike_live.gateway.daily import Clock, DailyService, system_clock
from klondike_live.gateway.errors import RequestError
from klondike_live.gateway.hub import Hub, LocalRoom, Viewer
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.outgoing import BoardHeader
from klondike_live.race.live_board import DONE, PLAYING, RESIGNED, TIMEOUT, WON, LiveBoard
from klondike_live.race.results import build_results, redact_results, replay
from klondike_live.race.room import (
    COUNTDOWN,
    FINISHED,
    LOBBY,
    RACING,
    RoomError,
    RoomState,
    new_room,
)
from klondike_live.solver.worker import hint_in_worker
from klondike_live.store import BoardRecord, Store
from klondike_live.tasks import cancel_requested

if TYPE_CHECKING:
    from klondike_live.gateway.session import Session

log = logging.getLogger(__name__)

HINT_SECONDS = 1.0
"""Search budget of a practice hint (in a worker process, off the event loop)."""

MAX_BACKLOG = 200
"""A resuming viewer missing more events than this gets a snapshot instead."""


def _frame_offset(frame: bytes) -> tuple[str, int, int] | None:
    """(audience, seat, offset) of a board frame, for de-duplicating after a resume."""
    data = msgpack.unpackb(frame, raw=False)
    if data.get("t") in ("board", "diff"):
        return data["audience"], data["seat"], data["off"]
    return None


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
        self.new_seed = seed_source or _new_seed
        self.store = store
        self.hub = hub
        self.metrics = metrics
        self.pool = pool
        self.daily = DailyService(
            settings, store, clock, metrics, now_ms=self.now_ms, open_room=self.open_room
        )
        self.sessions: set[Session] = set()
        self.clock_offset_ms = 0
        self._reveals: dict[tuple[str, int], asyncio.Task[None]] = {}
        hub.on_mask = self._on_mask
        hub.on_status = self._on_status
        hub.on_takeover = self._on_takeover
        hub.on_resync = self._resync
        hub.on_room_frame = self._on_room_frame
        hub.on_daily = self.daily.on_update

    # ------------------------------------------------------------ clock

    async def sync_clock(self) -> None:
        """Measure this process's offset to the shared (Redis) clock."""
        before = time.time()
        server = await self.store.now_ms()
        after = time.time()
        self.clock_offset_ms = server - int((before + after) * 500)

    def now_ms(self) -> int:
        """The shared clock, read locally."""
        return int(time.time() * 1000) + self.clock_offset_ms

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
            seed, certified = await self._deal(request.variant, request.deal)
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

    async def open_room(self, state: RoomState) -> bool:
        """Write a room that starts at once (solo, daily) with its boards and timers;
        False when a room of that id exists already."""
        if await self.store.write_room(state, 0, (), self._board_inits(state)) is None:
            return False
        await self._schedule_race_timers(state)
        return True

    async def _deal(self, variant: Variant, mode: str) -> tuple[str, bool]:
        """A seed for a new game and whether it is certified: a pooled deal when asked
        for and one is waiting (never waiting for the solver), else a random seed."""
        pool = self.pool
        if mode == "certified" and pool is not None and variant in pool.variants:
            try:
                deal = await pool.take(variant)
            except RedisError as exc:
                log.warning("deal pool unavailable: %s", exc)
                deal = None
            if deal is not None:
                return deal.seed, True
        if mode == "certified" and pool is not None and pool.metrics is not None:
            label = str(variant) if variant in pool.variants else "unpooled"
            pool.metrics.empty.labels(variant=label).inc()
        return self.new_seed(), False

    def _shown(self, state: RoomState, results: dict[str, Any]) -> dict[str, Any]:
        """Results as sent in the room: a daily game's redacted while its day is open."""
        if state.kind != "daily":
            return results
        closed = self.daily.day_closed(state)
        shown = results if closed else redact_results(results)
        return shown | {"daily": {**results.get("daily", {}), "closed": closed}}

    def _public(self, state: RoomState) -> dict[str, Any]:
        """The room frame's content (a daily room's seed only once its day closed)."""
        return state.public(
            spectators=self._spectators(state.id), day_closed=self.daily.day_closed(state)
        )

    async def _load(self, room_id: str) -> RoomState:
        if not keys.is_room_id(room_id):
            raise RequestError(ErrorCode.NO_ROOM, "no such room")
        loaded = await self.store.load_room(room_id)
        if loaded is None:
            raise RequestError(ErrorCode.NO_ROOM, "no such room")
        return loaded[0]

    async def _transition(self, room_id: str, change: Any) -> tuple[RoomState, RoomState]:
        """Apply a pure room transition atomically and publish the new room state."""

        def extras(
            old: RoomState, new: RoomState
        ) -> tuple[list[bytes], list[tuple[str, dict[str, str | int] | None]]]:
            hashes = self._board_inits(new) if new.state == COUNTDOWN and old.state == LOBBY else []
            frame = outgoing.room_state(self._public(new))
            return [b"L|" + frame], hashes

        try:
            old, new = await self.store.update_room(room_id, change, extras)
        except RoomError as exc:
            raise RequestError(exc.code, exc.message) from None
        except LookupError:
            raise RequestError(ErrorCode.NO_ROOM, "no such room") from None
        if new.state == COUNTDOWN and old.state == LOBBY:
            log.info(
                "race %s gen %d starts at %d with %d racers",
                room_id,
                new.gen,
                new.start_at_ms,
                len(new.seated()),
            )
            await self._schedule_race_timers(new)
            if new.public_room:
                await self.store.set_public(room_id, False, 0)
                await self.store.set_live(room_id, True, new.start_at_ms)
        if new.state == LOBBY and old.state == FINISHED and new.public_room and new.kind == "race":
            await self.store.set_public(room_id, True, new.created_ms)
        return old, new

    def _board_inits(self, state: RoomState) -> list[tuple[str, dict[str, str | int] | None]]:
        """Fresh board hashes for every seated racer, written with the start transition."""
        board = Board(Deal.from_seed(state.seed), state.variant)
        deadline = state.deadline_ms()
        out: list[tuple[str, dict[str, str | int] | None]] = []
        for seat, _ in state.seated():
            out.append(
                (
                    keys.board(state.id, state.gen, seat),
                    {
                        "seq": 0,
                        "own_offset": 0,
                        "spec_offset": 0,
                        "seen": str(board.seen),
                        "spec_mask": str(board.seen),
                        "status": PLAYING,
                        "start_at": state.start_at_ms,
                        "deadline": deadline,
                        "found": 0,
                        "found_ms": 0,
                        "down": board.face_down_count,
                        "moves": 0,
                        "last_move_id": 0,
                    },
                )
            )
        return out

    async def _schedule_race_timers(self, state: RoomState) -> None:
        await self.store.add_timer(state.id, "begin", str(state.gen), state.start_at_ms)
        if state.time_limit:
            await self.store.add_timer(state.id, "deadline", str(state.gen), state.deadline_ms())

    def _spectators(self, room_id: str) -> int:
        local = self.hub.rooms.get(room_id)
        return local.spectators_total if local else 0

    async def ready(self, session: Session, request: msg.Ready) -> None:
        self._viewer(session, request.room, racer=True)
        await self._transition(
            request.room, lambda s, _now: s.set_ready(session.user, request.ready)
        )

    async def start(self, session: Session, request: msg.Start) -> None:
        self._viewer(session, request.room, racer=True)
        countdown = int(self.settings.countdown_seconds * 1000)
        state = await self._load(request.room)
        try:  # a refused start must not use up a certified deal
            state.start(session.user, 0, countdown, "0")
        except RoomError as exc:
            raise RequestError(exc.code, exc.message) from None
        seed, certified = await self._deal(state.variant, state.deal)
        await self._transition(
            request.room, lambda s, now: s.start(session.user, now, countdown, seed, certified)
        )

    async def rematch(self, session: Session, request: msg.Rematch) -> None:
        self._viewer(session, request.room, racer=True)
        await self._transition(request.room, lambda s, _now: s.rematch(session.user))

    async def leave(self, session: Session, room_id: str) -> None:
        viewer = session.rooms.pop(room_id, None)
        if viewer is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "you are not in that room")
        await self._drop_viewer(session, room_id, viewer, leaving=True)

    def _viewer(self, session: Session, room_id: str, *, racer: bool) -> Viewer:
        viewer = session.rooms.get(room_id)
        if viewer is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "join the room first")
        if racer and viewer.role != "racer":
            raise RequestError(ErrorCode.NOT_A_RACER, "spectators cannot do that")
        return viewer

    # ------------------------------------------------------------ join and catch-up

    async def join(self, session: Session, request: msg.Join) -> None:
        state = await self._load(request.room)
        await self.daily.check_join(session.user, state, request.role)  # the spoiler gate
        if request.room in session.rooms:
            await self.leave(session, request.room)
            state = await self._load(request.room)
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
                _, state = await self._transition(
                    request.room, lambda s, _now: s.join(session.user, session.name)
                )
                local.reseat(viewer, state.seat_of(session.user))
                await self.store.claim_connection(request.room, session.user, session.conn_id)
            await self._catch_up(session, local, viewer, state, request.since)
        except BaseException:
            session.rooms.pop(request.room, None)
            await self.hub.leave(local, viewer)
            raise

    async def _catch_up(
        self,
        session: Session,
        local: LocalRoom,
        viewer: Viewer,
        state: RoomState,
        since: tuple[msg.Since, ...],
    ) -> None:
        """Send the room and the boards (missing events or snapshots), then release the
        frames that arrived meanwhile, minus those already covered."""
        day_closed = self.daily.day_closed(state)
        await session.send(
            outgoing.room_state(
                state.public(spectators=local.spectators_total, day_closed=day_closed)
            )
        )
        sent: dict[tuple[str, int], int] = {}
        if state.state == FINISHED:
            data = await self.store.load_results(state.id, state.gen)
            if data is not None:
                results = msgpack.unpackb(data, raw=False)
                await session.send(outgoing.results(state.id, self._shown(state, results)))
            viewer.boards_ready = True
        elif state.state in (COUNTDOWN, RACING):
            await self._sync_local(local, state)
            if self.now_ms() >= state.start_at_ms:
                sent = await self._send_boards(session, local, viewer, state, since)
                await session.send(self._progress_frame(local))
                viewer.boards_ready = True
            else:
                self._schedule_reveal(local, state)
        await self._release(session, viewer, sent)

    async def _release(
        self, session: Session, viewer: Viewer, sent: dict[tuple[str, int], int]
    ) -> None:
        """Send the frames held for `viewer`, minus those its snapshots or backlog already
        covered; board frames stay held while it has no snapshots yet."""
        frames = viewer.held + (viewer.catching_up or [])
        viewer.held = []
        viewer.catching_up = None
        for frame in frames:
            where = _frame_offset(frame)
            if where is not None and not viewer.boards_ready:
                viewer.held.append(frame)
            elif where is None or where[2] > sent.get((where[0], where[1]), -1):
                await session.send(frame)

    async def _send_boards(
        self,
        session: Session,
        local: LocalRoom,
        viewer: Viewer,
        state: RoomState,
        since: tuple[msg.Since, ...],
    ) -> dict[tuple[str, int], int]:
        last = {s.seat: s for s in since}
        if viewer.role == "racer" and viewer.seat is not None:
            seats = [viewer.seat]
            audience = "own"
        else:
            seats = [seat for seat, _ in state.seated()]
            audience = "spectator"
        records = await self.store.load_boards(state.id, state.gen, seats)
        sent: dict[tuple[str, int], int] = {}
        for seat in seats:
            record = records.get(seat)
            if record is None:
                continue
            offset = record.int("own_offset" if audience == "own" else "spec_offset")
            mark = last.get(seat)
            frames = None
            if mark is not None and mark.epoch == state.gen and mark.offset <= offset:
                frames = await self.store.stream_after(
                    state.id, state.gen, seat, audience, mark.offset, MAX_BACKLOG
                )
            if frames is None:
                self.metrics.resyncs.inc()
                await session.send(self._snapshot(state, seat, record, audience))
            else:
                for _, frame in frames:
                    await session.send(frame)
            sent[(audience, seat)] = offset
        return sent

    def _snapshot(self, state: RoomState, seat: int, record: BoardRecord, audience: str) -> bytes:
        board = replay(state, record.moves)
        status = record.fields["status"]
        if audience == "own":
            header = BoardHeader(state.id, seat, audience, state.gen, record.int("own_offset"))
            return outgoing.board(
                header,
                view_of(board, board.seen),
                moves=len(board.moves),
                status=status,
                score=board.score,
                last_id=record.int("last_move_id"),
            )
        header = BoardHeader(state.id, seat, audience, state.gen, record.int("spec_offset"))
        known = int(record.fields["spec_mask"])
        return outgoing.board(header, view_of(board, known), moves=len(board.moves), status=status)

    async def _sync_local(self, local: LocalRoom, state: RoomState) -> None:
        """Load every racer's knowledge, status and progress of the current race."""
        seats = [seat for seat, _ in state.seated()]
        records = await self.store.load_boards(state.id, state.gen, seats)
        local.gen = state.gen
        local.seats = set(seats)
        for seat, record in records.items():
            local.masks[seat] = int(record.fields["seen"])
            local.statuses[seat] = record.fields["status"]
            local.progress[seat] = [
                seat,
                record.int("found"),
                record.int("down"),
                record.int("moves"),
                record.fields["status"],
            ]

    def _progress_frame(self, local: LocalRoom) -> bytes:
        boards = [local.progress[seat] for seat in sorted(local.progress)]
        return outgoing.progress(local.room_id, boards, local.spectators_total)

    def _schedule_reveal(self, local: LocalRoom, state: RoomState) -> None:
        """At the start instant, send each local viewer its boards (once per race)."""
        key = (state.id, state.gen)
        if key in self._reveals or local.revealed_gen == state.gen:
            return
        local.revealed_gen = state.gen

        async def reveal() -> None:
            try:
                await asyncio.sleep(max(0.0, (state.start_at_ms - self.now_ms()) / 1000))
                for viewer in list(local.viewers):
                    session = self._session_of(viewer)
                    if session is not None:
                        await self._reveal_to(session, local, viewer, state)
            finally:
                self._reveals.pop(key, None)

        self._reveals[key] = asyncio.create_task(reveal(), name=f"reveal-{state.id}")

    async def _reveal_to(
        self, session: Session, local: LocalRoom, viewer: Viewer, state: RoomState
    ) -> None:
        """Send one viewer the boards of a race that just started, holding live frames
        meanwhile; a viewer still being caught up by its own join is left to that."""
        for _ in range(100):
            if viewer.catching_up is None:
                break
            await asyncio.sleep(0.01)
        if viewer.boards_ready or viewer.catching_up is not None:
            return
        viewer.catching_up = []
        sent: dict[tuple[str, int], int] = {}
        try:
            sent = await self._send_boards(session, local, viewer, state, ())
            await session.send(self._progress_frame(local))
            viewer.boards_ready = True
        except Exception:
            log.debug("reveal to %s failed", viewer.conn_id, exc_info=True)
        finally:
            await self._release(session, viewer, sent)

    def _session_of(self, viewer: Viewer) -> Session | None:
        return next((s for s in self.sessions if s.conn_id == viewer.conn_id), None)

    async def _resync(self, local: LocalRoom, viewer: Viewer) -> None:
        """A lagging viewer drained its buffer: fresh snapshots, then live again."""
        session = self._session_of(viewer)
        if session is None:
            return
        viewer.catching_up = []
        viewer.lagging = False
        try:
            state = await self._load(local.room_id)
            await self._catch_up(session, local, viewer, state, ())
        finally:
            viewer.catching_up = None

    # ------------------------------------------------------------ moves

    async def _writer(self, local: LocalRoom, state_hint: RoomState | None, seat: int) -> LiveBoard:
        writer = local.writers.get(seat)
        if writer is not None:
            return writer
        state = state_hint or await self._load(local.room_id)
        if state.state not in (COUNTDOWN, RACING, FINISHED):
            raise RequestError(ErrorCode.WRONG_STATE, "the race has not started")
        if local.gen != state.gen or not local.seats:
            await self._sync_local(local, state)
        record = await self.store.load_board(state.id, state.gen, seat)
        if record is None:
            raise RequestError(ErrorCode.WRONG_STATE, "the race has not started")
        board = replay(state, record.moves)
        writer = LiveBoard(
            state.id,
            seat,
            state.gen,
            board,
            race=state.race_rules,
            seq=record.int("seq"),
            own_offset=record.int("own_offset"),
            spec_offset=record.int("spec_offset"),
            spec_mask=int(record.fields["spec_mask"]),
            last_move_id=record.int("last_move_id"),
            status=record.fields["status"],
        )
        local.writers[seat] = writer
        local.masks[seat] = board.seen
        return writer

    async def move(self, session: Session, request: msg.MoveRequest) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        try:
            move = Move.parse(request.move)
        except NotationError as exc:
            raise RequestError(ErrorCode.BAD_MOVE, exc.message) from None
        await self._board_write(session, viewer, request.room, "move", move, request.id)

    async def undo(self, session: Session, request: msg.Undo) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        await self._board_write(session, viewer, request.room, "undo", None, request.id)

    async def resign(self, session: Session, request: msg.Resign) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        await self._board_write(session, viewer, request.room, "resign", None, 0)

    async def _board_write(
        self,
        session: Session,
        viewer: Viewer,
        room_id: str,
        op: str,
        move: Move | None,
        move_id: int,
    ) -> None:
        local = self.hub.rooms.get(room_id)
        if local is None or viewer.seat is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "join the room first")
        seat = viewer.seat
        for _attempt in range(3):
            async with local.lock:
                writer = await self._writer(local, None, seat)
                if op in ("move", "undo") and move_id <= writer.last_move_id:
                    await session.send(outgoing.ack(room_id, move_id, writer.own_offset))
                    return
                if writer.status in DONE:
                    raise RequestError(
                        ErrorCode.WRONG_STATE, f"your game is over ({writer.status})"
                    )
                others = local.common_mask(exclude=seat)
                seq = writer.seq
                try:
                    if op == "move":
                        assert move is not None
                        event = writer.plan_move(move, move_id, others)
                    elif op == "undo":
                        if writer.race:
                            raise RequestError(
                                ErrorCode.NOT_ALLOWED, "races and ranked attempts have no undo"
                            )
                        event = writer.plan_undo(move_id, others)
                    else:
                        event = writer.plan_status("resign", RESIGNED, others)
                except IllegalMoveError as exc:
                    self.metrics.error("illegal_move")
                    await session.send(
                        outgoing.error(
                            ErrorCode.ILLEGAL_MOVE,
                            exc.reason,
                            room=room_id,
                            move_id=move_id or None,
                        )
                    )
                    return
                result = await self.store.write_board_event(
                    room_id,
                    writer.epoch,
                    seat,
                    session.user,
                    session.conn_id,
                    event,
                    seq,
                    publish_own=False,
                )
                if result.status == "ok":
                    writer.commit(event)
                    await self.hub.note_progress(local, event.progress)
                    if event.own_frame is not None:
                        # This node holds the racer's connection: deliver directly. The
                        # frame carries the move id, acknowledging the move.
                        self.hub.send(local.racers(seat), event.own_frame, board=True)
                    if op != "resign":
                        self.metrics.moves.inc()
                    if event.won and not writer.race:
                        await self._practice_won(session, local, writer)
                    done = writer.status in DONE
                    break
                local.writers.pop(seat, None)
            if result.status == "stale":
                continue
            raise RequestError(*_refusal(result.status, result.detail))
        else:
            raise RequestError(ErrorCode.BUSY, "the board kept changing; try again")
        if done:
            self.hub.spawn(self.check_end(room_id), f"end-{room_id}")

    async def _practice_won(self, session: Session, local: LocalRoom, writer: LiveBoard) -> None:
        """A won practice game is over (a race board wins with its move): a status event
        ends it, so that its results and replay are stored. Called holding the lock."""
        seq = writer.seq
        event = writer.plan_status("won", WON, 0)
        result = await self.store.write_board_event(
            local.room_id,
            writer.epoch,
            writer.seat,
            session.user,
            session.conn_id,
            event,
            seq,
            publish_own=False,
        )
        if result.status != "ok":
            local.writers.pop(writer.seat, None)
            return
        writer.commit(event)
        await self.hub.note_progress(local, event.progress)
        if event.own_frame is not None:
            self.hub.send(local.racers(writer.seat), event.own_frame, board=True)

    async def hint(self, session: Session, request: msg.HintRequest) -> None:
        viewer = self._viewer(session, request.room, racer=True)
        local = self.hub.rooms.get(request.room)
        if local is None or viewer.seat is None:
            raise RequestError(ErrorCode.NOT_IN_ROOM, "join the room first")
        writer = await self._writer(local, None, viewer.seat)
        if writer.race:
            raise RequestError(ErrorCode.NOT_ALLOWED, "races and ranked attempts have no hints")
        advice = await hint_in_worker(writer.board.copy(), seconds=HINT_SECONDS)
        await session.send(
            outgoing.hint(request.room, request.rid, advice.move, advice.status, advice.message)
        )

    # ------------------------------------------------------------ bus hooks

    async def _on_mask(self, local: LocalRoom) -> None:
        if local.writers:
            self.hub.spawn(self._refresh(local), f"refresh-{local.room_id}")

    async def _on_status(self, local: LocalRoom, seat: int, status: str) -> None:
        if status in DONE:
            # A status written elsewhere (a timeout, an abandonment) makes a local copy stale.
            writer = local.writers.get(seat)
            if writer is not None and writer.status != status:
                local.writers.pop(seat, None)
            if local.writers:
                self.hub.spawn(self._refresh(local), f"refresh-{local.room_id}")

    async def _refresh(self, local: LocalRoom) -> None:
        """Spectators may know more: re-publish this node's boards' spectator views."""
        for seat in list(local.writers):
            async with local.lock:
                writer = local.writers.get(seat)
                if writer is None:
                    continue
                seq = writer.seq
                event = writer.plan_refresh(local.common_mask(exclude=seat))
                if event is None:
                    continue
                result = await self.store.write_board_event(
                    local.room_id, writer.epoch, seat, "", "", event, seq
                )
                if result.status == "ok":
                    writer.commit(event)
                    await self.hub.note_progress(local, event.progress)
                else:
                    local.writers.pop(seat, None)

    def _on_takeover(self, local: LocalRoom, user: str, conn_id: str) -> None:
        for viewer in list(local.viewers):
            if viewer.user == user and viewer.role == "racer" and viewer.conn_id != conn_id:
                session = self._session_of(viewer)
                if session is not None:
                    session.close_soon(CloseCode.REPLACED, "a newer connection took over")

    async def _on_room_frame(self, local: LocalRoom, frame: bytes) -> None:
        data = msgpack.unpackb(frame, raw=False)
        if data.get("t") != "room":
            return
        if data.get("gen") != local.gen:
            for viewer in local.viewers:  # a new race: its boards come with its start
                viewer.boards_ready = False
                viewer.held = []
            local.writers.clear()
            local.masks.clear()
            local.statuses.clear()
            local.progress.clear()
            local.seats = set()
            local.gen = data.get("gen", 0)
        if data.get("state") == COUNTDOWN and data.get("start_at", 0) > self.now_ms():
            state = await self._load(local.room_id)
            if state.state == COUNTDOWN:
                await self._sync_local(local, state)
                self._schedule_reveal(local, state)

    # ------------------------------------------------------------ end of race

    async def check_end(self, room_id: str) -> None:
        """Finish the race when every racer is done or time is up; publish the results."""
        state = await self._load(room_id)
        if state.state not in (COUNTDOWN, RACING):
            return
        seats = [seat for seat, _ in state.seated()]
        records = await self.store.load_boards(room_id, state.gen, seats, with_times=True)
        now = await self.store.now_ms()
        deadline = state.deadline_ms()
        all_done = all(r.fields.get("status") in DONE for r in records.values())
        if not all_done and not (deadline and now >= deadline):
            return
        # A ranked daily attempt's entry first: once the player sees its end, the
        # leaderboard (and the spoiler gate) already know it.
        await self.daily.record_result(state, records.get(0))

        def change(s: RoomState, now_ms: int) -> RoomState:
            if s.gen != state.gen:
                raise RoomError(ErrorCode.WRONG_STATE, "a newer race")
            return s.finish(now_ms)

        def extras(
            _old: RoomState, new: RoomState
        ) -> tuple[list[bytes], list[tuple[str, dict[str, str | int] | None]]]:
            payload = build_results(
                new, {s: (r.fields, r.moves, r.times) for s, r in records.items()}
            )
            blob = msgpack.packb(payload, use_bin_type=True)
            frames = [
                b"L|" + outgoing.room_state(self._public(new)),
                b"L|" + outgoing.results(room_id, self._shown(new, payload)),
            ]
            return frames, [(keys.results(room_id, new.gen), {"data": blob})]

        try:
            _, new = await self.store.update_room(room_id, change, extras)
        except RoomError:
            return
        if new.kind != "daily":  # daily games are listed by their leaderboards
            await self.store.mark_finished(room_id, new.gen, new.ended_ms)
        if new.public_room:
            await self.store.set_live(room_id, False)
        log.info("race %s gen %d finished", room_id, new.gen)

    # ------------------------------------------------------------ timers and ticks

    async def run_timer(self, room_id: str, kind: str, arg: str) -> None:
        """A due timer this node won: begin a race, end it at its limit, or count an
        absent racer as resigned."""
        try:
            state = await self._load(room_id)
        except RequestError:
            return
        if kind == "begin" and state.state == COUNTDOWN and str(state.gen) == arg:
            await self._transition(room_id, lambda s, _now: s.begin() if s.gen == state.gen else s)
        elif kind == "deadline" and str(state.gen) == arg and state.state in (COUNTDOWN, RACING):
            await self._end_playing(state, TIMEOUT)
            await self.check_end(room_id)
        elif kind == "grace" and not (state.kind == "daily" and state.ranked):
            # (a ranked daily attempt's clock runs on while its player is away: only its
            # time limit ends it)
            user = arg
            current = await self.store.current_connection(room_id, user)
            seat = state.seat_of(user)
            if current is not None or seat is None:
                return
            occupant = state.seats[seat]
            if occupant is None or occupant.online:
                return
            if state.state == LOBBY:
                await self._transition(
                    room_id, lambda s, _now: s.leave(user) if s.seat_of(user) is not None else s
                )
            elif state.state in (COUNTDOWN, RACING):
                await self._end_playing(state, RESIGNED, only_seat=seat)
                await self.check_end(room_id)

    async def _end_playing(
        self, state: RoomState, status: str, *, only_seat: int | None = None
    ) -> None:
        """Server-side status change (time limit, abandonment) of boards still playing."""
        local = await self.hub.enter(state.id)
        try:
            for seat, _ in state.seated():
                if only_seat is not None and seat != only_seat:
                    continue
                for _attempt in range(3):
                    async with local.lock:
                        local.writers.pop(seat, None)
                        writer = await self._writer(local, state, seat)
                        if writer.status in DONE:
                            break
                        seq = writer.seq
                        event = writer.plan_status(status, status, local.common_mask(exclude=seat))
                        result = await self.store.write_board_event(
                            state.id, state.gen, seat, "", "", event, seq
                        )
                        local.writers.pop(seat, None)
                        if result.status == "ok":
                            await self.hub.note_progress(local, event.progress)
                        if result.status != "stale":
                            break
        finally:
            await self.hub.release_if_idle(local)

    async def tick(self, *, count_watchers: bool = True) -> None:
        """Per tick: due timers and coalesced progress; spectator counts when asked."""
        now = self.now_ms()
        for room_id, kind, arg in await self.store.take_due_timers(now):
            self.hub.spawn(self.run_timer(room_id, kind, arg), f"timer-{kind}-{room_id}")
        rooms = list(self.hub.rooms.values())
        if count_watchers:
            counts = {
                local.room_id: len(local.spectators())
                for local in rooms
                if local.spectators() or local.spectators_total
            }
            if counts:
                totals = await self.store.report_watchers(self.settings.node_id, counts, now)
                for local in rooms:
                    total = totals.get(local.room_id, local.spectators_total)
                    if total != local.spectators_total:
                        local.spectators_total = total
                        local.progress_dirty = True
        for local in rooms:
            if local.progress_dirty and local.progress:
                local.progress_dirty = False
                self.hub.send(list(local.viewers), self._progress_frame(local))

    async def run_ticks(self) -> None:
        """The node's tick loop (runs until cancelled)."""
        counter = 0
        per_second = max(1, round(1 / self.settings.tick_seconds))
        while not cancel_requested():
            await asyncio.sleep(self.settings.tick_seconds)
            try:
                if counter % (60 * per_second) == 0:
                    await self.sync_clock()
                # Spectator counts change slowly: report and read them once a second.
                await self.tick(count_watchers=counter % per_second == 0)
                counter += 1
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("tick failed")
        raise asyncio.CancelledError

    # ------------------------------------------------------------ disconnects

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
                        await self._transition(room_id, lambda s, _now: s.set_online(user, False))
                    due = self.now_ms() + int(self.settings.grace_seconds * 1000)
                    await self.store.add_timer(room_id, "grace", user, due)
        if local is not None:
            await self.hub.leave(local, viewer)

    async def _leave_seat(self, room_id: str, user: str) -> None:
        state = await self._load(room_id)
        if state.state == LOBBY:
            await self._transition(room_id, lambda s, _now: s.leave(user))
        else:
            await self._transition(room_id, lambda s, _now: s.set_online(user, False))


def _refusal(status: str, detail: str) -> tuple[ErrorCode, str]:
    if status == "replaced":
        return ErrorCode.WRONG_STATE, "a newer connection speaks for you now"
    if status == "done":
        return ErrorCode.WRONG_STATE, f"your game is over ({detail})"
    if status == "early":
        return ErrorCode.WRONG_STATE, f"the race starts in {detail} ms"
    if status == "late":
        return ErrorCode.WRONG_STATE, "time is up"
    if status == "missing":
        return ErrorCode.WRONG_STATE, "the race has not started"
    return ErrorCode.BUSY, "the board changed; try again"


def _new_seed() -> str:
    """A fresh secret seed with 128 bits of randomness."""
    return secrets.token_hex(16)
