"""Accounts in the history database, on SQLite and on PostgreSQL: made once per user
and per username key, passkeys found by their id, sessions listed, checked and ended."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from klondike_live.accounts.passkeys import NewPasskey
from klondike_live.history import History
from klondike_live.history.accounts import AccountRecords, AccountTaken, SessionRow

DAY = 86_400_000


@pytest.fixture
async def records(history_url: str) -> AsyncIterator[AccountRecords]:
    history = History.open(history_url)
    await history.upgrade()
    try:
        yield AccountRecords(history)
    finally:
        await history.close()


async def test_an_account_is_made_once_per_user_and_per_username(
    records: AccountRecords,
) -> None:
    await records.create("g_ann", "Ann", "ann", "$argon2id$x", None, 1000)
    with pytest.raises(AccountTaken) as taken:
        await records.create("g_bob", "ANN", "ann", None, None, 2000)
    assert taken.value.which == "username"
    with pytest.raises(AccountTaken) as again:
        await records.create("g_ann", "Annie", "annie", None, None, 3000)
    assert again.value.which == "user"
    account = await records.by_username("ann")
    assert account is not None and (account.user_id, account.username) == ("g_ann", "Ann")
    assert await records.by_user("g_bob") is None
    assert await records.by_username("annie") is None


async def test_passkeys_are_found_by_their_id_and_count_their_use(
    records: AccountRecords,
) -> None:
    key = NewPasskey("Y3JlZA", b"\xa5cose", 0)
    await records.create("g_cy", "Cy", "cy", None, key, 1000)
    stored = await records.passkey("Y3JlZA")
    assert stored is not None and stored.user_id == "g_cy" and stored.public_key == b"\xa5cose"
    await records.count_use("Y3JlZA", 7)
    stored = await records.passkey("Y3JlZA")
    assert stored is not None and stored.sign_count == 7
    assert await records.passkeys_of("g_cy") == ["Y3JlZA"]
    assert await records.passkey("other") is None


async def test_sessions_are_listed_checked_and_ended(records: AccountRecords) -> None:
    await records.create("g_di", "Di", "dl", None, None, 0)
    for number in range(3):
        await records.add_session(
            SessionRow(f"sid{number:013d}", "g_di", "password", "Firefox", number, DAY)
        )
    listed = await records.sessions_of("g_di", 10)
    assert [s.id for s in listed] == ["sid0000000000002", "sid0000000000001", "sid0000000000000"]
    alive = await records.session_alive("sid0000000000001", 10)
    assert alive is not None and (alive.user_id, alive.agent, alive.expires_at) == (
        "g_di",
        "Firefox",
        DAY,
    )
    assert await records.session_alive("sid0000000000001", DAY) is None  # expired
    assert await records.end_sessions("g_di", "sid0000000000001") == ["sid0000000000001"]
    assert await records.session_alive("sid0000000000001", 10) is None
    assert await records.end_sessions("g_other", "sid0000000000000") == []
    assert sorted(await records.end_sessions("g_di")) == ["sid0000000000000", "sid0000000000002"]
    assert await records.sessions_of("g_di", 10) == []
