"""Shared pieces of the daily challenge tests: a moving clock, prepared days, requests.
(The `clock` and `daily_node` fixtures are in tests/server/server_fixtures.py.)

DayClock(start)
    The node's clock (`running(clock=...)`): `set(moment)` moves it, and it remembers
    when (wall clock) it told what, so the leak auditor knows when a day closed.

prepare(redis, day, variant) -> DayRecord
    Stores the day's record exactly as the server would make it with the test budget
    (the smallest n whose deal the solver wins within 20,000 positions), certified in
    this process once per session, so tests do not wait for solver processes.

get(node, path, token=None) -> (status, body)
    An HTTP GET with `Authorization: Bearer <token>` when a token is given; every answer
    is remembered for the leak auditor's HTTP audit (`auditor.audit_http`, run after
    each test of a module that imports the `http_audit` fixture).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import urllib.error
import urllib.request
from datetime import UTC, date, datetime, timedelta
from typing import Any

from klondike_live import keys
from klondike_live.auth import AuthError, verify_token
from klondike_live.client import Client, Message, ServerError
from klondike_live.daily.certify import CertifiedDeal
from klondike_live.daily.days import DayRecord, daily_seed
from klondike_live.daily.variants import DRAW1, DRAW3, variant_slug
from klondike_live.engine import Board, Variant
from klondike_live.gateway.server import Node
from klondike_live.solver import Budget, solve
from klondike_live.store.connect import RedisClient

import auditor
from waits import scaled, wait_for

TEST_SECRET = b"klondike-live-test-secret-0123456789abcdef"  # as in tests/conftest.py
BUDGET = Budget(nodes=20_000)  # the test nodes' daily budget (server_fixtures.py)
DAY = date(2030, 1, 1)
MORNING = datetime(2030, 1, 1, 8, 0, tzinfo=UTC)
D1 = str(DRAW1)
D3 = str(DRAW3)


class DayClock:
    """A settable aware clock that keeps its history for the auditor."""

    def __init__(self, start: datetime) -> None:
        self.history: list[tuple[float, datetime]] = [(float("-inf"), start)]
        auditor.CLOCKS.append(self)

    def __call__(self) -> datetime:
        return self.history[-1][1]

    def set(self, moment: datetime) -> None:
        self.history.append((time.time(), moment))

    def advance(self, **delta: float) -> None:
        self.set(self() + timedelta(**delta))

    def value_at(self, wall: float) -> datetime:
        """What the clock said at wall-clock time `wall`."""
        for stamp, moment in reversed(self.history):
            if stamp <= wall:
                return moment
        return self.history[0][1]


@functools.cache
def record_for(day: date, variant: Variant) -> DayRecord:
    """The day's record under the test budget, as `prepare_day` would make it."""
    for n in range(500):
        seed = daily_seed(TEST_SECRET, day, variant, n)
        result = solve(Board.from_seed(seed, variant), BUDGET)
        if result.result == "solvable":
            return DayRecord.from_deal(day, n, CertifiedDeal(seed, variant, tuple(result.moves)))
    raise AssertionError(f"no certified deal for {day} {variant}")


async def prepare(redis: RedisClient, day: date, variant: Variant) -> DayRecord:
    """Store the day's record (and list it, as `prepare_day` does)."""
    record = record_for(day, variant)
    slug = variant_slug(variant)
    # Built from pairs: hset takes a mapping of wider key and value types than dict[str, str].
    fields = record.to_fields().items()
    await redis.hset(keys.daily_day(day.isoformat(), slug), mapping=dict(fields))
    await redis.zadd(keys.DAILY_INDEX, {f"{day.isoformat()}|{slug}": day.toordinal()})
    return record


def token_user(token: str | None) -> str | None:
    """The account of a token the test nodes accept, else None (anonymous)."""
    if token is None:
        return None
    try:
        return verify_token(TEST_SECRET, token).user_id
    except AuthError:
        return None


def _fetch(url: str, token: str | None) -> tuple[int, Any]:
    """GET `url`: status and decoded JSON, remembered for the leak auditor's HTTP audit
    (`auditor.audit_http`) with the account that asked."""
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=scaled(10)) as response:
            status, body = response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            status, body = error.code, json.loads(error.read())
    auditor.record_http(url, token_user(token), status, body)
    return status, body


async def get(node: Node, path: str, token: str | None = None) -> tuple[int, Any]:
    """GET `path` (no leading slash) from the node: status and decoded JSON."""
    return await asyncio.to_thread(_fetch, node.url + path, token)


async def get_ok(node: Node, path: str, token: str | None = None) -> Any:
    status, body = await get(node, path, token)
    assert status == 200, (path, status, body)
    return body


async def create_daily(client: Client, variant: str = D1) -> Message:
    """`create` kind daily: the `created` reply (room id and what it is). A node whose
    day is not ready yet, or whose store is slow to answer (a loaded machine, a node just
    started), answers `unavailable`: the request is sent again, as docs/protocol.md
    says, until it is created."""

    async def attempt() -> Message | None:
        rid = client._new_id()
        try:
            return await client.call(
                {"t": "create", "rid": rid, "kind": "daily", "variant": variant},
                lambda m: m["t"] == "created" and m.get("rid") == rid,
                timeout=scaled(60),
            )
        except ServerError as refused:
            if refused.code != "unavailable":
                raise
            return None

    created = await wait_for(attempt, 60)
    assert created is not None  # wait_for returns the first truthy answer
    return created


async def start_attempt(client: Client, variant: str = D1) -> tuple[str, Message]:
    """Create (or resume) today's attempt and join it: room id and the `room` frame."""
    created = await create_daily(client, variant)
    room = str(created["room"])
    state = await client.join(room)
    await client.expect(lambda m: m["t"] == "board" and m.get("room") == room)
    return room, state


async def play(client: Client, room: str, tokens: tuple[str, ...] | list[str]) -> None:
    """Play moves while the board is still playing (a ranked board finishes itself)."""
    for token in tokens:
        if client.own_board(room, 0).status != "playing":
            return
        await client.move(room, token)


def first_foundation(record: DayRecord) -> int:
    """How many moves of the day's line put the first card on a foundation."""
    return next(i for i, t in enumerate(record.moves) if t.endswith("F")) + 1
