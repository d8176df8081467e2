"""Shared state in Redis/Valkey: atomic scripts and the async store that runs them."""

from klondike_live.store.connect import StoreError
from klondike_live.store.store import BoardRecord, Conflict, Store, WriteResult

__all__ = ["BoardRecord", "Conflict", "Store", "StoreError", "WriteResult"]
