"""`klondike-live serve` as a child process for the browser tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from waits import scaled

READY_LINE = re.compile(r"Klondike Live on (http://\S+/)")

# No background solver work beyond what a test asks for (the machine has two cores):
# no deal pool refill, no days prepared ahead, a small budget for today's deals, and no
# analysis of finished games (tests/browser/test_ui_analysis.py turns it on).
QUIET = {
    "KLONDIKE_POOL_TARGET": "0",
    "KLONDIKE_DAILY_PREPARE_SECONDS": "0",
    "KLONDIKE_DAILY_BUDGET_NODES": "20000",
    "KLONDIKE_ANALYSIS_SECONDS": "0",  # no solver analysis of every finished game
}


class ServerProcess:
    """`klondike-live serve` on a free port; its output is kept for failure reports."""

    def __init__(
        self, valkey_url: str, data_dir: Path, port: int = 0, env: dict[str, str] | None = None
    ) -> None:
        command = [
            str(Path(sys.executable).with_name("klondike-live")),
            "serve",
            "--port",
            str(port),
            "--redis",
            valkey_url,
            "--data-dir",
            str(data_dir),
        ]
        self.data_dir = data_dir
        self.output: list[str] = []
        self.url = ""
        self.ready = threading.Event()
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **QUIET, **(env or {})},
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(scaled(30)) or not self.url:
            self.stop()
            raise RuntimeError("server did not start:\n" + "".join(self.output))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            match = READY_LINE.search(line)
            if match and not self.url:
                self.url = match.group(1)
                self.ready.set()
        self.ready.set()

    def output_since(self, line: int) -> str:
        """What the server printed from its output line `line` on (a failure report)."""
        return "".join(self.output[line:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(scaled(15))
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
