"""Friends: follows and blocks, presence, and challenges to a race.

    friends = Friends(settings, store, records, quick, viewers_of, now_ms)
    friends.connected(conn) / await friends.disconnected(conn)
    await friends.handle(conn, request)    # follow, unfollow, block, unblock,
                                           # friends, challenge, challenge_answer
    await friends.refresh()                # this node's players' presence, renewed
    await friends.run()                    # `refresh` every `presence_seconds`
    await friends.notice(data)             # a `keys.FRIEND_NOTICES` message

Who: any person may follow and be followed, guests and accounts alike (a user id is
the identity: an account keeps its guest's id); bots may not (they neither follow nor
challenge). Nobody follows, blocks or challenges itself. A block ends the follows
between the two players both ways, refuses new ones either way, refuses challenges
either way, withdraws a pending challenge between them, and keeps the blocked player
out of the blocker's lists (`history.friends`).

Presence (`store.friends`): each node writes, every `presence_seconds`, one key per
player connected to it, holding its name, what it is doing and the room of it:
`racing`, `lobby`, `watching`, `solo` or `online` (on a page, in no room, or on a
finished game's results); the key
lives three times the interval. The room is named only for a public race room (one
anyone may join or watch); a private room is never named. A friends list reads its
players' keys in one pipeline.

Challenges: a player challenges someone it follows who is online and has not blocked
it (nor been blocked by it), at most one pending challenge per pair (either way). The
challenge is one Valkey key that expires after `challenge_seconds`; the player
challenged hears `challenged` on every connection, on whatever node. Accepting takes
the key (one answer wins) and makes a private race with both seated (as a quick race's
room: `QuickRaces.make_race`); both hear `challenge_ended` (`accepted`, with the room).
Declining deletes it; both hear `declined`. A challenge nobody answered expires with
its key: the clients know `expires_at`, and nothing is left behind.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable
from typing import Any

import msgpack

from klondike_live.config import Settings
from klondike_live.engine import NotationError, Variant
from klondike_live.errors import Refusal
from klondike_live.history.friends import FriendRecords, Person
from klondike_live.protocol import incoming as msg
from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import Role, RoomKind
from klondike_live.race.room import FINISHED, LOBBY, RoomState
from klondike_live.service.connection import Connection
from klondike_live.service.local import Viewer
from klondike_live.service.quick import QuickRaces
from klondike_live.store import Store, StoreError
from klondike_live.store.friends import FriendStore, Presence
from klondike_live.tasks import cancel_requested

__all__ = ["DOINGS", "Friends"]

log = logging.getLogger(__name__)

DOINGS = ("racing", "lobby", "watching", "solo", "online")
"""What a connected player may be doing, the most telling first."""

UNNAMED = "Player"


class Friends:
    """This node's part of friends (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        records: FriendRecords,
        quick: QuickRaces,
        viewers_of: Callable[[str], Iterable[Viewer]],
        now_ms: Callable[[], int],
    ) -> None:
        self.settings = settings
        self.store = store
        self.keys = FriendStore(store.redis, store.latency)
        self.records = records
        self.quick = quick
        self.viewers_of = viewers_of
        self.now_ms = now_ms
        self.conns: dict[str, dict[str, Connection]] = {}  # people's, by user and id

    # ------------------------------------------------------------ connections

    def connected(self, conn: Connection) -> None:
        self.conns.setdefault(conn.user, {})[conn.conn_id] = conn

    async def disconnected(self, conn: Connection) -> None:
        """A connection closed: the player's presence goes with its last one here."""
        mine = self.conns.get(conn.user)
        if mine is None or mine.pop(conn.conn_id, None) is None:
            return
        if not mine:
            del self.conns[conn.user]
            try:
                await self.keys.clear_presence(conn.user)
            except StoreError as exc:
                log.warning("presence of %s left to expire: %s", conn.user, exc)

    async def notice(self, data: bytes) -> None:
        """A frame for a player's connections, from any node."""
        try:
            user, frame = msgpack.unpackb(data, raw=False)
        except (ValueError, TypeError, msgpack.UnpackException):
            log.warning("dropped a malformed friends notice")
            return
        for conn in list(self.conns.get(str(user), {}).values()):
            await conn.send(bytes(frame))

    # ------------------------------------------------------------ presence

    @property
    def _ttl_ms(self) -> int:
        return int(self.settings.presence_seconds * 3000)

    async def refresh(self) -> None:
        """Write the presence of every player connected here (one pipeline), after
        reading each room they are in once."""
        rooms: dict[str, RoomState | None] = {}
        present: dict[str, Presence] = {}
        for user, mine in list(self.conns.items()):
            best: tuple[int, str] = (len(DOINGS) - 1, "")
            name = ""
            for conn in mine.values():
                name = conn.name
                for viewer in self.viewers_of(conn.conn_id):
                    if viewer.room_id not in rooms:
                        loaded = await self.store.load_room(viewer.room_id)
                        rooms[viewer.room_id] = loaded[0] if loaded is not None else None
                    state = rooms[viewer.room_id]
                    if state is not None:
                        best = min(best, _doing(state, viewer))
            present[user] = (name, DOINGS[best[0]], best[1])
        await self.keys.set_presence(present, self._ttl_ms)

    async def run(self) -> None:
        """`refresh` every `presence_seconds` until cancelled."""
        while not cancel_requested():
            try:
                await self.refresh()
            except asyncio.CancelledError:
                raise
            except StoreError as exc:
                log.warning("presence not renewed: the store did not answer (%s)", exc)
            except Exception:
                log.exception("presence not renewed")
            await asyncio.sleep(self.settings.presence_seconds)
        raise asyncio.CancelledError

    # ------------------------------------------------------------ requests

    async def handle(self, conn: Connection, request: msg.FriendRequest) -> None:
        match request:
            case msg.Relate():
                await self.relate(conn, request)
            case msg.FriendsList():
                await self.send_list(conn, request.rid)
            case msg.Challenge():
                await self.challenge(conn, request)
            case msg.ChallengeAnswer():
                await self.answer(conn, request)

    def _other(self, conn: Connection, user: str) -> str:
        if user == conn.user:
            raise Refusal(ErrorCode.NOT_YOURSELF, "choose another player")
        return user

    async def relate(self, conn: Connection, request: msg.Relate) -> None:
        """Follow, unfollow, block or unblock; `relation` tells where they stand now."""
        other = self._other(conn, request.user)
        now = self.now_ms()
        if request.action in ("follow", "block"):
            name = request.name
            if name is None:
                found = await self.keys.presence([other])
                name = found[other][0] if other in found else UNNAMED
            if request.action == "follow":
                if not await self.records.follow(conn.user, conn.name, other, name, now):
                    raise Refusal(ErrorCode.BLOCKED, "you cannot follow this player")
            else:
                await self.records.block(conn.user, other, name, now)
                await self.keys.take(conn.user, other)  # a pending challenge withdrawn
        elif request.action == "unfollow":
            await self.records.unfollow(conn.user, other)
        else:
            await self.records.unblock(conn.user, other)
        following = await self.records.follows(conn.user, other)
        blocked = await self.records.blocks(conn.user, other)
        await conn.send(outgoing.Relation(other, following, blocked, request.rid).encode())

    async def send_list(self, conn: Connection, rid: int) -> None:
        """The asker's lists, whom it follows with their presence."""
        lists = await self.records.lists(conn.user)
        present = await self.keys.presence([p.user for p in lists.following])
        following = []
        for person in lists.following:
            entry: dict[str, Any] = {"user": person.user, "name": person.name}
            found = present.get(person.user)
            entry["online"] = found is not None
            if found is not None:
                entry["doing"] = found[1]
                if found[2]:
                    entry["room"] = found[2]
            following.append(entry)
        frame = outgoing.Friends(
            rid, following, _people(lists.followers), _people(lists.blocked)
        ).encode()
        await conn.send(frame)

    async def challenge(self, conn: Connection, request: msg.Challenge) -> None:
        """Challenge a followed player who is online (module docstring)."""
        other = self._other(conn, request.user)
        if await self.records.blocked_between(conn.user, other):
            raise Refusal(ErrorCode.BLOCKED, "you cannot challenge this player")
        if not await self.records.follows(conn.user, other):
            raise Refusal(ErrorCode.NOT_FOLLOWING, "follow this player to challenge them")
        if other not in await self.keys.presence([other]):
            raise Refusal(ErrorCode.NOT_ONLINE, "this player is not online now")
        ttl = int(self.settings.challenge_seconds * 1000)
        expires = self.now_ms() + ttl
        variant = str(request.variant)
        blob = msgpack.packb([conn.user, other, conn.name, variant, expires])
        if not await self.keys.offer(conn.user, other, blob, ttl):
            raise Refusal(
                ErrorCode.CHALLENGE_PENDING, "a challenge between you two is waiting already"
            )
        await conn.send(outgoing.ChallengeSent(other, variant, expires, request.rid).encode())
        frame = outgoing.Challenged(conn.user, conn.name, variant, expires).encode()
        await self.keys.notify(other, frame)

    async def answer(self, conn: Connection, request: msg.ChallengeAnswer) -> None:
        """Accept or decline the pending challenge of `request.user`."""
        other = self._other(conn, request.user)
        pending = await self.keys.pending(conn.user, other)
        found = _challenge(pending) if pending is not None else None
        if found is None or found[1] != conn.user or await self.keys.take(conn.user, other) is None:
            raise Refusal(ErrorCode.NO_CHALLENGE, "no challenge from this player is waiting")
        challenger, _, name, variant, _ = found
        if not request.accept:
            for user, them in ((challenger, conn.user), (conn.user, challenger)):
                await self.keys.notify(user, outgoing.ChallengeEnded(them, "declined").encode())
            return
        room_id = secrets.token_urlsafe(16)
        racers = [(challenger, name), (conn.user, conn.name)]
        await self.quick.make_race(room_id, Variant.parse(variant), racers, public=False)
        log.info("challenge of %s accepted by %s: race %s", challenger, conn.user, room_id)
        for user, them in ((challenger, conn.user), (conn.user, challenger)):
            frame = outgoing.ChallengeEnded(them, "accepted", room_id).encode()
            await self.keys.notify(user, frame)


def _doing(state: RoomState, viewer: Viewer) -> tuple[int, str]:
    """What a viewer of a room is doing (its index in `DOINGS`) and the room to show:
    a public race room's id, else ""."""
    shown = state.id if state.kind is RoomKind.RACE and state.public_room else ""
    if state.state == FINISHED:  # on its results: doing nothing live
        return DOINGS.index("online"), ""
    if state.kind is not RoomKind.RACE:
        return DOINGS.index("solo"), ""
    if viewer.role is Role.SPECTATOR:
        return DOINGS.index("watching"), shown
    if state.state == LOBBY:
        return DOINGS.index("lobby"), shown
    return DOINGS.index("racing"), shown


def _people(people: list[Person]) -> list[dict[str, Any]]:
    return [{"user": p.user, "name": p.name} for p in people]


def _challenge(blob: bytes) -> tuple[str, str, str, str, int] | None:
    """A stored challenge: challenger, challenged, challenger's name, variant, expiry."""
    try:
        challenger, challenged, name, variant, expires = msgpack.unpackb(blob, raw=False)
        Variant.parse(variant)
    except (ValueError, TypeError, NotationError, msgpack.UnpackException):
        return None
    return str(challenger), str(challenged), str(name), str(variant), int(expires)
