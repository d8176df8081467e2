"""Helpers about the child processes of this test process (tests of any folder).

solver_children() -> list[int]
    Pids of live solver child processes of this test process (reads /proc, Linux only).
"""

from __future__ import annotations

import os
from pathlib import Path


def solver_children() -> list[int]:
    """Pids of live child processes of this test process running a solver job."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"klondike_live.solver.job" in cmdline:
            found.append(int(entry.name))
    return found
