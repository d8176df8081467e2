"""Follows and blocks in the history database, on SQLite and on PostgreSQL: lists in
order with accounts' usernames, a block ends the follows both ways and refuses new
ones, and a blocked player is in none of the blocker's lists."""

from __future__ import annotations

from test_database import history

from klondike_live.history import History
from klondike_live.history.accounts import AccountRecords
from klondike_live.history.friends import FriendRecords, Person

__all__ = ["history"]  # a fixture, imported for pytest


async def test_follows_are_listed_both_ways_newest_first(history: History) -> None:
    records = FriendRecords(history)
    await AccountRecords(history).create("g_bo", "Bo", "bo", None, None, 0)
    assert await records.follow("g_ann", "Ann", "g_bo", "Guest Bo", 1000)
    assert await records.follow("g_ann", "Ann", "g_cy", "Cy", 2000)
    assert await records.follow("g_cy", "Cy", "g_ann", "Ann", 3000)
    assert await records.follow("g_ann", "Ann", "g_cy", "Cy", 4000)  # again: no second row
    lists = await records.lists("g_ann")
    # Bo is an account: its username, not the name written with the row.
    assert lists.following == [Person("g_cy", "Cy"), Person("g_bo", "Bo")]
    assert lists.followers == [Person("g_cy", "Cy")]
    assert lists.blocked == []
    await records.unfollow("g_ann", "g_cy")
    assert await records.follows("g_ann", "g_cy") is False
    assert (await records.lists("g_ann")).following == [Person("g_bo", "Bo")]
    assert (await records.lists("g_bo")).followers == [Person("g_ann", "Ann")]


async def test_a_block_ends_follows_both_ways_and_refuses_new_ones(history: History) -> None:
    records = FriendRecords(history)
    await records.follow("g_ann", "Ann", "g_bo", "Bo", 1000)
    await records.follow("g_bo", "Bo", "g_ann", "Ann", 1000)
    await records.block("g_ann", "g_bo", "Bo", 2000)
    assert await records.blocked_between("g_bo", "g_ann")
    assert await records.blocked_between("g_ann", "g_bo")
    assert await records.follow("g_bo", "Bo", "g_ann", "Ann", 3000) is False
    assert await records.follow("g_ann", "Ann", "g_bo", "Bo", 3000) is False
    ann, bo = await records.lists("g_ann"), await records.lists("g_bo")
    assert ann.following == ann.followers == [] and ann.blocked == [Person("g_bo", "Bo")]
    assert bo.following == bo.followers == bo.blocked == []
    await records.unblock("g_ann", "g_bo")
    assert not await records.blocked_between("g_ann", "g_bo")
    assert await records.follow("g_bo", "Bo", "g_ann", "Ann", 4000)
    assert (await records.lists("g_ann")).followers == [Person("g_bo", "Bo")]
