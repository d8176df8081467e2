"""Bot accounts in the history database, on SQLite and on PostgreSQL: made under a
limit per owner with usernames unique across people and bots, listed with when their
token was issued, their tokens replaced, and deleted with their tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from klondike_live.history import History
from klondike_live.history.accounts import AccountRecords, AccountTaken, SessionRow
from klondike_live.history.bots import BOT_METHOD, BotRecords, BotRow, TooManyBots

YEAR = 365 * 86_400_000


@pytest.fixture
async def stores(history_url: str) -> AsyncIterator[tuple[AccountRecords, BotRecords]]:
    history = History.open(history_url)
    await history.upgrade()
    try:
        yield AccountRecords(history), BotRecords(history)
    finally:
        await history.close()


def token(tid: str, bot: str, at: int) -> SessionRow:
    return SessionRow(tid, bot, BOT_METHOD, "", at, at + YEAR)


async def test_bots_are_made_under_a_limit_with_unique_usernames(
    stores: tuple[AccountRecords, BotRecords],
) -> None:
    accounts, bots = stores
    await accounts.create("g_ann", "Ann", "ann", "$argon2id$x", None, 1000)
    await bots.create(
        "g_ann", "b_one", "AnnBot", "annbot", token("t" * 24, "b_one", 2000), 2000, limit=2
    )
    with pytest.raises(AccountTaken):
        await bots.create(
            "g_ann", "b_two", "Ann", "ann", token("u" * 24, "b_two", 3000), 3000, limit=2
        )
    with pytest.raises(AccountTaken):
        await bots.create(
            "g_ann", "b_two", "ANNBOT", "annbot", token("u" * 24, "b_two", 3000), 3000, limit=2
        )
    await bots.create(
        "g_ann", "b_two", "BotAnn", "botann", token("v" * 24, "b_two", 4000), 4000, limit=2
    )
    with pytest.raises(TooManyBots):
        await bots.create(
            "g_ann", "b_three", "Third", "third", token("w" * 24, "b_three", 5000), 5000, limit=2
        )
    with pytest.raises(AccountTaken):
        await accounts.create("g_cy", "AnnBot", "annbot", None, None, 6000)
    assert await bots.of("g_ann") == [
        BotRow("b_one", "AnnBot", 2000, 2000),
        BotRow("b_two", "BotAnn", 4000, 4000),
    ]
    assert await bots.of("g_cy") == []
    assert await bots.owned("g_cy", "b_one") is None
    assert await bots.owned("g_ann", "b_one") == BotRow("b_one", "AnnBot", 2000, 2000)
    assert await accounts.by_username("third") is None


async def test_a_new_token_replaces_the_old_and_delete_removes_bot_and_tokens(
    stores: tuple[AccountRecords, BotRecords],
) -> None:
    accounts, bots = stores
    await accounts.create("g_bo", "Bo", "bo", None, None, 1000)
    await bots.create(
        "g_bo", "b_bo", "BoBot", "bobot", token("a" * 24, "b_bo", 2000), 2000, limit=5
    )
    assert await accounts.session_alive("a" * 24, 2500) is not None
    ended = await bots.replace_token("b_bo", token("b" * 24, "b_bo", 3000))
    assert ended == ["a" * 24]
    assert await accounts.session_alive("a" * 24, 3500) is None
    alive = await accounts.session_alive("b" * 24, 3500)
    assert alive is not None and alive.method == BOT_METHOD
    assert await bots.of("g_bo") == [BotRow("b_bo", "BoBot", 2000, 3000)]
    await bots.delete("b_bo")
    assert await bots.of("g_bo") == []
    assert await accounts.by_user("b_bo") is None
    assert await accounts.session_alive("b" * 24, 3500) is None
    assert await accounts.by_user("g_bo") is not None
