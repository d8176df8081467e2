"""In-server bot racers: clients of the live service with their own user ids.

    bots = Bots(service, settings)
    racer = await bots.add(room_id, BotLevel.STEADY)   # seated and ready, or Refusal
    await bots.stop()

A bot is a `BotConnection` (an `InProcess` connection: the transport's broadcast hands
it frames, like a socket would get them) driven by a `BotRacer`. It joins a room as a
racer through `LiveService.join` like anyone, gets the frames a racer in its seat gets
(room frames, its own board's snapshots and diffs, results) and answers with
`MoveRequest`s through `LiveService.handle`. Its policy (`bots.policy.decide`) gets only
the view made from those frames: nothing in this module reads a board, the store or
another seat's frames.

Each move waits for the bot's think time (`bots.levels`, scaled by `bot_pace_scale`),
for its decision (made in the process-wide `ThinkPool`, at a lower CPU priority) and for
the node's `LoadGate` (fewer bot moves while the event loop lags). A bot readies itself
in every lobby of its room (rematches too), plays every race it is seated in to its end
(whoever is still there: its seat is never away while it plays) and leaves a lobby or a
finished race once no person is seated online.
A bot runs on the node that seated it; if that node stops, its seat is offline like a
person's whose connection dropped (grace, then abandoned).
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from typing import Any, Protocol

import msgpack

from klondike_live.bots.levels import LEVELS, LevelSpec
from klondike_live.bots.policy import Memory
from klondike_live.bots.pool import LoadGate, ThinkPool
from klondike_live.bots.wire import apply_wire_diff, view_from_wire
from klondike_live.config import Settings
from klondike_live.engine import Variant, View
from klondike_live.errors import Refusal
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import CloseCode, ErrorCode
from klondike_live.protocol.kinds import Audience, BotLevel, Role
from klondike_live.race.status import BoardStatus
from klondike_live.service.connection import Connection, InProcess
from klondike_live.service.rooms import Rooms
from klondike_live.tasks import TaskGroup

log = logging.getLogger(__name__)

MOVE_WAIT = 5.0
"""Seconds a bot waits for its move's acknowledgement before it looks again."""


class LiveService(Protocol):
    """What a bot uses of the live service (`service.live.LiveService`): the requests
    any client makes."""

    rooms: Rooms

    def connected(self, conn: Connection, *, bot: str = "") -> None: ...
    async def disconnected(self, conn: Connection) -> None: ...
    async def join(self, conn: Connection, request: msg.Join) -> None: ...
    async def ready(self, conn: Connection, request: msg.Ready) -> None: ...
    async def leave(self, conn: Connection, room_id: str) -> None: ...
    async def handle(self, conn: Connection, request: msg.MoveRequest | msg.Resign) -> None: ...
    def now_ms(self) -> int: ...


class BotConnection(InProcess):
    """A bot's connection: frames go to its inbox; it never lags."""

    def __init__(self, user: str, name: str) -> None:
        self.conn_id = "bot-" + secrets.token_urlsafe(9)
        self.user = user
        self.name = name
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False

    def rename(self, name: str) -> None:
        self.name = name

    def deliver(self, frame: bytes) -> None:
        if not self.closed:
            self.inbox.put_nowait(frame)

    async def send(self, frame: bytes) -> None:
        self.deliver(frame)

    def close_soon(self, code: CloseCode, reason: str) -> None:
        if not self.closed:
            self.closed = True
            self.inbox.put_nowait(None)

    def lagging(self) -> bool:
        return False

    async def drained(self) -> bool:
        return not self.closed


class BotRacer:
    """One bot in one room: reads its frames, thinks, moves."""

    def __init__(
        self,
        service: LiveService,
        room_id: str,
        level: BotLevel,
        pool: ThinkPool,
        gate: LoadGate,
        pace_scale: float,
    ) -> None:
        self.service = service
        self.room_id = room_id
        self.level = level
        self.spec: LevelSpec = LEVELS[level]
        self.pool = pool
        self.gate = gate
        self.pace_scale = pace_scale
        self.conn = BotConnection(f"bot_{level}_{secrets.token_hex(6)}", self.spec.name)
        self.seed = secrets.randbits(63)
        self.rng = random.Random(self.seed)
        self.memory = Memory()
        self.moves_made = 0
        # What its frames told it.
        self.phase = ""
        self.gen = 0
        self.variant = Variant()
        self.start_at = 0
        self.seat: int | None = None
        self.view: View | None = None
        self.epoch = 0
        self.offset = 0
        self.status = ""
        self.last_id = 0
        self.done = False
        self.changed = asyncio.Event()

    # ------------------------------------------------------------ frames

    def take(self, message: dict[str, Any]) -> None:
        """Fold one received frame into what the bot knows."""
        kind = message.get("t")
        if message.get("room") != self.room_id:
            return
        if kind == "room":
            self._take_room(message)
        elif kind in ("board", "diff") and message.get("audience") == Audience.OWN:
            if message.get("seat") != self.seat:
                return
            if kind == "board":
                self.view = view_from_wire(self.variant, message["view"])
                self.last_id = max(self.last_id, int(message.get("last_id", 0)))
            elif self.view is not None and message["epoch"] == self.epoch:
                if message["off"] != self.offset + 1:
                    return  # not the next one: a snapshot will follow
                self.view = apply_wire_diff(self.view, message["d"])
            else:
                return
            self.epoch, self.offset = message["epoch"], message["off"]
            self.status = message.get("status", self.status)
        self.changed.set()

    def _take_room(self, message: dict[str, Any]) -> None:
        gen = int(message.get("gen", 0))
        if gen != self.gen:
            self.view, self.status, self.memory, self.moves_made = None, "", Memory(), 0
        self.gen = gen
        self.phase = str(message.get("state", ""))
        self.variant = Variant.parse(str(message["variant"]))
        self.start_at = int(message.get("start_at", 0))
        seats = [s for s in message.get("seats", []) if s is not None]
        mine = next((s for s in seats if s["user"] == self.conn.user), None)
        self.seat = None if mine is None else int(mine["seat"])
        # A race under way is played to its end whoever watches (a person who resigned,
        # won or left still sees it finish, and is never ranked above a bot that
        # stopped), and so is a match to its last deal; a lobby or a finished race with
        # no person online is left.
        match = message.get("match")
        match_on = isinstance(match, dict) and not match.get("over", True)
        under_way = self.phase in ("countdown", "racing") or match_on
        people_online = any(not s.get("bot") and s.get("online") for s in seats)
        if mine is None or not (under_way or people_online):
            self.done = True

    def may_move(self) -> bool:
        return (
            self.view is not None
            and self.status == BoardStatus.PLAYING
            and self.phase in ("countdown", "racing")
        )

    # ------------------------------------------------------------ life

    async def join(self) -> None:
        """Take a seat and say ready (errors reach the caller)."""
        service = self.service
        service.connected(self.conn, bot=str(self.level))
        try:
            await service.join(self.conn, msg.Join(self.room_id, Role.RACER))
            await service.ready(self.conn, msg.Ready(self.room_id, True))
        except BaseException:
            await service.disconnected(self.conn)
            raise

    async def run(self) -> None:
        """Play until the room has no person left (or the node stops)."""
        thinker: asyncio.Task[None] | None = None
        try:
            while not self.done:
                frame = await self.conn.inbox.get()
                while frame is not None:
                    self.take(msgpack.unpackb(frame, raw=False))
                    try:
                        frame = self.conn.inbox.get_nowait()
                    except asyncio.QueueEmpty:
                        break
                if frame is None:
                    break
                if self.phase == "lobby" and not self.done:
                    await self._ready_again()
                if thinker is None or thinker.done():
                    thinker = asyncio.create_task(self._play(), name=f"bot-{self.conn.user}")
        finally:
            if thinker is not None:
                thinker.cancel()
            await self._leave()

    async def _ready_again(self) -> None:
        """Ready in a lobby (a rematch) unless already so."""
        state = await self.service.rooms.load(self.room_id)
        seat = state.seat_of(self.conn.user)
        if seat is not None and (occupant := state.seats[seat]) is not None and not occupant.ready:
            try:
                await self.service.ready(self.conn, msg.Ready(self.room_id, True))
            except Refusal as exc:
                log.info("bot %s could not ready: %s", self.conn.user, exc.message)

    async def _leave(self) -> None:
        try:
            if self.phase == "lobby":
                await self.service.leave(self.conn, self.room_id)
        except Refusal:
            pass
        except Exception:
            log.exception("bot %s leaving room %s", self.conn.user, self.room_id)
        finally:
            await self.service.disconnected(self.conn)

    async def _play(self) -> None:
        """Move while the board is being played."""
        while self.may_move():
            wait = self.start_at - self.service.now_ms()
            if wait > 0:
                await asyncio.sleep(wait / 1000)
            view = self.view
            assert view is not None
            offset, gen = self.offset, self.gen
            think = self.spec.pace.draw(self.rng) * self.pace_scale
            clock = asyncio.get_running_loop().time
            started = clock()
            token, memory = await self.pool.decide(view, self.memory, self.spec, self.seed)
            await asyncio.sleep(max(0.0, think - (clock() - started)))
            await self.gate.acquire()
            if (self.offset, self.gen) != (offset, gen) or not self.may_move():
                continue  # the board changed meanwhile: think again
            self.memory = memory
            self.changed.clear()
            try:
                if token is None:
                    await self.service.handle(self.conn, msg.Resign(self.room_id))
                else:
                    self.last_id += 1
                    await self.service.handle(
                        self.conn, msg.MoveRequest(self.room_id, self.last_id, token)
                    )
                    self.moves_made += 1
            except Refusal as exc:
                if exc.code is ErrorCode.ILLEGAL_MOVE:
                    log.warning("bot %s played an illegal move %s", self.conn.user, token)
                    await self.service.handle(self.conn, msg.Resign(self.room_id))
                elif exc.code in (ErrorCode.WRONG_STATE, ErrorCode.NOT_IN_ROOM):
                    return
                else:
                    await asyncio.sleep(0.5)  # busy, unavailable: try again
                continue
            try:
                async with asyncio.timeout(MOVE_WAIT):
                    while (self.offset, self.gen) == (offset, gen):
                        await self.changed.wait()
                        self.changed.clear()
            except TimeoutError:
                pass


class Bots:
    """This node's in-server bots, their thinking pool and load gate."""

    def __init__(self, service: LiveService, settings: Settings) -> None:
        self.service = service
        self.settings = settings
        self.pool = ThinkPool(settings.bot_workers)
        self.gate = LoadGate(settings.bot_moves_per_second)
        self.racers: dict[str, BotRacer] = {}
        self._tasks = TaskGroup()
        self._watch: asyncio.Task[None] | None = None

    async def add(self, room_id: str, level: BotLevel) -> BotRacer:
        """Seat a bot of `level` in the room's lobby, ready; `Refusal` if refused."""
        if len(self.racers) >= self.settings.bot_max:
            raise Refusal(ErrorCode.BUSY, "this server runs as many bots as it can")
        if self._watch is None:
            self._watch = asyncio.create_task(self.gate.watch(), name="bot-load-gate")
        racer = BotRacer(
            self.service, room_id, level, self.pool, self.gate, self.settings.bot_pace_scale
        )
        await racer.join()
        self.racers[racer.conn.conn_id] = racer

        async def run() -> None:
            try:
                await racer.run()
            finally:
                self.racers.pop(racer.conn.conn_id, None)

        self._tasks.spawn(run(), f"bot-{racer.conn.user}")
        return racer

    async def stop(self) -> None:
        """Stop every bot (their seats go offline) and the thinking processes."""
        for racer in list(self.racers.values()):
            racer.conn.close_soon(CloseCode.SERVER_RESTART, "the node is stopping")
        await asyncio.sleep(0)
        await self._tasks.cancel()
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        await self.pool.close()
