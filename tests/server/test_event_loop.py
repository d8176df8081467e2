"""The event loop a node runs on: `--loop`/`KLONDIKE_LOOP`, uvloop by default where it
is installed, asyncio's own otherwise (with one log line), and the loop named in the
start log line and in /metrics."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from klondike_live import eventloop
from klondike_live.config import ConfigError, Settings
from klondike_live.gateway.server import running

from helpers import SERVE_ENV, serve_process
from waits import scaled

SECRET = "s" * 40

needs_uvloop = pytest.mark.skipif(not eventloop.uvloop_installed(), reason="uvloop not installed")


def settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.load(data_dir=tmp_path, environ={"KLONDIKE_SECRET": SECRET, **env})


def loop_label(metrics: str) -> str:
    (line,) = [x for x in metrics.splitlines() if x.startswith("klondike_build_info{")]
    return line.split('loop="', 1)[1].split('"', 1)[0]


def test_loop_setting_from_flag_variable_or_default(tmp_path: Path) -> None:
    """`auto` by default; `KLONDIKE_LOOP` beats it, `--loop` beats the variable; a bad
    value names the flag or the variable that gave it."""
    assert settings(tmp_path).loop == "auto"
    assert settings(tmp_path, KLONDIKE_LOOP=" AsyncIO ").loop == "asyncio"
    env = {"KLONDIKE_SECRET": SECRET, "KLONDIKE_LOOP": "asyncio"}
    chosen = Settings.load(data_dir=tmp_path, loop="uvloop", environ=env, from_flags=True)
    assert (chosen.loop, chosen.source("loop")) == ("uvloop", "--loop")
    with pytest.raises(ConfigError, match=r"^KLONDIKE_LOOP: expected one of auto, uvloop, "):
        settings(tmp_path, KLONDIKE_LOOP="trio")
    with pytest.raises(ConfigError, match=r"^--loop: expected one of auto, uvloop, asyncio, got"):
        Settings.load(data_dir=tmp_path, loop="tokio", environ=env, from_flags=True)


def test_without_uvloop_auto_falls_back_with_one_line_and_uvloop_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(eventloop, "uvloop_installed", lambda: False)
    with caplog.at_level(logging.INFO, logger="klondike_live.eventloop"):
        assert eventloop.choose(settings(tmp_path)) == "asyncio"
        assert eventloop.choose(settings(tmp_path, KLONDIKE_LOOP="asyncio")) == "asyncio"
    assert [r.getMessage() for r in caplog.records] == [eventloop.FALLBACK]
    with pytest.raises(ConfigError, match=r"^KLONDIKE_LOOP: uvloop is not installed"):
        eventloop.choose(settings(tmp_path, KLONDIKE_LOOP="uvloop"))


@needs_uvloop
def test_with_uvloop_auto_takes_it() -> None:
    assert eventloop.choose(Settings(secret=SECRET.encode())) == "uvloop"
    assert eventloop.run(_running_loop(), "uvloop") == "uvloop"
    assert eventloop.run(_running_loop(), "asyncio") == "asyncio"


async def _running_loop() -> str:
    return eventloop.running_loop()


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_a_node_runs_on_the_loop_it_is_started_with(
    loop: str, valkey_url: str, tmp_path: Path
) -> None:
    """`klondike-live serve --loop LOOP`: /metrics names the loop the node runs on."""
    if loop == "uvloop" and not eventloop.uvloop_installed():
        pytest.skip("uvloop not installed")
    async with serve_process(valkey_url, tmp_path / "data", SECRET, args=("--loop", loop)) as node:
        metrics = await asyncio.to_thread(_get, node.url + "metrics")
    assert loop_label(metrics) == loop


async def test_a_node_in_this_process_names_the_running_loop(
    make_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture
) -> None:
    """In-process nodes (tests) run on the test's loop and say which one it is."""
    with caplog.at_level(logging.INFO, logger="klondike_live.gateway.server"):
        async with running(make_settings()) as node:
            metrics = await asyncio.to_thread(_get, node.url + "metrics")
    here = eventloop.running_loop()
    assert loop_label(metrics) == here
    assert any(f"(event loop: {here})" in r.getMessage() for r in caplog.records)


def test_where_uvloop_is_missing_auto_says_so_and_uvloop_is_one_line(tmp_path: Path) -> None:
    """With uvloop hidden from the child (first on its import path, a `uvloop` that
    cannot be imported), `--loop uvloop` fails naming the flag; the default logs the
    fallback and goes on (to an unreachable Redis here)."""
    hidden = tmp_path / "hidden" / "uvloop"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text('raise ImportError("hidden by the test")\n')
    path = f"{hidden.parent}:{Path(eventloop.__file__).parents[1]}"
    unreachable = ("--port", "0", "--redis", "redis://127.0.0.1:1/0")
    status, lines = serve(*unreachable, "--loop", "uvloop", PYTHONPATH=path)
    assert (status, lines) == (
        2,
        ["klondike-live: --loop: uvloop is not installed (pip install uvloop); or use asyncio"],
    )
    status, lines = serve(*unreachable, PYTHONPATH=path)
    assert status == 2
    assert next(line for line in lines if " WARNING " in line).endswith(eventloop.FALLBACK)
    assert lines[-1].startswith("klondike-live: --redis: ")


def serve(*args: str, **env: str) -> tuple[int, list[str]]:
    """Run `klondike-live serve ARGS` with `env` added to the test settings (and no
    other KLONDIKE_* variable); its exit status and stderr lines."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("KLONDIKE_")}
    done = subprocess.run(
        [sys.executable, "-m", "klondike_live.cli", "serve", *args],
        env={**base, **SERVE_ENV, "KLONDIKE_SECRET": SECRET, **env},
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    return done.returncode, done.stderr.splitlines()


async def test_the_tests_run_on_the_loop_asked_for() -> None:
    """`KLONDIKE_TEST_LOOP` (tests/conftest.py) picks the loop of every async test."""
    assert eventloop.running_loop() == (os.environ.get("KLONDIKE_TEST_LOOP") or "asyncio")


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=scaled(10)) as answer:
        return str(answer.read().decode())
