"""The secret shared by the nodes of one Redis that have none configured.

    secret = await shared_secret(redis, offered)   # the one in Redis, or `offered`, stored

The first node to start stores the secret it offers with SET NX under
`keys.SHARED_SECRET`: of several nodes starting at once one wins, and the others read
the winner's. The key never expires, so every later node (and every restart) reads the
same secret, and a copy of Redis (AOF, backup) carries it along.

This module must never log or echo the secret.
"""

from __future__ import annotations

from klondike_live import keys
from klondike_live.store.connect import RedisClient, StoreError

__all__ = ["shared_secret"]

_ATTEMPTS = 3


async def shared_secret(client: RedisClient, offered: bytes) -> bytes:
    """The shared secret kept in Redis; `offered` becomes it if there is none yet."""
    for _ in range(_ATTEMPTS):
        if await client.set(keys.SHARED_SECRET, offered, nx=True):
            return offered
        stored = await client.get(keys.SHARED_SECRET)
        if stored is not None:  # else deleted between the SET and the GET: try again
            return stored if isinstance(stored, bytes) else stored.encode("utf-8")
    raise StoreError(f"the shared secret ({keys.SHARED_SECRET}) keeps vanishing from Redis")
