"""Worker processes of one kind driven over pipes (`Workers`: load generators,
spectators, racers), their shares of the work (`split`, `runs`), and the pacing of moves
(`paced`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import multiprocessing
import os
import time
import traceback
from collections.abc import AsyncIterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Any, TypeVar

from harness.measure import cpu_seconds

T = TypeVar("T")

# ---------------------------------------------------------------- worker processes


class Workers:
    """Worker processes of one kind. Worker i holds `kind(*args[i])`, made in its own
    process (spawned, so `kind` must be importable); the benchmark calls the object's
    methods over a pipe (`call`, `each`) and `close()` calls its `stop()` and ends the
    process. A method's exception fails the call with the traceback's lines in `kind`'s
    module; `nice` lowers the workers' priority below the benchmark's nodes."""

    def __init__(self, kind: type, args: Sequence[tuple[Any, ...]], nice: int = 0) -> None:
        context = multiprocessing.get_context("spawn")
        self.what = kind.__name__
        self.procs: list[SpawnProcess] = []
        self.pipes: list[Connection[Any, Any]] = []
        for one in args:
            ours, theirs = context.Pipe()
            proc = context.Process(target=_work, args=(theirs, kind, one, nice), daemon=True)
            proc.start()
            self.procs.append(proc)
            self.pipes.append(ours)

    def __len__(self) -> int:
        return len(self.pipes)

    async def each(self, calls: Sequence[tuple[Any, ...]], timeout: float = 300) -> list[Any]:
        """Call `calls[i]` (a method's name, then its arguments) on worker i, all at once;
        what each returned."""

        def one(pipe: Connection[Any, Any], call: tuple[Any, ...]) -> Any:
            pipe.send(call)
            try:
                if not pipe.poll(timeout):
                    raise RuntimeError(
                        f"{self.what} gave no answer to {call[0]} in {timeout:.0f} s"
                    )
                status, value = pipe.recv()
            except EOFError:
                raise RuntimeError(f"{self.what} exited during {call[0]}") from None
            if status == "failed":
                raise RuntimeError(f"{self.what} failed in {call[0]}: {value}")
            return value

        pairs = zip(self.pipes, calls, strict=True)
        return list(await asyncio.gather(*(asyncio.to_thread(one, p, c) for p, c in pairs)))

    async def call(self, method: str, *args: Any, timeout: float = 300) -> list[Any]:
        """Call the same method on every worker."""
        return await self.each([(method, *args)] * len(self.pipes), timeout)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.pid is not None]

    def cpu(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids)

    def close(self) -> None:
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for proc in self.procs:
            proc.join(15)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
        self.procs.clear()
        self.pipes.clear()


def split(total: int, parts: int) -> list[int]:
    """`total` in `parts` shares that differ by one at most."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def runs(items: Sequence[T], parts: int) -> list[list[T]]:
    """`items` in at most `parts` consecutive runs whose lengths differ by one at most
    (no empty run)."""
    out: list[list[T]] = []
    start = 0
    for share in split(len(items), parts):
        if share:
            out.append(list(items[start : start + share]))
        start += share
    return out


def _work(pipe: Connection[Any, Any], kind: type, args: tuple[Any, ...], nice: int) -> None:
    if nice:
        os.nice(nice)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(pipe, kind, args))


async def _serve(pipe: Connection[Any, Any], kind: type, args: tuple[Any, ...]) -> None:
    worker = kind(*args)
    try:
        while True:
            call = await asyncio.to_thread(pipe.recv)
            if call[0] == "stop":
                return
            try:
                value = getattr(worker, call[0])(*call[1:])
                if inspect.isawaitable(value):
                    value = await value
                pipe.send(("ok", value))
            except Exception as exc:
                pipe.send(("failed", _failure(exc, inspect.getfile(kind))))
    finally:
        await worker.stop()


def _failure(exc: BaseException, module: str) -> str:
    """The exception and where it was raised in `module` (the benchmark prints it)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == module]
    where = " <- ".join(f"{f.name}:{f.lineno}" for f in reversed(frames))
    return f"{exc!r} at {where}" if where else repr(exc)


# ---------------------------------------------------------------- pacing


async def paced(count: int, interval: float, offset: float = 0.0) -> AsyncIterator[int]:
    """0 .. count - 1, the i-th at `offset + i * interval` seconds from now (at once when
    late: the schedule stays, nothing is skipped)."""
    start = time.perf_counter() + offset
    for index in range(count):
        delay = start + index * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        yield index
