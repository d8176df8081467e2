"""`py-spy` of a process over a window, and the summary of where its CPU went."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.processes import VENV_BIN, die_with_parent

# ---------------------------------------------------------------- profiling (py-spy)


class Profiler:
    """`py-spy record` of one process over a window (`.venv/bin/pip install py-spy`).

    Samples the thread holding the GIL (`--gil`), when it runs (no `--idle`): shares are
    of the Python work's CPU time. Without `--gil`, py-spy counts a thread blocked in C
    code that released the GIL (the history database's aiosqlite worker, waiting on
    SQLite) as running, and its samples swamp the event loop's.
    `stop()` returns the collapsed stacks' summary (`summarise`)."""

    def __init__(self, pid: int, out: Path, rate: int = 250) -> None:
        self.out = out
        self.proc: subprocess.Popen[bytes] | None = None
        out.parent.mkdir(parents=True, exist_ok=True)
        exe = shutil.which("py-spy", path=str(VENV_BIN)) or shutil.which("py-spy")
        if exe is None:
            print("py-spy not found: no profile", file=sys.stderr)
            return
        self.proc = subprocess.Popen(
            [exe, "record", "--gil", "-p", str(pid), "-r", str(rate), "-f", "raw", "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=out.with_suffix(".log").open("wb"),
            preexec_fn=die_with_parent,
        )
        time.sleep(0.5)  # attach

    def stop(self, top: int = 18) -> str:
        if self.proc is None:
            return ""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        if not self.out.exists():
            log = self.out.with_suffix(".log")
            return "(no profile written) " + (log.read_text()[-500:] if log.exists() else "")
        return summarise(self.out, top)


def profiler(folder: Path | None, pid: int, name: str) -> Profiler | None:
    """A `Profiler` of `pid` into `folder/name.txt`, or None without a folder."""
    return None if folder is None else Profiler(pid, folder / f"{name}.txt")


def summarise(path: Path, top: int = 18) -> str:
    """Top functions of collapsed stacks: share of samples on-CPU in the function itself
    (self) and anywhere below it (inclusive)."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = idle = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        if stack.split(";")[-1].startswith(("select (selectors.py", "EpollSelector.select")):
            idle += count  # waiting in epoll: not CPU work
            continue
        total += count
        frames = [f for f in (_short(f) for f in stack.split(";")) if f]
        if not frames:
            continue
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
    if not total:
        return "(no samples)"
    lines = [f"{total} samples on CPU ({idle} more waiting in epoll, left out)"]
    for title, counts, shown in (("self", own, top), ("incl", inclusive, top + 10)):
        lines.append(f"{title} %   function")
        for name, count in sorted(counts.items(), key=lambda kv: -kv[1])[:shown]:
            lines.append(f"{100 * count / total:6.1f}   {name}")
    return "\n".join(lines)


def _short(frame: str) -> str:
    """`func (path/to/file.py:12)` -> `func (file.py)`, package-relative."""
    match = re.match(r"(.*) \((.*?):?(\d+)?\)$", frame)
    if match is None:
        return frame
    func, path = match.group(1), match.group(2)
    for marker in ("site-packages/", "klondike_live/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{func} ({path})"
