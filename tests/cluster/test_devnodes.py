"""`klondike-live cluster` as a newcomer runs it: a child process that starts a Valkey
Cluster and two nodes on it, a race played across the nodes, then SIGTERM (or a
terminal's Ctrl-C), after which no process it started is left, and every Valkey was
stopped by the command itself (SIGTERM, AOF flushed), not by the signal."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import os
import random
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from klondike_live import devnodes
from klondike_live.client import Message

from waits import connect_client, scaled, wait_for

if TYPE_CHECKING:
    from conftest import WaitFor

ENV = {
    "KLONDIKE_POOL_TARGET": "0",
    "KLONDIKE_DAILY_PREPARE_SECONDS": "0",
    "KLONDIKE_COUNTDOWN_SECONDS": "0.2",
    "KLONDIKE_TICK_SECONDS": "0.05",
    "KLONDIKE_RATE_PER_SECOND": "1000",
    "KLONDIKE_RATE_BURST": "1000",
}
"""No background solver work, a short countdown, no rate limit to speak of."""


def free_ports(count: int) -> int:
    """The first of `count` consecutive free loopback ports, away from the range the
    cluster's own nodes take (20000-40000 with their bus ports) and from the kernel's
    ephemeral ports (32768 and up), which outgoing connections may take meanwhile."""
    for _ in range(200):
        first = random.randint(10000, 19000)
        sockets = []
        try:
            for port in range(first, first + count):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
        return first
    raise AssertionError("no free consecutive ports")


def ready(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=scaled(1))
    try:
        connection.request("GET", "/healthz/ready")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def started(pid: int) -> str | None:
    """The start time of process `pid` (None: there is no such process), so that a pid
    used again by another process does not count as the same one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else fields[19]


def descendants(root: int) -> dict[int, tuple[str, str]]:
    """Every live descendant of `root`: pid -> (command line, start time)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, tuple[str, str]] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                with contextlib.suppress(OSError):
                    line = (Path(f"/proc/{pid}/cmdline").read_bytes()).replace(b"\0", b" ")
                    when = started(pid)
                    if when is not None:
                        found[pid] = (line.decode(errors="replace"), when)
                        frontier.append(pid)
    return found


@contextlib.asynccontextmanager
async def cluster_command(
    port: int, data_dir: Path, lines: list[str]
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`klondike-live cluster --nodes 2` in a child process; its output goes to `lines`.
    Killed (with what it started) if the test fails before it stopped."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "klondike_live.cli",
        "cluster",
        "--nodes",
        "2",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        env={**os.environ, **ENV},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        # Its own process group, like a command started from a shell's prompt.
        start_new_session=True,
    )

    async def read() -> None:
        assert process.stdout is not None
        async for raw in process.stdout:
            lines.append(raw.decode(errors="replace").rstrip())

    reader = asyncio.create_task(read())
    try:
        yield process
    finally:
        if process.returncode is None:
            leftovers = descendants(process.pid)
            process.kill()  # its supervisor then stops the rest (its stdin closes)
            await process.wait()

            def gone() -> bool:
                return all(started(pid) != when for pid, (_, when) in leftovers.items())

            with contextlib.suppress(TimeoutError):
                await wait_for(gone, 10)
            for pid, (_, when) in leftovers.items():
                if started(pid) == when:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        await wait_for(reader, 10)


def terminate(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the command (a service manager, `kill`)."""
    process.send_signal(signal.SIGTERM)


def interrupt(process: asyncio.subprocess.Process) -> None:
    """Ctrl-C in a terminal: SIGINT to the whole foreground process group."""
    os.killpg(process.pid, signal.SIGINT)


def holds(message: Message, *, seat: int, offset: int) -> bool:
    """Whether a spectator frame brings board `seat` to `offset` (a diff, or a snapshot)."""
    return (
        message["t"] in ("diff", "board")
        and message.get("audience") == "spectator"
        and message["seat"] == seat
        and message["off"] == offset
    )


@pytest.mark.parametrize("stop", [terminate, interrupt], ids=["sigterm", "ctrl-c"])
async def test_cluster_command_races_across_its_nodes_and_leaves_no_process(
    tmp_path: Path, wait_for: WaitFor, stop: Callable[[asyncio.subprocess.Process], None]
) -> None:
    port = free_ports(2)
    lines: list[str] = []
    async with cluster_command(port, tmp_path / "dev", lines) as process:
        try:
            await wait_for(lambda: ready(port) and ready(port + 1), timeout=90)
        except TimeoutError:
            pytest.fail("the nodes did not become ready:\n" + "\n".join(lines))
        await wait_for(lambda: any(line.startswith("ready:") for line in lines))
        seed = next(line for line in lines if line.startswith("Valkey Cluster seed: "))
        assert seed.split()[-1].startswith("redis://127.0.0.1:")
        for index in (0, 1):
            assert any(
                line.startswith(f"node{index}: http://127.0.0.1:{port + index}/") for line in lines
            )

        children = descendants(process.pid)
        servers = [pid for pid, (line, _) in children.items() if "valkey-server" in line]
        nodes = [pid for pid, (line, _) in children.items() if "klondike_live.cli serve" in line]
        assert len(servers) == 6, children  # 3 masters, 1 replica each
        assert len(nodes) == 2, children

        node_a = f"ws://127.0.0.1:{port}/ws"
        node_b = f"ws://127.0.0.1:{port + 1}/ws"
        alice = await connect_client(node_a, name="Alice")
        bob = await connect_client(node_b, name="Bob")
        carol = await connect_client(node_b, name="Carol")
        clients = [alice, bob, carol]
        try:
            room = await alice.create_race("draw=1", seats=2)
            await alice.join(room)
            await bob.join(room)
            await carol.join(room, "spectator")
            await alice.ready(room)
            await bob.ready(room)
            await alice.expect(
                lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"])
            )
            await alice.start(room)
            for racer in (alice, bob):
                await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
            # Turning the stock is legal on any deal's first moves.
            for _ in range(3):
                await alice.move(room, "D")
            for _ in range(2):
                await bob.move(room, "D")
            # The spectator on node B holds Alice's board at her third move: as that
            # move's diff, or in the start's snapshot when node B took it later.
            await carol.expect(lambda m: holds(m, seat=0, offset=3))

            # Alice's token, minted by node A, is good on node B (one secret): she
            # carries on from there where she stopped.
            await alice.close()
            alice = await connect_client(node_b, token=alice.token, resume_from=alice)
            clients.append(alice)
            assert alice.name == "Alice"
            await alice.join(room, since=alice.since(room))
            await alice.move(room, "D")
            assert alice.own_board(room, 0).moves == 4
            await carol.expect(lambda m: holds(m, seat=0, offset=4))

            await alice.resign(room)
            await bob.resign(room)
            for client in (alice, bob, carol):
                results = await client.expect(lambda m: m["t"] == "results")
            moves = {row["seat"]: row["moves"] for row in results["ranking"]}
            assert moves == {0: 4, 1: 2}
        finally:
            for client in clients:
                await client.close()

        stop(process)
        assert await wait_for(process.wait(), 90) == 0, "\n".join(lines)

    left = {pid: line for pid, (line, when) in children.items() if started(pid) == when}
    assert not left, left
    assert lines[-3:] == [
        "stopping 2 node(s)",
        "stopping the Valkey Cluster (each server flushes its append-only file)",
        f"stopped; data and logs kept in {tmp_path / 'dev'}",
    ]
    for index in (0, 1):
        assert "shutting down" in (tmp_path / "dev" / f"node{index}" / "server.log").read_text()
    # Every Valkey was stopped by the command, after the nodes, with SIGTERM (which
    # flushes its AOF): none was killed, none got the terminal's SIGINT.
    logs = sorted((tmp_path / "dev" / "valkey").glob("node-*/valkey.log"))
    assert len(logs) == 6
    for log in logs:
        text = log.read_text()
        assert "Received SIGTERM" in text, log
        assert "Received SIGINT" not in text, log
        assert "ready to exit, bye bye" in text, log


def test_the_loop_option_reaches_the_supervisor() -> None:
    """`cluster --loop asyncio` hands the supervisor `--loop asyncio` (which starts each
    node with it); without the option the nodes keep their own default."""
    parser = argparse.ArgumentParser()
    devnodes.add_arguments(parser)
    chosen = devnodes.Options.from_args(parser.parse_args(["--loop", "asyncio"]))
    assert chosen.argv()[-2:] == ["--loop", "asyncio"]
    assert devnodes.Options.from_args(parser.parse_args(chosen.argv())) == chosen
    assert "--loop" not in devnodes.Options.from_args(parser.parse_args([])).argv()
    with pytest.raises(SystemExit):
        parser.parse_args(["--loop", "tokio"])
