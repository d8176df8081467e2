"""Shared state in Redis/Valkey: atomic scripts and the async store that runs them."""

from klondike_live.store.connect import StoreError
from klondike_live.store.records import (
    BoardRecord,
    Conflict,
    Expiry,
    Retention,
    TimerKind,
    WriteResult,
    WriteStatus,
)
from klondike_live.store.store import Store

__all__ = [
    "BoardRecord",
    "Conflict",
    "Expiry",
    "Retention",
    "Store",
    "StoreError",
    "TimerKind",
    "WriteResult",
    "WriteStatus",
]
