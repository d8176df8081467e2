"""Connection caps per account and per address (real node, real websockets)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from klondike_live.config import DEFAULT_TRUSTED_PROXIES, Settings, parse_networks
from klondike_live.gateway.caps import ConnectionCaps, client_address
from klondike_live.gateway.server import Node, running
from klondike_live.protocol.codes import CloseCode
from klondike_live.store.connect import RedisClient

from helpers import FAST
from waits import connect_client, wait_for

TRUSTED = parse_networks("test", DEFAULT_TRUSTED_PROXIES)


async def closed_with(connection: ClientConnection) -> tuple[int | None, str | None]:
    """Wait until the server closes `connection`; its close code and reason."""
    with pytest.raises(ConnectionClosed):
        while True:
            await wait_for(connection.recv(), 5)
    return connection.close_code, connection.close_reason


async def hello(node: Node, token: str, headers: dict[str, str] | None = None) -> ClientConnection:
    connection = await connect(node.ws_url, compression=None, additional_headers=headers)
    await connection.send(msgpack.packb({"t": "hello", "v": 1, "token": token}))
    return connection


def refused(node: Node, reason: str) -> float:
    count: float = node.metrics.connections_refused.labels(reason=reason)._value.get()
    return count


async def test_per_user_cap_refuses_at_hello(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With max 2 connections per account, a third hello with the same token is closed
    with 4005; once one of the two closed, the account may connect again."""
    async with running(make_settings(**FAST, max_connections_per_user=2)) as node:
        first = await connect_client(node.ws_url, name="Ann")
        second = await connect_client(node.ws_url, token=first.token)
        third = await hello(node, first.token)
        code, reason = await closed_with(third)
        assert code == CloseCode.TOO_MANY_CONNECTIONS
        assert CloseCode.TOO_MANY_CONNECTIONS.value == 4005
        assert reason == "too many connections for this account"
        other = await connect_client(node.ws_url, name="Bob")  # another account is fine
        await second.close()
        again = await connect_client(node.ws_url, token=first.token)
        assert again.user == first.user
        assert refused(node, "user") == 1
        for client in (first, other, again):
            await client.close()


async def test_per_address_cap_refuses_at_connect(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """With max 3 connections per address, a fourth websocket from the same address is
    closed with 4005 before any hello; a closed one frees its place."""
    async with running(make_settings(**FAST, max_connections_per_address=3)) as node:
        held = [await connect(node.ws_url, compression=None) for _ in range(3)]
        extra = await connect(node.ws_url, compression=None)
        code, reason = await closed_with(extra)
        assert (code, reason) == (4005, "too many connections from your address")
        assert refused(node, "address") == 1
        await held.pop().close()
        await wait_for(lambda: len(node.sessions) == 2)  # the server noticed both closes
        client = await connect_client(node.ws_url, name="Back")
        await client.close()
        for connection in held:
            await connection.close()


async def test_address_behind_a_trusted_proxy_comes_from_x_forwarded_for(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """Through a proxy on a trusted network (loopback here) each client is counted by the
    address the proxy forwards, so one client's connections do not block another's."""
    async with running(make_settings(**FAST, max_connections_per_address=1)) as node:
        first = await connect(
            node.ws_url, compression=None, additional_headers={"X-Forwarded-For": "203.0.113.5"}
        )
        other = await connect(
            node.ws_url,
            compression=None,
            additional_headers={"X-Forwarded-For": "198.51.100.7, 203.0.113.6"},
        )
        again = await connect(
            node.ws_url, compression=None, additional_headers={"X-Forwarded-For": "203.0.113.5"}
        )
        assert (await closed_with(again))[0] == 4005
        for connection in (first, other):  # both admitted: their hello is welcome
            await connection.send(msgpack.packb({"t": "hello", "v": 1, "name": "Proxied"}))
            reply = msgpack.unpackb(await wait_for(connection.recv(), 5))
            assert reply["t"] == "welcome"
            await connection.close()


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("203.0.113.9", None, "203.0.113.9"),  # no proxy
        ("203.0.113.9", "1.2.3.4", "203.0.113.9"),  # an untrusted peer cannot claim another
        ("10.0.0.2", "1.2.3.4", "1.2.3.4"),  # a trusted proxy forwards
        ("10.0.0.2", "6.6.6.6, 1.2.3.4", "1.2.3.4"),  # the client's own claim is ignored
        ("10.0.0.2", "1.2.3.4, 10.0.0.3", "1.2.3.4"),  # two trusted proxies
        ("10.0.0.2", "10.0.0.9", "10.0.0.9"),  # a client inside the private network
        ("10.0.0.2", "garbage", "10.0.0.2"),  # unusable: the proxy itself
        ("::ffff:10.0.0.2", "2001:db8::1", "2001:db8::1"),  # IPv4-mapped proxy address
    ],
)
def test_client_address(peer: str, forwarded: str | None, expected: str) -> None:
    """The client address is the peer, or the last untrusted X-Forwarded-For hop when the
    peer is a trusted proxy."""
    assert client_address(peer, forwarded, TRUSTED) == expected
    assert ipaddress.ip_address(expected)


def test_caps_count_and_release() -> None:
    """Caps count admitted connections, refuse at the cap, free on release; 0 is no cap."""
    caps = ConnectionCaps(per_user=1, per_address=0)
    assert caps.admit_user("u") and not caps.admit_user("u") and caps.admit_user("v")
    caps.release(None, "u")
    assert caps.admit_user("u")
    assert all(caps.admit_address("1.2.3.4") for _ in range(1000))
