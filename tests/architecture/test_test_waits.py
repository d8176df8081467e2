"""Every wait in the tests runs on the tests' clock: read from the test files' syntax.

`KLONDIKE_TEST_TIMEOUT_SCALE` stretches a test's waits on a loaded machine only if each
goes through tests/waits.py: `wait_for(what, t)` (it scales `t`), `scaled(t)` around any
other timeout, deadline or pause, and `connect_client` (clients whose replies are awaited
on the scaled clock). This test fails on a wait written any other way:

- `asyncio.wait_for` or `asyncio.timeout` but with a `scaled(...)` timeout (or use
  `wait_for`);
- a sleep (`asyncio.sleep`, `time.sleep`, Playwright's `wait_for_timeout`) of more than
  `POLL_SECONDS` that is not `scaled(...)`: a wait for an event is written as one
  (`wait_for`, a Playwright `expect`); a pause that only lets time pass (to show that
  nothing happens) is scaled;
- a `timeout=` of plain numbers, or a deadline `time.monotonic() + <number>`, anywhere
  but in `wait_for(...)`;
- a `Client.connect` (its replies would be awaited for a fixed 10 s).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.05
"""A sleep this short is a poll interval or a yield to the loop, not a wait."""

HELPER = "waits.py"
"""The one module that may wait with asyncio and connect clients itself."""

ALLOWED: dict[tuple[str, str], str] = {
    ("bots/test_policy.py", "load"): "it blocks the event loop on purpose (time.sleep)",
    ("server/test_bus.py", "on_message"): "a hook that never returns: sleep(60) until cancelled",
    ("browser/test_ui_table.py", "test_six_fast_clicks_on_the_stock_turn_six_cards"): (
        "clicks 40-80 ms apart are what it tests"
    ),
}
"""(file under tests/, function) -> why its fixed sleep is not a wait."""


def dotted(node: ast.expr) -> str:
    """`a.b.c` for a chain of names and attributes, the last attribute otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else f".{node.attr}"
    return ""


def plain_number(node: ast.expr) -> float | None:
    """The value of an expression of number literals only (`10_000`, `(3 + 2) * 1000`)."""
    try:
        value = ast.literal_eval(node) if isinstance(node, ast.Constant) else None
        if value is None and isinstance(node, ast.BinOp | ast.UnaryOp):
            value = eval(compile(ast.Expression(node), "<timeout>", "eval"), {"__builtins__": {}})
    except Exception:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def is_scaled(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func).endswith("scaled")


def is_clock(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func).rpartition(".")[2] in (
        "monotonic",
        "time",
        "perf_counter",
    )


def fixed_waits(tree: ast.AST) -> Iterator[tuple[int, str, str, str]]:
    """(line, function, what it calls, why it is off the tests' clock) for each fixed wait."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    inside: dict[ast.AST, str] = {}
    for outer in ast.walk(tree):
        if isinstance(outer, functions):
            for child in ast.iter_child_nodes(outer):
                for node in ast.walk(child):
                    inside[node] = outer.name  # inner functions come later: they win
    for node in ast.walk(tree):
        for name, why in _fixed(node):
            yield getattr(node, "lineno", 0), inside.get(node, ""), name, why


def _fixed(node: ast.AST) -> Iterator[tuple[str, str]]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        if is_clock(node.left) and plain_number(node.right) is not None:
            yield "deadline", "a fixed deadline: add scaled(seconds)"
        return
    if not isinstance(node, ast.Call):
        return
    name = dotted(node.func)
    if name in ("asyncio.wait_for", "asyncio.timeout"):
        limit = [*node.args, *(k.value for k in node.keywords if k.arg == "timeout")][-1:]
        if not (limit and is_scaled(limit[0])):
            yield name, "use wait_for(what, seconds) or scaled(seconds)"
    elif name == "Client.connect":
        yield name, "use waits.connect_client (replies on the scaled clock)"
    elif name in ("asyncio.sleep", "time.sleep") or name.endswith(".wait_for_timeout"):
        pause = node.args[0] if node.args else None
        if pause is not None and not is_scaled(pause):
            seconds = plain_number(pause)
            if seconds is not None and name.endswith("wait_for_timeout"):
                seconds /= 1000
            if seconds is None or seconds > POLL_SECONDS:
                yield name, "wait for the event, or scale a pause with scaled()"
    if name.rpartition(".")[2] == "wait_for":
        return
    for keyword in node.keywords:
        if keyword.arg == "timeout" and plain_number(keyword.value) is not None:
            yield name, "a fixed timeout=: write timeout=scaled(...)"
    if name.endswith(".expect") and len(node.args) > 1 and plain_number(node.args[1]):
        yield name, "a fixed expect timeout: write scaled(...)"


def test_every_wait_in_the_tests_is_on_the_scaled_clock() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        where = path.relative_to(TESTS).as_posix()
        if where == HELPER:
            continue
        for line, function, name, why in fixed_waits(ast.parse(path.read_text("utf-8"))):
            if (where, function) not in ALLOWED:
                found.append(f"tests/{where}:{line}: {name}: {why}")
    assert not found, "waits off the tests' clock (tests/waits.py):\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_fixed_wait() -> None:
    source = """
async def f(page, client, scaled, wait_for):
    await asyncio.wait_for(x, 5)
    async with asyncio.timeout(5): pass
    await asyncio.sleep(0.3)
    time.sleep(1)
    page.wait_for_timeout(1_000)
    expect(page).to_be_visible(timeout=10_000)
    await client.expect(match, 5)
    await Client.connect(url)
    deadline = time.monotonic() + 10
    await asyncio.sleep(0.01)
    await asyncio.sleep(scaled(0.3))
    page.wait_for_timeout(scaled(1_000))
    expect(page).to_be_visible(timeout=scaled(10_000))
    await wait_for(x, 5)
    deadline = time.monotonic() + scaled(10)
    async with asyncio.timeout(scaled(5)): pass
"""
    lines = [line for line, _, _, _ in fixed_waits(ast.parse(source))]
    assert sorted(lines) == list(range(3, 12))
