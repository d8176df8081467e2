"""Accounts over real nodes, Valkey and websockets: a guest made an account with a
password keeps its history, signs in on another node, is refused for unknown names and
wrong passwords alike, is limited after repeated failures, cannot be driven from
another site's page, and its sessions end everywhere at once."""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable

import jwt
import pytest
from sqlalchemy import delete
from websockets.asyncio.client import connect

from klondike_live import keys
from klondike_live.client import Client, Message, ServerError
from klondike_live.config import Settings
from klondike_live.gateway.server import Node, running
from klondike_live.history import schema
from klondike_live.protocol.codes import CloseCode
from klondike_live.store.connect import RedisClient

from auditor import audit_account_frames
from helpers import FAST, WON, close_all
from passkey_device import PasskeyDevice
from test_http_api import create_solo
from test_player_stats import get_as
from waits import connect_client, scaled, wait_for

PASSWORD = "correct horse battery"
_RIDS = itertools.count(7000)


async def answer(client: Client, message: Message) -> Message:
    """Send an account request and return its answer or its error (no retries)."""
    rid = next(_RIDS)
    await client.send({**message, "rid": rid})
    return await client.expect(lambda m: m.get("rid") == rid and m["t"] != "pong")


async def register(client: Client, username: str, password: str = PASSWORD) -> Message:
    reply = await answer(client, {"t": "register", "username": username, "password": password})
    assert reply["t"] == "signed_in", reply
    return reply


async def sign_in(client: Client, username: str, password: str = PASSWORD) -> Message:
    return await answer(client, {"t": "sign_in", "username": username, "password": password})


async def closed_with(client: Client) -> int | None:
    """The close code once the server closed the connection."""
    await wait_for(lambda: client.connection.close_code is not None)
    return client.connection.close_code


@pytest.fixture
async def node(make_settings: Callable[..., Settings]) -> AsyncIterator[Node]:
    """A node racing on the deal of the stored won game."""
    async with running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as started:
        yield started


@pytest.fixture
async def two_nodes(
    make_settings: Callable[..., Settings],
) -> AsyncIterator[tuple[Node, Node]]:
    """Two nodes on one Valkey and one history database."""
    async with (
        running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as first,
        running(make_settings(**FAST), seed_source=lambda: str(WON.seed)) as second,
    ):
        yield first, second


async def test_a_guest_made_an_account_keeps_its_games_and_plays_on_another_node(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """The guest's unfinished game is the account's; signing in on the other node gives
    a token for the same user, which sees the game and plays on; the guest's own token
    is refused from then on, on both nodes."""
    first, second = two_nodes
    guest = await connect_client(first.ws_url, name="Ann")
    room = await create_solo(guest, public=False)
    await guest.move(room, WON.moves[0])
    signed = await register(guest, "Annie")
    assert signed["user"] == guest.user and signed["username"] == "Annie"
    assert audit_account_frames(guest.received) == 1
    assert await redis.exists(keys.user_account(guest.user)) == 1
    elsewhere = await connect_client(second.ws_url)
    try:
        other = await sign_in(elsewhere, "ANNIE")
        assert other["t"] == "signed_in" and other["user"] == guest.user
        assert other["session"] != signed["session"]
        device = await connect_client(second.ws_url, token=other["token"])
        welcome = next(m for m in device.received if m["t"] == "welcome")
        assert welcome["user"] == guest.user and welcome["username"] == "Annie"
        status, games = await get_as(second, "api/me/unfinished", other["token"])
        assert status == 200 and [g["room"] for g in games] == [room]
        await device.join(room)
        await device.expect(lambda m: m["t"] == "board" and m.get("room") == room)
        await device.move(room, WON.moves[1])
        status, games = await get_as(first, "api/me/unfinished", signed["token"])
        assert [g["moves"] for g in games] == [2]
        status, account = await get_as(first, "api/me/account", other["token"])
        assert status == 200 and account["username"] == "Annie" and account["password"]
        assert sorted(s["current"] for s in account["sessions"]) == [False, True]
        for server in (first, second):
            with pytest.raises(ServerError) as refused:
                await connect_client(server.ws_url, token=guest.token)
            assert refused.value.code == "token_revoked"
            assert (await get_as(server, "api/me/unfinished", guest.token))[0] == 401
        await close_all([device])
    finally:
        await close_all([guest, elsewhere])


async def test_usernames_are_unique_by_key_and_checked_by_their_rules(node: Node) -> None:
    """A username taken in another case or with look-alike letters is taken; mixed
    scripts, reserved names and bad passwords are refused with their codes; an account
    is not made an account again."""
    ann, bob = await connect_client(node.ws_url), await connect_client(node.ws_url)
    try:
        signed = await register(ann, "Ace_of.Spades")
        for username, code in (
            ("ace_of.spades", "username_taken"),
            ("ACE_0F.SPADES", "username_taken"),
            ("\u0430ce", "bad_username"),  # a Cyrillic a among Latin letters
            ("admin", "bad_username"),
            ("Guest42", "bad_username"),
            ("ab", "bad_username"),
            ("a..b", "bad_username"),
        ):
            reply = await answer(bob, {"t": "register", "username": username, "password": PASSWORD})
            assert (reply["t"], reply.get("code")) == ("error", code), (username, reply)
        reply = await answer(bob, {"t": "register", "username": "Bobby", "password": "short"})
        assert reply.get("code") == "bad_password"
        assert (await register(bob, "\u0411\u043e\u0440\u0438\u0441"))["username"] == "Борис"
        again = await connect_client(node.ws_url, token=signed["token"])
        reply = await answer(again, {"t": "register", "username": "Other", "password": PASSWORD})
        assert reply.get("code") == "not_a_guest"
        await again.close()
    finally:
        await close_all([ann, bob])


async def test_unknown_usernames_and_wrong_passwords_answer_alike(node: Node) -> None:
    """The same code and message, and the same argon2 work: an unknown username takes
    as long as a wrong password, within a factor that skipping the hash would break
    (it is a hundred times quicker)."""
    owner, prober = await connect_client(node.ws_url), await connect_client(node.ws_url)
    try:
        await register(owner, "Known")
        timings: dict[str, list[float]] = {"Known": [], "Unknown": []}
        replies = []
        for _ in range(4):
            for username in timings:
                began = time.perf_counter()
                replies.append(await sign_in(prober, username, "not the password"))
                timings[username].append(time.perf_counter() - began)
        assert {(r["t"], r["code"], r["msg"]) for r in replies} == {
            ("error", "sign_in_failed", "wrong username or password")
        }
        known, unknown = (statistics.median(timings[u]) for u in ("Known", "Unknown"))
        assert unknown > known / 5, timings
    finally:
        await close_all([owner, prober])


async def test_failed_sign_ins_are_limited_per_username_and_per_address(
    make_settings: Callable[..., Settings], redis: RedisClient
) -> None:
    """After `sign_in_per_account` failures a username is refused even with its
    password, on every node; after `sign_in_per_address` failures the address is."""
    limits = {"sign_in_per_account": 3, "sign_in_per_address": 6}
    async with (
        running(make_settings(**FAST, **limits)) as first,
        running(make_settings(**FAST, **limits)) as second,
    ):
        owner = await connect_client(first.ws_url)
        attacker = await connect_client(first.ws_url)
        try:
            await register(owner, "Target")
            for _ in range(3):
                assert (await sign_in(attacker, "target", "guess"))["code"] == "sign_in_failed"
            elsewhere = await connect_client(second.ws_url)
            assert (await sign_in(elsewhere, "Target"))["code"] == "rate_limited"
            for name in ("nobody1", "nobody2", "nobody3"):
                assert (await sign_in(attacker, name, "guess"))["code"] == "sign_in_failed"
            reply = await sign_in(attacker, "someone", "guess")
            assert reply["code"] == "rate_limited"
            assert await redis.pttl(keys.sign_in_failures("addr", "127.0.0.1")) > 0
            await elsewhere.close()
        finally:
            await close_all([owner, attacker])


async def _browser_like(node: Node, origin: str, host: str = "127.0.0.1") -> Client:
    """A client whose handshake says `Origin` (as a browser page's websocket does), to
    the node by `host`."""
    url = f"ws://{host}:{node.port}/ws"
    connection = await connect(url, origin=origin, compression=None)  # type: ignore[arg-type]
    client = Client(connection, expect_timeout=scaled(10))
    client._reader = asyncio.create_task(client._read())
    await client.send({"t": "hello", "v": 1})
    welcome = await client.expect(lambda m: m["t"] == "welcome")
    client.user, client.token = welcome["user"], welcome["token"]
    return client


async def test_account_requests_from_another_site_s_page_are_refused(node: Node) -> None:
    """A page of another site may open a websocket to the node (browsers allow it) but
    may not create, sign in or sign out: `bad_origin`. A page of the site itself gets
    passkey options for its own host."""
    evil = await _browser_like(node, "https://evil.example")
    by_address = await _browser_like(node, f"http://127.0.0.1:{node.port}")
    own = await _browser_like(node, f"http://localhost:{node.port}", "localhost")
    try:
        for message in (
            {"t": "register", "username": "Victim", "password": PASSWORD},
            {"t": "sign_in", "username": "Victim", "password": PASSWORD},
            {"t": "passkey_options"},
        ):
            assert (await answer(evil, message))["code"] == "bad_origin"
        # Opened by address: passwords yes, passkeys no (an RP id is a host name).
        reply = await answer(by_address, {"t": "passkey_options"})
        assert reply["code"] == "bad_origin" and "host name" in reply["msg"]
        assert (await register(by_address, "ByAddress"))["username"] == "ByAddress"
        options = await answer(own, {"t": "passkey_options", "username": "Owner"})
        assert options["t"] == "passkey_options" and options["create"] is True
        creation = json.loads(options["options"])
        assert creation["rp"]["id"] == "localhost"
        assert creation["authenticatorSelection"]["residentKey"] == "required"
    finally:
        await close_all([evil, by_address, own])


async def test_signing_out_everywhere_ends_every_session_on_every_node(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """Sessions signed in on either node: one ended alone closes its connection (4006)
    and only it; signing out everywhere closes the rest on both nodes, and their tokens
    are refused by websocket and HTTP API alike, on both."""
    first, second = two_nodes
    guest = await connect_client(first.ws_url)
    made = await register(guest, "Wanderer")
    tokens = [made["token"]]
    for server in (first, second, second):
        device = await connect_client(server.ws_url)
        tokens.append((await sign_in(device, "Wanderer"))["token"])
        await device.close()
    devices = [
        await connect_client(server.ws_url, token=token)
        for server, token in zip((first, second, first, second), tokens, strict=True)
    ]
    try:
        _, account = await get_as(first, "api/me/account", tokens[0])
        assert len(account["sessions"]) == 4
        third = next(s for s in account["sessions"] if s["id"] == _sid(devices[2]))
        ended = await answer(devices[0], {"t": "sign_out", "session": third["id"]})
        assert ended == {"t": "signed_out", "rid": ended["rid"], "ended": 1}
        assert await closed_with(devices[2]) == CloseCode.SIGNED_OUT
        assert devices[1].connection.close_code is None
        # Valkey's copy of a session gone, the history database still vouches for it.
        await redis.delete(keys.session(_sid(devices[1])))
        again = await connect_client(first.ws_url, token=tokens[1])
        assert await redis.exists(keys.session(_sid(devices[1]))) == 1
        everywhere = await answer(devices[3], {"t": "sign_out", "everywhere": True})
        assert everywhere["ended"] == 3
        for device in (devices[0], devices[1], devices[3], again):
            assert await closed_with(device) == CloseCode.SIGNED_OUT
        for server in (first, second):
            for token in tokens:
                with pytest.raises(ServerError) as refused:
                    await connect_client(server.ws_url, token=token)
                assert refused.value.code == "token_revoked"
                assert (await get_as(server, "api/me/account", token))[0] == 401
        assert (await get_as(first, "api/me/unfinished", tokens[0]))[0] == 401
    finally:
        await close_all([guest, *devices])


def _sid(client: Client) -> str:
    """The session id a client's token names."""
    return str(jwt.decode(client.token, options={"verify_signature": False})["sid"])


async def test_tokens_of_an_account_removed_are_refused_on_every_node(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """An account removed the way removal must do it (its sessions ended first, then
    its rows) leaves no node taking its tokens: not the one holding a connection, not
    the other, not after Valkey lost its session keys either."""
    first, second = two_nodes
    guest = await connect_client(first.ws_url)
    made = await register(guest, "Leaving")
    elsewhere = await connect_client(second.ws_url)
    other = await sign_in(elsewhere, "Leaving")
    device = await connect_client(second.ws_url, token=other["token"])
    try:
        accounts = first.service.accounts
        assert await accounts.end_sessions(guest.user) == 2
        assert await closed_with(device) == CloseCode.SIGNED_OUT
        async with first.service.history.engine.begin() as conn:
            await conn.execute(
                delete(schema.accounts).where(schema.accounts.c.user_id == guest.user)
            )
        assert await accounts.records.sessions_of(guest.user, 0) == []
        for sid in (made["session"], other["session"]):
            assert await redis.exists(keys.session(sid)) == 0
        for server in (first, second):
            for token in (made["token"], other["token"]):
                with pytest.raises(ServerError) as refused:
                    await connect_client(server.ws_url, token=token)
                assert refused.value.code == "token_revoked"
                assert (await get_as(server, "api/me/stats", token))[0] == 401
    finally:
        await close_all([guest, elsewhere, device])


def test_the_auditor_reads_account_frames() -> None:
    """An account frame with a field of its own passes; one more field (a room, a board)
    or a token for another user fails."""
    token = jwt.encode({"sub": "g_a", "sid": "s" * 24}, "k" * 32, algorithm="HS256")
    good = {"t": "signed_in", "rid": 1, "user": "g_a", "username": "A", "token": token}
    assert audit_account_frames([{**good, "session": "s" * 24}]) == 1
    with pytest.raises(AssertionError, match="fields"):
        audit_account_frames([{"t": "signed_out", "rid": 1, "ended": 1, "room": "r"}])
    with pytest.raises(AssertionError, match="another user"):
        audit_account_frames([{**good, "user": "g_b", "session": "s" * 24}])


async def test_a_passkey_account_signs_in_on_another_node_and_forged_answers_fail(
    two_nodes: tuple[Node, Node],
) -> None:
    """A passkey made through one node signs in through the other (its page on the other
    node's host); an answer used twice, made for another site's page or another RP id,
    or signed by another key is `sign_in_failed`, and the account's user id never
    reaches such a connection."""
    first, second = two_nodes
    maker = await _browser_like(first, f"http://localhost:{first.port}", "localhost")
    device = PasskeyDevice(f"http://localhost:{first.port}")
    try:
        options = await answer(maker, {"t": "passkey_options", "username": "Keyholder"})
        made = await answer(
            maker,
            {
                "t": "register",
                "username": "Keyholder",
                "passkey": device.create(options["options"]),
            },
        )
        assert made["t"] == "signed_in" and made["user"] == maker.user
    finally:
        await maker.close()
    page = f"http://localhost:{second.port}"
    device.origin = page
    other = await _browser_like(second, page, "localhost")
    try:
        request = await answer(other, {"t": "passkey_options"})
        assert request["create"] is False
        used = device.get(request["options"])
        signed = await answer(other, {"t": "sign_in", "passkey": used})
        assert signed["t"] == "signed_in" and signed["user"] == made["user"]
        # The challenge was spent: the same answer again is refused.
        assert (await answer(other, {"t": "sign_in", "passkey": used}))["code"] == "sign_in_failed"
        impostor = PasskeyDevice(page, credential_id=device.credential_id)
        for forge in (
            lambda text: device.get(text, origin="https://evil.example"),
            lambda text: device.get(text, rp_id="evil.example"),
            impostor.get,
        ):
            request = await answer(other, {"t": "passkey_options"})
            reply = await answer(other, {"t": "sign_in", "passkey": forge(request["options"])})
            assert (reply["t"], reply["code"]) == ("error", "sign_in_failed")
        assert made["user"] not in repr(other.received[-6:])
    finally:
        await other.close()
