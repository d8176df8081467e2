"""The one way tests wait: every test time goes through `scaled` (tests of any folder).

scaled(amount) -> float
    `amount` times `KLONDIKE_TEST_TIMEOUT_SCALE` (default 1; a number > 0). Any unit:
    seconds for asyncio, milliseconds for Playwright. Every timeout, deadline or pause of a
    test is written `scaled(...)` (or passed to `wait_for`, which scales it), so that one
    variable gives a loaded machine more time (`make test-under-load` runs with 3).

wait_for(what, timeout=5.0) -> result (async)
    `what` is an awaitable (awaited, its result returned) or a predicate, plain or async,
    polled every 10 ms until it returns something truthy (returned). Raises `TimeoutError`
    naming what it waited for after `scaled(timeout)` seconds.

connect_client(url, *, name=None, token=None, ...) -> Client (async)
    `klondike_live.client.Client.connect` with `expect_timeout=scaled(EXPECT_SECONDS)`: the
    tests' clients wait for replies on the scaled clock (a timeout passed to `expect` or
    `call` is written `scaled(...)` as well).

tests/architecture/test_test_waits.py keeps it so: it fails on a fixed wait anywhere else.
This is a plain module and not tests/conftest.py because pytest imports each folder's
conftest.py under the same name, so test modules cannot import a conftest at run time.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, overload

import pytest

from klondike_live.client import Client
from klondike_live.protocol.incoming import PROTOCOL_VERSION

SCALE_VARIABLE = "KLONDIKE_TEST_TIMEOUT_SCALE"
POLL_SECONDS = 0.01
EXPECT_SECONDS = 10.0

T = TypeVar("T")


def timeout_scale() -> float:
    """`KLONDIKE_TEST_TIMEOUT_SCALE`, default 1; anything but a number > 0 stops the run."""
    raw = os.environ.get(SCALE_VARIABLE, "1")
    try:
        scale = float(raw)
    except ValueError:
        scale = -1.0
    if not scale > 0:
        raise pytest.UsageError(f"{SCALE_VARIABLE}: expected a number > 0, got {raw!r}")
    return scale


def scaled(amount: float) -> float:
    """`amount` (seconds, or milliseconds for Playwright) times the tests' time scale."""
    return amount * timeout_scale()


class WaitFor(Protocol):
    """The type of `wait_for` and of its fixture; tests annotate the fixture with it
    (`if TYPE_CHECKING: from conftest import WaitFor`)."""

    @overload
    async def __call__(self, what: Awaitable[T], timeout: float = 5.0) -> T: ...
    @overload
    async def __call__(self, what: Callable[[], Awaitable[T]], timeout: float = 5.0) -> T: ...
    @overload
    async def __call__(self, what: Callable[[], T], timeout: float = 5.0) -> T: ...


def _describe(what: object) -> str:
    name = getattr(what, "__qualname__", None) or getattr(what, "__name__", None)
    return name if isinstance(name, str) else repr(what)


@overload
async def wait_for(what: Awaitable[T], timeout: float = 5.0) -> T: ...
@overload
async def wait_for(what: Callable[[], Awaitable[T]], timeout: float = 5.0) -> T: ...
@overload
async def wait_for(what: Callable[[], T], timeout: float = 5.0) -> T: ...
async def wait_for(what: Awaitable[T] | Callable[[], Awaitable[T] | T], timeout: float = 5.0) -> T:
    """Await `what`, or poll the predicate `what` until truthy, within a scaled timeout."""
    limit = scaled(timeout)
    if inspect.isawaitable(what):
        try:
            return await asyncio.wait_for(what, limit)
        except TimeoutError:
            raise TimeoutError(f"timed out after {limit:g}s awaiting {_describe(what)}") from None

    async def poll() -> T:
        while True:
            result = what()
            if inspect.isawaitable(result):
                result = await result
            if result:
                return result
            await asyncio.sleep(POLL_SECONDS)

    try:
        return await asyncio.wait_for(poll(), limit)
    except TimeoutError:
        raise TimeoutError(f"timed out after {limit:g}s waiting for {_describe(what)}") from None


async def connect_client(
    url: str,
    *,
    name: str | None = None,
    token: str | None = None,
    version: int = PROTOCOL_VERSION,
    resume_from: Client | None = None,
) -> Client:
    """A protocol client whose waits for replies last `scaled(EXPECT_SECONDS)`."""
    return await Client.connect(
        url,
        name=name,
        token=token,
        version=version,
        resume_from=resume_from,
        expect_timeout=scaled(EXPECT_SECONDS),
    )
