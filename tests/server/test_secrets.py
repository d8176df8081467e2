"""The token secret across nodes: shared through Redis when none is configured, and key
rotation with key ids (real Valkey, real nodes, real `klondike-live serve` processes)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest

from klondike_live import keys
from klondike_live.auth import key_id, mint_guest_token
from klondike_live.client import ServerError
from klondike_live.config import Settings
from klondike_live.gateway.server import running
from klondike_live.store.connect import RedisClient

from helpers import FAST, serve_process
from waits import connect_client

NEW = b"n" * 48
OLD = b"o" * 48


def shared(make_settings: Callable[..., Settings], **overrides: Any) -> Settings:
    """Settings of a node on the test Valkey whose secret is to come from Redis."""
    return make_settings(**FAST, secret=b"", secret_from_redis=True, **overrides)


async def test_tokens_of_one_node_are_valid_on_another(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """Two nodes on one Redis with no secret configured share the one kept in Redis: a
    guest token minted by the first is a login on the second."""
    async with running(shared(make_settings)) as first, running(shared(make_settings)) as second:
        stored = await redis.get(keys.SHARED_SECRET)
        assert isinstance(stored, bytes), stored
        assert len(stored) == 64 and int(stored, 16) >= 0  # 32 random bytes, in hex
        assert first.settings.secret == second.settings.secret == stored
        alice = await connect_client(first.ws_url, name="Alice")
        again = await connect_client(second.ws_url, token=alice.token)
        assert (again.user, again.name) == (alice.user, "Alice")
        await alice.close()
        await again.close()


async def test_shared_secret_survives_restarts(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """The shared secret is made once: a node started later (or again) reads the same."""
    async with running(shared(make_settings)) as first:
        token = (await connect_client(first.ws_url, name="Ann")).token
    async with running(shared(make_settings)) as later:
        client = await connect_client(later.ws_url, token=token)
        assert client.name == "Ann"
        await client.close()
    assert await redis.get(keys.SHARED_SECRET) == later.settings.secret


async def test_first_node_offers_its_secret_file(
    make_settings: Callable[..., Settings], redis: RedisClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A node that ran alone (its data dir has a secret) and moves to a shared Redis makes
    its secret the shared one, so its players stay signed in; a second node whose own file
    differs signs with the shared one and says so in a warning."""
    single, other = shared(make_settings), shared(make_settings)
    (single.data_dir / "secret").write_text("a" * 64 + "\n")
    (other.data_dir / "secret").write_text("b" * 64 + "\n")
    old_token, _ = mint_guest_token(b"a" * 64, "Ann")
    with caplog.at_level(logging.WARNING, logger="klondike_live.store.shared_secret"):
        async with running(single), running(other) as second:
            assert await redis.get(keys.SHARED_SECRET) == b"a" * 64
            assert second.settings.secret == b"a" * 64
            client = await connect_client(second.ws_url, token=old_token)
            await client.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("differs from the shared secret" in w and "b" * 64 not in w for w in warnings)


async def test_rotated_node_accepts_old_key_and_refuses_unknown_kid(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """A node signing with a new key accepts a token minted with the old one (listed as an
    old secret), mints new tokens under the new key id, and refuses a token whose kid it
    does not know with token_invalid and close 4002."""
    old_token, identity = mint_guest_token(OLD, "Ann")
    async with running(make_settings(**FAST, secret=NEW, old_secrets=(OLD,))) as node:
        client = await connect_client(node.ws_url, token=old_token)
        assert client.user == identity.user_id
        await client.close()
        fresh = await connect_client(node.ws_url, name="Bob")
        assert jwt.get_unverified_header(fresh.token)["kid"] == key_id(NEW)
        await fresh.close()
        forged = jwt.encode({"sub": "u-1"}, NEW, "HS256", headers={"kid": "feedfacefeedface"})
        with pytest.raises(ServerError) as caught:
            await connect_client(node.ws_url, token=forged)
        assert caught.value.code == "token_invalid"
    async with running(make_settings(**FAST, secret=NEW)) as node:  # the old key retired
        with pytest.raises(ServerError) as caught:
            await connect_client(node.ws_url, token=old_token)
        assert caught.value.code == "token_invalid"


async def test_serve_processes_share_the_secret_with_nothing_configured(
    valkey_url: str, redis: RedisClient, tmp_path: Path
) -> None:
    """Two `klondike-live serve` processes given only the Redis URL: a token from one is a
    login on the other, and neither wrote a secret file."""
    async with (
        serve_process(valkey_url, tmp_path / "a", None) as first,
        serve_process(valkey_url, tmp_path / "b", None) as second,
    ):
        alice = await connect_client(first.ws_url, name="Alice")
        again = await connect_client(second.ws_url, token=alice.token)
        assert again.user == alice.user
        await alice.close()
        await again.close()
    assert not (tmp_path / "a" / "secret").exists() and not (tmp_path / "b" / "secret").exists()
