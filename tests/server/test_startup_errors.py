"""A `klondike-live serve` that cannot start says why in one line and exits 2, naming the
flag or the variable at fault (real child processes, real Valkey servers)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from klondike_live.embedded import EmbeddedValkey

from helpers import SERVE_ENV
from waits import scaled

SECRET = "s" * 40


def serve(*args: str, **env: str) -> tuple[int, list[str]]:
    """Run `klondike-live serve --port 0 ARGS` with `env` added (no KLONDIKE_* from this
    process but the test settings); its exit status and stderr lines."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("KLONDIKE_")}
    done = subprocess.run(
        [sys.executable, "-m", "klondike_live.cli", "serve", *args],
        env={**base, **SERVE_ENV, "KLONDIKE_SECRET": SECRET, **env},
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    return done.returncode, done.stderr.splitlines()


def failed(status: int, lines: list[str]) -> str:
    """The one error line of a failed start (status 2, no traceback): the last line,
    after the log lines of what did start."""
    assert status == 2, lines
    assert lines and not any("Traceback" in line for line in lines), lines
    errors = [line for line in lines if line.startswith("klondike-live: ")]
    assert errors == lines[-1:], lines
    assert all(" INFO " in line for line in lines[:-1]), lines
    return lines[-1].removeprefix("klondike-live: ")


@pytest.fixture
def passworded(tmp_path: Path) -> Iterator[str]:
    """The URL of a running Valkey that requires a password (an embedded one)."""
    valkey = EmbeddedValkey(tmp_path / "protected")
    try:
        yield valkey.start()
    finally:
        valkey.stop()


def test_unreachable_redis_names_the_flag(tmp_path: Path) -> None:
    """An unreachable --redis: one line naming --redis and the URL, status 2."""
    line = failed(*serve("--port", "0", "--redis", "redis://127.0.0.1:1/0", "--data-dir", "d"))
    assert line.startswith("--redis: cannot reach Redis at redis://127.0.0.1:1/0")


def test_unreachable_redis_names_the_variable(tmp_path: Path) -> None:
    """The same URL from KLONDIKE_REDIS_URL is reported under KLONDIKE_REDIS_URL."""
    status, lines = serve(
        "--port", "0", "--data-dir", str(tmp_path), KLONDIKE_REDIS_URL="redis://127.0.0.1:1/0"
    )
    assert failed(status, lines).startswith("KLONDIKE_REDIS_URL: cannot reach Redis at")


def test_wrong_password_is_one_line_without_the_password(passworded: str, tmp_path: Path) -> None:
    """A wrong password: one line naming --redis, with the password hidden."""
    user, _, rest = passworded.removeprefix("redis://").partition(":")
    wrong = f"redis://{user}:not-the-password@{rest.partition('@')[2]}"
    line = failed(*serve("--port", "0", "--redis", wrong, "--data-dir", str(tmp_path)))
    assert line.startswith("--redis: ") and "not-the-password" not in line
    assert "***" in line and ("WRONGPASS" in line or "password" in line), line


def test_bad_database_is_one_line(valkey_url: str, tmp_path: Path) -> None:
    """A database number the server does not have: one line naming --redis."""
    line = failed(*serve("--port", "0", "--redis", valkey_url + "/99", "--data-dir", str(tmp_path)))
    assert line.startswith("--redis: Redis at ") and "DB index is out of range" in line


def test_bad_port_names_the_flag_or_the_variable(tmp_path: Path) -> None:
    """--port 99999 is reported as --port; KLONDIKE_PORT=99999 as KLONDIKE_PORT."""
    line = failed(*serve("--port", "99999", "--data-dir", str(tmp_path)))
    assert line == "--port: expected an integer 0..65535, got '99999'"
    line = failed(*serve("--data-dir", str(tmp_path), KLONDIKE_PORT="99999"))
    assert line == "KLONDIKE_PORT: expected an integer 0..65535, got '99999'"


def test_port_in_use_is_one_line(valkey_url: str, tmp_path: Path) -> None:
    """A port another process listens on: one line naming --port, status 2."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, lines = serve(
            "--port", str(port), "--redis", valkey_url, "--data-dir", str(tmp_path)
        )
    assert failed(status, lines).startswith(f"--port: cannot listen on 127.0.0.1:{port}: ")


def test_data_dir_in_use_names_the_data_dir(passworded: str, tmp_path: Path) -> None:
    """An embedded Valkey whose data directory another process holds: one line."""
    line = failed(*serve("--port", "0", "--data-dir", str(tmp_path / "protected")))
    assert line.startswith("--data-dir: another klondike-live process")


def test_misspelt_variables_are_warned_about(tmp_path: Path) -> None:
    """Each unknown KLONDIKE_* variable gets one warning line with the closest name."""
    status, lines = serve(
        "--port", "99999", "--data-dir", str(tmp_path), KLONDIKE_PROT="1", KLONDIKE_REDIS="x"
    )
    assert status == 2 and len(lines) == 3, lines
    assert lines[0].endswith(
        "KLONDIKE_PROT is not a setting and is ignored; did you mean KLONDIKE_PORT?"
    )
    assert "KLONDIKE_REDIS is not a setting" in lines[1] and "KLONDIKE_REDIS_URL" in lines[1]
    assert lines[2].startswith("klondike-live: --port: ")
