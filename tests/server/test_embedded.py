"""The embedded Valkey (real processes), open_redis, and the shared test fixtures."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoPermissionError

from klondike_live.config import Settings
from klondike_live.embedded import (
    EmbeddedValkey,
    EmbeddedValkeyError,
    open_redis,
    redis_latency_probe,
)
from klondike_live.store.connect import RedisClient

if TYPE_CHECKING:
    from conftest import WaitFor


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_starts_and_serves_commands(tmp_path: Path) -> None:
    """An embedded Valkey answers commands on a loopback URL and stores bytes as bytes."""
    async with EmbeddedValkey(tmp_path) as url:
        assert url.startswith("redis://klondike:")
        assert "@127.0.0.1:" in url
        client = await open_redis(url)
        try:
            await client.set(b"greeting", b"\x00\xffhi")
            assert await client.get(b"greeting") == b"\x00\xffhi"
        finally:
            await client.aclose()


async def test_aof_survives_stop_and_start(tmp_path: Path) -> None:
    """A key written, then a stop and a start on the same data dir: the key is back."""
    async with EmbeddedValkey(tmp_path) as url:
        client = await open_redis(url)
        await client.set(b"kept", b"across restarts")
        await client.aclose()
    assert any((tmp_path / "valkey" / "appendonlydir").iterdir())
    async with EmbeddedValkey(tmp_path) as url:
        client = await open_redis(url)
        try:
            assert await client.get(b"kept") == b"across restarts"
        finally:
            await client.aclose()


async def test_stop_ends_the_process(tmp_path: Path) -> None:
    """Leaving the context stops Valkey: its process is gone and the url file removed."""
    valkey = EmbeddedValkey(tmp_path)
    async with valkey:
        pid = valkey.pid
        assert pid is not None and not process_gone(pid)
        assert (tmp_path / "valkey" / "url").read_text().strip() == valkey.url
    assert process_gone(pid)
    assert not (tmp_path / "valkey" / "url").exists()
    with pytest.raises(EmbeddedValkeyError):
        _ = valkey.url


async def test_default_user_may_only_ping(tmp_path: Path) -> None:
    """Without the generated password a local client can PING but read nothing."""
    async with EmbeddedValkey(tmp_path) as url:
        anonymous = Redis.from_url("redis://" + url.split("@", 1)[1])
        try:
            assert await anonymous.ping()
            with pytest.raises(NoPermissionError):
                await anonymous.get(b"anything")
        finally:
            await anonymous.aclose()


async def test_files_are_private(tmp_path: Path) -> None:
    """The Valkey directory and the files holding credentials are owner-only."""
    async with EmbeddedValkey(tmp_path):
        directory = tmp_path / "valkey"
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        for name in ("url", "users.acl"):
            assert stat.S_IMODE((directory / name).stat().st_mode) == 0o600


async def test_second_server_on_same_dir_is_refused(tmp_path: Path) -> None:
    """Two servers never share one data dir: the second start fails loudly."""
    async with EmbeddedValkey(tmp_path):
        with pytest.raises(EmbeddedValkeyError, match="another klondike-live process"):
            await asyncio.to_thread(EmbeddedValkey(tmp_path).start)


async def test_orphan_from_killed_process_is_stopped(tmp_path: Path, wait_for: WaitFor) -> None:
    """A Valkey left behind by a killed process is shut down (AOF flushed) on next start."""
    script = (
        "import os, sys, redis\n"
        "from klondike_live.embedded import EmbeddedValkey\n"
        "v = EmbeddedValkey(sys.argv[1]); url = v.start()\n"
        "redis.Redis.from_url(url).set('left', 'behind')\n"
        "print(v.pid, flush=True)\n"
        "os._exit(0)\n"  # no cleanup: the Valkey is orphaned
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, check=True, text=True
    )
    orphan = int(done.stdout.strip())
    assert not process_gone(orphan)
    async with EmbeddedValkey(tmp_path) as url:
        await wait_for(lambda: process_gone(orphan), 5.0)
        client = await open_redis(url)
        try:
            assert await client.get(b"left") == b"behind"
        finally:
            await client.aclose()


def test_path_with_spaces_fails_loudly(tmp_path: Path) -> None:
    """A data dir with spaces (which Valkey's config cannot hold) fails with a clear message."""
    with pytest.raises(EmbeddedValkeyError, match="spaces"):
        EmbeddedValkey(tmp_path / "with space").start()


async def test_open_redis_unreachable_names_url_without_password() -> None:
    """An unreachable Redis fails fast, naming the URL with its password hidden."""
    with pytest.raises(RedisConnectionError) as caught:
        await open_redis("redis://user:hunter2@127.0.0.1:1/0", socket_timeout=1.0)
    assert "hunter2" not in str(caught.value)
    assert "127.0.0.1" in str(caught.value)


async def test_latency_probe_measures_a_round_trip(redis: RedisClient) -> None:
    """The latency probe returns a positive duration well under a second on loopback."""
    assert 0 < await redis_latency_probe(redis) < 1.0


async def test_redis_fixture_starts_empty(redis: RedisClient) -> None:
    """The `redis` fixture flushes the test Valkey, so each test sees no keys."""
    assert await redis.dbsize() == 0
    await redis.set(b"leftover", b"1")


async def test_redis_fixture_starts_empty_again(redis: RedisClient) -> None:
    """A key left by the previous test is gone (pairs with the test above)."""
    assert await redis.get(b"leftover") is None


def test_make_settings_uses_test_valkey(
    make_settings: Callable[..., Settings], valkey_url: str
) -> None:
    """make_settings gives distinct existing data dirs, the test Valkey and overrides."""
    first, second = make_settings(), make_settings(grace_seconds=1.5)
    assert first.redis_url == valkey_url and first.port == 0
    assert first.data_dir != second.data_dir and first.data_dir.is_dir()
    assert second.grace_seconds == 1.5 and first.secret == second.secret


async def test_wait_for_returns_truthy_value(wait_for: WaitFor) -> None:
    """wait_for polls a predicate until it returns something truthy and returns it."""
    started = time.monotonic()

    def ready() -> float | None:
        return time.monotonic() if time.monotonic() - started > 0.05 else None

    value = await wait_for(ready, 2.0)
    assert value is not None and value > started
    assert await wait_for(asyncio.sleep(0, result="done"), 1.0) == "done"


async def test_wait_for_times_out_naming_the_target(wait_for: WaitFor) -> None:
    """wait_for raises TimeoutError naming what never became true."""

    def never() -> bool:
        return False

    with pytest.raises(TimeoutError, match="never"):
        await wait_for(never, 0.05)
