"""Tournaments in Redis: their state blobs, the public listing, the update channel.

    tournaments = TournamentStore(redis, retention)
    await tournaments.create(state)                       # False: the id exists
    state, rev = await tournaments.load(tid)              # or None
    await tournaments.update(tid, change)                 # compare-and-set loop
    ids = await tournaments.listed(50)                    # public ones, newest first
    async for batch in tournaments.ids(): ...             # every one Valkey holds

A tournament is one hash (`keys.tournament`: `state`, `rev`) changed only by a
compare-and-set script on its revision, which also publishes a `TournamentUpdate` on
`keys.TOURNAMENT_UPDATES` in the same step: every node watching it reads it again. A
tournament that is over expires `tournament_ms` after its end (`Retention`; 0: kept).

This module never decides a tournament rule: `change` functions come from `race`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from redis.commands.core import AsyncScript

from klondike_live import keys
from klondike_live.bus.messages import TournamentUpdate, encode_tournament
from klondike_live.race.tournament import TournamentState
from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency
from klondike_live.store.records import CAS_ATTEMPTS, Conflict, Retention, cas_backoff
from klondike_live.store.scan import scan_keys

__all__ = ["TOURNAMENT_PATTERN", "TournamentStore", "parse_tournament_key"]

TOURNAMENT_PATTERN: Final = f"{keys.PREFIX}:{{t:*}}:t"
"""What every tournament's key matches (`keys.tournament`), for SCAN."""

_TOURNAMENT_KEY: Final = re.compile(rf"^{keys.PREFIX}:\{{t:({keys.ROOM_ID.pattern[1:-1]})\}}:t$")

_CAS: Final = """
-- KEYS: 1 tournament hash
-- ARGV: 1 expected revision ('0' for a new one), 2 state blob, 3 update message,
--       4 updates channel, 5 expire after ms (0: keep)
local rev = redis.call('HGET', KEYS[1], 'rev') or '0'
if rev ~= ARGV[1] then return 0 end
local new = tonumber(rev) + 1
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'rev', new)
if ARGV[5] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
redis.call('PUBLISH', ARGV[4], ARGV[3])
return new
"""


def parse_tournament_key(key: str) -> str | None:
    """The id of a tournament's key, or None for another key."""
    found = _TOURNAMENT_KEY.match(key)
    return found.group(1) if found else None


class TournamentStore:
    """Every node's access to tournaments (see the module docstring)."""

    def __init__(
        self, redis: RedisClient, retention: Retention, latency: Latency | None = None
    ) -> None:
        self.redis = redis
        self.retention = retention
        self.latency = latency if latency is not None else Latency()
        self._cas: AsyncScript = redis.register_script(_CAS)

    async def load(self, tournament_id: str) -> tuple[TournamentState, int] | None:
        """The tournament and its revision, or None."""
        reply: list[Any] = await self.latency.timed(
            self.redis.hmget(keys.tournament(tournament_id), ["state", "rev"])
        )
        blob, rev = reply
        if blob is None:
            return None
        return TournamentState.from_blob(blob), int(rev)

    async def _write(
        self, state: TournamentState, expected_rev: int, *, keep_expiry: bool = False
    ) -> int | None:
        expire = self.retention.tournament_ms if state.over and not keep_expiry else 0
        # A tournament's hash and the global listing are different slots on a Cluster:
        # the listing is written apart, once, by `create`.
        written = await self.latency.timed(
            self._cas(
                keys=[keys.tournament(state.id)],
                args=[
                    expected_rev,
                    state.to_blob(),
                    encode_tournament(TournamentUpdate(state.id)),
                    keys.TOURNAMENT_UPDATES,
                    expire,
                ],
            )
        )
        return int(written) or None

    async def create(self, state: TournamentState) -> bool:
        """Write a new tournament (and list it if public); False when the id is taken."""
        if await self._write(state, 0) is None:
            return False
        if state.public_listing:
            await self.latency.timed(
                self.redis.zadd(keys.TOURNAMENTS, {state.id: state.created_ms})
            )
        return True

    async def update(
        self,
        tournament_id: str,
        change: Callable[[TournamentState], TournamentState],
        *,
        keep_expiry: bool = False,
    ) -> tuple[TournamentState, TournamentState]:
        """Compare-and-set loop: `(old, new)`; `change` may raise the rules' error.
        Raises `LookupError` for an unknown id and `Conflict` when writers keep winning.
        With `keep_expiry` a tournament that is over keeps the expiry it has (a cache of
        the history database's copy stays one)."""
        for attempt in range(CAS_ATTEMPTS):
            await asyncio.sleep(cas_backoff(attempt))
            loaded = await self.load(tournament_id)
            if loaded is None:
                raise LookupError(tournament_id)
            old, rev = loaded
            new = change(old)
            if new == old:
                return old, new
            if await self._write(new, rev, keep_expiry=keep_expiry) is not None:
                return old, new
        raise Conflict(f"tournament {tournament_id} is too busy")

    async def ids(self, count: int = 500) -> AsyncIterator[list[str]]:
        """The id of every tournament Valkey holds, listed or not, in batches (`SCAN`,
        `store.scan`: a tournament created meanwhile may be missed)."""
        async for names in scan_keys(self.redis, self.latency, TOURNAMENT_PATTERN, count):
            found = [i for i in map(parse_tournament_key, names) if i is not None]
            if found:
                yield found

    async def listed(self, limit: int) -> list[str]:
        """Public tournaments' ids, newest first; ids of expired ones are dropped."""
        ids: list[Any] = await self.latency.timed(
            self.redis.zrevrange(keys.TOURNAMENTS, 0, limit - 1)
        )
        return [text(i) for i in ids]

    async def archived(self, tournament_id: str) -> None:
        """The history database keeps the tournament (it is over): the hash becomes a
        cache for `results_cache_ms` and the listing forgets it (the database lists it)."""
        await self.latency.timed(
            self.redis.pexpire(keys.tournament(tournament_id), self.retention.results_cache_ms)
        )
        await self.unlist(tournament_id)

    async def unlist(self, tournament_id: str) -> None:
        await self.latency.timed(self.redis.zrem(keys.TOURNAMENTS, tournament_id))
