"""Every round trip a store makes to Redis is timed (`store.latency.Latency.timed`, the
`klondike_redis_latency_seconds` histogram), read from the store modules' source: an
await of anything else in a store's coroutine fails here."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from klondike_live.store.latency import Latency

STORE = Path(__file__).resolve().parents[2] / "server" / "klondike_live" / "store"
STORES = {
    "store.py": "Store",
    "players.py": "PlayerStore",
    "daily.py": "DailyStore",
    "tournaments.py": "TournamentStore",
    "pool.py": "PoolStore",
    "legacy.py": "LegacyStore",
    "outbox.py": "OutboxStore",
}
# Awaits that are no round trip of their own: closing the store's clients, and the
# compare-and-set loops' backoff.
UNTIMED = {("Store", "close"), ("*", "asyncio.sleep")}


def awaited(node: ast.Await) -> str:
    """What an await awaits, as dotted text: `self.latency.timed`, `self.redis.get`..."""
    target = node.value.func if isinstance(node.value, ast.Call) else node.value
    return ast.unparse(target)


def untimed_in(source: str, name: str, class_name: str) -> list[str]:
    """`file:line class.method awaits X` for each await in a coroutine of `class_name`
    that is neither `latency.timed(...)` nor a coroutine of the same store (which is
    checked itself)."""
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    own = {f"self.{n.name}" for n in cls.body if isinstance(n, ast.AsyncFunctionDef)}
    found = []
    for method in cls.body:
        if not isinstance(method, ast.AsyncFunctionDef):
            continue
        for node in ast.walk(method):
            if not isinstance(node, ast.Await):
                continue
            what = awaited(node)
            if what.endswith("latency.timed") or what in own:
                continue
            if (class_name, method.name) in UNTIMED or ("*", what) in UNTIMED:
                continue
            found.append(f"{name}:{node.lineno} {class_name}.{method.name} awaits {what}")
    return found


def test_every_store_coroutine_awaits_redis_through_the_latency_wrapper() -> None:
    """Commands, scripts and pipelines of every store go through `latency.timed`."""
    found = []
    for name, class_name in STORES.items():
        found += untimed_in((STORE / name).read_text(encoding="utf-8"), name, class_name)
    assert found == []


def test_the_check_sees_an_untimed_await() -> None:
    """A store coroutine awaiting a command directly is reported (the check is alive)."""
    source = (STORE / "outbox.py").read_text(encoding="utf-8")
    timed = "return int(await self.latency.timed(self.redis.zcard(keys.OUTBOX)))"
    assert timed in source
    bare = source.replace(timed, "return int(await self.redis.zcard(keys.OUTBOX))")
    (found,) = untimed_in(bare, "outbox.py", "OutboxStore")
    assert found.endswith("OutboxStore.length awaits self.redis.zcard")


def test_the_wrapper_times_a_call_that_fails_too() -> None:
    """`timed` passes each call's duration to its observer, a failing call's as well."""
    seen: list[float] = []
    latency = Latency(seen.append)

    async def answer() -> int:
        return 7

    async def fail() -> int:
        raise ConnectionError("down")

    async def run() -> None:
        assert await latency.timed(answer()) == 7
        try:
            await latency.timed(fail())
        except ConnectionError:
            pass
        else:
            raise AssertionError("the failure must reach the caller")

    asyncio.run(run())
    assert len(seen) == 2 and all(s >= 0 for s in seen)
