"""The Redis/Valkey store: rooms, boards, streams, connections and timers.

Every write that other nodes rely on is one atomic script (see `scripts.py`). Room
transitions are compare-and-set on the room's revision: read the state, compute the
next one with the pure rules of `race.room`, write it only if nobody changed the room
meanwhile, retry otherwise. Board events are checked against the board's sequence
number and the racer's current connection, so a stale copy or a replaced connection
can never fork a board.

Retention (`Retention`): a finished race's volatile keys (boards, moves, streams,
connection claims) and its room expire a while after the finish, set in the script that
finishes it; its results are kept until the history database has the game (the outbox,
`store.outbox`), then cached for `results_cache_ms`; a room that is not finished never
expires (writing it removes any expiry, e.g. at a rematch); spectator counts expire
unless refreshed. Daily challenge keys are not touched here (they are kept forever).
A race's code key (`keys.code`) lives in a slot of its own: it is claimed before the
room's first write, and each room write copies the room hash's expiry onto it
(`write_room`, a second step; a lookup checks the room, see `service.codes`).

Key names come from `keys.py`; nothing here decides game rules.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgpack
from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.bus.messages import (
    ReactionCounts,
    RoomFrame,
    Takeover,
    board_header,
    encode,
    note_header,
)
from klondike_live.protocol.kinds import Audience, BoardPosition, RoomKind
from klondike_live.race.live_board import BoardEvent
from klondike_live.race.room import FINISHED, LOBBY, RoomState
from klondike_live.store import scripts
from klondike_live.store.batcher import NodeClients, ScriptBatcher
from klondike_live.store.connect import RedisClient, is_cluster, ping, text
from klondike_live.store.latency import Latency
from klondike_live.store.outbox import OutboxStore
from klondike_live.store.players import PlayerStore
from klondike_live.store.queue import QueueStore
from klondike_live.store.records import (
    CAS_ATTEMPTS,
    WATCHERS_FRESH_MS,
    WATCHERS_KEEP_MS,
    BoardRecord,
    Conflict,
    Expiry,
    Retention,
    TimerKind,
    WriteResult,
    WriteStatus,
    cas_backoff,
    pack_analysis,
    unpack_analysis,
)

if TYPE_CHECKING:
    from klondike_live.config import Settings

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=4096)
def _event_keys(room_id: str, gen: int, seat: int, user: str) -> tuple[bytes, ...]:
    """The board script's keys, encoded once per board (not on every move)."""
    names = [*keys.board_keys(room_id, gen, seat), keys.connection(room_id, user)]
    return tuple(name.encode() for name in names)


def _watchers_total(counts: Mapping[Any, Any], now_ms: int) -> int:
    """Spectators of a room over the nodes that reported recently (`count:timestamp`)."""
    total = 0
    for value in counts.values():
        number, _, stamp = text(value).partition(":")
        if now_ms - int(stamp) < WATCHERS_FRESH_MS:
            total += int(number)
    return total


class Store:
    """Async access to the shared state; one per process, sharing a connection pool."""

    def __init__(
        self,
        redis: RedisClient,
        *,
        stream_maxlen: int = 1000,
        node_id: str = "",
        retention: Retention | None = None,
        url: str | None = None,
        replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        self.redis = redis
        # A cluster's batched board writes go down each node's own pipeline.
        self.nodes: NodeClients | None = None
        if is_cluster(redis):
            self.nodes = NodeClients(url) if url is not None else NodeClients.of(redis)
        self.stream_maxlen = stream_maxlen
        self.retention = retention if retention is not None else Retention()
        # Every round trip to Redis is timed (`latency`), this store's and those of the
        # stores that share its client.
        self.latency = Latency()
        self.players = PlayerStore(redis, self.retention, self.latency)
        self.outbox = OutboxStore(redis, self.latency)
        self.queue = QueueStore(redis, self.latency)  # the quick race queues
        self.node_id = node_id
        self._room_cas: AsyncScript = redis.register_script(scripts.ROOM_CAS)
        self._board_event: AsyncScript = redis.register_script(scripts.BOARD_EVENT)
        self._board_events = ScriptBatcher(
            redis,
            self._board_event,
            nodes=self.nodes,
            replicas=replicas,
            wait_timeout_ms=wait_timeout_ms,
        )
        self._claim: AsyncScript = redis.register_script(scripts.CLAIM)
        self._release: AsyncScript = redis.register_script(scripts.RELEASE)
        self._shout: AsyncScript = redis.register_script(scripts.SHOUT)
        self._unlist_if: AsyncScript = redis.register_script(scripts.UNLIST_IF)
        self._take_due: AsyncScript = redis.register_script(scripts.TAKE_DUE)
        self._analysis_claim: AsyncScript = redis.register_script(scripts.ANALYSIS_CLAIM)
        self._analysis_save: AsyncScript = redis.register_script(scripts.ANALYSIS_SAVE)
        self._results_cache: AsyncScript = redis.register_script(scripts.RESULTS_CACHE)
        self._code_claim: AsyncScript = redis.register_script(scripts.CODE_CLAIM)
        self._code_keep: AsyncScript = redis.register_script(scripts.CODE_KEEP)
        self._code_drop: AsyncScript = redis.register_script(scripts.CODE_DROP)

    @classmethod
    def from_settings(cls, redis: RedisClient, settings: Settings, *, url: str) -> Store:
        """The store of a node configured by `settings`, on the server(s) at `url`; a
        board write is acknowledged once `settings.wait_replicas` replicas have it (-1:
        one wherever its master has one in sync, decided per master as replicas come
        and go: see `store.batcher`)."""
        return cls(
            redis,
            stream_maxlen=settings.stream_maxlen,
            node_id=settings.node_id,
            retention=Retention.from_settings(settings),
            url=url,
            replicas=settings.wait_replicas,
            wait_timeout_ms=settings.wait_timeout_ms,
        )

    @property
    def latency_observer(self) -> Callable[[float], None] | None:
        """What each store round trip's duration (seconds) is passed to, if anything."""
        return self.latency.observer

    @latency_observer.setter
    def latency_observer(self, observer: Callable[[float], None] | None) -> None:
        self.latency.observer = observer

    async def close(self) -> None:
        """Close the node clients of a cluster (the main client is the caller's)."""
        if self.nodes is not None:
            await self.nodes.close()

    async def now_ms(self, room_id: str | None = None) -> int:
        """The shared clock: Redis server time in milliseconds. On a Cluster, a room's
        time is its shard's (the clock its scripts read), other times any node's."""
        if room_id is not None and is_cluster(self.redis):
            cluster: Any = self.redis
            node = cluster.get_node_from_key(keys.room(room_id))
            reply = await self.latency.timed(cluster.time(target_nodes=node))
        else:
            reply = await self.latency.timed(self.redis.time())
        seconds, micros = reply
        return int(seconds) * 1000 + int(micros) // 1000

    async def reachable(self) -> bool:
        """Whether Redis answers a PING within the health bound (a stalled server, a
        lost connection or an error all count as no)."""
        try:
            await self.latency.timed(ping(self.redis))
        except Exception:  # a StoreError, OSError, or TimeoutError from the bound
            return False
        return True

    # ------------------------------------------------------------ rooms

    async def expire_room(self, room_id: str) -> None:
        """A room that will never be played (a cancelled tournament's waiting heat)
        expires as a finished race's room does (`Retention.race_ms`)."""
        await self.latency.timed(self.redis.pexpire(keys.room(room_id), self.retention.race_ms))

    async def load_room(self, room_id: str) -> tuple[RoomState, int] | None:
        """The room's state and revision, or None when there is no such room."""
        reply: list[Any] = await self.latency.timed(
            self.redis.hmget(keys.room(room_id), ["state", "rev"])
        )
        blob, rev = reply
        if blob is None:
            return None
        return RoomState.from_blob(blob), int(rev)

    async def write_room(
        self,
        state: RoomState,
        expected_rev: int,
        frames: Sequence[RoomFrame] = (),
        hashes: Sequence[tuple[str, dict[str, str | int] | None]] = (),
        expiries: Sequence[Expiry] = (),
    ) -> int | None:
        """Write `state` if the room is still at `expected_rev`; publish `frames`, set
        `hashes` (key -> fields, or None to delete the key) and apply `expiries` in the
        same step.

        A room being played never expires: writing it removes any expiry from the room
        hash and its racers' connection claims (a rematch keeps them); a practice game
        whose clock stands still is the exception (`waiting_expiries`). A lobby expires
        `Retention.lobby_ms` after its last write (a tournament's heat waits for its
        start instead, kept).

        Returns the new revision, or None when another writer got there first.
        """
        if state.state != FINISHED and not state.paused:
            claims = [keys.connection(state.id, seat.user) for _, seat in state.seated()]
            abandoned = state.state == LOBBY and not state.tournament
            after_ms = self.retention.lobby_ms if abandoned else 0
            expiries = [*expiries, Expiry((keys.room(state.id), *claims), after_ms)]
        extra_keys = [key for key, _ in hashes]
        args: list[Any] = [expected_rev, state.to_blob(), len(frames), *map(encode, frames)]
        args.append(len(hashes))
        for index, (_, fields) in enumerate(hashes):
            if fields is None:
                args += [index + 3, 0]
            else:
                args += [index + 3, len(fields)]
                for name, value in fields.items():
                    args += [name, value]
        for expiry in expiries:
            first = len(extra_keys) + 3
            extra_keys += expiry.keys
            args += [expiry.after_ms, len(expiry.keys), *range(first, first + len(expiry.keys))]
        result = await self.latency.timed(
            self._room_cas(
                keys=[keys.room(state.id), keys.channel(state.id), *extra_keys], args=args
            )
        )
        if result and state.code:
            await self._keep_code(state, int(result))
        return int(result) if result else None

    def room_expiry_ms(self, state: RoomState) -> int:
        """How long the room hash lives after a write of `state` (0: kept), as
        `write_room` and `finished_expiries` set it (a ranked daily attempt's room
        aside: it has no code)."""
        retention = self.retention
        if state.state == FINISHED:
            return retention.race_ms
        if state.paused:
            return retention.unfinished_ms
        if state.state == LOBBY and not state.tournament:
            return retention.lobby_ms
        return 0

    async def _keep_code(self, state: RoomState, rev: int) -> None:
        """The room's code key takes the expiry the room hash got at revision `rev`
        (a second step, as the code key lives in another slot: a lookup checks the
        room, so a code key outliving its room never leads anywhere)."""
        try:
            await self.latency.timed(
                self._code_keep(
                    keys=[keys.code(state.code)],
                    args=[state.id, rev, self.room_expiry_ms(state)],
                )
            )
        except Exception:  # the room is written; its code key keeps its last expiry
            log.warning("room %s: its code's expiry was not updated", state.id, exc_info=True)

    # ------------------------------------------------------------ room codes

    async def claim_code(self, code: str, room_id: str) -> bool:
        """Claim a free room code for a room about to be written (it lives as long as
        a lobby until the room's first write copies the room's expiry): False when
        another room holds it."""
        claimed = await self.latency.timed(
            self._code_claim(keys=[keys.code(code)], args=[room_id, self.retention.lobby_ms])
        )
        return bool(claimed)

    async def code_room(self, code: str) -> str | None:
        """The id of the room that holds a code, or None (check the room: it may be
        gone, or finished)."""
        room = await self.latency.timed(self.redis.hget(keys.code(code), "room"))
        return None if room is None else text(room)

    async def drop_code(self, code: str, room_id: str) -> None:
        """Free a code if `room_id` still holds it (its room was never written, or is
        gone)."""
        await self.latency.timed(self._code_drop(keys=[keys.code(code)], args=[room_id]))

    async def update_room(
        self,
        room_id: str,
        change: Callable[[RoomState, int], RoomState],
        extras: Callable[
            [RoomState, RoomState],
            tuple[list[RoomFrame], list[tuple[str, dict[str, str | int] | None]]],
        ],
        expiries: Callable[[RoomState, RoomState], Sequence[Expiry]] | None = None,
    ) -> tuple[RoomState, RoomState]:
        """Compare-and-set loop: `change(state, now_ms)` gives the next state (or raises
        `Refusal`), `extras(old, new)` the frames and hashes written with it and
        `expiries(old, new)` (if given) the keys that expire with it.

        Returns (old, new). Raises `LookupError` for a missing room and `Conflict` when
        concurrent writers keep winning.
        """
        for attempt in range(CAS_ATTEMPTS):
            await asyncio.sleep(cas_backoff(attempt))
            loaded = await self.load_room(room_id)
            if loaded is None:
                raise LookupError(room_id)
            old, rev = loaded
            new = change(old, await self.now_ms(room_id))
            if new == old:
                return old, new
            frames, hashes = extras(old, new)
            timed = expiries(old, new) if expiries is not None else ()
            if await self.write_room(new, rev, frames, hashes, timed) is not None:
                return old, new
        raise Conflict(f"room {room_id} is too busy")

    def waiting_expiries(self, state: RoomState) -> list[Expiry]:
        """A practice game's keys (room, boards, claims) when its clock stops: kept
        `unfinished_ms` from now; when it runs again: kept (no expiry)."""
        kept = [keys.room(state.id)]
        for seat, occupant in state.seated():
            kept += keys.race_keys(state.id, state.gen, seat)
            kept.append(keys.connection(state.id, occupant.user))
        return [Expiry(tuple(kept), self.retention.unfinished_ms if state.paused else 0)]

    def finished_expiries(self, state: RoomState) -> list[Expiry]:
        """The expiries a race is finished with (`state`: the finished room), see
        `Retention`: its volatile keys after `race_ms`; its results (and a ranked daily
        attempt's room) are kept until the history database has the game
        (`drained_expiries`)."""
        kept_with_results = state.kind is RoomKind.DAILY and state.ranked
        volatile = [] if kept_with_results else [keys.room(state.id)]
        for seat, occupant in state.seated():
            volatile += keys.race_keys(state.id, state.gen, seat)
            volatile.append(keys.connection(state.id, occupant.user))
        lasting = [keys.results(state.id, state.gen)]
        if kept_with_results:
            lasting.append(keys.room(state.id))
        return [Expiry(tuple(volatile), self.retention.race_ms), Expiry(tuple(lasting), 0)]

    def drained_expiries(self, room_id: str, gen: int, ranked_daily: bool) -> list[Expiry]:
        """The expiries of a finished game's kept keys once the history database has
        it: its results are a cache from then (`results_cache_ms`); a ranked daily
        attempt's room outlives its day (`daily_room_ms`)."""
        retention = self.retention
        out = [Expiry((keys.results(room_id, gen),), retention.results_cache_ms)]
        if ranked_daily:
            room_ms = max(retention.results_cache_ms, retention.daily_room_ms)
            out.append(Expiry((keys.room(room_id),), room_ms))
        return out

    async def list_public(self, limit: int = 50) -> list[RoomState]:
        """Public rooms in the lobby, the latest changed first: the index and the rooms
        each read in one round trip (on a Cluster, one per node holding them). Entries
        whose lobby expired, was dealt or is gone are dropped from the index."""
        now_ms = await self.now_ms()
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(keys.PUBLIC_ROOMS, "-inf", now_ms - self.retention.lobby_ms)
            pipe.zrevrange(keys.PUBLIC_ROOMS, 0, limit - 1)
            listed: list[Any] = (await self.latency.timed(pipe.execute()))[1]
        ids = [text(member) for member in listed]
        if not ids:
            return []
        # Keyed commands only: on a Cluster the pipeline splits by node.
        async with self.redis.pipeline(transaction=False) as pipe:
            for room_id in ids:
                pipe.hget(keys.room(room_id), "state")
            blobs: list[Any] = await self.latency.timed(pipe.execute())
        rooms = [RoomState.from_blob(blob) for blob in blobs if blob is not None]
        out = [state for state in rooms if state.state == LOBBY]
        stale = set(ids) - {state.id for state in out}
        if stale:
            await self.latency.timed(self.redis.zrem(keys.PUBLIC_ROOMS, *stale))
        return out

    async def set_public(self, room_id: str, listed: bool, changed_ms: int = 0) -> None:
        """List a public lobby as changed at `changed_ms` (it stays listed as long as
        it is kept: `Retention.lobby_ms` from then), or unlist it."""
        if listed:
            await self.latency.timed(self.redis.zadd(keys.PUBLIC_ROOMS, {room_id: changed_ms}))
        else:
            await self.latency.timed(self.redis.zrem(keys.PUBLIC_ROOMS, room_id))

    async def set_live(self, room_id: str, listed: bool, start_ms: int = 0) -> None:
        """List a public game as being played (from its countdown on), or unlist it."""
        if listed:
            await self.latency.timed(self.redis.zadd(keys.LIVE, {room_id: start_ms}))
        else:
            await self.latency.timed(self.redis.zrem(keys.LIVE, room_id))

    async def list_live(self, limit: int = 50) -> list[tuple[RoomState, int, int]]:
        """The rooms listed as live, latest start first: each room's state, spectator
        count and listed start time.

        Listed rooms that no longer exist are unlisted; the caller checks each state
        (a room finishing meanwhile may still be listed for a moment) and may unlist a
        stale entry with `unlist_live`.
        """
        listed: list[Any] = await self.latency.timed(
            self.redis.zrevrange(keys.LIVE, 0, limit - 1, withscores=True)
        )
        ids = [text(member) for member, _ in listed]
        starts = [int(score) for _, score in listed]
        if not ids:
            return []
        now_ms = await self.now_ms()
        # Keyed commands only: on a Cluster the pipeline splits by node.
        async with self.redis.pipeline(transaction=False) as pipe:
            for room_id in ids:
                pipe.hget(keys.room(room_id), "state")
                pipe.hgetall(keys.watchers(room_id))
            replies: list[Any] = await self.latency.timed(pipe.execute())
        out = []
        gone = []
        for index, room_id in enumerate(ids):
            blob, watchers = replies[2 * index], replies[2 * index + 1]
            if blob is None:
                gone.append(room_id)
            else:
                state = RoomState.from_blob(blob)
                out.append((state, _watchers_total(watchers, now_ms), starts[index]))
        if gone:
            await self.latency.timed(self.redis.zrem(keys.LIVE, *gone))
        return out

    async def unlist_live(self, room_id: str, start_ms: int) -> None:
        """Unlist a live entry if it is still the one listed at `start_ms` (the room may
        have started again meanwhile: that entry stays)."""
        await self.latency.timed(self._unlist_if(keys=[keys.LIVE], args=[room_id, start_ms]))

    # ------------------------------------------------------------ boards

    async def load_board(self, room_id: str, gen: int, seat: int) -> BoardRecord | None:
        """A board's fields and moves, read in one transaction."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(keys.board(room_id, gen, seat))
            pipe.lrange(keys.moves(room_id, gen, seat), 0, -1)
            fields, moves = await self.latency.timed(pipe.execute())
        if not fields:
            return None
        return BoardRecord({text(k): text(v) for k, v in fields.items()}, [text(m) for m in moves])

    async def load_boards(
        self, room_id: str, gen: int, seats: Sequence[int], *, with_times: bool = False
    ) -> dict[int, BoardRecord]:
        """Several boards of one room, read in one transaction (`with_times`: also the
        time of each move, for the results)."""
        per_board = 3 if with_times else 2
        async with self.redis.pipeline(transaction=True) as pipe:
            for seat in seats:
                pipe.hgetall(keys.board(room_id, gen, seat))
                pipe.lrange(keys.moves(room_id, gen, seat), 0, -1)
                if with_times:
                    pipe.lrange(keys.times(room_id, gen, seat), 0, -1)
            replies = await self.latency.timed(pipe.execute())
        out = {}
        for index, seat in enumerate(seats):
            fields, moves = replies[per_board * index], replies[per_board * index + 1]
            times = replies[per_board * index + 2] if with_times else []
            if fields:
                out[seat] = BoardRecord(
                    {text(k): text(v) for k, v in fields.items()},
                    [text(m) for m in moves],
                    [int(t) for t in times],
                )
        return out

    async def board_statuses(self, room_id: str, gen: int, seats: Sequence[int]) -> list[str]:
        """The status of each of the boards that exist, in one round trip (whether a
        race is over, before its boards are read whole)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for seat in seats:
                pipe.hget(keys.board(room_id, gen, seat), "status")
            replies: list[Any] = await self.latency.timed(pipe.execute())
        return [text(status) for status in replies if status is not None]

    async def write_board_event(
        self,
        room_id: str,
        gen: int,
        seat: int,
        user: str,
        conn_id: str,
        event: BoardEvent,
        expected_seq: int,
        *,
        publish_own: bool = True,
    ) -> WriteResult:
        """Store and publish one board event atomically, if the board is still at
        `expected_seq` and `conn_id` (when not empty) still speaks for the racer.

        `publish_own=False` when the caller holds the racer's connection and delivers
        the own frame itself: it is still stored, just not sent over the bus.
        """
        args: list[Any] = [
            expected_seq,
            conn_id,
            str(event.op),
            self.stream_maxlen,
            event.own_offset if event.own_frame is not None else "",
            board_header(BoardPosition(Audience.OWN, seat, gen, event.own_offset))
            if publish_own
            else "",
            event.own_frame or b"",
            event.spec_offset,
            board_header(BoardPosition(Audience.SPECTATOR, seat, gen, event.spec_offset))
            if event.progress is None
            else note_header(self.node_id, event.progress, gen, event.spec_offset),
            event.spec_frame,
            len(event.tokens),
            *event.tokens,
            msgpack.packb([x for pair in event.fields.items() for x in pair]),
        ]
        reply = await self.latency.timed(
            self._board_events.call(_event_keys(room_id, gen, seat, user), args)
        )
        status = WriteStatus(text(reply[0]))
        detail = text(reply[1]) if len(reply) > 1 else ""
        if status is WriteStatus.OK:
            return WriteResult(status, now_ms=int(detail))
        return WriteResult(status, detail=detail)

    async def stream_after(
        self, room_id: str, gen: int, seat: int, audience: Audience, offset: int, limit: int
    ) -> list[tuple[int, bytes]] | None:
        """Stored frames after `offset`, in order, if the stream still holds all of them
        (the next one is `offset + 1`); None when the gap cannot be proven complete."""
        key = keys.stream(room_id, gen, seat, audience)
        reading: Awaitable[Any] = self.redis.xrange(
            key, min=f"{offset + 1}-0", max="+", count=limit + 1
        )
        entries: list[Any] = await self.latency.timed(reading)
        if len(entries) > limit:
            return None
        out: list[tuple[int, bytes]] = []
        expected = offset + 1
        for entry_id, fields in entries:
            number = int(text(entry_id).split("-")[0])
            if number != expected:
                return None
            out.append((number, fields[b"f"]))
            expected += 1
        return out

    # ------------------------------------------------------------ connections

    async def claim_connection(self, room_id: str, user: str, conn_id: str) -> None:
        """Make `conn_id` the one connection that speaks for `user` in the room; others
        are told (through the bus) to close."""
        note = encode(Takeover(user, conn_id))
        names = [keys.connection(room_id, user), keys.channel(room_id), keys.room(room_id)]
        await self.latency.timed(self._claim(keys=names, args=[conn_id, note]))

    async def publish_reactions(self, room_id: str, counts: ReactionCounts) -> None:
        """Publish reaction counts on the room's channel (every node with a viewer of the
        room hears them, this one too)."""
        note = encode(counts)
        await self.latency.timed(self._shout(keys=[keys.channel(room_id)], args=[note]))

    async def release_connection(self, room_id: str, user: str, conn_id: str) -> bool:
        """Forget `conn_id` if it still speaks for `user`; True when it did."""
        released = await self.latency.timed(
            self._release(keys=[keys.connection(room_id, user)], args=[conn_id])
        )
        return bool(released)

    async def current_connection(self, room_id: str, user: str) -> str | None:
        value = await self.latency.timed(self.redis.get(keys.connection(room_id, user)))
        return None if value is None else text(value)

    # ------------------------------------------------------------ timers

    async def add_timer(self, room_id: str, kind: TimerKind, arg: str, due_ms: int) -> None:
        bucket = keys.timers(keys.timer_bucket(room_id))
        await self.latency.timed(self.redis.zadd(bucket, {f"{room_id}|{kind}|{arg}": due_ms}))

    async def take_due_timers(
        self, buckets: Sequence[int], now_ms: int, limit: int = 100
    ) -> list[tuple[str, TimerKind, str]]:
        """Timers of `buckets` due by `now_ms`, removed in the same step: this caller
        runs each one it gets, and no other caller gets it."""
        taken = []
        for bucket in buckets:
            due: list[Any] = await self.latency.timed(
                self._take_due(keys=[keys.timers(bucket)], args=[now_ms, limit])
            )
            for member in due:
                room_id, kind, arg = text(member).split("|", 2)
                taken.append((room_id, TimerKind(kind), arg))
        return taken

    # ------------------------------------------------------------ spectators and results

    async def report_watchers(
        self, node: str, counts: dict[str, int], now_ms: int
    ) -> dict[str, int]:
        """Record this node's spectator count per room (one round trip for all rooms);
        return each room's total over the nodes that reported in the last 10 s. A room's
        counts expire `WATCHERS_KEEP_MS` after the last report."""
        rooms = list(counts)
        async with self.redis.pipeline(transaction=False) as pipe:
            for room_id in rooms:
                pipe.hset(keys.watchers(room_id), node, f"{counts[room_id]}:{now_ms}")
                pipe.pexpire(keys.watchers(room_id), WATCHERS_KEEP_MS)
                pipe.hgetall(keys.watchers(room_id))
            replies: list[Any] = await self.latency.timed(pipe.execute())
        return {
            room_id: _watchers_total(replies[3 * index + 2], now_ms)
            for index, room_id in enumerate(rooms)
        }

    async def load_results(self, room_id: str, gen: int) -> bytes | None:
        data = await self.latency.timed(self.redis.hget(keys.results(room_id, gen), "data"))
        return data if isinstance(data, bytes) else None

    async def cache_results(self, room_id: str, gen: int, data: bytes) -> bool:
        """Put a finished game's results (read back from the history database) in
        Valkey for `results_cache_ms`, so that its analysis can be claimed and kept
        beside them; nothing when they are there already."""
        cached = await self.latency.timed(
            self._results_cache(
                keys=[keys.results(room_id, gen)], args=[data, self.retention.results_cache_ms]
            )
        )
        return bool(cached)

    async def replace_results(self, room_id: str, gen: int, data: bytes) -> bool:
        """A finished game's results (if Valkey still has them) replaced by `data`, the
        same results with a deleted account erased (`history.erasure`); whether there
        were any. The key keeps its expiry."""
        key = keys.results(room_id, gen)
        if not await self.latency.timed(self.redis.hexists(key, "data")):
            return False
        await self.latency.timed(self.redis.hset(key, "data", data))
        return True

    async def load_finished(self, room_id: str, gen: int) -> tuple[bytes | None, bytes | None]:
        """A finished game's results and its analysis as stored (compressed), each or
        None: what the history database is given (`service.archive`)."""
        data, analysis = await self.latency.timed(
            self.redis.hmget(keys.results(room_id, gen), ["data", "analysis"])
        )
        return (
            data if isinstance(data, bytes) else None,
            analysis if isinstance(analysis, bytes) else None,
        )

    async def claim_analysis(self, room_id: str, gen: int, now_ms: int, stale_ms: int) -> bool:
        """Claim a finished game's analysis (`scripts.ANALYSIS_CLAIM`): True for the one
        caller that should compute it now."""
        claimed = await self.latency.timed(
            self._analysis_claim(keys=[keys.results(room_id, gen)], args=[now_ms, stale_ms])
        )
        return bool(claimed)

    async def save_analysis(self, room_id: str, gen: int, data: bytes) -> bool:
        """Store a game's analysis beside its results (same key and expiry), compressed
        (`records.pack_analysis`)."""
        packed = pack_analysis(data)
        saved = await self.latency.timed(
            self._analysis_save(keys=[keys.results(room_id, gen)], args=[packed])
        )
        return bool(saved)

    async def load_analysis(self, room_id: str, gen: int) -> tuple[bytes | None, int | None]:
        """A game's stored analysis (as given to `save_analysis`) and the time of a
        pending claim (ms), each or None."""
        data, claim = await self.latency.timed(
            self.redis.hmget(keys.results(room_id, gen), ["analysis", "analysis_claim"])
        )
        return (
            unpack_analysis(data) if isinstance(data, bytes) else None,
            int(claim) if claim is not None else None,
        )
