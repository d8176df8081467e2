"""`klondike-live serve --workers N`: N nodes on one port, restarted when one dies,
stopped together, and a failed start reported as one line with status 2."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from klondike_live.gateway.workers import hold_port

from daily_support import TEST_SECRET
from helpers import SERVE_ENV
from waits import connect_client, scaled


def _serve(redis_url: str, data_dir: Path, port: int) -> subprocess.Popen[str]:
    env = {**os.environ, "KLONDIKE_SECRET": TEST_SECRET.decode(), **SERVE_ENV}
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "klondike_live.cli", "serve", "--workers", "2"),
            *("--port", str(port), "--redis", redis_url, "--data-dir", str(data_dir)),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _node_of(port: int) -> str:
    with urllib.request.urlopen(
        f"http://127.0.0.1:{port}/healthz/live", timeout=scaled(10)
    ) as answer:
        return str(json.loads(answer.read())["node"])


def _nodes_answering(port: int, wanted: int, seconds: float = 30.0) -> set[str]:
    """The node ids that answer on `port` (new connections each time) until `wanted`
    of them did, or the time is up."""
    seen: set[str] = set()
    deadline = time.monotonic() + scaled(seconds)
    while len(seen) < wanted and time.monotonic() < deadline:
        try:
            seen.add(_node_of(port))
        except OSError:
            time.sleep(0.05)
    return seen


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (an exited child nobody reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> list[int]:
    found = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(line) for line in found.stdout.split()]


def _workers_of(pid: int) -> list[int]:
    """The worker processes among `pid`'s children (not multiprocessing's helper)."""
    found = []
    for child in _children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:  # it has just exited
            continue
        if b"spawn_main" in command and b"resource_tracker" not in command:
            found.append(child)
    return found


@pytest.fixture
def workers(valkey_url: str, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    # Port 0: the parent picks a free port and holds it while its workers start (a port
    # picked here could be taken meanwhile, by any connection's local end).
    process = _serve(valkey_url, tmp_path / "data", 0)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        announced = re.fullmatch(r"Klondike Live: 2 workers on http://127\.0\.0\.1:(\d+)/\n", line)
        if announced is None:
            # Why it did not start is on its stderr (a worker's error, a taken port).
            _, errors = process.communicate(timeout=scaled(40))
            pytest.fail(f"serve --workers 2 did not start ({line.strip()!r}):\n{errors[-3000:]}")
        port = int(announced[1])
        assert port > 0
        yield process, port
    finally:
        workers = _workers_of(process.pid)
        if process.poll() is None:
            process.terminate()  # every worker stops gracefully, then the parent
            try:
                process.wait(timeout=scaled(40))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for pid in workers:  # never leave a node behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_two_workers_share_the_port_and_stop_together(
    workers: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = workers
    # The parent's line comes once every worker listens: new connections, no retries,
    # reach both at once (40 of them all on one worker: 1 in 2**39).
    nodes = {_node_of(port) for _ in range(40)}
    assert len(nodes) == 2, nodes
    assert {node.rsplit("-", 1)[1] for node in nodes} == {"0", "1"}
    children = _children(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=scaled(40)) == 0
    deadline = time.monotonic() + scaled(10)
    while any(map(_running, children)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in children if _running(pid)]


async def test_a_game_is_played_through_the_shared_port(
    workers: tuple[subprocess.Popen[str], int],
) -> None:
    _, port = workers
    assert len(_nodes_answering(port, 2)) == 2
    async with await connect_client(f"ws://127.0.0.1:{port}/ws", name="Ada") as ada:
        room = await ada.create_solo()
        await ada.join(room)
        ack = await ada.move(room, "D")
    assert ack["t"] in ("diff", "ack")


def test_a_worker_that_dies_is_started_again(
    workers: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = workers
    assert len(_nodes_answering(port, 2)) == 2
    assert len(_workers_of(process.pid)) == 2
    victim = _workers_of(process.pid)[-1]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + scaled(30)
    while time.monotonic() < deadline and victim in _workers_of(process.pid):
        time.sleep(0.05)
    assert victim not in _workers_of(process.pid)
    assert len(_nodes_answering(port, 2, seconds=40)) == 2  # both workers answer again
    assert process.poll() is None


def test_a_parent_killed_outright_takes_its_workers_along(
    workers: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = workers
    assert len(_nodes_answering(port, 2)) == 2
    children = _workers_of(process.pid)
    assert len(children) == 2
    process.kill()  # SIGKILL: the parent cannot stop them itself
    process.wait()
    deadline = time.monotonic() + scaled(40)
    while any(map(_running, children)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in children if _running(pid)]


def test_a_port_in_use_fails_the_start_with_one_line(valkey_url: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = _serve(valkey_url, tmp_path / "data", taken.getsockname()[1])
        _, stderr = process.communicate(timeout=scaled(60))
    assert process.returncode == 2
    assert "Traceback" not in stderr
    assert "address already in use" in stderr.lower() or "in use" in stderr.lower(), stderr


def test_the_held_port_is_shared_with_the_workers_and_nobody_else() -> None:
    """The parent's hold on the port: a worker's listening socket (`SO_REUSEPORT`)
    shares it and gets the connections; any other program's bind is refused."""
    held = hold_port("127.0.0.1", 0)
    port = held.getsockname()[1]
    with held, socket.socket() as other, socket.socket() as worker:
        with pytest.raises(OSError) as refused:
            other.bind(("127.0.0.1", port))
        assert refused.value.errno == errno.EADDRINUSE
        worker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        worker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        worker.bind(("127.0.0.1", port))
        worker.listen()
        worker.settimeout(scaled(5))
        with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)):
            accepted, _ = worker.accept()
            accepted.close()
