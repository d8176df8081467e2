"""What a node says as it starts: its token keys, its core, and what a failed start was.

    log.info(describe_keys(settings))          # which key signs, which verify (ids only)
    log_core(log)                              # compiled or pure Python, one line
    except StartupError as exc: print(exc)     # `serve_forever` raises it

A start that fails (Redis unreachable, a wrong password or database, a data directory
in use, a port taken) becomes a `StartupError` of one line naming the flag or the
variable at fault, which the command line prints without a traceback.

This module must never log or echo a secret or a password.
"""

from __future__ import annotations

import errno
import logging
import os
import socket

from klondike_live import compiled, keys
from klondike_live.config import ConfigError, Settings, redact_url
from klondike_live.embedded import EmbeddedValkeyError
from klondike_live.errors import LiveError
from klondike_live.history import HistoryError, MigrationError
from klondike_live.store import StoreError

__all__ = ["StartupError", "describe_database", "describe_keys", "log_core", "startup_error"]


class StartupError(LiveError):
    """A node could not start; the message is one line naming the setting at fault."""


def describe_keys(settings: Settings) -> str:
    """One log line on the token keys (their ids, never the keys)."""
    ring = settings.keys
    if settings.secret_from_redis:
        source = f"the shared secret in Redis ({keys.SHARED_SECRET})"
    else:
        source = "the configured secret"
    older = ", ".join(ring.ids[1:]) or "none"
    return f"tokens signed with key {ring.current_id} ({source}); older keys accepted: {older}"


def log_core(log: logging.Logger) -> None:
    """One line on how the pure core runs: compiled, or a warning that it runs as plain
    Python (slower), or that an editable checkout's compiled modules are older than their
    sources (which then do not run: `make` rebuilds them)."""
    stale = compiled.stale()
    if stale:
        log.warning(
            "core compiled from older sources of %s: run `make` to rebuild", ", ".join(stale)
        )
    elif compiled.compiled():
        log.info("core %s", compiled.describe())
    else:
        log.warning("core runs as %s, slower than compiled", compiled.describe())


def describe_database(settings: Settings) -> str:
    """Where the history database is, fit for a log line (no password)."""
    return redact_url(settings.history_url)


def startup_error(settings: Settings, exc: BaseException) -> StartupError | None:
    """The one-line `StartupError` of a failed start, or None for a failure that is not
    the configuration's or the environment's (a bug: let its traceback show)."""
    if isinstance(exc, ConfigError):
        return _one_line(str(exc))
    if isinstance(exc, EmbeddedValkeyError):
        return _one_line(f"{settings.source('data_dir')}: {exc}")
    if isinstance(exc, HistoryError | MigrationError):
        return _one_line(f"{settings.source('database_url')}: {exc}")
    if isinstance(exc, StoreError):
        if settings.redis_url is None:
            return _one_line(f"the embedded Valkey failed: {exc}")
        text = str(exc)
        if "cannot reach" not in text:  # `open_redis` names the URL itself
            text = f"Redis at {redact_url(settings.redis_url)} refused: {text}"
        return _one_line(f"{settings.source('redis_url')}: {text}")
    if isinstance(exc, OSError) and exc.filename is not None:
        return _one_line(f"cannot start: {exc.filename}: {exc.strerror or exc}")
    if isinstance(exc, OSError):  # from binding the listening socket
        bad_host = isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL
        key = settings.source("host" if bad_host else "port")
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        return _one_line(f"{key}: cannot listen on {settings.host}:{settings.port}: {reason}")
    return None


def _one_line(text: str) -> StartupError:
    return StartupError(" ".join(text.split()))
