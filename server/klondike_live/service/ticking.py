"""A node's periodic loop: one step every so often, until the node stops.

    await tick_forever(0.2, timers.step, "tick")

A step that fails does not end the loop: a store that does not answer is an outage the
next steps try again (one warning each), anything else is logged with its traceback.
Used by the node's tick (`service.timers`) and the quick race's matching
(`service.quick`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from klondike_live.store import StoreError
from klondike_live.tasks import cancel_requested

log = logging.getLogger(__name__)


async def tick_forever(seconds: float, step: Callable[[], Awaitable[None]], what: str) -> None:
    """Run `step` every `seconds` until cancelled; its failures are logged as `what`."""
    while not cancel_requested():
        await asyncio.sleep(seconds)
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except StoreError as exc:  # an outage: the next steps try again
            log.warning("%s failed: the store did not answer (%s)", what, exc)
        except Exception:
            log.exception("%s failed", what)
    raise asyncio.CancelledError
