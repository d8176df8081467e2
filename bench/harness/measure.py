"""What a benchmark reads of the processes it measures: CPU seconds, RSS and time spent
waiting for a core (/proc), a node's /metrics, and a Valkey server's own counters
(`server_counters`: commands, bytes, pub/sub over the cluster bus) by shard.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

CLK_TCK = os.sysconf("SC_CLK_TCK")


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
