"""A player in the history database, on SQLite and on PostgreSQL: when it was first
seen and under which name, its passkeys' metadata, and its erasure (statistics and
account gone, its seat in others' games kept under a stable marker, again a no-op)."""

from __future__ import annotations

import msgpack
from test_database import game, history

from klondike_live.accounts.passkeys import NewPasskey
from klondike_live.history import GameFilter, History
from klondike_live.history.accounts import AccountRecords, SessionRow
from klondike_live.history.friends import FriendRecords, Person
from klondike_live.history.players import DELETED_NAME, PlayerRecords, deleted_id, is_deleted

__all__ = ["history"]  # a fixture, imported for pytest


async def test_a_player_is_first_seen_at_its_first_game_under_its_newest_name(
    history: History,
) -> None:
    records = PlayerRecords(history)
    await history.add_game("room-0001", game("room-0001", 100, [("ann", "won", 1)], kind="solo"))
    await history.add_game(
        "room-0002", game("room-0002", 300, [("bob", "won", 1), ("ann", "resigned", 2)])
    )
    assert await records.first_seen("ann") == 100
    assert await records.last_name("ann") == "Ann"
    assert await records.first_seen("cat") is None and await records.last_name("cat") is None
    assert await records.all_games("ann") == [("room-0002", 1), ("room-0001", 1)]


async def test_erasing_a_player_keeps_the_others_games_whole(history: History) -> None:
    records, accounts = PlayerRecords(history), AccountRecords(history)
    await accounts.create("ann", "Ann", "ann", None, NewPasskey("Y3JlZA", b"\xa5", 3), 50)
    await accounts.add_session(SessionRow("s1", "ann", "passkey", "Firefox", 60, 10**15))
    assert [p["id"] for p in await records.passkeys_of("ann")] == ["Y3JlZA"]
    await history.add_game(
        "room-0001", game("room-0001", 100, [("ann", "won", 1), ("bob", "resigned", 2)])
    )
    await history.add_game("room-0002", game("room-0002", 200, [("ann", "won", 1)], kind="solo"))
    before = await history.head_to_head("bob", "ann")
    erased = await records.erase("ann")
    assert sorted((room, gen) for room, gen, _ in erased) == [("room-0001", 1), ("room-0002", 1)]
    marker = deleted_id("ann")
    assert is_deleted(marker) and not is_deleted("ann")
    assert await accounts.by_user("ann") is None and await records.passkeys_of("ann") == []
    assert await accounts.session_alive("s1", 0) is None
    counters, recent = await history.stats("ann")
    assert counters == {} and recent == []
    page = await history.games_of("bob", GameFilter())
    assert [g["room"] for g in page.games] == ["room-0001"]
    assert page.games[0]["opponents"] == [
        {"user": marker, "name": DELETED_NAME, "rank": 1, "bot": False}
    ]
    blob = await history.load_results("room-0001", 1)
    assert blob is not None
    ranking = msgpack.unpackb(blob, raw=False)["ranking"]
    assert [(r["user"], r["name"]) for r in ranking] == [(marker, ""), ("bob", "Bob")]
    assert b"Ann" not in blob and b"ann" not in blob
    assert blob in [new for _, _, new in erased]
    bob_counters, _ = await history.stats("bob")
    assert bob_counters and (await history.stats(marker))[0] == {}
    after = await history.head_to_head("bob", marker)
    assert (after["games"], after["losses"]) == (before["games"], before["losses"]) == (1, 1)
    assert await records.erase("ann") == []  # again: nothing left to erase


async def test_erasing_a_player_ends_its_follows_and_blocks_both_ways(history: History) -> None:
    records, friends = PlayerRecords(history), FriendRecords(history)
    assert await friends.follow("ann", "Ann", "bob", "Bob", 10)
    assert await friends.follow("cat", "Cat", "ann", "Ann", 20)
    assert await friends.follow("cat", "Cat", "bob", "Bob", 25)
    await friends.block("ann", "dan", "Dan", 30)
    await friends.block("eve", "ann", "Ann", 40)
    await records.erase("ann")
    for user in ("ann", "bob", "cat", "dan", "eve"):
        lists = await friends.lists(user)
        named = {p.user for p in lists.following + lists.followers + lists.blocked}
        assert "ann" not in named, (user, lists)
    assert (await friends.lists("cat")).following == [Person("bob", "Bob")]  # others' stay
    assert not await friends.blocked_between("eve", "ann")
    assert await friends.follow("dan", "Dan", "eve", "Eve", 50)
