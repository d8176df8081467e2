"""The secret shared by the nodes of one Redis that have none configured.

    settings = await with_shared_secret(settings, redis)  # at a node's start
    secret = await shared_secret(redis, offered)          # the one in Redis, or `offered`

A node on a shared Redis with no secret configured (`Settings.secret_from_redis`)
signs with the secret every such node shares: tokens minted by any node are valid on
all of them, with nothing to configure but the Redis URL. The first node offers its
data directory's secret file if it has one, so a single node that moves to a shared
Redis keeps its players signed in.

The first node to start stores the secret it offers with SET NX under
`keys.SHARED_SECRET`: of several nodes starting at once one wins, and the others read
the winner's. The key never expires, so every later node (and every restart) reads the
same secret, and a copy of Redis (AOF, backup) carries it along.

This module must never log or echo the secret.
"""

from __future__ import annotations

import dataclasses
import logging

from klondike_live import keys
from klondike_live.config import (
    MIN_SECRET_BYTES,
    SECRET_FILE,
    ConfigError,
    Settings,
    env_name,
    offered_shared_secret,
)
from klondike_live.store.connect import RedisClient, StoreError

__all__ = ["shared_secret", "with_shared_secret"]

log = logging.getLogger(__name__)

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


async def with_shared_secret(settings: Settings, redis: RedisClient) -> Settings:
    """`settings` with the shared secret filled in, when it is to come from Redis."""
    if not settings.secret_from_redis or settings.secret:
        return settings
    offered = offered_shared_secret(settings.data_dir)
    secret = await shared_secret(redis, offered)
    if len(secret) < MIN_SECRET_BYTES:
        raise ConfigError(
            env_name("secret"),
            f"the shared secret in Redis ({keys.SHARED_SECRET}) holds {len(secret)} bytes, "
            f"expected at least {MIN_SECRET_BYTES}: set {env_name('secret')}, or delete "
            "the key to have a new one made",
        )
    own = settings.data_dir / SECRET_FILE
    if secret != offered and own.exists():
        log.warning(
            "%s differs from the shared secret in Redis (%s), which this node signs with; "
            "to keep accepting tokens signed with the file's secret, add it to %s",
            own,
            keys.SHARED_SECRET,
            "KLONDIKE_OLD_SECRETS",
        )
    return dataclasses.replace(settings, secret=secret)
