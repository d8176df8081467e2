"""Shared state in Redis/Valkey: atomic scripts and the async store that runs them."""

from klondike_live.store.connect import StoreError
from klondike_live.store.store import (
    BoardRecord,
    Conflict,
    Store,
    TimerKind,
    WriteResult,
    WriteStatus,
)

__all__ = [
    "BoardRecord",
    "Conflict",
    "Store",
    "StoreError",
    "TimerKind",
    "WriteResult",
    "WriteStatus",
]
