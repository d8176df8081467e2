"""Accounts on a Valkey Cluster: an account made on one node signs in on another, its
sign-in limits count across both, and signing out everywhere closes its connections on
both and refuses its tokens, every key in whichever shard holds it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from klondike_live.client import Client, Message, ServerError
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.protocol.codes import CloseCode

from waits import connect_client, wait_for

PASSWORD = "correct horse battery"


async def ask(client: Client, message: Message) -> Message:
    """An account request's answer or error (no retries)."""
    await client.send({**message, "rid": 77})
    return await client.expect(lambda m: m.get("rid") == 77 and m["t"] != "pong")


async def closed_with(client: Client) -> int | None:
    """The close code once the server closed the connection."""
    await wait_for(lambda: client.connection.close_code is not None)
    return client.connection.close_code


async def sign_in(client: Client, username: str, password: str = PASSWORD) -> Message:
    return await ask(client, {"t": "sign_in", "username": username, "password": password})


async def test_an_account_signs_in_and_out_across_nodes_of_a_cluster(
    make_cluster_settings: Callable[..., Settings],
) -> None:
    limits = {"sign_in_per_account": 2}
    async with (
        running(make_cluster_settings(**limits)) as one,
        running(make_cluster_settings(**limits)) as two,
    ):
        guest = await connect_client(one.ws_url)
        elsewhere = await connect_client(two.ws_url)
        try:
            made = await ask(
                guest, {"t": "register", "username": "Clustered", "password": PASSWORD}
            )
            signed = await sign_in(elsewhere, "clustered")
            assert signed["t"] == "signed_in" and signed["user"] == guest.user
            devices = [
                await connect_client(one.ws_url, token=signed["token"]),
                await connect_client(two.ws_url, token=made["token"]),
            ]
            for _ in range(2):
                failed = await sign_in(guest, "Clustered", "a wrong guess")
                assert failed["code"] == "sign_in_failed"
            assert (await sign_in(elsewhere, "Clustered"))["code"] == "rate_limited"
            everywhere = await devices[1].call(
                {"t": "sign_out", "rid": 1, "everywhere": True}, lambda m: m["t"] == "signed_out"
            )
            assert everywhere["ended"] == 2
            for device in devices:
                assert await closed_with(device) == CloseCode.SIGNED_OUT
            for node in (one, two):
                with pytest.raises(ServerError) as refused:
                    await connect_client(node.ws_url, token=signed["token"])
                assert refused.value.code == "token_revoked"
        finally:
            for client in (guest, elsewhere):
                await client.close()
