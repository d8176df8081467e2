"""`klondike-live db import-redis`: an earlier release's Valkey into the history database,
on SQLite and PostgreSQL, from a real Valkey filled the way that release wrote it."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import msgpack
import pytest
from legacy_data import (
    ANALYSIS,
    JUNK_KEY,
    LEGACY_GAMES,
    WAITING,
    fill_legacy,
    game,
    legacy_counters,
    legacy_tournaments,
    seat,
    stats_key,
)

from klondike_live.cli import main
from klondike_live.embedded import open_redis
from klondike_live.history import History
from klondike_live.race.stats import CategoryStats, summary


def import_redis(
    capsys: pytest.CaptureFixture[str], valkey_url: str, history_url: str, *more: str
) -> str:
    """Run the import (in small batches, so that it takes several); its summary line."""
    command = ["db", "import-redis", "--redis", valkey_url, "--database", history_url]
    status = main([*command, "--batch", "2", *more])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.count("\n") == 1
    return out.strip()


async def _read(url: str, users: list[str]) -> dict[str, Any]:
    history = History.open(url)
    try:
        return {
            "games": await history.count_games(),
            "stats": {user: (await history.stats(user))[0] for user in users},
            "recent": {user: (await history.stats(user))[1] for user in users},
            "has_waiting": await history.has_game(WAITING.room, WAITING.gen),
            "analysis": await history.load_analysis("raceAAAA01", 1),
            "results": await history.load_results("raceAAAA01", 2),
            "tournaments": [
                await history.load_tournament(state.id) == state.to_blob()
                for state in legacy_tournaments()
            ],
        }
    finally:
        await history.close()


def shown(stats: dict[str, dict[str, int]]) -> dict[str, list[CategoryStats]]:
    """Each player's statistics as shown (a category's missing counter is 0 or none)."""
    return {user: summary(counters) for user, counters in stats.items()}


def read(url: str) -> dict[str, Any]:
    return asyncio.run(_read(url, sorted(legacy_counters())))


def test_games_and_counters_are_imported_once_and_counted_once(
    valkey_url: str, history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(fill_legacy(valkey_url))
    first = import_redis(capsys, valkey_url, history_url)
    assert first == (
        "games: 5 added, 0 already there, 1 left to the nodes (in the outbox), "
        "1 unreadable (left in Valkey); tournaments over: 1 added, 0 already there; "
        "players' counters: 3 players, 5 categories imported, 0 already there"
    )
    after = read(history_url)
    assert after["games"] == len(LEGACY_GAMES)
    # The counters are the old release's exactly: the imported games are not counted again.
    assert shown(after["stats"]) == shown(legacy_counters())
    assert after["stats"]["alice"]["played|solo|draw=3 passes=3 f2t=no"] == 2
    # Each player's games are there, with what the pages show of them.
    assert [g["room"] for g in after["recent"]["alice"]] == [
        "raceAAAA01",
        "raceAAAA01",
        "dailyDDD01",
        "soloBBBB01",
    ]
    assert after["analysis"] == ANALYSIS
    assert after["results"] == LEGACY_GAMES[1].blob
    assert not after["has_waiting"]  # the nodes' drainer adds (and counts) it

    assert after["tournaments"] == [True, False]  # the one over, not the one to come
    second = import_redis(capsys, valkey_url, history_url)
    assert second.startswith("games: 0 added, 5 already there")
    assert "tournaments over: 0 added, 1 already there" in second
    assert "0 categories imported, 5 already there" in second
    assert read(history_url) == after


async def _counted_game(url: str) -> None:
    """A game of carol's counted by this release before the import."""
    history = History.open(url)
    try:
        await history.upgrade()
        later = game(
            "botsCCCC02",
            1,
            "2026-02-02T10:00:00",
            [
                seat(0, "carol", "playing", 2, 10, 3),
                seat(1, "bot-easy", "won", 1, 90, 52, 1, bot=True),
            ],
        )
        assert await history.add_game(later.room, later.blob)
    finally:
        await history.close()


def test_a_category_the_database_counts_already_is_left_as_it_is(
    valkey_url: str, history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(fill_legacy(valkey_url))
    asyncio.run(_counted_game(history_url))
    line = import_redis(capsys, valkey_url, history_url)
    assert "4 categories imported, 1 already there" in line
    stats = read(history_url)["stats"]
    assert stats["carol"] == {
        "played|race_machine|draw=1 passes=1 f2t=no": 1,
        "won|race_machine|draw=1 passes=1 f2t=no": 0,
        "streak|race_machine|draw=1 passes=1 f2t=no": 0,
        "best_streak|race_machine|draw=1 passes=1 f2t=no": 0,
    }
    assert shown(stats)["alice"] == shown(legacy_counters())["alice"]


async def _ttls(url: str) -> dict[str, int]:
    redis = await open_redis(url)
    try:
        names = [g.key for g in LEGACY_GAMES] + [WAITING.key, JUNK_KEY, stats_key("alice")]
        return {name: int(await redis.pttl(name)) for name in names}
    finally:
        await redis.aclose()


async def _shorten(url: str, key: str, ms: int) -> None:
    redis = await open_redis(url)
    try:
        await redis.pexpire(key, ms)
    finally:
        await redis.aclose()


def test_imported_keys_can_be_given_the_cache_expiry(
    valkey_url: str,
    history_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KLONDIKE_RESULTS_CACHE_MINUTES", "5")
    asyncio.run(fill_legacy(valkey_url))
    soon = LEGACY_GAMES[0].key
    asyncio.run(_shorten(valkey_url, soon, 60_000))
    line = import_redis(capsys, valkey_url, history_url, "--expire-after-import")
    assert re.search(r"; 8 keys given the cache expiry$", line), line  # 5 games, 3 players
    ttls = asyncio.run(_ttls(valkey_url))
    assert 0 < ttls.pop(soon) <= 60_000  # an earlier expiry is never pushed back
    assert ttls.pop(WAITING.key) == -1  # still the outbox's
    assert ttls.pop(JUNK_KEY) == -1  # left for the operator to look at
    assert all(0 < ttl <= 300_000 for ttl in ttls.values()), ttls


def test_an_unreachable_redis_is_one_line_naming_the_flag(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        ["db", "import-redis", "--redis", "redis://127.0.0.1:1", "--database", history_url]
    )
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("klondike-live: --redis: cannot use Redis")


def test_the_legacy_payload_is_what_the_history_database_reads() -> None:
    """The test data holds every field `History.add_game` reads."""
    results = msgpack.unpackb(LEGACY_GAMES[0].blob, raw=False)
    assert {"gen", "variant", "seed", "ended_at", "ranking"} <= set(results)
