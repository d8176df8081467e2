"""`klondike-live serve --workers N`: one full node per core, all on one port.

A node runs Python on one core at a time. On a machine with more cores, `--workers N`
(`auto`: one per core) runs N nodes in N processes of one parent, sharing the address
and port with `SO_REUSEPORT` (the kernel spreads new connections over them) and one
Redis, exactly as nodes on several machines do: any worker serves any client.

The parent process:

- starts the embedded Valkey when no Redis URL is given, for every worker to share
  (and stops it last);
- holds the port from the start (a socket bound to it with `SO_REUSEPORT`, never
  listening, so it takes no connection) until the workers stop: nothing else on the
  machine can take it while they start, and 0 picks a free one (every worker needs the
  same);
- spawns the workers (fresh interpreters, not forks): worker `i` is node
  `<node_id>-<i>`; worker 0 alone refills the certified deal pool and prepares the
  daily challenges, as one node of a multi-node deployment does;
- on SIGTERM or SIGINT tells every worker to stop (each stops gracefully) and waits;
- restarts a worker that dies after it started (logged); a worker that fails to start
  stops them all, with the worker's one-line error and status 2;
- takes its workers along if it is killed outright: each asks Linux for SIGTERM when
  its parent dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from types import FrameType
from typing import cast

from klondike_live.config import Settings
from klondike_live.embedded import EmbeddedValkey

log = logging.getLogger(__name__)

STOP_SECONDS = 20.0
"""How long a worker gets to stop gracefully before it is killed."""

PR_SET_PDEATHSIG = 1  # linux/prctl.h

RESTART_PAUSE = 1.0
"""Seconds before a worker that died is started again."""


def worker_count(text: str) -> int:
    """`--workers`: a count of 1..256, or `auto` (one per core this process may use)."""
    if text == "auto":
        return max(1, len(os.sched_getaffinity(0)))
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= 256:
        raise ValueError(f"--workers: expected an integer 1..256 or auto, got {text!r}")
    return count


def worker_settings(settings: Settings, index: int, redis_url: str, port: int) -> Settings:
    """The settings of worker `index`: the shared Redis and port, its own node id, and
    the background solver work on worker 0 only."""
    background = index == 0
    return dataclasses.replace(
        settings,
        redis_url=redis_url,
        port=port,
        node_id=f"{settings.node_id[:28]}-{index}",
        pool_target=settings.pool_target if background else 0,
        daily_prepare_seconds=settings.daily_prepare_seconds if background else 0,
    )


def hold_port(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` (0: a free port) that the workers' listening
    sockets can share (`SO_REUSEPORT`); it never listens, so the kernel hands it no
    connection. OSError when another program holds the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _stop_with_parent() -> None:
    """Ask Linux for SIGTERM when the parent dies (`PR_SET_PDEATHSIG`), so that a parent
    killed outright (SIGKILL, the OOM killer) leaves no worker serving unsupervised."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:  # the parent died before the request: stop now
        os.kill(os.getpid(), signal.SIGTERM)


def _worker(settings: Settings, started: Event, log_level: str, log_format: str) -> None:
    """A worker process: one node until SIGTERM or SIGINT, on the event loop the parent
    chose (`settings.loop`)."""
    from klondike_live import eventloop
    from klondike_live.gateway.server import serve_forever
    from klondike_live.gateway.startup import StartupError
    from klondike_live.logs import LogFormat
    from klondike_live.logs import configure as configure_logging

    configure_logging(log_level, cast(LogFormat, log_format))
    _stop_with_parent()
    try:
        eventloop.run(
            serve_forever(settings, reuse_port=True, on_started=started.set, announce=False),
            eventloop.choose(settings),
        )
    except StartupError as exc:
        print(f"klondike-live: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)


class Workers:
    """The parent of N worker processes (see the module doc)."""

    def __init__(self, settings: Settings, count: int, log_level: str, log_format: str) -> None:
        self.settings = settings
        self.count = count
        self.log_level = log_level
        self.log_format = log_format
        self._context = multiprocessing.get_context("spawn")
        self._stopping = False

    def run(self) -> int:
        """Run the workers until a signal stops them; the exit status."""
        valkey = EmbeddedValkey(self.settings.data_dir) if self.settings.redis_url is None else None
        redis_url = valkey.start() if valkey is not None else cast(str, self.settings.redis_url)
        try:
            try:
                held = hold_port(self.settings.host, self.settings.port)
            except OSError as exc:
                from klondike_live.gateway.startup import startup_error

                error = startup_error(self.settings, exc)
                raise error if error is not None else exc from None
            with held:
                port = int(held.getsockname()[1])
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, self._stop)
                status = self._supervise(redis_url, port)
            print("shutting down", flush=True)
            return status
        finally:
            if valkey is not None:
                valkey.stop()

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self._stopping = True

    def _start(self, index: int, redis_url: str, port: int) -> tuple[BaseProcess, Event]:
        started = self._context.Event()
        process = self._context.Process(
            target=_worker,
            args=(
                worker_settings(self.settings, index, redis_url, port),
                started,
                self.log_level,
                self.log_format,
            ),
            name=f"klondike-worker-{index}",
        )
        process.start()
        return process, started

    def _supervise(self, redis_url: str, port: int) -> int:
        workers = [self._start(i, redis_url, port) for i in range(self.count)]
        announced = False
        try:
            while not self._stopping:
                sentinels = [process.sentinel for process, _ in workers]
                multiprocessing.connection.wait(sentinels, timeout=0.5 if announced else 0.05)
                if not announced and all(started.is_set() for _, started in workers):
                    # Only now: whoever reads this line can connect to any worker.
                    print(
                        f"Klondike Live: {self.count} workers on "
                        f"http://{self.settings.host}:{port}/",
                        flush=True,
                    )
                    announced = True
                for index, (process, started) in enumerate(workers):
                    if process.is_alive() or self._stopping:
                        continue
                    if not started.is_set():
                        log.error("worker %d failed to start (status %s)", index, process.exitcode)
                        return 2
                    log.error(
                        "worker %d stopped (status %s); restarting it", index, process.exitcode
                    )
                    time.sleep(RESTART_PAUSE)
                    workers[index] = self._start(index, redis_url, port)
            return 0
        finally:
            self._stop_all([process for process, _ in workers])

    @staticmethod
    def _stop_all(processes: list[BaseProcess]) -> None:
        for process in processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: the node stops gracefully
        deadline = time.monotonic() + STOP_SECONDS
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
