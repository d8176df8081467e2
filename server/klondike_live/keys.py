"""Redis key and channel names: the one place they are spelled.

Everything about a room shares the hash tag `{r:<room id>}`, so a room's keys live in
one Redis Cluster slot and its Lua scripts touch a single slot. Room ids are checked
against `ROOM_ID` before they reach a key name. Due work is spread over 16 timer
buckets, each with a tag of its own (`{tm:<n>}`). A few global indexes (public lobbies,
live games, the outbox of finished games on their way to the history database), the
shared secret and each race's room code (`kl:code:<code>`) are untagged single keys,
each in its own slot: they are written once per game event (a code: once per room
write) and read per page (the outbox: once a second per node), and no script touches
them together with a room's keys. Daily challenges, the certified deal pool and
players' daily statistics have hash tags of their own (`{d:<date>:<variant slug>}`,
`{pool:<slug>}`, `{u:<user>}`), see the end of this module.
"""

from __future__ import annotations

import re
import zlib
from typing import Final

from klondike_live.protocol.kinds import Audience
from klondike_live.race.codes import is_code

PREFIX: Final = "kl"
ROOM_ID: Final = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

PUBLIC_ROOMS: Final = f"{PREFIX}:public"
"""Sorted set of public rooms in the lobby, scored by their last change (ms); an entry
older than `Retention.lobby_ms` is dropped when the list is read (its lobby expired)."""

LIVE: Final = f"{PREFIX}:live"
"""Sorted set of public games being played (countdown or racing), scored by start time (ms)."""

OUTBOX: Final = f"{PREFIX}:outbox"
"""Sorted set of `room|gen` of finished games not yet in the history database, scored by
when a drainer may next try it (ms): added as a game ends, before its results are
written; claimed for a while by the node draining it; removed once the database has it
(`store.outbox`, `service.archive`)."""

TIMER_BUCKETS: Final = 16
"""Due work is spread over this many sorted sets, each with a hash tag of its own, so
that on a Cluster no shard carries all of it and no key is polled by every node at
every tick (each node polls a few buckets per tick, in turn)."""


def timers(bucket: int) -> str:
    """Sorted set of due work `room|kind|arg` of one bucket, scored by due time (ms);
    any node may run it."""
    return f"{PREFIX}:{{tm:{bucket}}}:timers"


def timer_bucket(room: str) -> int:
    """The timer bucket of a room (stable across nodes and restarts)."""
    return zlib.crc32(room.encode()) % TIMER_BUCKETS


SHARED_SECRET: Final = f"{PREFIX}:secret"
"""String: the token and daily-seed secret shared by the nodes of a shared Redis that
have none configured (64 hex characters), created once with SET NX by the first node to
start and read once by each node at its start. A single key, never touched by a script
with another key, so it needs no hash tag (on a Cluster it lives in its own slot)."""


def is_room_id(text: str) -> bool:
    """True when `text` has the shape of a room id (so it is safe in a key name)."""
    return ROOM_ID.match(text) is not None


def _tag(room: str) -> str:
    return f"{PREFIX}:{{r:{room}}}"


def room(room: str) -> str:
    """Hash: the room's state blob (`state`) and its revision (`rev`)."""
    return f"{_tag(room)}:room"


def channel(room: str) -> str:
    """Pub/sub channel of every event of the room (routing header + frame)."""
    return f"{_tag(room)}:ev"


def connection(room: str, user: str) -> str:
    """String: id of the connection that currently speaks for `user` in the room."""
    return f"{_tag(room)}:conn:{user}"


def board(room: str, gen: int, seat: int) -> str:
    """Hash: one board's sequence number, offsets, status and progress."""
    return f"{_tag(room)}:g{gen}:b{seat}"


def moves(room: str, gen: int, seat: int) -> str:
    """List: the board's move tokens, in order."""
    return f"{_tag(room)}:g{gen}:b{seat}:moves"


def times(room: str, gen: int, seat: int) -> str:
    """List: when each stored move was applied (ms since the race's start), parallel to
    `moves`."""
    return f"{_tag(room)}:g{gen}:b{seat}:times"


def stream(room: str, gen: int, seat: int, audience: Audience) -> str:
    """Capped stream of one board's events for one audience (`own` or `spectator`)."""
    return f"{_tag(room)}:g{gen}:b{seat}:{audience}"


def results(room: str, gen: int) -> str:
    """String: the encoded results of a finished race (ranking, seed, records)."""
    return f"{_tag(room)}:g{gen}:results"


def watchers(room: str) -> str:
    """Hash: spectator count per node (`node -> count:timestamp`)."""
    return f"{_tag(room)}:watchers"


def board_keys(room_id: str, gen: int, seat: int) -> list[str]:
    """The keys of one board, in the order the board script expects them."""
    return [
        board(room_id, gen, seat),
        moves(room_id, gen, seat),
        stream(room_id, gen, seat, Audience.OWN),
        stream(room_id, gen, seat, Audience.SPECTATOR),
        channel(room_id),
        times(room_id, gen, seat),
    ]


def race_keys(room_id: str, gen: int, seat: int) -> list[str]:
    """The keys one board of a race writes (hash, moves, times, both streams): volatile,
    they expire a while after the race finished (`store.Retention`)."""
    return [
        board(room_id, gen, seat),
        moves(room_id, gen, seat),
        times(room_id, gen, seat),
        stream(room_id, gen, seat, Audience.OWN),
        stream(room_id, gen, seat, Audience.SPECTATOR),
    ]


# ------------------------------------------------------------ room codes
#
# A race's code (`race.codes`) must be found from the code alone, so its key has no room
# hash tag: each code key is a single key in a slot of its own, never written by a room
# script. It is claimed with a create-if-absent when the race is created and given the
# room hash's expiry after each write of the room (`Store.write_room`); a lookup checks
# that the room it names exists and still carries that code (`service.codes`).


def code(text: str) -> str:
    """Hash: the room a code belongs to (`room`) and the room revision whose expiry
    the key last copied (`rev`)."""
    if not is_code(text):
        raise ValueError(f"not a room code for a key name: {text!r}")
    return f"{PREFIX}:code:{text}"


# ------------------------------------------------------------ daily challenges and deal pool
#
# A variant appears in key names as its slug (`draw1-passes1-f2tno`, see
# `daily.variants.variant_slug`), a day as its ISO date; user ids are checked by the
# caller (`daily.stats`) before they reach a key name. Each day+variant, each pool and
# each user has a hash tag of its own, so every daily script touches one slot.

SLUG: Final = re.compile(r"^[a-z0-9-]{1,64}$")
DAY: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _checked(pattern: re.Pattern[str], text: str, what: str) -> str:
    if not pattern.match(text):
        raise ValueError(f"not a valid {what} for a key name: {text!r}")
    return text


def _day_tag(day: str, slug: str) -> str:
    return f"{PREFIX}:{{d:{_checked(DAY, day, 'date')}:{_checked(SLUG, slug, 'variant slug')}}}"


def daily_day(day: str, slug: str) -> str:
    """Hash: the day record (`seed`, `n`, `par`, `commitment`, `moves`, `variant`, `date`)."""
    return f"{_day_tag(day, slug)}:day"


def daily_board(day: str, slug: str) -> str:
    """Sorted set: the day's leaderboard, all scores 0, member = fixed-width key + user."""
    return f"{_day_tag(day, slug)}:board"


def daily_entries(day: str, slug: str) -> str:
    """Hash: the day's leaderboard entries, user -> JSON entry (one per account)."""
    return f"{_day_tag(day, slug)}:entries"


def daily_attempts(day: str, slug: str) -> str:
    """Hash: user -> room id of the account's ranked attempt of the day (one each)."""
    return f"{_day_tag(day, slug)}:attempts"


DAILY_INDEX: Final = f"{PREFIX}:daily:index"
"""Sorted set of prepared challenges `<date>|<slug>`, scored by the date's ordinal."""

DAILY_UPDATES: Final = f"{PREFIX}:daily:updates"
"""Pub/sub channel: a leaderboard got an entry (msgpack `[date, variant text, count]`)."""


def _pool_tag(slug: str) -> str:
    return f"{PREFIX}:{{pool:{_checked(SLUG, slug, 'variant slug')}}}"


def pool_seeds(slug: str) -> str:
    """List: seeds of certified deals waiting to be dealt, oldest first."""
    return f"{_pool_tag(slug)}:seeds"


def pool_deals(slug: str) -> str:
    """Hash: seed -> JSON certificate (the winning line) of each waiting deal."""
    return f"{_pool_tag(slug)}:deals"


def pool_issued(slug: str) -> str:
    """Sorted set: seeds already handed out, scored by issue time (ms), kept 30 days."""
    return f"{_pool_tag(slug)}:issued"


def _user_tag(user: str) -> str:
    return f"{PREFIX}:{{u:{user}}}"


def user_unfinished(user: str) -> str:
    """Sorted set: room ids of the user's practice games not finished yet, scored by
    creation or by when their clock last stopped (ms)."""
    return f"{_user_tag(user)}:unfinished"


# ------------------------------------------------------------ tournaments
#
# Each tournament has a hash tag of its own (`{t:<id>}`); ids have the shape of room ids
# (`is_room_id`). The public listing is one sorted set, written when a tournament is
# created or ends and read per page; updates go out on one channel (a few per minute).


def tournament(tournament_id: str) -> str:
    """Hash: the tournament's state blob (`state`) and its revision (`rev`)."""
    return f"{PREFIX}:{{t:{tournament_id}}}:t"


TOURNAMENTS: Final = f"{PREFIX}:tournaments"
"""Sorted set of public tournaments, scored by creation time (ms)."""

TOURNAMENT_UPDATES: Final = f"{PREFIX}:tournament:updates"
"""Channel: a `bus.messages.TournamentUpdate` each time a tournament is written (every
node with watchers of it reads it again)."""


# ------------------------------------------------------------ quick race queues
#
# One queue per quick race variant (`race.quick`), under a hash tag of its own
# (`{q:<variant slug>}`): the scripts of `store.queue` touch only one queue's keys, so
# they run in one slot. Entries are named by the player's user id (checked by the
# caller), so one account holds at most one place in a queue.


def _queue_tag(slug: str) -> str:
    return f"{PREFIX}:{{q:{_checked(SLUG, slug, 'variant slug')}}}"


def queue_order(slug: str) -> str:
    """Sorted set: the waiting players' user ids, scored by their place (when they
    took it, ms)."""
    return f"{_queue_tag(slug)}:order"


def queue_entries(slug: str) -> str:
    """Hash: user id -> msgpack `[connection id, node id, display name]` of each waiting
    player."""
    return f"{_queue_tag(slug)}:entries"


def queue_leases(slug: str) -> str:
    """Sorted set: the waiting players' user ids, scored by when their entry expires
    unless their node renews it (ms)."""
    return f"{_queue_tag(slug)}:leases"


def queue_placed(slug: str) -> str:
    """Hash: user id -> `<room id>|<ms>` of each player a match took out of the queue
    and its node has not yet told."""
    return f"{_queue_tag(slug)}:placed"


def queue_fill(slug: str) -> str:
    """String: when the current fill window closes (ms); absent while fewer than two
    players wait."""
    return f"{_queue_tag(slug)}:fill"


def queue_keys(slug: str) -> list[str]:
    """The keys of one queue, in the order its scripts expect them."""
    return [
        queue_order(slug),
        queue_entries(slug),
        queue_leases(slug),
        queue_placed(slug),
        queue_fill(slug),
    ]


# ------------------------------------------------------------ accounts
#
# Each key is read and written alone (no script spans two), so on a Cluster each may
# live in any slot: a session by its id, a guest made an account under its user's tag,
# sign-in failures by address and by username key (hashed: a key name holds no
# username). Ended sessions are announced on one channel (a few per hour).


def session(sid: str) -> str:
    """String (msgpack `[user, username]`): an account session that has not ended,
    expiring with it; missing, the history database decides (`service.accounts`)."""
    return f"{PREFIX}:session:{sid}"


def user_account(user: str) -> str:
    """String: present once the user id is an account (its guest tokens are refused)."""
    return f"{_user_tag(user)}:account"


def sign_in_failures(kind: str, subject: str) -> str:
    """Counter of failed sign-ins (and account creations) of one address (`kind`
    "addr") or username key ("name", its SHA-256), expiring with its window."""
    return f"{PREFIX}:signin:{kind}:{subject}"


SESSIONS_ENDED: Final = f"{PREFIX}:sessions:ended"
"""Channel: the ids of sessions just ended, space-separated, and `ENDED_USER` + a user id
for a deleted account; every node closes its connections of those sessions, and every
connection of that user (its guest token's too)."""

ENDED_USER: Final = "user:"
"""How a `SESSIONS_ENDED` item names a user rather than a session (no session id has a
colon)."""


# ------------------------------------------------------------ friends
#
# Presence is one key per connected user, under the user's tag, written by the node that
# holds its connection and expiring unless renewed; a friends list reads its players'
# keys in one pipeline. A challenge is one key per pair of players (in any slot),
# expiring with the challenge. Notices to a player (a challenge, its end) go out on one
# channel that every node reads, and reach the player's connections on whatever node.


def presence(user: str) -> str:
    """String (msgpack `[name, doing, room]`): the user is connected, and what it is
    doing (`service.friends`); expires unless its node renews it."""
    return f"{_user_tag(user)}:presence"


def challenge(one: str, other: str) -> str:
    """String (msgpack challenge): the pending challenge between two players (either
    way), expiring with it; deleted when answered."""
    low, high = sorted((one, other))
    return f"{PREFIX}:challenge:{len(low)}:{low}:{high}"


FRIEND_NOTICES: Final = f"{PREFIX}:friends:notices"
"""Channel: msgpack `[user, frame]`: a frame for every connection of that user, on any
node (challenges and their ends)."""
