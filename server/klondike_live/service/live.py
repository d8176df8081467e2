"""The live service: what each client request does, for any transport.

    service = LiveService(settings, store, hub, metrics, broadcast, pool=pool, clock=clock)
    await service.sync_clock()
    ticks = asyncio.create_task(service.run_ticks())
    service.connected(conn)                          # a client said hello
    await service.handle(conn, message)              # each decoded request after that
    await service.disconnected(conn)                 # its connection closed
    await service.on_bus_message(channel, data)      # the bus subscriber's hooks
    await service.on_resubscribed(channels)          # after a gap in the bus

A client is a `Connection` (see `connection.py`): the service never sees a socket.
`LiveService` checks who may ask (membership, racer or spectator), turns room requests
into room transitions, and hands the rest to its parts, one concern each:

    rooms.py     the shared clock; loading rooms, transitions, new rooms and deals
    catchup.py   what a joining, resuming or lagging viewer is sent; the start reveal
    boards.py    board writes (move, undo, resign, hint; timeouts and abandonments)
    ending.py    the end of a game and its results
    timers.py    the tick loop: due timers (begin, deadline, grace), progress, counts
    daily.py     daily challenges: attempts, the spoiler gate, leaderboard watchers
    bots.py      in-server bot racers (clients of this service) and their thinking
    quick.py     the quick race queues and the races made from them
    friends.py   follows and blocks, presence, challenges to a race
    reactions.py reactions' rate limit, their counts per room and second across nodes
    hub.py       this node's rooms, their bus subscriptions and fan-out

The rules it applies live in `race/` (room transitions, `race.rules`, visibility). The
service holds no truth that is not also in Redis: its local copies (writer boards,
knowledge, progress) are caches that are reloaded whenever the store says they are stale.

Hidden cards: every board frame comes from `LiveBoard` (views per audience) or from
`race.results` (only once a race is finished); error messages quote only the mover's own
visible cards (the engine's reasons). This module must never send a board frame itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import secrets
from collections.abc import Callable
from typing import assert_never

from klondike_live import keys
from klondike_live.bus.messages import BusError, decode_daily, decode_tournament
from klondike_live.config import Settings
from klondike_live.daily.pool import DealPool
from klondike_live.engine import Board, KlondikeError, Move, NotationError, Variant
from klondike_live.errors import Refusal
from klondike_live.history import History
from klondike_live.history.accounts import AccountRecords
from klondike_live.history.bots import BotRecords
from klondike_live.history.friends import FriendRecords
from klondike_live.metrics import Metrics
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind
from klondike_live.race.room import COUNTDOWN, LOBBY, RACING, RoomState, new_room
from klondike_live.race.rules import (
    check_spectator,
    clock_waits,
    new_game_clock,
    player_back,
    player_left,
)
from klondike_live.race.status import BoardOp, BoardStatus
from klondike_live.service.accounts import Accounts
from klondike_live.service.analysis import Analyses, analysis_budget
from klondike_live.service.archive import Archive
from klondike_live.service.boards import Boards
from klondike_live.service.bot_accounts import BotAccounts
from klondike_live.service.bots import Bots
from klondike_live.service.catchup import CatchUp
from klondike_live.service.codes import RoomCodes
from klondike_live.service.connection import Connection
from klondike_live.service.daily import Clock, DailyService, system_clock
from klondike_live.service.ending import check_end
from klondike_live.service.erasure import LiveErasure
from klondike_live.service.friends import Friends
from klondike_live.service.hub import Hub
from klondike_live.service.local import LocalRoom, Viewer
from klondike_live.service.players import note_unfinished
from klondike_live.service.queries import Queries
from klondike_live.service.quick import QuickRaces
from klondike_live.service.reactions import RATE, Reactions
from klondike_live.service.rooms import Rooms
from klondike_live.service.timers import Timers
from klondike_live.service.tournaments import Tournaments
from klondike_live.store import Store, TimerKind
from klondike_live.store.accounts import AccountStore

__all__ = ["LiveService"]

log = logging.getLogger(__name__)


def check_start(seed: str, variant: Variant, prefix: tuple[str, ...]) -> None:
    """A solo game's start position: `prefix` must replay on the deal of `seed` through
    the engine's checked play, and leave a game still to play."""
    board = Board.from_seed(seed, variant)
    for index, token in enumerate(prefix, start=1):
        try:
            board.play(token)
        except KlondikeError as exc:
            raise Refusal(
                ErrorCode.BAD_FIELD, f"create: move {index} {token!r} of 'moves': {exc}"
            ) from None
    if board.is_won():
        raise Refusal(ErrorCode.BAD_FIELD, "create: 'moves' win the game; nothing to play")


class LiveService:
    """Everything a node does for its connections, given the store and the bus."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        history: History,
        hub: Hub,
        metrics: Metrics,
        *,
        seed_source: Callable[[], str] | None = None,
        pool: DealPool | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.settings = settings
        self.store = store
        self.history = history
        self.hub = hub
        self.metrics = metrics
        self.pool = pool
        # Each connection's rooms: a viewer per room it is in.
        self._members: dict[str, dict[str, Viewer]] = {}
        # Bot connections and their seat label: a level (in-server bots) or "api".
        self._bot_labels: dict[str, str] = {}
        # The daily part opens rooms and reads the clock through this service, once
        # requests come: by then `rooms` exists.
        self.daily = DailyService(
            settings,
            store,
            history,
            clock,
            metrics,
            now_ms=self.now_ms,
            open_room=self.open_room,
        )
        self.rooms = Rooms(
            store,
            hub,
            self.daily,
            pool=pool,
            new_seed=seed_source or _new_seed,
            grace_ms=int(settings.grace_seconds * 1000),
            match_interval_ms=int(settings.match_interval_seconds * 1000),
        )
        # Finished games are analysed in the background (`service.analysis`).
        self.analyses = Analyses(store, history, budget=analysis_budget(settings.analysis_seconds))
        # Finished games go to the history database (`service.archive`).
        self.archive = Archive(store, history, metrics, self.now_ms)
        self.rooms.on_finished = self._finished
        self.queries = Queries(store, history, self.daily)  # what the HTTP API answers
        self.codes = RoomCodes(store)  # races' room codes (`service.codes`)
        self.quick = QuickRaces(settings, store, self.rooms, self.codes)  # `service.quick`
        # Accounts and their sessions (`service.accounts`), asked by the gateway.
        self.accounts = Accounts(
            settings,
            AccountStore(store.redis, store.latency),
            AccountRecords(history),
            self.now_ms,
            LiveErasure(store, self.daily, self.rooms),
        )
        # Bot accounts that accounts own (`service.bot_accounts`), asked by the gateway.
        self.bot_accounts = BotAccounts(self.accounts, BotRecords(history))
        # Follows, blocks, presence and challenges (`service.friends`).
        self.friends = Friends(
            settings,
            store,
            FriendRecords(history),
            self.quick,
            lambda conn_id: self._members.get(conn_id, {}).values(),
            self.now_ms,
        )
        self.catchup = CatchUp(self.rooms, hub, metrics, history)
        self.boards = Boards(self.rooms, hub, self.catchup, metrics)
        self.tournaments = Tournaments(
            settings, store, history, self.rooms, self.boards, self.daily, hub
        )
        self.timers = Timers(settings, self.rooms, self.boards, hub)
        self.timers.on_tournament = self.tournaments.run_timer
        self.bots = Bots(self, settings)
        self.reactions = Reactions(store, hub, metrics)
        hub.on_progress = self.boards.on_progress
        hub.on_takeover = self._on_takeover
        hub.on_resync = self.catchup.resync
        hub.on_room_frame = self.catchup.on_room_frame
        hub.on_reactions = self.reactions.heard

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

    def _finished(self, room_id: str, gen: int) -> None:
        """This node finished a game: to the database, its analysis, a heat's score."""
        self.archive.finished(room_id, gen)
        if self.settings.analysis_seconds > 0:
            self.analyses.request(room_id, gen)
        self.tournaments.room_finished(room_id, gen)

    async def on_bus_message(self, channel: str, data: bytes) -> None:
        """One message from the bus: a daily or tournament update, sessions ended, or
        a room's (see `hub.py`)."""
        if channel == keys.SESSIONS_ENDED:
            self.accounts.ended(data)
            return
        if channel == keys.FRIEND_NOTICES:
            await self.friends.notice(data)
            return
        if channel == keys.TOURNAMENT_UPDATES:
            try:
                self.tournaments.on_update(decode_tournament(data).tournament)
            except BusError as exc:
                log.warning("dropped a tournament update: %s", exc)
            return
        if channel != keys.DAILY_UPDATES:
            await self.hub.on_message(channel, data)
            return
        try:
            update = decode_daily(data)
        except BusError as exc:
            log.warning("dropped a daily update: %s", exc)
            return
        self.daily.on_update(update, self.hub.broadcast)
        self.tournaments.on_daily_update(update.day, update.variant)

    async def on_resubscribed(self, channels: set[str]) -> None:
        """The bus lost these channels for a while (Redis restarted, failed over, or a
        connection broke): whatever was published meanwhile was missed. Every local
        viewer of their rooms gets the room as it is now (results included) and fresh
        boards; frames arriving meanwhile are held and released in order."""
        rooms = {room for c in channels if (room := self.hub.room_of_channel(c)) is not None}
        for local in rooms:
            log.info("room %s: catching up its viewers after a bus gap", local.room_id)
            # A failover may have lost published events that never reached a replica:
            # the streams as stored now are the truth, whatever was delivered before.
            local.delivered.clear()
            self.hub.spawn(check_end(self.rooms, local.room_id), f"end-{local.room_id}")
            for viewer in list(local.viewers):
                # Hold its frames from now on (the bus delivers again at once), not from
                # when its resync starts: none may overtake the snapshot it is owed.
                if viewer.catching_up is None:
                    viewer.catching_up = []
                self.hub.spawn(self.catchup.resync(viewer), f"recover-{viewer.conn.conn_id}")

    # ------------------------------------------------------------ connections

    def connected(self, conn: Connection, *, bot: str = "") -> None:
        """A client said hello: it may send requests now. `bot` labels a bot's
        connection: its level (an in-server bot) or "api" (a bot account's token)."""
        self._members[conn.conn_id] = {}
        if bot:
            self._bot_labels[conn.conn_id] = bot
        else:
            self.friends.connected(conn)

    async def disconnected(self, conn: Connection) -> None:
        """A connection closed: leave its rooms; a racer keeps the seat for the grace period."""
        self.daily.forget(conn)
        self.tournaments.forget(conn)
        await self.quick.forget(conn)
        await self.friends.disconnected(conn)
        self.reactions.forget(conn.conn_id)
        self._bot_labels.pop(conn.conn_id, None)
        rooms = self._members.pop(conn.conn_id, {})
        for viewer in rooms.values():
            try:
                await self._drop_viewer(viewer, leaving=False)
            except Exception:
                log.exception("cleaning up %s in room %s failed", conn.conn_id, viewer.room_id)

    async def handle(self, conn: Connection, request: msg.ServiceRequest) -> None:
        """Answer one decoded request; a refusal raises `Refusal`."""
        match request:
            case msg.Create():
                await self.create(conn, request)
            case msg.Join():
                await self.join(conn, request)
            case msg.Leave():
                await self.leave(conn, request.room)
            case msg.Ready():
                await self.ready(conn, request)
            case msg.Start():
                await self.start(conn, request)
            case msg.MoveRequest():
                await self.move(conn, request)
            case msg.Undo():
                viewer = self._viewer(conn, request.room, racer=True)
                await self.boards.write(viewer, BoardOp.UNDO, None, request.id)
            case msg.Resign():
                viewer = self._viewer(conn, request.room, racer=True)
                await self.boards.write(viewer, BoardOp.RESIGN, None, 0)
            case msg.HintRequest():
                viewer = self._viewer(conn, request.room, racer=True)
                await self.boards.hint(viewer, request)
            case msg.FinishRequest():
                viewer = self._viewer(conn, request.room, racer=True)
                await self.boards.finish_check(viewer, request)
            case msg.Rematch():
                self._viewer(conn, request.room, racer=True)
                await self.rooms.transition(request.room, lambda s, _now: s.rematch(conn.user))
            case msg.AddBot():
                await self.add_bot(conn, request)
            case msg.RemoveBot():
                self._viewer(conn, request.room, racer=True)
                seat = request.seat
                # The bot sees its seat gone in the room frame, and leaves.
                await self.rooms.transition(
                    request.room, lambda s, _now: s.remove_bot(conn.user, seat)
                )
            case msg.Queue():
                self._person(conn, "wait for a quick race")
                await self.quick.queue(conn, request)
            case msg.Unqueue():
                await self.quick.unqueue(conn, request)
            case msg.React():
                await self.react(conn, request)
            case msg.ShowReactions():
                self._viewer(conn, request.room, racer=False).reactions = request.on
            case msg.Rename():
                await self.rename(conn, request)
            case msg.DailyWatch():
                await self.daily.watch(conn, request)
            case msg.DailyUnwatch():
                self.daily.unwatch(conn, request)
            case msg.TournamentCreate():
                self._person(conn, "organize a tournament")
                await self.tournaments.create(conn, request)
            case (
                msg.TournamentEnter()
                | msg.TournamentWithdraw()
                | msg.TournamentAction()
                | msg.TournamentWatch()
                | msg.TournamentUnwatch()
            ):
                if not isinstance(request, (msg.TournamentWatch, msg.TournamentUnwatch)):
                    self._person(conn, "enter or run a tournament")
                await self.tournaments.handle(conn, request)
            case (
                msg.Follow()
                | msg.Unfollow()
                | msg.Block()
                | msg.Unblock()
                | msg.FriendsList()
                | msg.Challenge()
                | msg.ChallengeAnswer()
            ):
                self._person(conn, "have friends")
                await self.friends.handle(conn, request)
            case _:
                assert_never(request)

    # ------------------------------------------------------------ rooms

    async def create(self, conn: Connection, request: msg.Create) -> None:
        label = self._bot_labels.get(conn.conn_id, "")
        if label and (request.kind is not RoomKind.RACE or not request.bots):
            raise Refusal(ErrorCode.BOTS_NOT_ALLOWED, "a bot may only create races that allow bots")
        if request.kind is RoomKind.DAILY:
            room_id, info = await self.daily.open_attempt(conn.user, conn.name, request.variant)
            if not info["ranked"]:  # a practice game: one to come back to
                await note_unfinished(self.store.players, conn.user, room_id, self.now_ms())
            await conn.send(outgoing.Created(request.rid, room_id, daily=info).encode())
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
            host=conn.user,
            host_name=conn.name,
            now_ms=now,
            deal=request.deal,
            bots=request.bots,
            autostart=request.machine is not None,
            host_bot=label,
            best_of=request.best_of,
        )
        if request.kind is RoomKind.SOLO:
            if request.seed is not None:  # a start position: a deal and moves made on it
                check_start(request.seed, request.variant, request.prefix)
                seed, certified = request.seed, False
            else:
                seed, certified = await self.rooms.deal(request.variant, request.deal)
            ready = state.set_ready(conn.user, True)
            started = ready.start(conn.user, now, 0, seed, certified, request.prefix)
            state = new_game_clock(started.state)
            if not await self.open_room(state):
                raise Refusal(ErrorCode.BUSY, "could not create the room; try again")
            if request.public:
                await self.store.set_live(room_id, True, state.start_at_ms)
            await note_unfinished(self.store.players, conn.user, room_id, now)
        else:
            code = ""
            if request.kind is RoomKind.RACE and request.machine is None:
                code = await self.codes.allocate(room_id)
                state = dataclasses.replace(state, code=code)
            if await self.store.write_room(state, 0) is None:
                if code:
                    await self.codes.release(code, room_id)
                raise Refusal(ErrorCode.BUSY, "could not create the room; try again")
            if request.public:
                await self.store.set_public(room_id, True, now)
            if request.machine is not None:  # race the machine: its bot is seated at once
                await self.bots.add(room_id, request.machine)
        await conn.send(outgoing.Created(request.rid, room_id).encode())
        if request.join:  # the creator's seat at once: `room` and its board follow `created`
            await self.join(conn, msg.Join(room=room_id, role=Role.RACER))

    async def add_bot(self, conn: Connection, request: msg.AddBot) -> None:
        """The host seats an in-server bot (lobby of a race that allows bots)."""
        self._viewer(conn, request.room, racer=True)
        (await self.rooms.load(request.room)).check_add_bot(conn.user)
        await self.bots.add(request.room, request.level)

    async def ready(self, conn: Connection, request: msg.Ready) -> None:
        self._viewer(conn, request.room, racer=True)
        state = (
            await self.rooms.transition(
                request.room, lambda s, _now: s.set_ready(conn.user, request.ready)
            )
        ).state
        if state.autostart and state.state == LOBBY and state.all_ready():
            # Race the machine: it starts as soon as its person is ready.
            with contextlib.suppress(Refusal):
                await self._start(request.room, state.host)

    async def start(self, conn: Connection, request: msg.Start) -> None:
        self._viewer(conn, request.room, racer=True)
        await self._start(request.room, conn.user)

    async def _start(self, room_id: str, user: str) -> None:
        countdown = int(self.settings.countdown_seconds * 1000)
        state = await self.rooms.load(room_id)
        state.check_start(user)  # a refused start must not use up a certified deal
        seed, certified = await self.rooms.deal(state.variant, state.deal)
        await self.rooms.transition(
            room_id, lambda s, now: s.start(user, now, countdown, seed, certified)
        )

    async def rename(self, conn: Connection, request: msg.Rename) -> None:
        """A new display name, at once: the connection's (what its later joins, creates,
        daily attempts and entries use), its player's seat in every room the connection
        is in (whatever its role there and the room's state: every viewer gets the room
        frame, and results written from now on carry it) and its entries in the
        tournaments it watches; then `renamed`."""
        name, user = request.name, conn.user
        conn.rename(name)
        for room_id in list(self._members.get(conn.conn_id, {})):
            try:
                await self.rooms.transition(room_id, lambda s, _now: s.rename(user, name))
            except Refusal as exc:
                if exc.code is not ErrorCode.NO_ROOM:  # `busy`: the client sends it again
                    raise
        await self.tournaments.rename(conn, name)
        await conn.send(outgoing.Renamed(name, request.rid).encode())

    # ------------------------------------------------------------ joining and leaving

    async def join(self, conn: Connection, request: msg.Join) -> None:
        state = await self.rooms.load(request.room)
        label = self._bot_labels.get(conn.conn_id, "")
        if label and not state.bots:
            raise Refusal(ErrorCode.BOTS_NOT_ALLOWED, "this room does not allow bots")
        await self.daily.check_join(conn.user, state, request.role)  # the spoiler gate
        if request.role is Role.SPECTATOR:
            done = await self._own_board_done(state, conn.user)
            check_spectator(state, conn.user, own_board_done=done)  # before any change
        mine = self._members.setdefault(conn.conn_id, {})
        keeps_seat = False
        if (previous := mine.pop(request.room, None)) is not None:
            # The same connection again, in another role: a racer that watches the rest
            # of its race (or takes its seat back) is still there, its seat online.
            holds_seat = previous.role is Role.RACER or previous.keeps_seat
            switching = holds_seat and Role.SPECTATOR in (previous.role, request.role)
            keeps_seat = switching and request.role is Role.SPECTATOR
            await self._drop_viewer(previous, leaving=True, switching=switching)
            state = await self.rooms.load(request.room)
        local = await self.hub.enter(request.room)
        seat = state.seat_of(conn.user) if request.role is Role.RACER else None
        # The room's id as the local room holds it: one string for all its viewers.
        viewer = Viewer(conn, local.room_id, request.role, seat, catching_up=[])
        viewer.keeps_seat = keeps_seat
        # Reactions: on for spectators, off for racers, unless the join says.
        shown = request.reactions
        viewer.reactions = request.role is Role.SPECTATOR if shown is None else shown
        local.add(viewer)
        mine[local.room_id] = viewer
        try:
            if request.role is Role.RACER:
                state = (
                    await self.rooms.transition(
                        request.room,
                        lambda s, now: player_back(s, conn.user, conn.name, now, label),
                    )
                ).state
                local.reseat(viewer, state.seat_of(conn.user))
                await self.store.claim_connection(request.room, conn.user, conn.conn_id)
            await self.catchup.catch_up(local, viewer, state, request.since, rid=request.rid)
        except BaseException:
            mine.pop(request.room, None)
            if viewer.keeps_seat:  # nobody speaks for the seat now
                await self._seat_left(request.room, conn, leaving=False)
            await self.hub.leave(local, viewer)
            raise
        if state.state in (COUNTDOWN, RACING):
            # Its end may be due already: the node that applied the last board's end
            # may have died (or lost the store) before it finished the race.
            self.hub.spawn(check_end(self.rooms, request.room), f"end-{request.room}")
        elif state.next_at_ms:
            # A match's next deal: its timer again (the same item), in case the node
            # that finished the last deal died before it set it.
            room, gen = request.room, str(state.gen)
            await self.store.add_timer(room, TimerKind.NEXT_DEAL, gen, state.next_at_ms)

    async def react(self, conn: Connection, request: msg.React) -> None:
        """A reaction to the room: from a spectator, or a racer not playing (its board
        done, or no race under way)."""
        viewer = self._viewer(conn, request.room, racer=False)
        if not self.reactions.take(conn.conn_id):
            raise Refusal(ErrorCode.RATE_LIMITED, f"at most {RATE:g} reactions a second")
        if viewer.role is Role.RACER:
            state = await self.rooms.load(request.room)
            if state.state in (COUNTDOWN, RACING) and not await self._own_board_done(
                state, conn.user
            ):
                raise Refusal(
                    ErrorCode.STILL_PLAYING, "finish your own game first to send reactions"
                )
        await self.reactions.count(viewer.room_id, request.reaction)

    async def _own_board_done(self, state: RoomState, user: str) -> bool:
        """Whether `user` has a seat in the race under way whose board is done."""
        seat = state.seat_of(user)
        if seat is None or state.state not in (COUNTDOWN, RACING):
            return False
        record = (await self.store.load_boards(state.id, state.gen, [seat])).get(seat)
        return record is not None and BoardStatus(record.fields["status"]).done

    async def leave(self, conn: Connection, room_id: str) -> None:
        viewer = self._members.get(conn.conn_id, {}).pop(room_id, None)
        if viewer is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you are not in that room")
        await self._drop_viewer(viewer, leaving=True)

    async def _drop_viewer(self, viewer: Viewer, *, leaving: bool, switching: bool = False) -> None:
        """`viewer` is gone from its room (`leaving`: asked to). A racer's seat (or that of
        a racer's connection watching the rest of its race) goes away, unless `switching`:
        the same connection joins again in another role and still speaks for it."""
        local = self.hub.rooms.get(viewer.room_id)
        if viewer.role is Role.RACER and local is not None and viewer.seat is not None:
            await self.boards.release(local, viewer.seat)
        if (viewer.role is Role.RACER or viewer.keeps_seat) and not switching:
            await self._seat_left(viewer.room_id, viewer.conn, leaving=leaving)
        await self._left_room(local, viewer)

    async def _seat_left(self, room_id: str, conn: Connection, *, leaving: bool) -> None:
        """`conn` no longer speaks for its player's seat (if it still did)."""
        if await self.store.release_connection(room_id, conn.user, conn.conn_id):
            user = conn.user
            state = await self.rooms.load(room_id)
            if leaving and state.state == LOBBY and not state.tournament:
                # (A bot whose seat its host took off has none left.)
                await self.rooms.transition(
                    room_id, lambda s, _now: s.leave(user) if s.seat_of(user) is not None else s
                )
            else:
                # Gone from a game under way (a closed connection, or `leave`): the
                # seat waits for the grace period, then `race.rules.grace_expiry`; a
                # practice game's clock stops meanwhile (`race.rules.player_left`).
                with contextlib.suppress(Refusal):
                    await self.rooms.transition(room_id, lambda s, now: player_left(s, user, now))
                if clock_waits(state):
                    if state.state in (COUNTDOWN, RACING):  # its retention starts now
                        now = self.now_ms()
                        await note_unfinished(self.store.players, user, room_id, now)
                else:
                    due = self.now_ms() + int(self.settings.grace_seconds * 1000)
                    if leaving and state.match_on:  # asked to leave a match: forfeits now
                        due = self.now_ms()
                    await self.store.add_timer(room_id, TimerKind.GRACE, user, due)

    async def _left_room(self, local: LocalRoom | None, viewer: Viewer) -> None:
        if local is not None:
            await self.hub.leave(local, viewer)

    def _viewer(self, conn: Connection, room_id: str, *, racer: bool) -> Viewer:
        viewer = self._members.get(conn.conn_id, {}).get(room_id)
        if viewer is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "join the room first")
        if racer and viewer.role is not Role.RACER:
            raise Refusal(ErrorCode.NOT_A_RACER, "spectators cannot do that")
        return viewer

    def _person(self, conn: Connection, what: str) -> None:
        """Tournaments and quick races are for people's accounts: bots may not enter,
        organize or queue."""
        if conn.conn_id in self._bot_labels:
            raise Refusal(ErrorCode.BOTS_NOT_ALLOWED, f"a bot may not {what}")

    def _on_takeover(self, local: LocalRoom, user: str, conn_id: str) -> None:
        for viewer in list(local.viewers):
            conn = viewer.conn
            if conn.user == user and viewer.role is Role.RACER and conn.conn_id != conn_id:
                conn.close_soon(CloseCode.REPLACED, "a newer connection took over")

    # ------------------------------------------------------------ boards

    async def move(self, conn: Connection, request: msg.MoveRequest) -> None:
        viewer = self._viewer(conn, request.room, racer=True)
        try:
            move = Move.parse(request.move)
        except NotationError as exc:
            raise Refusal(ErrorCode.BAD_MOVE, exc.message) from None
        await self.boards.write(viewer, BoardOp.MOVE, move, request.id)


def _new_seed() -> str:
    """A fresh secret seed with 128 bits of randomness."""
    return secrets.token_hex(16)
