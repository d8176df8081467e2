"""Run shell commands while busy loops share the cores (`make test-under-load`).

    .venv/bin/python tools/under_load.py [--busy 2] [--scale 3] COMMAND...

Starts `--busy` CPU hogs (`stress-ng --cpu N` where it is installed, else N Python busy
loops), runs each COMMAND in turn through the shell with `KLONDIKE_TEST_TIMEOUT_SCALE`
set to `--scale` (unless the environment sets it already), stopping at the first that
fails, and stops the hogs whatever happened (a failure, Ctrl-C). Its exit status is
that of the last command run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence

SCALE_VARIABLE = "KLONDIKE_TEST_TIMEOUT_SCALE"


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` busy CPUs, each hog in a process group of its own (stopped as a group)."""
    stress = shutil.which("stress-ng")
    if stress:
        commands = [[stress, "--cpu", str(count), "--quiet"]]
    else:
        commands = [[sys.executable, "-c", "while True: pass"] for _ in range(count)]
    return [subprocess.Popen(command, start_new_session=True) for command in commands]


def stop_hogs(hogs: Sequence[subprocess.Popen[bytes]]) -> None:
    for hog in hogs:
        if hog.poll() is None:
            os.killpg(hog.pid, signal.SIGTERM)
    for hog in hogs:
        try:
            hog.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--busy", type=int, default=2, help="CPU hogs to run (default 2)")
    parser.add_argument("--scale", default="3", help=f"{SCALE_VARIABLE} (default 3)")
    parser.add_argument("commands", nargs="+", metavar="COMMAND", help="shell commands, in turn")
    args = parser.parse_args(argv)
    env = {**os.environ}
    env.setdefault(SCALE_VARIABLE, args.scale)
    hogs = start_hogs(args.busy)
    print(f"under_load: {args.busy} busy CPUs, {SCALE_VARIABLE}={env[SCALE_VARIABLE]}", flush=True)
    status = 0
    try:
        for command in args.commands:
            print(f"under_load: {command}", flush=True)
            status = subprocess.run(command, shell=True, env=env, check=False).returncode
            if status:
                break
    except KeyboardInterrupt:
        status = 130
    finally:
        stop_hogs(hogs)
    return status


if __name__ == "__main__":
    sys.exit(main())
