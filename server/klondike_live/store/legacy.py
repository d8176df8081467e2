"""What releases before the history database kept in Valkey, read for the import.

    legacy = LegacyStore(redis)
    async for games in legacy.results_keys(count=500):   # [(room_id, gen)], per SCAN batch
        stored = await legacy.load_results(games)        # [(results, analysis) or None]
        waiting = await legacy.in_outbox(games)          # [bool]: left to the drainers
        await legacy.expire_results(games, ms)           # the cache expiry, never longer
    async for users in legacy.stats_keys(count=500):     # [user id]
        counters = await legacy.load_stats(users)        # [{"played|race|draw=1": 3, ...}]
        await legacy.expire_stats(users, ms)

Releases before the history database kept every finished game's results hash
(`keys.results`: `data`, msgpack; maybe `analysis`, compressed or not) for
`results_days`, and each player's statistics for ever in `kl:{u:<user>}:stats` (a hash
of `<counter>|<kind>|<variant>` -> int, `race.stats`) with its recent games in
`kl:{u:<user>}:recent` and `:recent:games`. The key names of those statistics are
spelled here only: nothing of this release writes them.

Keys are found with SCAN on the server, or on every master of a Cluster (each holds its
own slots), `count` keys asked per call: the whole keyspace is walked once, in small
steps, without blocking the server. A key written while the walk goes on may or may not
be seen (SCAN's guarantee); the import is run again to be sure of it.

This module reads and expires keys; it never deletes one, and never decides what goes
into the history database (`history.importer` does).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Final

from klondike_live import keys
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency
from klondike_live.store.scan import scan_keys
from klondike_live.store.tournaments import TOURNAMENT_PATTERN, parse_tournament_key

__all__ = ["LegacyStore", "parse_results_key", "parse_stats_key"]

RESULTS_PATTERN: Final = f"{keys.PREFIX}:{{r:*}}:g*:results"
STATS_PATTERN: Final = f"{keys.PREFIX}:{{u:*}}:stats"

_RESULTS_KEY: Final = re.compile(
    rf"^{keys.PREFIX}:\{{r:({keys.ROOM_ID.pattern[1:-1]})\}}:g([0-9]{{1,9}}):results$"
)
_STATS_KEY: Final = re.compile(rf"^{keys.PREFIX}:\{{u:(.+)\}}:stats$")


def parse_results_key(key: str) -> tuple[str, int] | None:
    """The room and generation of a results key, or None for another key."""
    found = _RESULTS_KEY.match(key)
    return (found.group(1), int(found.group(2))) if found else None


def parse_stats_key(key: str) -> str | None:
    """The user of a legacy statistics key, or None for another key."""
    found = _STATS_KEY.match(key)
    return found.group(1) if found else None


def stats_key(user: str) -> str:
    """Hash: a player's game statistics as releases before the history database kept
    them (`<counter>|<kind>|<variant>` -> count or ms)."""
    return f"{keys.PREFIX}:{{u:{user}}}:stats"


def _player_keys(user: str) -> tuple[str, str, str]:
    """A player's legacy statistics, recent game ids and recent game lines."""
    return (
        stats_key(user),
        f"{keys.PREFIX}:{{u:{user}}}:recent",
        (f"{keys.PREFIX}:{{u:{user}}}:recent:games"),
    )


class LegacyStore:
    """Reads the history earlier releases kept in Valkey (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()

    async def _scan(self, pattern: str, count: int) -> AsyncIterator[list[str]]:
        """The names of the keys matching `pattern` (`store.scan`)."""
        async for names in scan_keys(self.redis, self.latency, pattern, count):
            yield names

    async def results_keys(self, count: int) -> AsyncIterator[list[tuple[str, int]]]:
        """Every finished game whose results are in Valkey, `(room_id, gen)`, in batches."""
        async for names in self._scan(RESULTS_PATTERN, count):
            games = [game for game in map(parse_results_key, names) if game is not None]
            if games:
                yield games

    async def load_results(
        self, games: Sequence[tuple[str, int]]
    ) -> list[tuple[bytes, bytes | None] | None]:
        """Each game's stored results and analysis (as stored); None where the key is
        gone (expired since the scan) or holds no results."""
        if not games:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for room_id, gen in games:
                pipe.hmget(keys.results(room_id, gen), ["data", "analysis"])
            replies = await self.latency.timed(pipe.execute(raise_on_error=False))
        out: list[tuple[bytes, bytes | None] | None] = []
        for reply in replies:
            if isinstance(reply, Exception) or not isinstance(reply[0], bytes):
                out.append(None)  # gone, or not a results hash (WRONGTYPE)
                continue
            data, analysis = reply
            out.append((data, analysis if isinstance(analysis, bytes) else None))
        return out

    async def in_outbox(self, games: Sequence[tuple[str, int]]) -> list[bool]:
        """Whether each game waits in the outbox (`keys.OUTBOX`): a game of this release
        that the nodes' drainers will add, and count, themselves."""
        if not games:
            return []
        entries = [f"{room_id}|{gen}" for room_id, gen in games]
        scores = await self.latency.timed(self.redis.zmscore(keys.OUTBOX, entries))
        return [score is not None for score in scores]

    async def expire_results(self, games: Sequence[tuple[str, int]], after_ms: int) -> None:
        """Give each game's results key an expiry of `after_ms`, where it has none or a
        later one (PEXPIRE LT): an earlier expiry is never pushed back."""
        await self._expire([keys.results(room_id, gen) for room_id, gen in games], after_ms)

    async def stats_keys(self, count: int) -> AsyncIterator[list[str]]:
        """Every player with legacy statistics, in batches."""
        async for names in self._scan(STATS_PATTERN, count):
            users = [user for user in map(parse_stats_key, names) if user is not None]
            if users:
                yield users

    async def load_stats(self, users: Sequence[str]) -> list[dict[str, int]]:
        """Each player's legacy counters (fields that are no whole number are left out;
        an empty mapping where the key is gone)."""
        if not users:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for user in users:
                pipe.hgetall(stats_key(user))
            replies = await self.latency.timed(pipe.execute(raise_on_error=False))
        out: list[dict[str, int]] = []
        for reply in replies:
            counters: dict[str, int] = {}
            if isinstance(reply, dict):
                for field, value in reply.items():
                    raw = text(value)
                    if raw.lstrip("-").isdigit():
                        counters[text(field)] = int(raw)
            out.append(counters)
        return out

    async def expire_stats(self, users: Sequence[str], after_ms: int) -> None:
        """Give each player's legacy statistics keys (counters, recent games) an expiry
        of `after_ms`, never a later one than they have."""
        await self._expire([key for user in users for key in _player_keys(user)], after_ms)

    async def tournaments(self, count: int) -> AsyncIterator[list[bytes]]:
        """The stored state of every tournament in Valkey, in batches (one whose key is
        gone since the scan is left out)."""
        async for names in self._scan(TOURNAMENT_PATTERN, count):
            ids = [found for found in map(parse_tournament_key, names) if found is not None]
            if not ids:
                continue
            async with self.redis.pipeline(transaction=False) as pipe:
                for tournament_id in ids:
                    pipe.hget(keys.tournament(tournament_id), "state")
                replies = await self.latency.timed(pipe.execute(raise_on_error=False))
            blobs = [reply for reply in replies if isinstance(reply, bytes)]
            if blobs:
                yield blobs

    async def _expire(self, names: Sequence[str], after_ms: int) -> None:
        if not names:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.pexpire(name, after_ms, lt=True)
            await self.latency.timed(pipe.execute())
