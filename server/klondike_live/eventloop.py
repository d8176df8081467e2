"""The event loop a node runs on: uvloop where it is installed, else asyncio's own.

    name = choose(settings)              # "uvloop" or "asyncio" (settings.loop resolved)
    run(serve_forever(settings), name)   # the coroutine on a new loop of that kind
    running_loop()                       # which kind runs now: "uvloop" or "asyncio"

`loop` (`--loop`, `KLONDIKE_LOOP`) is `auto` by default: uvloop (a libuv loop in C,
installed with the package on Linux and macOS) where it can be imported, else the
standard library's loop, with one log line saying so. Asking for `uvloop` where it is
not installed is a configuration error naming the flag or the variable. Everything
that runs a node goes through `run`: `serve`, each `--workers` process, and the nodes
of `klondike-live cluster` (which are `serve` processes). The node names its loop in
its start log line and in `/metrics` (`klondike_build_info{loop=...}`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar

from klondike_live.config import ConfigError, Settings

__all__ = ["choose", "loop_factory", "run", "running_loop", "uvloop_installed"]

log = logging.getLogger(__name__)

T = TypeVar("T")

FALLBACK: Final = (
    "uvloop is not installed: the node runs on asyncio's own event loop"
    " (pip install uvloop for a faster one)"
)


def uvloop_installed() -> bool:
    """Whether uvloop can be imported here."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def choose(settings: Settings) -> str:
    """The loop `settings.loop` asks for on this machine: `uvloop` or `asyncio`.

    `auto` without uvloop logs `FALLBACK` once (the caller resolves once per process
    tree: `--workers` hands its workers the resolved name). Raises `ConfigError`
    naming the flag or the variable when `uvloop` is asked for and not installed."""
    if settings.loop == "asyncio":
        return "asyncio"
    if uvloop_installed():
        return "uvloop"
    if settings.loop == "uvloop":
        raise ConfigError(
            settings.source("loop"), "uvloop is not installed (pip install uvloop); or use asyncio"
        )
    log.warning(FALLBACK)
    return "asyncio"


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """What makes a new loop of kind `name` (`uvloop` or `asyncio`)."""
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    if name == "asyncio":
        return asyncio.new_event_loop
    raise ValueError(f"no event loop called {name!r}")


def run(main: Coroutine[Any, Any, T], name: str) -> T:
    """Run `main` to its end on a new loop of kind `name`, as `asyncio.run` does."""
    with asyncio.Runner(loop_factory=loop_factory(name)) as runner:
        return runner.run(main)


def running_loop() -> str:
    """The kind of the running loop: `uvloop` or `asyncio`."""
    kind = type(asyncio.get_running_loop())
    return "uvloop" if kind.__module__.split(".")[0] == "uvloop" else "asyncio"
