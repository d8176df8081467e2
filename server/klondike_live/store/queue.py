"""The quick race queues in Redis: one per variant, shared by every node.

    queue = QueueStore(redis, latency)
    place, waiting = await queue.join(slug, entry, place_ms, lease_until, now, fill_ms)
    await queue.leave(slug, user, conn_id)                     # True if it was waiting
    waiting, states = await queue.renew(slug, [(user, conn_id)], lease_until)
    group = await queue.match(slug, now, fill_ms, seats, room_id, keep_ms)
    await queue.told(slug, user)                               # its node told the player

The keys of a queue (`keys.queue_keys`) share one hash tag, and every change is one
script on them, so two nodes matching at once each take a different group, and a player
is taken out of the queue exactly once:

- `order`, the waiting players by place (the time they took it, ms);
- `entries`, each waiting player's connection, node and name (`conn|node|name`:
  connection and node ids never hold a `|`);
- `leases`, when each entry expires unless its node renews it; `match` first drops the
  expired ones (a dead node's);
- `placed`, the players a match took out and their room (`room|ms`), until their node
  has told them (`told`); the hash expires `keep_ms` after the last match;
- `fill`, when the current fill window closes: set when a second player waits, set
  anew after a match that leaves two or more, deleted when fewer than two wait.

`match` makes a group when two or more wait and either the fill window closed or the
seat limit is reached; the group is the oldest places, at most the seat limit.

Nothing here decides who is told what: `service.quick` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency

__all__ = ["Entry", "Placed", "QueueStore"]

# KEYS of every script: 1 order, 2 entries, 3 leases, 4 placed, 5 fill.

_JOIN: Final = """
-- ARGV: 1 user, 2 entry (conn|node|name), 3 place (ms; kept if the user already
-- waits), 4 lease until (ms), 5 now (ms), 6 fill window (ms)
local place = redis.call('ZSCORE', KEYS[1], ARGV[1]) or ARGV[3]
redis.call('ZADD', KEYS[1], place, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
local n = redis.call('ZCARD', KEYS[1])
if n >= 2 and redis.call('EXISTS', KEYS[5]) == 0 then
  redis.call('SET', KEYS[5], tonumber(ARGV[5]) + tonumber(ARGV[6]))
end
return {tostring(place), n}
"""

_LEAVE: Final = """
-- ARGV: 1 user, 2 connection id. Removes the entry if that connection holds it.
local entry = redis.call('HGET', KEYS[2], ARGV[1])
if not entry or string.match(entry, '^([^|]*)') ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('ZCARD', KEYS[1]) < 2 then redis.call('DEL', KEYS[5]) end
return 1
"""

_RENEW: Final = """
-- ARGV: 1 lease until (ms), then user, connection id pairs. Returns the number
-- waiting, then per pair: 'q' waiting (lease renewed), 'r' held by another
-- connection, 'p<room>|<ms>' placed by a match, 'g' gone.
local out = {redis.call('ZCARD', KEYS[1])}
for i = 2, #ARGV, 2 do
  local user = ARGV[i]
  local entry = redis.call('HGET', KEYS[2], user)
  if entry then
    if string.match(entry, '^([^|]*)') == ARGV[i + 1] then
      redis.call('ZADD', KEYS[3], ARGV[1], user)
      out[#out + 1] = 'q'
    else
      out[#out + 1] = 'r'
    end
  else
    local placed = redis.call('HGET', KEYS[4], user)
    if placed then out[#out + 1] = 'p' .. placed else out[#out + 1] = 'g' end
  end
end
return out
"""

_MATCH: Final = """
-- ARGV: 1 now (ms), 2 fill window (ms), 3 seat limit, 4 room id for a group,
-- 5 how long placed players are kept (ms). Returns the number of expired entries
-- dropped, then user, place, entry of each player of the group (none: no race).
local now = tonumber(ARGV[1])
local dead = redis.call('ZRANGE', KEYS[3], '-inf', now, 'BYSCORE')
for _, user in ipairs(dead) do
  redis.call('ZREM', KEYS[1], user)
  redis.call('HDEL', KEYS[2], user)
  redis.call('ZREM', KEYS[3], user)
end
local n = redis.call('ZCARD', KEYS[1])
if n < 2 then
  redis.call('DEL', KEYS[5])
  return {#dead}
end
local fill = tonumber(redis.call('GET', KEYS[5]) or '0')
if fill == 0 then
  fill = now + tonumber(ARGV[2])
  redis.call('SET', KEYS[5], fill)
end
local seats = tonumber(ARGV[3])
if n < seats and now < fill then return {#dead} end
local group = redis.call('ZRANGE', KEYS[1], 0, seats - 1, 'WITHSCORES')
local out = {#dead}
for i = 1, #group, 2 do
  local user = group[i]
  out[#out + 1] = user
  out[#out + 1] = group[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], user)
  redis.call('ZREM', KEYS[1], user)
  redis.call('HDEL', KEYS[2], user)
  redis.call('ZREM', KEYS[3], user)
  redis.call('HSET', KEYS[4], user, ARGV[4] .. '|' .. ARGV[1])
end
redis.call('PEXPIRE', KEYS[4], ARGV[5])
if redis.call('ZCARD', KEYS[1]) >= 2 then
  redis.call('SET', KEYS[5], now + tonumber(ARGV[2]))
else
  redis.call('DEL', KEYS[5])
end
return out
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """A waiting player: who, on which connection of which node, and its place (ms)."""

    user: str
    conn_id: str
    node: str
    name: str
    place_ms: int = 0

    def blob(self) -> str:
        return f"{self.conn_id}|{self.node}|{self.name}"

    @classmethod
    def parse(cls, user: str, blob: str, place_ms: int) -> Entry:
        conn_id, node, name = blob.split("|", 2)
        return cls(user, conn_id, node, name, place_ms)


@dataclass(frozen=True, slots=True)
class Placed:
    """A player a match took out of the queue: its room, and when (ms)."""

    room_id: str
    at_ms: int


QUEUED: Final = "q"
REPLACED: Final = "r"
GONE: Final = "g"

EntryState = str | Placed
"""What `renew` found of one entry: `QUEUED`, `REPLACED`, `GONE`, or `Placed`."""


class QueueStore:
    """The quick race queues (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()
        self._join: AsyncScript = redis.register_script(_JOIN)
        self._leave: AsyncScript = redis.register_script(_LEAVE)
        self._renew: AsyncScript = redis.register_script(_RENEW)
        self._match: AsyncScript = redis.register_script(_MATCH)

    async def join(
        self, slug: str, entry: Entry, lease_until: int, now_ms: int, fill_ms: int
    ) -> tuple[int, int]:
        """Put `entry` in the queue at its place (the place it holds already, if its
        user waits there); its place and how many wait now."""
        place, count = await self.latency.timed(
            self._join(
                keys=keys.queue_keys(slug),
                args=[entry.user, entry.blob(), entry.place_ms, lease_until, now_ms, fill_ms],
            )
        )
        return int(float(text(place))), int(count)

    async def leave(self, slug: str, user: str, conn_id: str) -> bool:
        """Take the entry of `user` out if `conn_id` holds it; whether it did."""
        done = await self.latency.timed(
            self._leave(keys=keys.queue_keys(slug), args=[user, conn_id])
        )
        return bool(done)

    async def renew(
        self, slug: str, entries: Sequence[tuple[str, str]], lease_until: int
    ) -> tuple[int, list[EntryState]]:
        """Renew the leases of these (user, connection) entries: how many wait, and
        what became of each entry."""
        args: list[str | int] = [lease_until]
        for user, conn_id in entries:
            args += [user, conn_id]
        reply = await self.latency.timed(self._renew(keys=keys.queue_keys(slug), args=args))
        states: list[EntryState] = []
        for item in reply[1:]:
            found = text(item)
            if found.startswith("p"):
                room_id, _, at = found[1:].rpartition("|")
                states.append(Placed(room_id, int(float(at))))
            else:
                states.append(found)
        return int(reply[0]), states

    async def match(
        self, slug: str, now_ms: int, fill_ms: int, seats: int, room_id: str, keep_ms: int
    ) -> tuple[int, list[Entry]]:
        """Drop expired entries, then take a group out for a race in `room_id` if one
        is due: (entries dropped, the group's entries oldest first; [] for none)."""
        reply = await self.latency.timed(
            self._match(keys=keys.queue_keys(slug), args=[now_ms, fill_ms, seats, room_id, keep_ms])
        )
        group = []
        for i in range(1, len(reply), 3):
            user, place, blob = text(reply[i]), text(reply[i + 1]), text(reply[i + 2])
            group.append(Entry.parse(user, blob, int(float(place))))
        return int(reply[0]), group

    async def told(self, slug: str, user: str) -> None:
        """The player's node told it where it was placed."""
        await self.latency.timed(self.redis.hdel(keys.queue_placed(slug), user))

    async def waiting(self, slug: str) -> int:
        """How many wait in the queue."""
        return int(await self.latency.timed(self.redis.zcard(keys.queue_order(slug))))
