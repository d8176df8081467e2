"""Fixtures of the server tests: every test client's race frames go through the leak auditor.

leak_audit (autouse)
    Every `klondike_live.client.Client` a test creates is remembered, and every frame an
    in-server bot's connection is handed (`BotConnection.deliver`); after the test,
    every race and daily frame each of them received is checked by the leak auditor
    (`auditor.audit_clients`) against the games as stored in Valkey. A card a client
    could not know fails the test. Test clocks made during the test (`daily_support.
    DayClock`) tell it which daily challenges closed.

make_settings (overrides the one of tests/conftest.py)
    The same factory with quiet defaults for the background work of a node: no deal
    pool refill (`pool_target=0`), no daily preparation task (`daily_prepare_seconds=0`)
    and small solver budgets, so that a test certifies only what it asks for.

clock
    The daily node's clock (`daily_support.DayClock`): 2030-01-01 08:00 UTC until a test
    moves it.

daily_node (async)
    A node on `clock`, with both daily variants of 2030-01-01 prepared
    (`daily_support.prepare`).

The shared fixtures (`valkey_url`, `redis`, `wait_for`) are in tests/conftest.py.
pytest finds these fixtures in tests/server/conftest.py, which imports them from here:
mypy checks this module, while it cannot check a second module named `conftest` beside
tests/conftest.py.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Concatenate, ParamSpec

import msgpack
import pytest

from klondike_live.client import Client, Message
from klondike_live.config import Settings
from klondike_live.daily.variants import DRAW1, DRAW3
from klondike_live.embedded import open_redis
from klondike_live.gateway.server import Node, running
from klondike_live.service.bots import BotConnection
from klondike_live.store.connect import RedisClient

from daily_support import DAY, MORNING, DayClock, prepare
from helpers import FAST

P = ParamSpec("P")

QUIET = {
    "pool_target": 0,
    "pool_budget_nodes": 20_000,
    "daily_prepare_seconds": 0.0,
    "daily_budget_nodes": 20_000,
    "daily_budget_seconds": 60.0,
}
"""Settings of every test node unless a test says otherwise (see the docstring)."""


@pytest.fixture
def make_settings(make_settings: Callable[..., Settings]) -> Callable[..., Settings]:
    """Test settings with no background certifying unless asked for."""

    def make(**overrides: Any) -> Settings:
        return make_settings(**{**QUIET, **overrides})

    return make


@pytest.fixture
def clock() -> DayClock:
    """The daily node's clock: 2030-01-01 08:00 UTC until a test moves it."""
    return DayClock(MORNING)


@pytest.fixture
async def daily_node(
    make_settings: Callable[..., Settings], redis: RedisClient, clock: DayClock
) -> AsyncIterator[Node]:
    """A node on the test clock, with both daily challenges of 2030-01-01 ready."""
    await prepare(redis, DAY, DRAW1)
    await prepare(redis, DAY, DRAW3)
    async with running(make_settings(**FAST), clock=clock) as started:
        yield started


class Stamped(list[Message]):
    """A client's received frames, with the wall-clock time each arrived (`times`)."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: Message) -> None:
        self.times.append(time.time())
        super().append(item)


def remembering(
    init: Callable[Concatenate[Client, P], None], clients: list[Client]
) -> Callable[Concatenate[Client, P], None]:
    """`init` (`Client.__init__`), then the client's frames `Stamped` and the client
    added to `clients`."""

    def remember(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> None:
        init(self, *args, **kwargs)
        self.received = Stamped()
        clients.append(self)

    return remember


class BotFrames:
    """What an in-server bot received, in the form the auditor reads (`user`,
    `received`)."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.received: list[Message] = Stamped()


def recording_bots(bots: list[BotFrames]) -> Callable[[BotConnection, bytes], None]:
    """`BotConnection.deliver` that also keeps every frame for the auditor."""
    deliver = BotConnection.deliver

    def record(self: BotConnection, frame: bytes) -> None:
        mine = next((b for b in bots if b.user == self.user), None)
        if mine is None:
            mine = BotFrames(self.user)
            bots.append(mine)
        if not self.closed:
            mine.received.append(msgpack.unpackb(frame, raw=False))
        deliver(self, frame)

    return record


@pytest.fixture(autouse=True)
async def leak_audit(valkey_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """Audit, after the test, every frame every test client and every in-server bot
    received (see above)."""
    import auditor
    from auditor import audit_clients

    auditor.CLOCKS.clear()
    clients: list[Client] = []
    bots: list[BotFrames] = []
    monkeypatch.setattr(Client, "__init__", remembering(Client.__init__, clients))
    monkeypatch.setattr(BotConnection, "deliver", recording_bots(bots))
    yield
    if clients or bots:
        client = await open_redis(valkey_url)
        try:
            await audit_clients(client, [*clients, *bots])
        finally:
            await client.aclose()
