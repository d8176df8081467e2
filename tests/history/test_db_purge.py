"""`klondike-live db purge`: fewer finished games, the same statistics."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from legacy_data import LEGACY_GAMES, legacy_counters

from klondike_live.cli import main
from klondike_live.history import History


async def _fill(url: str) -> None:
    """The legacy games, each counted as the nodes count a game."""
    history = History.open(url)
    try:
        await history.upgrade()
        for one in LEGACY_GAMES:
            assert await history.add_game(one.room, one.blob)
    finally:
        await history.close()


async def _state(url: str) -> dict[str, Any]:
    history = History.open(url)
    try:
        rooms = {(g.room, g.gen) for g in LEGACY_GAMES}
        return {
            "games": sorted([key for key in rooms if await history.has_game(*key)]),
            "stats": {user: (await history.stats(user))[0] for user in legacy_counters()},
        }
    finally:
        await history.close()


def purge(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> str:
    assert main(["db", "purge", "--database", url, *args]) == 0
    out, _ = capsys.readouterr()
    assert out.count("\n") == 1
    return out.strip()


def test_purge_counts_with_dry_run_then_deletes_and_keeps_statistics(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_fill(history_url))
    before = asyncio.run(_state(history_url))
    assert len(before["games"]) == 5

    # The solo game (2025-12-11) and the race against a bot (2025-12-20) ended before.
    line = purge(capsys, history_url, "--before", "2026-01-01", "--dry-run")
    assert line == (
        "dry run: 2 games that ended before 2026-01-01 00:00:00 UTC and 3 players' rows "
        "would be deleted (players' statistics stay)"
    )
    assert asyncio.run(_state(history_url)) == before

    line = purge(capsys, history_url, "--before", "2026-01-01")
    assert line.startswith("deleted 2 games that ended before 2026-01-01 00:00:00 UTC and 3 ")
    after = asyncio.run(_state(history_url))
    assert after["games"] == [("dailyDDD01", 1), ("raceAAAA01", 1), ("raceAAAA01", 2)]
    assert after["stats"] == before["stats"]

    assert purge(capsys, history_url, "--before", "2026-01-01").startswith("deleted 0 games")


def test_purge_of_one_kind_before_a_moment(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_fill(history_url))
    # Races before 12:30 on 2026-01-10: the race against a bot and the first race.
    line = purge(capsys, history_url, "--before", "2026-01-10T12:30:00", "--kind", "race")
    assert line.startswith("deleted 2 race games that ended before 2026-01-10 12:30:00 UTC")
    assert asyncio.run(_state(history_url))["games"] == [
        ("dailyDDD01", 1),
        ("raceAAAA01", 2),
        ("soloBBBB01", 1),
    ]


def test_a_bad_date_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["db", "purge", "--before", "yesterday"])
    assert exit_.value.code == 2
    _, err = capsys.readouterr()
    assert "argument --before: expected a date YYYY-MM-DD" in err
