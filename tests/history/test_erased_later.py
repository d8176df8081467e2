"""What reaches the history database after a player's erasure, on SQLite and on
PostgreSQL: a game from the outbox, a closed day's leaderboard and a tournament that
ends are written with the player erased (its marker, no name) and count in nobody's
statistics; erasures racing such writes leave no trace either."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import date
from typing import Any

import msgpack
from legacy_data import one_heat_cup
from sqlalchemy import select
from test_database import game, history

from klondike_live.daily.days import DayRecord
from klondike_live.daily.leaderboard import DailyResult, LeaderboardRow
from klondike_live.engine import Variant
from klondike_live.history import GameFilter, History
from klondike_live.history.daily import KeptDays
from klondike_live.history.players import DELETED_NAME, PlayerRecords, deleted_id
from klondike_live.history.schema import erased_players, metadata
from klondike_live.race.tournament import TournamentState

__all__ = ["history"]  # a fixture, imported for pytest

DRAW1 = Variant.parse("draw=1")


def _shown(value: Any) -> str:
    """A stored value as text: msgpack blobs unpacked, so their texts are searched."""
    if isinstance(value, bytes | memoryview):
        try:
            return repr(msgpack.unpackb(bytes(value), raw=False, strict_map_key=False))
        except (ValueError, msgpack.UnpackException):
            return repr(bytes(value))
    return repr(value)


async def dump(history: History) -> str:
    """Every row of every table, as text."""
    lines = []
    async with history.engine.connect() as conn:
        for table in metadata.sorted_tables:
            for row in (await conn.execute(select(table))).all():
                lines.append(f"{table.name}: " + " ".join(_shown(v) for v in row))
    return "\n".join(lines)


def assert_no_trace(text: str, user: str = "ann", name: str = "Ann") -> None:
    found = [line for line in text.splitlines() if user in line or name in line]
    assert not found, found


async def test_a_game_archived_after_the_erasure_is_kept_erased_and_counted_for_nobody(
    history: History,
) -> None:
    """Ann's game with Bob reaches the database after Ann was erased (it waited in the
    outbox): Ann's seat is the marker with no name, in the results and the rows, she has
    no statistics (nor has the marker), Bob's game and record are whole."""
    records = PlayerRecords(history)
    await history.add_game(
        "room-0001", game("room-0001", 100, [("ann", "won", 1), ("bob", "resigned", 2)])
    )
    assert "ann" in await dump(history)  # what the search below must not find
    await records.erase("ann", now_ms=150)
    blob = game("room-0002", 200, [("bob", "resigned", 2), ("ann", "won", 1)])
    kept = await history.keep_game("room-0002", blob)
    marker = deleted_id("ann")
    assert kept.added and kept.blob != blob
    ranking = msgpack.unpackb(kept.blob, raw=False)["ranking"]
    assert [(r["user"], r["name"]) for r in ranking] == [("bob", "Bob"), (marker, DELETED_NAME)]
    assert await history.load_results("room-0002", 1) == kept.blob
    assert_no_trace(await dump(history))
    assert await history.stats("ann") == ({}, [])
    assert (await history.stats(marker))[0] == {}
    counters, _ = await history.stats("bob")
    assert [(k, v) for k, v in counters.items() if k.startswith(("played|", "won|"))] == [
        ("played|race|draw=1 passes=1 f2t=no", 2),
        ("won|race|draw=1 passes=1 f2t=no", 0),
    ]
    vs = await history.head_to_head("bob", marker)
    assert (vs["games"], vs["losses"]) == (2, 2)
    again = await history.keep_game("room-0002", blob)  # drained twice
    assert not again.added and await history.load_results("room-0002", 1) == kept.blob


async def test_a_day_kept_after_the_erasure_holds_the_marker_in_the_player_s_row(
    history: History,
) -> None:
    """The day Ann played closes after her erasure: her row keeps its rank under the
    marker with no name; Bob's is as it was."""
    await PlayerRecords(history).erase("ann", now_ms=50)
    day = date(2030, 1, 2)
    record = DayRecord(day, DRAW1, "5eed", 7, 100, "c0ffee", ("f0",))
    entries = [
        DailyResult("ann", "Ann", True, 90_000, 100, 52, 1_000, room="room-0003", gen=1),
        DailyResult("bob", "Bob", False, 80_000, 60, 30, 2_000),
    ]
    days = KeptDays(history)
    assert await days.keep(record, [LeaderboardRow(i + 1, e) for i, e in enumerate(entries)])
    board = days.leaderboard(day, DRAW1)
    rows = await board.page(0, 10)
    marker = deleted_id("ann")
    assert [(r.rank, r.entry.user, r.entry.name) for r in rows] == [
        (1, marker, DELETED_NAME),
        (2, "bob", "Bob"),
    ]
    assert rows[0].entry == dataclasses.replace(entries[0], user=marker, name=DELETED_NAME)
    assert await board.entry("ann") is None and await days.entries_of("ann") == []
    assert_no_trace(await dump(history))


def _cup(organizer: str, name: str) -> TournamentState:
    return one_heat_cup("cup-00000001", "Cup", organizer, name, date(2030, 1, 1))


async def test_a_tournament_kept_after_the_erasure_is_kept_erased(history: History) -> None:
    """Ann organized a cup and entered it, Bob entered and was removed by her, then she
    cancelled it; it reaches the database after her erasure: organizer, entrant and
    log show the marker with no name, Bob's entry and the removal stay."""
    cup = _cup("ann", "Ann").enter("ann", "Ann", 2_000).enter("bob", "Bob", 3_000)
    cup = cup.remove("ann", "bob", 4_000).cancel("ann", 5_000)
    assert "Ann" in _shown(cup.to_blob())
    await PlayerRecords(history).erase("ann", now_ms=60)
    assert await history.add_tournament(cup)
    stored = await history.load_tournament(cup.id)
    assert stored is not None
    kept = TournamentState.from_blob(stored)
    marker = deleted_id("ann")
    assert (kept.organizer, kept.organizer_name) == (marker, DELETED_NAME)
    assert [(e.user, e.name) for e in kept.entrants] == [(marker, DELETED_NAME)]
    assert kept.removed == ("bob",)
    assert [e.by for e in kept.log] == [DELETED_NAME] * len(cup.log)
    assert any(dict(e.args).get("name") == "Bob" for e in kept.log)
    assert_no_trace(await dump(history))
    assert not await history.add_tournament(cup)  # kept once


async def test_erasing_while_games_arrive_leaves_no_trace_either_way(history: History) -> None:
    """Ann's games reach the database while she is being erased, all at once: whichever
    committed first, none keeps her id or name, none counts for her."""
    blobs = [
        (
            f"room-{i:04d}",
            game(f"room-{i:04d}", 100 + i, [("ann", "won", 1), ("bob", "resigned", 2)]),
        )
        for i in range(12)
    ]
    half = len(blobs) // 2
    await asyncio.gather(*(history.add_game(room, blob) for room, blob in blobs[:half]))
    await asyncio.gather(
        PlayerRecords(history).erase("ann", now_ms=500),
        *(history.add_game(room, blob) for room, blob in blobs[half:]),
    )
    assert_no_trace(await dump(history))
    assert await history.stats("ann") == ({}, [])
    assert (await history.stats(deleted_id("ann")))[0] == {}
    assert len((await history.games_of("bob", GameFilter())).games) == len(blobs)


async def test_erasing_twice_keeps_one_record_of_the_first_erasure(history: History) -> None:
    records = PlayerRecords(history)
    await records.erase("ann", now_ms=10)
    await records.erase("ann", now_ms=20)
    async with history.engine.connect() as conn:
        rows = (await conn.execute(select(erased_players))).all()
    assert [(r.marker, r.erased_at) for r in rows] == [(deleted_id("ann"), 10)]


async def test_an_import_after_the_erasure_keeps_nothing_of_the_player(history: History) -> None:
    """Games and counters of an earlier release imported after Ann's erasure: her seat
    is the marker with no name, her counters are not kept; Bob's are."""
    await PlayerRecords(history).erase("ann", now_ms=70)
    blob = game("room-0009", 900, [("ann", "won", 1), ("bob", "resigned", 2)])
    assert await history.add_uncounted_games([("room-0009", blob, None)]) == [True]
    counters = {"played|race|draw=1": 4, "won|race|draw=1": 3, "streak|race|draw=1": 1}
    assert await history.import_counters("ann", counters) == 0
    assert await history.import_counters("bob", counters) == 1
    assert_no_trace(await dump(history))
    page = await history.games_of("bob", GameFilter())
    assert page.games[0]["opponents"][0]["user"] == deleted_id("ann")
