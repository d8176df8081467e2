"""Helpers for the server's long-lived asyncio tasks."""

from __future__ import annotations

import asyncio


def cancel_requested() -> bool:
    """True when the current task has been asked to stop.

    A long-lived loop checks this besides letting `CancelledError` through: a library
    call that swallows the cancellation (seen with redis-py during shutdown) must not
    make the loop run on and hang the node's shutdown.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
