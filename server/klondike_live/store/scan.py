"""Walking the keyspace: the names of the keys matching a pattern, with SCAN.

    async for names in scan_keys(redis, latency, "kl:{t:*}:t", count=500):
        ...                                           # a SCAN reply's names at a time

SCAN runs on the server, or on every master of a Cluster one after the other (each
holds its own slots), `count` keys asked per call: the whole keyspace is walked once, in
small steps, without blocking the server. A key written while the walk goes on may or
may not be seen (SCAN's guarantee).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio.cluster import RedisCluster

from klondike_live.store.connect import RedisClient, text
from klondike_live.store.latency import Latency

__all__ = ["scan_keys"]


async def scan_keys(
    redis: RedisClient, latency: Latency, pattern: str, count: int
) -> AsyncIterator[list[str]]:
    """The names of the keys matching `pattern`, a SCAN reply at a time (on every
    master of a Cluster, one after the other); empty replies are skipped."""
    if isinstance(redis, RedisCluster):
        for node in redis.get_primaries():
            cursor = 0
            while True:
                # A cluster client answers {node name: cursor} and the keys.
                reply: Any = await latency.timed(
                    redis.scan(cursor, match=pattern, count=count, target_nodes=node)
                )
                cursors, found = reply
                cursor = int(cursors[node.name])
                if found:
                    yield [text(key) for key in found]
                if cursor == 0:
                    break
        return
    cursor = 0
    while True:
        cursor, names = await latency.timed(redis.scan(cursor, match=pattern, count=count))
        if names:
            yield [text(key) for key in names]
        if int(cursor) == 0:
            break
