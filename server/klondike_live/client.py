"""An asyncio client for the Klondike Live protocol, for bots, tools and tests.

    async with await Client.connect("ws://127.0.0.1:8765/ws", name="Robot") as client:
        room = await client.create_race("draw=1", seats=2)
        await client.join(room)
        ...

Every frame received is decoded and kept in `client.received` (in order), and board
frames are applied to `client.boards`, one `BoardMirror` per (room, seat, audience), so
a bot always has the current view of each board it watches, as an engine `View` (what
`klondike_live.bots.policy` and the engine read), and the offsets to resume from after
a reconnect (`client.since(room)`).

A stream read some other way (a replay's steps, frames kept in `received`) is followed
with `view_from_wire` for its `board` view, then `apply_diff` for each `diff`: a wire
diff decoded into the engine's `ViewDiff` and applied by `ViewDiff.apply`, as the
server's own views are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from klondike_live.bots.wire import apply_wire_diff, diff_from_wire, view_from_wire
from klondike_live.engine import Variant, View
from klondike_live.errors import LiveError
from klondike_live.protocol.incoming import PROTOCOL_VERSION
from klondike_live.protocol.kinds import Audience, RoomKind

Message = dict[str, Any]

__all__ = [
    "BoardMirror",
    "Client",
    "Message",
    "ServerError",
    "apply_diff",
    "diff_from_wire",
    "view_from_wire",
]

apply_diff = apply_wire_diff
"""`apply_diff(view, d)`: the engine `View` a `diff` frame's `d` turns `view` into (the
wire diff decoded by `diff_from_wire`, applied by `ViewDiff.apply`): one function for
the client's mirrors, the in-server bots and bot authors."""


class ServerError(LiveError):
    """The server refused a request: its `code` and `msg`."""

    def __init__(self, message: Message) -> None:
        super().__init__(f"{message.get('code')}: {message.get('msg')}")
        self.code = str(message.get("code"))
        self.message = message


def _acknowledges(message: Message, room: str, move_id: int) -> bool:
    """An applied move is acknowledged by its own `diff` (carrying its id), a resent one
    by an `ack`, and either by an own snapshot of its room that includes it (`last_id`
    at or above the id: a resync's snapshot stands in for the diff it covers)."""
    if message.get("room") != room:
        return False
    if message["t"] == "board":
        return message.get("audience") == Audience.OWN and int(message.get("last_id", 0)) >= move_id
    return message["t"] in ("ack", "diff") and message.get("id") == move_id


def _ready_bots(room: Message) -> int:
    return sum(1 for s in room["seats"] if s and s.get("bot") and s.get("ready"))


@dataclass
class BoardMirror:
    """The client's copy of one board for one audience, made from its first `board`
    frame: `view` is the engine `View` its frames make, in the room's variant."""

    room: str
    seat: int
    audience: Audience
    view: View
    epoch: int
    offset: int
    moves: int = 0
    status: str = ""
    score: int | None = None

    @classmethod
    def from_board(cls, message: Message, variant: Variant) -> BoardMirror:
        """The copy a `board` frame makes, `variant` being its room's (from `room`)."""
        mirror = cls(
            message["room"],
            message["seat"],
            Audience(message["audience"]),
            view_from_wire(variant, message["view"]),
            message["epoch"],
            message["off"],
        )
        mirror.apply(message)
        return mirror

    def apply(self, message: Message) -> bool:
        """Apply a `board` (it replaces the copy, whatever its offset) or a `diff` (it
        must be the next offset); False for a diff at or below the last one applied (a
        robust client ignores it)."""
        at = (message["epoch"], message["off"])
        if message["t"] == "board":
            self.view = view_from_wire(self.view.variant, message["view"])
        elif at <= (self.epoch, self.offset):
            return False
        elif at != (self.epoch, self.offset + 1):
            raise ValueError(
                f"diff {at[0]}/{at[1]} does not follow "
                f"{self.epoch}/{self.offset} of board {self.seat} ({self.audience})"
            )
        else:
            self.view = apply_diff(self.view, message["d"])
        self.epoch, self.offset = at
        self.moves = message.get("moves", self.moves)
        self.status = message.get("status", self.status)
        self.score = message.get("score", self.score)
        return True


class Client:
    """One connection to a server, after the `hello`/`welcome` handshake.

    `expect_timeout` is how long a wait for a reply lasts when the call names none (slow
    requests, a bot seated or a hint, wait two or three times as long).
    """

    def __init__(self, connection: ClientConnection, *, expect_timeout: float = 10.0) -> None:
        self.connection = connection
        self.expect_timeout = expect_timeout
        self.user = ""
        self.name = ""
        self.token = ""
        self.received: list[Message] = []
        self.boards: dict[tuple[str, int, Audience], BoardMirror] = {}
        self.variants: dict[str, Variant] = {}  # each room's, from its `room` frames
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._last_id = 0
        self._reader: asyncio.Task[None] | None = None
        self.failure: Exception | None = None  # what stopped the reader, if not a close

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str | None = None,
        token: str | None = None,
        version: int = PROTOCOL_VERSION,
        resume_from: Client | None = None,
        expect_timeout: float = 10.0,
    ) -> Client:
        """Connect and say hello; raises `ServerError` if the server refuses.

        `resume_from`, an earlier (closed) client, lends its board mirrors and move ids,
        so that joining with `since=old.since(room)` continues where it stopped.
        """
        connection = await connect(url, compression=None, max_size=2**22)
        client = cls(connection, expect_timeout=expect_timeout)
        if resume_from is not None:
            client.boards = {k: replace(m) for k, m in resume_from.boards.items()}
            client.variants = dict(resume_from.variants)
            client._last_id = resume_from._last_id
        hello: Message = {"t": "hello", "v": version}
        if name is not None:
            hello["name"] = name
        if token is not None:
            hello["token"] = token
        client._reader = asyncio.create_task(client._read())
        await client.send(hello)
        welcome = await client.expect(lambda m: m["t"] in ("welcome", "error"))
        if welcome["t"] == "error":
            raise ServerError(welcome)
        client.user, client.name, client.token = welcome["user"], welcome["name"], welcome["token"]
        return client

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self.connection.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    async def _read(self) -> None:
        try:
            await self._receive()
        except ConnectionClosed:
            pass
        except Exception as exc:  # a frame this client cannot apply: stop, and say why
            self.failure = exc
            await self.connection.close()
        finally:
            await self._inbox.put({"t": "closed"})

    async def _receive(self) -> None:
        async for frame in self.connection:
            if isinstance(frame, str):
                continue
            message = msgpack.unpackb(frame, raw=False)
            self.received.append(message)
            if message.get("t") == "room":
                self.variants[message["room"]] = Variant.parse(message["variant"])
            elif message.get("t") in ("board", "diff"):
                room = message["room"]
                key = (room, message["seat"], Audience(message["audience"]))
                mirror = self.boards.get(key)
                if mirror is not None:
                    mirror.apply(message)
                elif message["t"] == "diff":
                    raise ValueError(f"a diff of board {key} before its snapshot")
                elif room not in self.variants:
                    raise ValueError(f"a board of room {room} before its room frame")
                else:
                    self.boards[key] = BoardMirror.from_board(message, self.variants[room])
                self._last_id = max(self._last_id, message.get("last_id", 0))
            await self._inbox.put(message)

    def _new_id(self) -> int:
        """Request and move ids: strictly increasing, and above every move id the server
        has applied for this client (told in its own board snapshots as `last_id`)."""
        self._last_id += 1
        return self._last_id

    # ------------------------------------------------------------ raw messages

    async def send(self, message: Message) -> None:
        await self.connection.send(msgpack.packb(message, use_bin_type=True))

    async def expect(
        self, match: Callable[[Message], bool], timeout: float | None = None
    ) -> Message:
        """The next received message that matches (others are skipped; all stay in
        `received`). A connection close raises `ConnectionError`."""

        async def next_match() -> Message:
            while True:
                message = await self._inbox.get()
                if message["t"] == "closed":
                    await self._inbox.put(message)
                    why = f": {self.failure}" if self.failure else ""
                    raise ConnectionError(f"connection closed ({self.connection.close_code}){why}")
                if match(message):
                    return message

        return await asyncio.wait_for(next_match(), timeout or self.expect_timeout)

    async def call(
        self, message: Message, answered: Callable[[Message], bool], timeout: float | None = None
    ) -> Message:
        """Send `message` and return the first reply `answered` accepts, or raise
        `ServerError` for an error naming the request (by `rid` or move `id`).

        A `rate_limited` refusal is not final: the request is sent again, unchanged, after
        a pause that doubles each time (move ids make resending safe).
        """
        pause = 0.25
        rid, move_id = message.get("rid"), message.get("id")

        def mine(m: Message) -> bool:
            if m["t"] == "error":
                return (rid is not None and m.get("rid") == rid) or (
                    move_id is not None and m.get("id") == move_id
                )
            return answered(m)

        while True:
            await self.send(message)
            answer = await self.expect(mine, timeout)
            if answer["t"] != "error":
                return answer
            if answer.get("code") != "rate_limited" or pause > 5:
                raise ServerError(answer)
            await asyncio.sleep(pause)
            pause *= 2

    async def _request(self, message: Message, reply: str, timeout: float | None = None) -> Message:
        rid = self._new_id()
        message["rid"] = rid
        return await self.call(message, lambda m: m["t"] == reply and m.get("rid") == rid, timeout)

    # ------------------------------------------------------------ rooms

    async def create_race(
        self,
        variant: str = "draw=1",
        *,
        seats: int = 2,
        time_limit: int = 0,
        public: bool = False,
        bots: bool = False,
        machine: str | None = None,
        best_of: int = 1,
    ) -> str:
        """A race room; `bots` lets bots take seats, `machine` (a bot level) makes it a
        "race the machine" room: that bot seated at once, the start when you are ready;
        `best_of` 3, 5 or 7 makes its races the deals of a match."""
        message: Message = {
            "t": "create",
            "kind": RoomKind.RACE,
            "variant": variant,
            "seats": seats,
            "time_limit": time_limit,
            "public": public,
        }
        if bots or machine is not None:
            message["bots"] = True
        if machine is not None:
            message["machine"] = machine
        if best_of != 1:
            message["best_of"] = best_of
        answer = await self._request(message, "created")
        return str(answer["room"])

    async def add_bot(self, room: str, level: str = "steady") -> Message:
        """Seat an in-server bot (host, lobby); returns the first room frame showing one
        more ready bot than the last room frame received before the request."""
        known = 0
        for m in reversed(self.received):
            if m.get("t") == "room" and m.get("room") == room:
                known = _ready_bots(m)
                break

        def seated(m: Message) -> bool:
            return m["t"] == "room" and m.get("room") == room and _ready_bots(m) > known

        rid = self._new_id()
        message = {"t": "add_bot", "room": room, "level": level, "rid": rid}
        return await self.call(message, seated, timeout=2 * self.expect_timeout)

    async def remove_bot(self, room: str, seat: int) -> Message:
        """Take the bot in `seat` off it (host, lobby); returns the first room frame with
        that seat free."""

        def freed(m: Message) -> bool:
            seats = m.get("seats", []) if m["t"] == "room" and m.get("room") == room else []
            return seat < len(seats) and seats[seat] is None

        rid = self._new_id()
        message = {"t": "remove_bot", "room": room, "seat": seat, "rid": rid}
        return await self.call(message, freed)

    async def create_solo(self, variant: str = "draw=1") -> str:
        answer = await self._request(
            {"t": "create", "kind": RoomKind.SOLO, "variant": variant}, "created"
        )
        return str(answer["room"])

    async def join(
        self, room: str, role: str = "racer", *, since: list[list[int]] | None = None
    ) -> Message:
        """Join a room; returns the `room` state message (errors raise).

        `since` (from `since(room)` of this or an earlier connection) asks for only the
        events after those offsets.
        """
        message: Message = {"t": "join", "room": room, "as": role}
        if since:
            message["since"] = since
        rid = message["rid"] = self._new_id()
        return await self.call(message, lambda m: m["t"] == "room" and m.get("rid") == rid)

    async def rename(self, name: str) -> str:
        """Take a new display name at once (the seats of this connection's rooms
        follow); the name as the server shows it."""
        answer = await self._request({"t": "rename", "name": name}, "renamed")
        self.name = str(answer["name"])
        return self.name

    def since(self, room: str) -> list[list[int]]:
        """`[seat, epoch, offset]` of every board of `room` this client has seen."""
        return [[m.seat, m.epoch, m.offset] for (r, _, _), m in self.boards.items() if r == room]

    async def ready(self, room: str, ready: bool = True) -> None:
        await self.send({"t": "ready", "room": room, "ready": ready})

    async def start(self, room: str) -> None:
        await self.send({"t": "start", "room": room})

    async def move(self, room: str, token: str, move_id: int | None = None) -> Message:
        """Send a move and wait for its acknowledgement: the own `diff` carrying its id
        (or an `ack` when the id was already applied). Refusals raise `ServerError`."""
        move_id = self._new_id() if move_id is None else move_id
        message = {"t": "move", "room": room, "id": move_id, "m": token}
        return await self.call(message, lambda m: _acknowledges(m, room, move_id))

    async def undo(self, room: str) -> Message:
        move_id = self._new_id()
        message = {"t": "undo", "room": room, "id": move_id}
        return await self.call(message, lambda m: _acknowledges(m, room, move_id))

    async def hint(self, room: str) -> Message:
        return await self._request(
            {"t": "hint", "room": room}, "hint", timeout=3 * self.expect_timeout
        )

    async def finish(self, room: str) -> Message:
        """Ask whether the rest of a practice game is forced (moving cards home wins)."""
        return await self._request({"t": "finish", "room": room}, "finish")

    async def resign(self, room: str) -> None:
        await self.send({"t": "resign", "room": room})

    async def rematch(self, room: str) -> None:
        await self.send({"t": "rematch", "room": room})

    async def leave(self, room: str) -> None:
        await self.send({"t": "leave", "room": room})

    # ------------------------------------------------------------ quick races

    async def queue(self, variant: str = "draw=1") -> Message:
        """Wait for a quick race of `variant`: the `queued` reply."""
        return await self._request({"t": "queue", "variant": variant}, "queued")

    async def unqueue(self) -> Message:
        """Stop waiting: the `unqueued` reply."""
        return await self._request({"t": "unqueue"}, "unqueued")

    async def matched(self, timeout: float | None = None) -> str:
        """Wait until a quick race is made for this client: its room's id."""
        found = await self.expect(lambda m: m["t"] == "matched", timeout)
        return str(found["room"])

    async def react(self, room: str, reaction: str) -> None:
        """Send a reaction (`clap`, `fire`, `wow`, `laugh`, `sad`, `party`): it comes
        back, added up, in the room's `reactions` frames."""
        await self.send({"t": "react", "room": room, "r": reaction})

    async def show_reactions(self, room: str, on: bool = True) -> None:
        """Whether the room's `reactions` frames reach this connection from now on;
        returns once the server applied it (a `ping` sent after it was answered)."""
        await self.send({"t": "show_reactions", "room": room, "on": on})
        await self._request({"t": "ping"}, "pong")

    # ------------------------------------------------------------ tournaments

    async def create_tournament(
        self, name: str, fmt: str, variants: list[str], **fields: Any
    ) -> str:
        """Organize a tournament (`fmt` "series" with `from`/`to` dates, or "heats" with
        `start_at`, `heats`, `pause`?, `time_limit`?; always `closes_at`): its id."""
        message: Message = {
            "t": "tournament_create",
            "name": name,
            "format": fmt,
            "variants": variants,
            **fields,
        }
        answer = await self._request(message, "tournament_created")
        return str(answer["tournament"])

    async def watch_tournament(self, tournament: str) -> Message:
        """Get the tournament now and after every change (`tournament` frames)."""
        answer = await self._request(
            {"t": "tournament_watch", "tournament": tournament}, "tournament"
        )
        return dict(answer["tournament"])

    async def unwatch_tournament(self, tournament: str) -> None:
        await self.send({"t": "tournament_unwatch", "tournament": tournament})

    async def enter_tournament(self, tournament: str) -> Message:
        """Enter (registration open); the tournament as it is now."""
        answer = await self._request(
            {"t": "tournament_enter", "tournament": tournament}, "tournament"
        )
        return dict(answer["tournament"])

    async def withdraw_tournament(self, tournament: str) -> Message:
        message = {"t": "tournament_withdraw", "tournament": tournament}
        return dict((await self._request(message, "tournament"))["tournament"])

    async def tournament_action(
        self, tournament: str, action: str, user: str | None = None
    ) -> Message:
        """The organizer's `open`, `close`, `remove` (with `user`), `start_heat` or
        `cancel`; the tournament as it is after it."""
        message: Message = {"t": "tournament_action", "tournament": tournament, "action": action}
        if user is not None:
            message["user"] = user
        return dict((await self._request(message, "tournament"))["tournament"])

    def tournament(self, tournament: str) -> Message | None:
        """The last `tournament` frame received of it, or None."""
        for m in reversed(self.received):
            if m.get("t") == "tournament" and m["tournament"].get("id") == tournament:
                return dict(m["tournament"])
        return None

    async def heat_room(self, tournament: str, heat: int, timeout: float | None = None) -> str:
        """The room of a heat once it is open (watch the tournament first; the wait is
        three times `expect_timeout` unless `timeout` says otherwise)."""

        def opened(m: Message) -> bool:
            if m.get("t") != "tournament" or m["tournament"].get("id") != tournament:
                return False
            rounds = m["tournament"]["rounds"]
            return len(rounds) >= heat and "room" in rounds[heat - 1]

        known = self.tournament(tournament)
        if known is not None and "room" in known["rounds"][heat - 1]:
            return str(known["rounds"][heat - 1]["room"])
        found = await self.expect(opened, timeout or 3 * self.expect_timeout)
        return str(found["tournament"]["rounds"][heat - 1]["room"])

    def own_board(self, room: str, seat: int) -> BoardMirror:
        return self.boards[(room, seat, Audience.OWN)]
