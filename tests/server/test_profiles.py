"""Profiles, your data and deleting an account, over two real nodes, Valkey and the
history database: an account's profile by its username in any case and a guest's by its
user id, each with the viewer's record against it; everything held about a player as
one download; a deleted account's tokens refused on every node, its seat in the other
player's games kept as "deleted player", the leak auditor reading every answer."""

from __future__ import annotations

import msgpack
import pytest
from test_accounts import answer, closed_with, register, sign_in, two_nodes

from klondike_live import keys
from klondike_live.client import ServerError
from klondike_live.gateway.server import Node
from klondike_live.history.players import DELETED_NAME, deleted_id
from klondike_live.store.connect import RedisClient

from auditor import audit_account_frames, http_audit
from daily_support import get, get_ok
from helpers import WON, close_all, started_race
from waits import connect_client, wait_for

__all__ = ["http_audit", "two_nodes"]  # fixtures, imported for pytest


async def test_profiles_your_data_and_a_deleted_account(
    two_nodes: tuple[Node, Node], redis: RedisClient
) -> None:
    """Ann beats Bea, then makes her guest the account "Annie": her profile (by any
    case of the name) shows the game and, to Bea, Bea's loss against her; Bea's profile
    (a guest's, by id) shows the same game. Ann downloads her data. Then she deletes
    the account (once a wrong confirmation is refused): her sessions on both nodes end,
    her tokens are refused on both, her profile is gone, and Bea's game and record
    against her stay whole, her seat shown as "deleted player"."""
    first, second = two_nodes
    room, (ann, bea), _ = await started_race(first, "Ann", "Bea")
    devices = []
    try:
        for token in WON.moves:
            if ann.own_board(room, 0).status != "playing":
                break
            await ann.move(room, token)
        await bea.resign(room)
        await ann.expect(lambda m: m["t"] == "results" and m["room"] == room)
        await wait_for(lambda: first.service.history.has_game(room, 1))
        signed = await register(ann, "Annie")
        other = await sign_in(await connect_client(second.ws_url), "ANNIE")
        devices = [
            await connect_client(first.ws_url, token=signed["token"]),
            await connect_client(second.ws_url, token=other["token"]),
        ]

        mine = await get_ok(second, "api/players/aNNie/profile", bea.token)
        assert (mine["user"], mine["name"], mine["kind"]) == (ann.user, "Annie", "account")
        assert mine["member_since"] and mine["totals"]["played"] == 1
        assert [(g["room"], g["result"]) for g in mine["games"]] == [(room, "won")]
        assert (mine["vs"]["user"], mine["vs"]["opponent"]) == (bea.user, ann.user)
        assert (mine["vs"]["games"], mine["vs"]["losses"]) == (1, 1)
        assert (await get_ok(first, f"api/players/{ann.user}/profile"))["vs"] is None
        theirs = await get_ok(first, f"api/players/{bea.user}/profile", signed["token"])
        assert (theirs["name"], theirs["kind"], theirs["member_since"]) == (
            "Bea",
            "guest",
            mine["games"][0]["ended_at"],
        )
        assert theirs["vs"]["wins"] == 1 and theirs["games"][0]["result"] == "lost"
        for nobody in (
            "api/players/nobody/profile",
            "api/players/g_none/profile",
            "api/players/%E2%80%AEAnnie/profile",  # a bidi control before the name
            "api/players/%3Cb%3EAnnie%3C%2Fb%3E/profile",
            f"api/players/{'x' * 200}/profile",
        ):
            assert await get(first, nobody) == (404, {"error": "not_found"})

        data = await get_ok(second, "api/me/data", other["token"])
        assert data["user"] == ann.user and data["account"]["username"] == "Annie"
        assert data["account"]["password"] is True and data["passkeys"] == []
        assert sorted(s["id"] for s in data["sessions"]) == sorted(
            [signed["session"], other["session"]]
        )
        assert [(g["room"], g["gen"]) for g in data["games"]] == [(room, 1)]
        ranking = data["games"][0]["results"]["ranking"]
        assert [r["name"] for r in ranking] == ["Ann", "Bea"]
        assert data["stats"]["totals"]["played"] == 1 and data["unfinished"] == []
        assert data["friends"] == {"following": [], "followers": [], "blocked": []}
        assert await get(first, "api/me/data") == (401, {"error": "unauthorized"})

        wrong = await answer(devices[0], {"t": "delete_account", "username": "Bob"})
        assert (wrong["t"], wrong["code"]) == ("error", "not_confirmed")
        reply = await answer(devices[0], {"t": "delete_account", "username": "annie"})
        assert reply == {"t": "account_deleted", "rid": reply["rid"], "games": 1}
        assert audit_account_frames(devices[0].received) >= 1
        assert [await closed_with(device) for device in devices] == [4006, 4006]
        for node, token in ((first, other["token"]), (second, signed["token"])):
            for refused in (signed["token"], other["token"], ann.token):
                with pytest.raises(ServerError) as closed:
                    await connect_client(node.ws_url, token=refused)
                assert closed.value.code == "token_revoked"
            assert (await get(node, "api/me/data", token))[0] == 401
        assert await get(first, "api/players/Annie/profile") == (404, {"error": "not_found"})
        assert (await get(first, f"api/players/{ann.user}/profile"))[0] == 404
        marker = deleted_id(ann.user)
        assert await get(second, f"api/players/{marker}/profile") == (410, {"error": "gone"})

        after = await get_ok(second, f"api/players/{bea.user}/profile")
        assert [(g["room"], g["result"]) for g in after["games"]] == [(room, "lost")]
        assert after["games"][0]["opponents"] == [
            {"user": marker, "name": DELETED_NAME, "rank": 1, "bot": False}
        ]
        assert (await get_ok(first, f"api/players/{bea.user}/vs/{marker}"))["losses"] == 1
        results = await get_ok(first, f"api/results/{room}/1")
        assert [r["name"] for r in results["ranking"]] == [DELETED_NAME, "Bea"]
        cached = await redis.hget(keys.results(room, 1), "data")
        assert cached is None or b"Ann" not in cached
        stored = await first.service.history.load_results(room, 1)
        assert stored is not None and ann.user not in str(msgpack.unpackb(stored, raw=False))
        again = await answer(bea, {"t": "delete_account", "username": "Bea"})
        assert again["code"] == "not_signed_in"  # a guest has no account to delete
    finally:
        await close_all([ann, bea], devices)
