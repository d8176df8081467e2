"""Which local connections watch what: a daily leaderboard, a tournament.

    watchers = Watchers[str](limit=8, what="tournaments")
    watchers.add(conn, key)        # Refusal not_allowed past `limit` keys per connection
    watchers.remove(conn, key)
    watchers.forget(conn)          # its connection closed
    watchers.of(key)               # the connections watching `key`, for a broadcast
    watchers.watched_by(conn)      # the keys one connection watches
    watchers.watched()             # every key watched here

Both directions are kept, so a closed connection is dropped in O(its watches) and a key
with no watcher left is dropped at once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.service.connection import Connection

K = TypeVar("K", bound=Hashable)


class Watchers(Generic[K]):
    """Watches of one kind of thing on this node (see the module docstring)."""

    def __init__(self, *, limit: int, what: str) -> None:
        self.limit = limit
        self.what = what
        self._by_key: dict[K, set[Connection]] = {}
        self._by_conn: dict[Connection, set[K]] = {}

    def add(self, conn: Connection, key: K) -> None:
        mine = self._by_conn.setdefault(conn, set())
        if key not in mine and len(mine) >= self.limit:
            raise Refusal(
                ErrorCode.NOT_ALLOWED, f"a connection may watch at most {self.limit} {self.what}"
            )
        mine.add(key)
        self._by_key.setdefault(key, set()).add(conn)

    def remove(self, conn: Connection, key: K) -> None:
        mine = self._by_conn.get(conn)
        if mine is not None:
            mine.discard(key)
            if not mine:
                del self._by_conn[conn]
        watching = self._by_key.get(key)
        if watching is not None:
            watching.discard(conn)
            if not watching:
                del self._by_key[key]

    def forget(self, conn: Connection) -> None:
        for key in list(self._by_conn.get(conn, ())):
            self.remove(conn, key)

    def of(self, key: K) -> list[Connection]:
        return list(self._by_key.get(key, ()))

    def watched_by(self, conn: Connection) -> list[K]:
        return list(self._by_conn.get(conn, ()))

    def watched(self) -> list[K]:
        return list(self._by_key)
