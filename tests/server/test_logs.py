"""Logs: JSON lines from a real `klondike-live serve`, and the flood guard's one line
plus a count of what it suppressed."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from klondike_live.logs import configure

from helpers import SERVE_ENV
from waits import scaled, wait_for


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """Put the root logger's handlers and level back after a test that configures it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)


async def test_serve_logs_json_lines(valkey_url: str, redis: object, tmp_path: Path) -> None:
    """`serve --log-format json` writes one JSON object per stderr line (time, level,
    logger, message), the warning about a misspelt variable included."""
    env = {**os.environ, **SERVE_ENV, "KLONDIKE_SECRET": "s" * 40}
    env["KLONDIKE_PROT"] = "8000"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "klondike_live.cli", "serve", "--port", "0", "--redis", valkey_url),
        *("--data-dir", str(tmp_path), "--log-format", "json", "--log-level", "debug"),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        line = (await wait_for(process.stdout.readline(), 30)).decode()
        assert line.startswith("Klondike Live on http://"), line
    finally:
        process.terminate()
        _, err = await wait_for(process.communicate(), 30)
    records = [json.loads(text) for text in err.decode().splitlines() if text.strip()]
    assert records and all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    assert all(r["time"].endswith("Z") for r in records)
    assert any(r["level"] == "DEBUG" for r in records)  # --log-level debug
    misspelt = [r for r in records if "KLONDIKE_PROT" in r["message"]]
    assert [(r["level"], r["logger"]) for r in misspelt] == [("WARNING", "klondike_live.config")]
    assert "did you mean KLONDIKE_PORT?" in misspelt[0]["message"]
    assert any("listening on" in r["message"] for r in records)


@pytest.mark.usefixtures("restored_logging")
def test_flood_of_identical_errors_is_one_line_then_a_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """500 identical errors in a burst log one JSON line; the next one after the interval
    carries `suppressed: 499`; another kind of error is never held back by them."""
    # The burst must fit in one interval even on a machine busy with other work.
    configure("INFO", "json", flood_interval=scaled(1.5))
    log = logging.getLogger("klondike_live.test_flood")
    for attempt in range(500):
        log.error("Redis unreachable: attempt %d", attempt)
    log.error("another failure")
    time.sleep(scaled(1.6))  # the interval passes
    log.error("Redis unreachable: attempt %d", 500)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(r["message"], r.get("suppressed")) for r in lines] == [
        ("Redis unreachable: attempt 0", None),
        ("another failure", None),
        ("Redis unreachable: attempt 500", 499),
    ]


@pytest.mark.usefixtures("restored_logging")
def test_flood_count_in_text_and_info_lines_untouched(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In text the count reads "(N similar suppressed)"; info lines are never suppressed."""
    configure("INFO", "text", flood_interval=scaled(0.3))
    log = logging.getLogger("klondike_live.test_flood")
    for _ in range(3):
        log.info("connection open")
    for _ in range(10):
        log.warning("probe failed")
    time.sleep(scaled(0.35))  # the interval passes
    log.warning("probe failed")
    lines = capsys.readouterr().err.splitlines()
    assert sum("connection open" in line for line in lines) == 3
    probes = [line for line in lines if "probe failed" in line]
    assert len(probes) == 2 and probes[1].endswith("probe failed (9 similar suppressed)")
