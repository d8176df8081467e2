"""Accounts' live keys in Valkey: sessions, guests made accounts, sign-in failures.

    accounts = AccountStore(redis, latency)
    await accounts.keep_session(sid, user, username, ttl_ms)  # signed in
    found = await accounts.session(sid)                        # (user, username) or None
    await accounts.mark_account(user)                          # its guest tokens refused
    await accounts.end_sessions([sid, ...])                    # gone here, announced
    await accounts.end_user(user)                              # its connections close
    count = await accounts.failures("addr", address)           # failures this window
    await accounts.fail("addr", address, window_ms)            # one more

The history database holds what lasts (`history.accounts`); these keys are what every
node reads on each `hello` and API request, so they are shared and quick. See
`keys.session`, `keys.user_account`, `keys.sign_in_failures`, `keys.SESSIONS_ENDED`.
"""

from __future__ import annotations

import msgpack

from klondike_live import keys
from klondike_live.store.connect import RedisClient
from klondike_live.store.latency import Latency

__all__ = ["AccountStore"]


class AccountStore:
    """Accounts' keys in Redis (see the module docstring)."""

    def __init__(self, redis: RedisClient, latency: Latency | None = None) -> None:
        self.redis = redis
        self.latency = latency if latency is not None else Latency()

    async def keep_session(self, sid: str, user: str, username: str, ttl_ms: int) -> None:
        """Hold a live session for `ttl_ms` (at most until it expires)."""
        value = msgpack.packb([user, username])
        await self.latency.timed(self.redis.set(keys.session(sid), value, px=max(1, ttl_ms)))

    async def session(self, sid: str) -> tuple[str, str] | None:
        """The user id and username of a live session, or None when Valkey has none."""
        raw = await self.latency.timed(self.redis.get(keys.session(sid)))
        if raw is None:
            return None
        try:
            user, username = msgpack.unpackb(raw, raw=False)
        except (ValueError, TypeError, msgpack.UnpackException):
            return None
        return str(user), str(username)

    async def end_sessions(self, sids: list[str]) -> None:
        """Forget these sessions and tell every node to close their connections."""
        if not sids:
            return
        for sid in sids:
            await self.latency.timed(self.redis.delete(keys.session(sid)))
        await self.latency.timed(self.redis.publish(keys.SESSIONS_ENDED, " ".join(sids)))

    async def end_user(self, user: str) -> None:
        """Tell every node to close every connection of `user` (a deleted account)."""
        item = keys.ENDED_USER + user
        await self.latency.timed(self.redis.publish(keys.SESSIONS_ENDED, item))

    async def mark_account(self, user: str) -> None:
        await self.latency.timed(self.redis.set(keys.user_account(user), b"1"))

    async def is_account(self, user: str) -> bool:
        return bool(await self.latency.timed(self.redis.exists(keys.user_account(user))))

    async def failures(self, kind: str, subject: str) -> int:
        """Failed attempts of one address or username key in the current window."""
        raw = await self.latency.timed(self.redis.get(keys.sign_in_failures(kind, subject)))
        return int(raw) if raw is not None else 0

    async def fail(self, kind: str, subject: str, window_ms: int) -> int:
        """Count one more failure; the window starts at the first."""
        key = keys.sign_in_failures(kind, subject)
        await self.latency.timed(self.redis.set(key, 0, px=window_ms, nx=True))
        return int(await self.latency.timed(self.redis.incr(key)))
