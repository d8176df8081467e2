"""Bots and the daily challenges: a daily room never seats a bot (neither a bot account
nor a server bot), so no bot ever reaches a daily leaderboard or daily statistics."""

from __future__ import annotations

import pytest

from klondike_live.auth import mint_bot_token
from klondike_live.client import ServerError
from klondike_live.gateway.server import Node

from auditor import http_audit
from daily_support import D1, DAY, create_daily, get_ok, play, record_for, start_attempt
from waits import connect_client, scaled

__all__ = ["http_audit"]  # the fixture, imported for pytest: audits every HTTP answer


async def test_bots_never_reach_a_daily_leaderboard(daily_node: Node) -> None:
    from klondike_live.daily.variants import DRAW1

    record = record_for(DAY, DRAW1)
    token, identity = mint_bot_token(daily_node.settings.keys, "Daily Bot")
    alice = await connect_client(daily_node.ws_url, name="Alice")
    bot = await connect_client(daily_node.ws_url, token=token)
    try:
        with pytest.raises(ServerError) as refused:
            await create_daily(bot, D1)
        assert refused.value.code == "bots_not_allowed"
        room, state = await start_attempt(alice, D1)
        assert state["bots"] is False
        with pytest.raises(ServerError) as refused:
            await alice.add_bot(room, "expert")
        assert refused.value.code == "bots_not_allowed"
        for role in ("racer", "spectator"):
            with pytest.raises(ServerError) as refused:
                await bot.join(room, role)
            assert refused.value.code == "bots_not_allowed"
        await play(alice, room, record.moves)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == room, timeout=scaled(30))
        board = await get_ok(
            daily_node, f"api/daily/{DAY.isoformat()}/draw1-passes1-f2tno/leaderboard"
        )
        users = [row["user"] for row in board["rows"]]
        assert users == [alice.user] and identity.user_id not in users
        assert not any(user.startswith("bot_") for user in users)
    finally:
        await alice.close()
        await bot.close()
