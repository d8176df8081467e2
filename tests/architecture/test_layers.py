"""The package's layers, read from its import statements (including those under
`TYPE_CHECKING`): who may import the transport and Redis, and no import cycles."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "klondike_live"
ROOT = "klondike_live"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, name: str) -> Iterator[str]:
    """Every module `path` imports, absolute, wherever the statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            yield base
            # `from package import module` imports the module too.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        edges[name] = {target for target in imports(path, name) if target in known}
        edges[name].discard(name)
    return edges


def third_party(prefix: str) -> dict[str, set[str]]:
    """Modules of the package importing `prefix` (or one of its submodules)."""
    out: dict[str, set[str]] = {}
    for name, path in modules().items():
        found = {i for i in imports(path, name) if i == prefix or i.startswith(prefix + ".")}
        if found:
            out[name] = found
    return out


def test_only_the_gateway_and_the_python_client_import_websockets() -> None:
    """The live service and everything below it are transport-free."""
    allowed = (f"{ROOT}.gateway", f"{ROOT}.client")
    offenders = sorted(n for n in third_party("websockets") if not n.startswith(allowed))
    assert offenders == []


def test_only_the_store_and_the_bus_import_redis() -> None:
    """All Redis access goes through `store/` (and the bus subscriber)."""
    allowed = (f"{ROOT}.store", f"{ROOT}.bus")
    offenders = sorted(n for n in third_party("redis") if not n.startswith(allowed))
    assert offenders == []


def test_the_engine_imports_nothing_of_the_server() -> None:
    """The engine is pure: no asyncio, sockets, Redis or msgpack, no other layer."""
    for name, path in modules().items():
        if not name.startswith(f"{ROOT}.engine"):
            continue
        for target in imports(path, name):
            top = target.split(".")[0]
            assert top not in {"asyncio", "websockets", "redis", "msgpack"}, (name, target)
            if target.startswith(ROOT + "."):
                assert target.startswith(f"{ROOT}.engine"), (name, target)


def test_no_layer_below_the_gateway_imports_it() -> None:
    """The service, race rules, store and bus never reach up into the gateway."""
    below = ("service", "race", "store", "bus", "protocol", "engine", "daily", "solver")
    for name, targets in graph().items():
        layer = name.split(".")[1] if name.count(".") else ""
        if layer in below:
            assert not any(t.startswith(f"{ROOT}.gateway") for t in targets), name


def test_there_is_no_import_cycle() -> None:
    """No module reaches itself through its imports, not even under TYPE_CHECKING."""
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            # A package's __init__ importing its own submodules is not a cycle of layers.
            if node == target.rpartition(".")[0] or target == node.rpartition(".")[0]:
                continue
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


# The modules that build and run a node: they open Redis and hand the store to the
# service. Every other gateway module sees only the service.
NODE_WIRING = {f"{ROOT}.gateway.server", f"{ROOT}.gateway.workers"}
# What a gateway module may take from the store package: the type of its failures, to
# answer `unavailable`.
STORE_NAMES_ALLOWED = {f"{ROOT}.store", f"{ROOT}.store.StoreError"}
STORE_ATTRIBUTES = {"store", "redis", "daily_store", "players", "connection_pool"}


def test_the_gateway_reaches_no_store_but_through_the_service() -> None:
    """Outside the node's wiring, no gateway module imports the store, Redis or the daily
    package's store-backed parts, nor reads a `store`/`redis` attribute of anything the
    service hands it: every HTTP answer and every request goes through service methods."""
    offenders: list[tuple[str, str]] = []
    for name, path in modules().items():
        if not name.startswith(f"{ROOT}.gateway.") or name in NODE_WIRING:
            continue
        for target in imports(path, name):
            reaches_store = target.startswith(f"{ROOT}.store")
            if (reaches_store and target not in STORE_NAMES_ALLOWED) or target.startswith(
                (f"{ROOT}.daily.", "redis")
            ):
                offenders.append((name, target))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in STORE_ATTRIBUTES:
                offenders.append((name, f".{node.attr} (line {node.lineno})"))
    assert offenders == []


# redis-py's private or undocumented API, named only in `store/redispy.py`, whose every
# function tests/server/test_redispy.py calls against a real Valkey.
REDISPY = f"{ROOT}.store.redispy"
REDISPY_INTERNALS = {
    "get_connection",
    "read_response",
    "send_packed_command",
    "connect_check_health",
    "call_with_retry",
    "nodes_manager",
    "handle_message",
    "connection_kwargs",
    "connection_class",
    "is_connected",
    "_available_connections",
    "_in_use_connections",
}


def test_only_the_redispy_module_reaches_redis_py_internals() -> None:
    """No other module reads, defines or names (as a string, e.g. for `getattr`) one of
    redis-py's internals: a redis-py upgrade is checked by the tests of one module."""
    offenders: list[tuple[str, str, int]] = []
    for name, path in modules().items():
        if name == REDISPY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                found = node.attr
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found = node.name
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found = node.value
            else:
                continue
            if found in REDISPY_INTERNALS:
                offenders.append((name, found, getattr(node, "lineno", 0)))
    assert offenders == []
    assert REDISPY in modules()
