"""Bot accounts that an account owns, end to end: real Valkey, real nodes, real
websocket clients, one history database.

An account creates a bot (its token shown once), the bot races a person where bots are
allowed and is refused elsewhere; a new token ends the old one on every node, a deleted
bot's tokens are refused on every node, and operator bot tokens are left alone. A
bot's profile says it is one, and whose.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import jwt
import pytest
from test_accounts import answer, closed_with, register, two_nodes

from klondike_live import keys
from klondike_live.auth import mint_bot_token
from klondike_live.client import Client, Message, ServerError
from klondike_live.gateway.server import Node
from klondike_live.history import schema
from klondike_live.protocol.codes import CloseCode
from klondike_live.service.bot_accounts import MAX_BOTS
from klondike_live.store.connect import RedisClient

from auditor import audit_account_frames
from helpers import WON, close_all
from test_bots import load_example
from test_player_stats import get_as
from waits import connect_client

__all__ = ["two_nodes"]  # a fixture, imported for pytest

if TYPE_CHECKING:
    from conftest import WaitFor


async def account(node: Node, username: str) -> Client:
    """A connection signed in to a new account of `username`."""
    guest = await connect_client(node.ws_url)
    signed = await register(guest, username)
    await guest.close()
    return await connect_client(node.ws_url, token=signed["token"])


async def create_bot(owner: Client, username: str) -> Message:
    made = await answer(owner, {"t": "bot_create", "username": username})
    assert made["t"] == "bot_token", made
    return made


async def refused_everywhere(nodes: tuple[Node, ...], token: str) -> None:
    for server in nodes:
        with pytest.raises(ServerError) as refused:
            await connect_client(server.ws_url, token=token)
        assert refused.value.code == "token_revoked"


async def test_an_account_creates_a_bot_whose_token_races_as_a_bot(
    two_nodes: tuple[Node, Node], wait_for: WaitFor
) -> None:
    """The answer carries the token once; the listing never does; the history database
    holds the token's id, not the token; the bot connects as a bot, is refused where
    bots are not allowed, and races a person in a room that allows bots; deleted, its
    game stays in history under its name."""
    first, second = two_nodes
    owner = await account(first, "Owner")
    alice = await connect_client(second.ws_url, name="Alice")
    try:
        made = await create_bot(owner, "OwnerBot")
        assert made["username"] == "OwnerBot"
        claims = jwt.decode(made["token"], options={"verify_signature": False})
        assert claims["bot"] is True and claims["sub"] == made["user"]
        listed = await answer(owner, {"t": "bots"})
        assert [b["username"] for b in listed["bots"]] == ["OwnerBot"]
        assert listed["bots"][0]["token_at"] >= listed["bots"][0]["created_at"] > 0
        assert made["token"] not in repr(listed)
        assert audit_account_frames(owner.received) == 2
        async with first.service.history.engine.connect() as conn:
            rows = [tuple(r) for r in await conn.execute(schema.sessions.select())]
            rows += [tuple(r) for r in await conn.execute(schema.accounts.select())]
        assert claims["sid"] in repr(rows) and made["token"] not in repr(rows)
        status, data = await get_as(first, "api/me/data", owner.token)
        assert status == 200 and [b["username"] for b in data["bots"]] == ["OwnerBot"]
        assert made["token"] not in repr(data)
        taken = await answer(owner, {"t": "bot_create", "username": "ownerbot"})
        assert taken["code"] == "username_taken"
        bad = await answer(owner, {"t": "bot_create", "username": "a b"})
        assert bad["code"] == "bad_username"

        bot = await connect_client(second.ws_url, token=made["token"])
        assert bot.user == made["user"]
        closed = await alice.create_race("draw=1", seats=2)
        with pytest.raises(ServerError) as refused:
            await bot.join(closed)
        assert refused.value.code == "bots_not_allowed"
        await bot.close()

        room = await alice.create_race("draw=1", seats=2, bots=True, time_limit=300)
        await alice.join(room)
        racing = asyncio.create_task(load_example().race(first.ws_url, made["token"], room))
        await alice.expect(
            lambda m: (
                m["t"] == "room"
                and any(
                    s and s["user"] == made["user"] and s["bot"] and s["ready"] for s in m["seats"]
                )
            )
        )
        await alice.ready(room)
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        for move in WON.moves:
            if alice.own_board(room, 0).status != "playing":
                break
            await alice.move(room, move)
        results = await wait_for(racing, 240)
        rows_by_user = {row["user"]: row for row in results["ranking"]}
        assert rows_by_user[made["user"]]["bot"] is True
        assert rows_by_user[made["user"]]["name"] == "OwnerBot"

        async def archived() -> list[tuple[str, bool]]:
            query = schema.game_players.select().where(
                schema.game_players.c.user_id == made["user"]
            )
            async with first.service.history.engine.connect() as conn:
                return [(r.name, r.bot) for r in await conn.execute(query)]

        await wait_for(archived)
        # Its profile says it is a bot, and whose; its owner's, a person's account.
        status, shown = await get_as(second, "api/players/ownerbot/profile", alice.token)
        assert status == 200, shown
        assert (shown["name"], shown["kind"], shown["owner"]) == ("OwnerBot", "bot", "Owner")
        status, shown = await get_as(first, "api/players/Owner/profile", alice.token)
        assert (shown["kind"], shown["owner"]) == ("account", None)
        left = await answer(owner, {"t": "bot_delete", "user": made["user"]})
        assert left["bots"] == []
        assert await archived() == [("OwnerBot", True)]
    finally:
        await close_all([owner, alice])


async def test_guests_and_bots_cannot_own_bots_and_an_owner_has_a_limit(
    two_nodes: tuple[Node, Node],
) -> None:
    """A guest, an operator's bot and an account's bot are refused (`not_signed_in`);
    an account may own `MAX_BOTS`, and only its own bots answer to it (`no_bot`)."""
    first, _ = two_nodes
    guest = await connect_client(first.ws_url)
    operator_token, _ = mint_bot_token(first.settings.keys, "Operator Bot")
    operator_bot = await connect_client(first.ws_url, token=operator_token)
    owner = await account(first, "Keeper")
    other = await account(first, "Stranger")
    try:
        for asker in (guest, operator_bot):
            reply = await answer(asker, {"t": "bot_create", "username": "NoBot"})
            assert reply["code"] == "not_signed_in"
            assert (await answer(asker, {"t": "bots"}))["code"] == "not_signed_in"
        made = [await create_bot(owner, f"KeeperBot{n}") for n in range(MAX_BOTS)]
        full = await answer(owner, {"t": "bot_create", "username": "KeeperBotMore"})
        assert full["code"] == "too_many_bots"
        owned = await connect_client(first.ws_url, token=made[0]["token"])
        for message in (
            {"t": "bot_create", "username": "BotOfBot"},
            {"t": "sign_out", "everywhere": True},
        ):
            assert (await answer(owned, message))["code"] == "not_signed_in"
        await owned.close()
        for kind in ("bot_new_token", "bot_delete"):
            reply = await answer(other, {"t": kind, "user": made[0]["user"]})
            assert reply["code"] == "no_bot"
        assert (await answer(other, {"t": "bots"}))["bots"] == []
        signed_in = await answer(guest, {"t": "sign_in", "username": "KeeperBot1", "password": ""})
        assert signed_in["code"] in {"sign_in_failed", "bad_field"}
    finally:
        await close_all([guest, operator_bot, owner, other])


async def test_a_new_token_ends_the_old_one_on_both_nodes(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """The old token's connections close on both nodes (4006) and it is refused on both,
    even once Valkey forgot it; the new token connects; an operator's token and the
    owner's own session are untouched."""
    first, second = two_nodes
    owner = await account(first, "Issuer")
    operator_token, _ = mint_bot_token(first.settings.keys, "Operator Bot")
    operator_bot = await connect_client(second.ws_url, token=operator_token)
    made = await create_bot(owner, "IssuerBot")
    on_first = await connect_client(first.ws_url, token=made["token"])
    on_second = await connect_client(second.ws_url, token=made["token"])
    try:
        again = await answer(owner, {"t": "bot_new_token", "user": made["user"]})
        assert again["t"] == "bot_token" and again["user"] == made["user"]
        assert again["token"] != made["token"]
        assert audit_account_frames(owner.received) == 2
        for connection in (on_first, on_second):
            assert await closed_with(connection) == CloseCode.SIGNED_OUT
        old_sid = jwt.decode(made["token"], options={"verify_signature": False})["sid"]
        assert await redis.exists(keys.session(old_sid)) == 0
        await refused_everywhere(two_nodes, made["token"])
        fresh = await connect_client(second.ws_url, token=again["token"])
        assert fresh.user == made["user"]
        new_sid = jwt.decode(again["token"], options={"verify_signature": False})["sid"]
        await redis.delete(keys.session(new_sid))  # the database still vouches for it
        await close_all([await connect_client(first.ws_url, token=again["token"]), fresh])
        assert operator_bot.connection.close_code is None
        assert owner.connection.close_code is None
        await close_all([await connect_client(first.ws_url, token=operator_token)])
    finally:
        await close_all([owner, operator_bot, on_first, on_second])


async def test_a_deleted_bot_is_refused_on_both_nodes_and_its_name_is_free(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """Deleting closes the bot's connections on both nodes and refuses its token there;
    the listing answer has no bot left, and its username is free again."""
    first, second = two_nodes
    owner = await account(second, "Remover")
    made = await create_bot(owner, "RemoverBot")
    on_first = await connect_client(first.ws_url, token=made["token"])
    on_second = await connect_client(second.ws_url, token=made["token"])
    try:
        left = await answer(owner, {"t": "bot_delete", "user": made["user"]})
        assert left == {"t": "bots", "rid": left["rid"], "bots": []}
        for connection in (on_first, on_second):
            assert await closed_with(connection) == CloseCode.SIGNED_OUT
        await refused_everywhere(two_nodes, made["token"])
        gone = await answer(owner, {"t": "bot_new_token", "user": made["user"]})
        assert gone["code"] == "no_bot"
        remade = await create_bot(owner, "RemoverBot")
        assert remade["user"] != made["user"]
        assert audit_account_frames(owner.received) == 3
    finally:
        await close_all([owner, on_first, on_second])


def test_the_auditor_reads_bot_account_frames() -> None:
    """A bot's token for its owner's account connection passes; one sent to a guest or
    to the bot itself, or a listing that carries a token, fails."""
    token = jwt.encode({"sub": "b_x", "bot": True, "sid": "t" * 24}, "k" * 32, "HS256")
    frame = {"t": "bot_token", "rid": 3, "user": "b_x", "username": "XBot", "token": token}
    owner = {"t": "welcome", "user": "g_owner", "username": "Owner"}
    assert audit_account_frames([owner, frame]) == 1
    with pytest.raises(AssertionError, match="no account"):
        audit_account_frames([{"t": "welcome", "user": "g_guest"}, frame])
    with pytest.raises(AssertionError, match="the bot itself"):
        audit_account_frames([{"t": "welcome", "user": "b_x", "username": "XBot"}, frame])
    listed = {"user": "b_x", "username": "XBot", "created_at": 1, "token_at": 2}
    assert audit_account_frames([{"t": "bots", "rid": 4, "bots": [listed]}]) == 1
    with pytest.raises(AssertionError, match="outside the answer"):
        audit_account_frames([owner, frame, {"t": "bots", "rid": 5, "bots": [], "x": token}])
    with pytest.raises(AssertionError, match="a bot with fields"):
        audit_account_frames([{"t": "bots", "rid": 4, "bots": [{**listed, "token": token}]}])


async def test_deleting_the_owner_deletes_its_bots_on_both_nodes(
    two_nodes: tuple[Node, Node],
) -> None:
    """A bot may not delete itself (`not_signed_in`); the owner deleting its account
    ends its bots' tokens on both nodes and frees their usernames."""
    first, second = two_nodes
    owner = await account(first, "Leaver")
    made = await create_bot(owner, "LeaverBot")
    bot = await connect_client(second.ws_url, token=made["token"])
    try:
        itself = await answer(bot, {"t": "delete_account", "username": "LeaverBot"})
        assert itself["code"] == "not_signed_in"
        gone = await answer(owner, {"t": "delete_account", "username": "Leaver"})
        assert gone["t"] == "account_deleted"
        assert await closed_with(bot) == CloseCode.SIGNED_OUT
        await refused_everywhere(two_nodes, made["token"])
        other = await account(second, "Another")
        assert (await create_bot(other, "LeaverBot"))["username"] == "LeaverBot"
        await other.close()
    finally:
        await close_all([owner, bot])
