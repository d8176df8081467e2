"""The daily challenges' Redis commands: day records, attempts, leaderboards, updates.

    daily = DailyStore(redis)
    await daily.create_day(day, DRAW1, record.to_fields())    # False: one exists already
    fields = await daily.load_day(day, DRAW1)                 # dict[str, str] | None
    await daily.claim_attempt(day, DRAW1, user, room_id)      # HSETNX: one room per account
    count = await daily.add_entry(day, DRAW1, user, entry_json, member)   # 0: has one
    await daily.rename_entry(day, DRAW1, user, (new_user, new_json, member, new_member))
    rows = await daily.rows(day, DRAW1, KEY_WIDTH, 0, 49)     # [(entries below, entry JSON)]
    await daily.publish_update(DailyUpdate(date, variant, count))   # keys.DAILY_UPDATES

Keys come from `keys.py` (`daily_day`, `daily_attempts`, `daily_board`, `daily_entries`
of the date and the variant's slug; `DAILY_INDEX`, `DAILY_UPDATES`). Each write that
must be atomic is one Lua script on one day+variant's hash tag, so one Cluster slot:
a day record is written only into an absent key (the first certifier wins), and a
leaderboard entry goes into the entries hash (`HSETNX`) and the board together (and is
replaced in both together: a deleted account's, `rename_entry`).

The leaderboard's layout is the caller's (`daily.leaderboard`): a member is a
fixed-width sort key followed by the user id, every score 0, and this module only
counts and reads members in byte order. Entries and day records are handed over as
text and come back as text; an update is published as the bytes the caller encoded.

This module must never decide a daily rule (who may record, how entries sort, when a
day closes, what a seed is) and never log a seed or an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any, Final

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.bus.messages import DailyUpdate, encode_daily
from klondike_live.daily.variants import variant_slug
from klondike_live.engine import Variant
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency

__all__ = ["DailyStore"]

_CREATE_DAY: Final = """
-- KEYS: 1 day hash; ARGV: field, value, ... Writes only when the day has no record.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

_ADD_ENTRY: Final = """
-- KEYS: 1 entries hash, 2 board zset; ARGV: 1 user, 2 entry JSON, 3 member
-- Returns the number of entries after adding, or 0 when the user has one already.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], 0, ARGV[3])
return redis.call('ZCARD', KEYS[2])
"""

_RENAME_ENTRY: Final = """
-- KEYS: 1 entries hash, 2 board zset, 3 attempts hash
-- ARGV: 1 user, 2 new user, 3 new entry JSON, 4 old member, 5 new member
-- The user's attempt (if any) becomes the new user's; returns 1 when its entry and
-- member became the new ones, 0 without an entry.
local room = redis.call('HGET', KEYS[3], ARGV[1])
if room then
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[2], room)
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[2], 0, ARGV[5])
return 1
"""

_ROWS: Final = """
-- KEYS: 1 board zset, 2 entries hash
-- ARGV: 1 key width, then 'range', start, stop  or  'around', member, n
-- Returns {count below key, entry JSON, ...} for each row, in order.
local width = tonumber(ARGV[1])
local start, stop
if ARGV[2] == 'around' then
  local index = redis.call('ZRANK', KEYS[1], ARGV[3])
  if not index then return {} end
  start = math.max(0, index - tonumber(ARGV[4]))
  stop = index + tonumber(ARGV[4])
else
  start = tonumber(ARGV[3])
  stop = tonumber(ARGV[4])
end
local out = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], start, stop)) do
  local key = string.sub(member, 1, width)
  out[#out + 1] = redis.call('ZLEXCOUNT', KEYS[1], '-', '(' .. key)
  out[#out + 1] = redis.call('HGET', KEYS[2], string.sub(member, width + 1))
end
return out
"""


def _names(day: date, variant: Variant) -> tuple[str, str]:
    return day.isoformat(), variant_slug(variant)


class DailyStore:
    """Daily challenges in Redis, for every node (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()
        self._create_day: AsyncScript = redis.register_script(_CREATE_DAY)
        self._add_entry: AsyncScript = redis.register_script(_ADD_ENTRY)
        self._rows: AsyncScript = redis.register_script(_ROWS)
        self._rename_entry: AsyncScript = redis.register_script(_RENAME_ENTRY)

    # ------------------------------------------------------------ day records

    async def load_day(self, day: date, variant: Variant) -> dict[str, str] | None:
        """The stored fields of the day's record, or None when it has none."""
        raw: dict[Any, Any] = await self.latency.timed(
            self.redis.hgetall(keys.daily_day(*_names(day, variant)))
        )
        if not raw:
            return None
        return {text(k): text(v) for k, v in raw.items()}

    async def create_day(self, day: date, variant: Variant, fields: Mapping[str, str]) -> bool:
        """Write the day's record unless it has one (atomic); True when written."""
        flat = [item for pair in fields.items() for item in pair]
        written = await self.latency.timed(
            self._create_day(keys=[keys.daily_day(*_names(day, variant))], args=flat)
        )
        return bool(written)

    async def index_day(self, day: date, variant: Variant) -> None:
        """List the challenge in `keys.DAILY_INDEX` (scored by the date's ordinal)."""
        member = "|".join(_names(day, variant))
        await self.latency.timed(self.redis.zadd(keys.DAILY_INDEX, {member: day.toordinal()}))

    async def indexed_days(self, through: date, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` listed challenges dated `through` or earlier, newest first, as
        (date text, slug) pairs as they were listed (the caller checks them)."""
        members: list[Any] = await self.latency.timed(
            self.redis.zrevrangebyscore(
                keys.DAILY_INDEX, through.toordinal(), "-inf", start=0, num=limit
            )
        )
        pairs = []
        for member in members:
            day_text, _, slug = text(member).partition("|")
            pairs.append((day_text, slug))
        return pairs

    # ------------------------------------------------------------ ranked attempts

    async def claim_attempt(self, day: date, variant: Variant, user: str, room_id: str) -> bool:
        """Claim the account's ranked attempt for `room_id` (`HSETNX`); False when it has
        one already (`attempt_room` names it)."""
        attempts = keys.daily_attempts(*_names(day, variant))
        return bool(await self.latency.timed(self.redis.hsetnx(attempts, user, room_id)))

    async def attempt_room(self, day: date, variant: Variant, user: str) -> str | None:
        """The room of the account's ranked attempt, if it claimed one."""
        room = await self.latency.timed(
            self.redis.hget(keys.daily_attempts(*_names(day, variant)), user)
        )
        return None if room is None else text(room)

    # ------------------------------------------------------------ leaderboards

    async def add_entry(
        self, day: date, variant: Variant, user: str, entry: str, member: str
    ) -> int:
        """Add the account's entry (text) and its board `member`, atomically: how many
        entries the board has with it, or 0 when nothing changed (it has one)."""
        day_text, slug = _names(day, variant)
        count = await self.latency.timed(
            self._add_entry(
                keys=[keys.daily_entries(day_text, slug), keys.daily_board(day_text, slug)],
                args=[user, entry, member],
            )
        )
        return int(count)

    async def rename_entry(
        self, day: date, variant: Variant, user: str, new: tuple[str, str, str, str]
    ) -> bool:
        """Put another entry in place of the account's, and its attempt under the new
        user id, atomically: `new` is the new user id, its entry (text), the old board
        member and the new one. False when the account has no entry."""
        day_text, slug = _names(day, variant)
        done = await self.latency.timed(
            self._rename_entry(
                keys=[
                    keys.daily_entries(day_text, slug),
                    keys.daily_board(day_text, slug),
                    keys.daily_attempts(day_text, slug),
                ],
                args=[user, *new],
            )
        )
        return bool(done)

    async def entry(self, day: date, variant: Variant, user: str) -> str | None:
        """The account's entry (text), or None."""
        raw = await self.latency.timed(
            self.redis.hget(keys.daily_entries(*_names(day, variant)), user)
        )
        return None if raw is None else text(raw)

    async def entries(self, day: date, variant: Variant, users: list[str]) -> dict[str, str]:
        """The entries (text) of those of `users` that have one."""
        if not users:
            return {}
        raw: list[Any] = await self.latency.timed(
            self.redis.hmget(keys.daily_entries(*_names(day, variant)), users)
        )
        return {user: text(value) for user, value in zip(users, raw, strict=True) if value}

    async def has_entry(self, day: date, variant: Variant, user: str) -> bool:
        """Whether the account has an entry."""
        entries = keys.daily_entries(*_names(day, variant))
        return bool(await self.latency.timed(self.redis.hexists(entries, user)))

    async def count_entries(self, day: date, variant: Variant) -> int:
        """How many members the board has."""
        board = keys.daily_board(*_names(day, variant))
        return int(await self.latency.timed(self.redis.zcard(board)))

    async def count_below(self, day: date, variant: Variant, key: str) -> int:
        """How many members sort before `key` (`ZLEXCOUNT board - (<key>`)."""
        board = keys.daily_board(*_names(day, variant))
        return int(await self.latency.timed(self.redis.zlexcount(board, "-", "(" + key)))

    async def rows(
        self, day: date, variant: Variant, key_width: int, start: int, stop: int
    ) -> list[tuple[int, str]]:
        """Members `start`..`stop` (0-based, inclusive) in order, read in one step: for
        each, how many members sort before its first `key_width` characters, and the
        entry of the user id that follows them."""
        return await self._read(day, variant, [key_width, "range", start, stop])

    async def rows_around(
        self, day: date, variant: Variant, key_width: int, member: str, n: int
    ) -> list[tuple[int, str]]:
        """As `rows`, for `member` and up to `n` members either side; [] without it."""
        return await self._read(day, variant, [key_width, "around", member, n])

    async def _read(self, day: date, variant: Variant, args: list[Any]) -> list[tuple[int, str]]:
        day_text, slug = _names(day, variant)
        reply: list[Any] = await self.latency.timed(
            self._rows(
                keys=[keys.daily_board(day_text, slug), keys.daily_entries(day_text, slug)],
                args=args,
            )
        )
        return [(int(reply[i]), text(reply[i + 1])) for i in range(0, len(reply), 2)]

    async def expire_day(self, day: date, variant: Variant, after_ms: int) -> None:
        """The day's keys (record, leaderboard, entries, attempts) expire `after_ms`
        from now (the history database keeps the closed day)."""
        names = _names(day, variant)
        async with self.redis.pipeline(transaction=True) as pipe:
            for key in (
                keys.daily_day(*names),
                keys.daily_board(*names),
                keys.daily_entries(*names),
                keys.daily_attempts(*names),
            ):
                pipe.pexpire(key, after_ms)
            await self.latency.timed(pipe.execute())

    # ------------------------------------------------------------ updates

    async def publish_update(self, update: DailyUpdate) -> None:
        """Tell every node a leaderboard got an entry (on `keys.DAILY_UPDATES`)."""
        await self.latency.timed(self.redis.publish(keys.DAILY_UPDATES, encode_daily(update)))
