"""Helpers for the server's asyncio tasks: long-lived loops and background work."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

log = logging.getLogger(__name__)


def cancel_requested() -> bool:
    """True when the current task has been asked to stop.

    A long-lived loop checks this besides letting `CancelledError` through: a library
    call that swallows the cancellation (seen with redis-py during shutdown) must not
    make the loop run on and hang the node's shutdown.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class TaskGroup:
    """Background tasks that run on their own: each failure is logged with its
    traceback (never lost), and `cancel` stops those still running."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Awaitable[Any], name: str) -> None:
        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("background task %s failed", name)

        task = asyncio.create_task(guarded(), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def cancel(self) -> None:
        """Cancel every task still running and wait for them."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
