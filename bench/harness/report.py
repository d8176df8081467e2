"""How a benchmark reports: which code it measured (`code_version`), on what machine,
aligned tables and percentiles, and its command line (`parser`, with the options several
benchmarks share).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.processes import ROOT

# ---------------------------------------------------------------- which code ran


def server_root() -> Path:
    """The checkout whose `server/` the nodes run: where `klondike_live` is imported from
    (this repository, or another work tree put first on PYTHONPATH, which child processes
    inherit: `PYTHONPATH=/path/to/worktree/server python bench/...` measures a committed
    snapshot while this tree has work in progress)."""
    import klondike_live

    return Path(klondike_live.__file__).resolve().parent.parent.parent


def code_version(root: Path | None = None) -> str:
    """Which server code ran (that of `root`, a checkout, or the one imported): the
    commit, and whether server/ had uncommitted changes."""
    root = root or server_root()
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "server"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except OSError:
        return "server code: unknown"
    extra = f" + uncommitted changes in {len(dirty)} server files" if dirty else ""
    where = "" if root == ROOT else f" (work tree {root})"
    return f"server code: {head}{extra}{where}"


def commit_of(version: str) -> str:
    """The commit a `code_version()` line names."""
    return version.removeprefix("server code: ").split()[0]


def machine() -> str:
    """The interpreter and the cores, for a report's first lines."""
    return f"Python {sys.version.split()[0]}, {os.cpu_count()} cores"


# ---------------------------------------------------------------- reports


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of samples, by linear interpolation."""
    if not samples:
        return float("nan")
    if len(samples) == 1:
        return samples[0]
    cuts = statistics.quantiles(samples, n=1000, method="inclusive")
    index = round(q * 10) - 1
    return cuts[min(max(index, 0), len(cuts) - 1)]


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table (first column left, others right)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            row[i].ljust(widths[i]) if i == 0 else row[i].rjust(widths[i]) for i in range(len(row))
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


# ---------------------------------------------------------------- command lines


OPTIONS: dict[str, tuple[type, str]] = {
    "rounds": (int, "measured rounds; what is compared alternates round by round"),
    "duration": (float, "measured seconds a round"),
    "warmup": (float, "seconds played before measuring"),
    "window": (float, "measured seconds (after the warm-up)"),
    "interval": (float, "seconds between two moves of a racer"),
    "moves": (int, "measured moves per racer a round"),
    "procs": (int, "load-generator worker processes (racers, or spectators)"),
    "sink_procs": (int, "worker processes of the raw-socket spectators"),
    "masters": (int, "masters of the Valkey Cluster"),
    "seeds": (str, "deals: seeds A-B or A,B,..."),
    "timeout": (float, "seconds per deal"),
}
"""The options several benchmarks take, with what they mean in all of them."""


def ttl_text(ms: int) -> str:
    """A key's time to live as Valkey's `PTTL` gives it (-1: kept, -2: gone)."""
    if ms == -1:
        return "none (kept)"
    if ms < 0:
        return "gone"
    if ms >= 86_400_000:
        return f"{ms / 86_400_000:.1f} d"
    if ms >= 3_600_000:
        return f"{ms / 3_600_000:.2f} h"
    return f"{ms / 1000:.1f} s"


def parser(
    doc: str | None, *, against: str = "", profile: str = "", **defaults: object
) -> argparse.ArgumentParser:
    """An argument parser described by the first paragraph of a script's docstring, with
    the `OPTIONS` named in `defaults` (each with its default); `against="once"` or
    `"repeat"` adds `--against TREE`: another checkout (`git worktree add --detach
    /tmp/old <commit>`) whose `server/` runs nodes of its own in the same rounds;
    `profile="..."` adds `--profile DIR`: py-spy of what it names while measuring."""
    out = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    for name, default in defaults.items():
        kind, text = OPTIONS[name]
        out.add_argument(f"--{name.replace('_', '-')}", type=kind, default=default, help=text)
    if against:
        repeat = against == "repeat"
        out.add_argument(
            "--against",
            type=Path,
            action="append" if repeat else "store",
            default=[] if repeat else None,
            help="a work tree of another commit: its nodes are measured too, on the same "
            "Valkey, in alternating rounds" + (" (repeatable)" if repeat else ""),
        )
    if profile:
        out.add_argument("--profile", type=Path, help=f"a directory: py-spy {profile}")
    return out


def numbers(text: str) -> list[int]:
    """`1,100` as [1, 100] (spectator counts, node counts)."""
    return [int(x) for x in text.split(",")]


def seeds(text: str) -> list[str]:
    """`A-B` (a range of numbers) or a comma-separated list, as seeds."""
    if "-" in text and "," not in text:
        first, _, last = text.partition("-")
        return [str(s) for s in range(int(first), int(last) + 1)]
    return [s.strip() for s in text.split(",") if s.strip()]
