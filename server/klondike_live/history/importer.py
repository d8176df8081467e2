"""Bring the history that earlier releases kept in Valkey into the history database.

    tally = await import_redis(LegacyStore(redis), history, batch=500)
    print(tally.line())

Before the history database, a finished game lived only as its results hash in Valkey
(for `results_days`), and each player's statistics as a hash of counters
(`store.legacy`). `import_redis` walks both:

- **games**: each results key becomes a game of the database with its players
  (`History.add_uncounted_games`), *not counted* in anyone's statistics, as the
  counters imported next already count it. A game that waits in the outbox is a game of
  this release: the nodes' drainers add and count it, so it is left to them. A game the
  database has already is left as it is.
- **tournaments**: each tournament that is over is kept (`History.add_tournament`, as
  the nodes keep the ones that end from now on); one still running is left to them.
- **players' statistics**: each player's counters are written for every category
  (kind, variant) where the database has none for the player (`History.import_counters`).
  A category it has already (imported before, or counted by this release's nodes since
  they started) is left as it is: run the import before the nodes of this release
  serve games, so that no category of a player is both.

Both walks are idempotent: an interrupted import is simply run again, and a second
run adds nothing. With `expire_after_ms`, every results key whose game the database has
and every imported player's statistics keys get that expiry (never a later one than
they have), so that Valkey gives their memory back; results still needed (unreadable,
or waiting in the outbox) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from klondike_live.history.database import History
from klondike_live.race.stats import summary
from klondike_live.race.tournament import TournamentState
from klondike_live.store.legacy import LegacyStore

__all__ = ["ImportTally", "import_redis"]

Progress = Callable[[str, int], None]
"""Told `("games", n)`, `("tournaments", n)` or `("players", n)` as each batch of keys
is done."""


@dataclass(slots=True)
class ImportTally:
    """What an import did."""

    games_added: int = 0
    games_present: int = 0
    games_waiting: int = 0  # in the outbox: the nodes add (and count) them
    games_gone: int = 0  # expired between the scan and the read
    games_unreadable: int = 0  # results that are no game (left in Valkey)
    tournaments_added: int = 0
    tournaments_present: int = 0
    players: int = 0
    categories_added: int = 0
    categories_present: int = 0
    keys_expired: int = 0

    def line(self) -> str:
        """The summary line the command prints."""
        games = f"games: {self.games_added} added, {self.games_present} already there"
        for count, what in (
            (self.games_waiting, "left to the nodes (in the outbox)"),
            (self.games_gone, "expired meanwhile"),
            (self.games_unreadable, "unreadable (left in Valkey)"),
        ):
            if count:
                games += f", {count} {what}"
        tournaments = (
            f"tournaments over: {self.tournaments_added} added, "
            f"{self.tournaments_present} already there"
        )
        players = (
            f"players' counters: {self.players} players, {self.categories_added} "
            f"categories imported, {self.categories_present} already there"
        )
        expired = f"; {self.keys_expired} keys given the cache expiry" if self.keys_expired else ""
        return f"{games}; {tournaments}; {players}{expired}"


async def import_redis(
    legacy: LegacyStore,
    history: History,
    *,
    batch: int = 500,
    expire_after_ms: int | None = None,
    progress: Progress | None = None,
) -> ImportTally:
    """Import every game and every player's counters (see the module docstring)."""
    tally = ImportTally()
    tell = progress if progress is not None else (lambda _what, _n: None)
    async for games in legacy.results_keys(batch):
        await _import_games(legacy, history, games, tally, expire_after_ms)
        tell("games", len(games))
    async for blobs in legacy.tournaments(batch):
        for blob in blobs:
            try:
                state = TournamentState.from_blob(blob)
            except (ValueError, KeyError, TypeError):
                continue  # not a tournament this release reads: left in Valkey
            if not state.over:
                continue
            if await history.add_tournament(state):
                tally.tournaments_added += 1
            else:
                tally.tournaments_present += 1
        tell("tournaments", len(blobs))
    async for users in legacy.stats_keys(batch):
        counters = await legacy.load_stats(users)
        for user, mine in zip(users, counters, strict=True):
            categories = len(summary(mine))
            written = await history.import_counters(user, mine) if categories else 0
            tally.players += 1
            tally.categories_added += written
            tally.categories_present += categories - written
        if expire_after_ms is not None:
            await legacy.expire_stats(users, expire_after_ms)
            tally.keys_expired += len(users)
        tell("players", len(users))
    return tally


async def _import_games(
    legacy: LegacyStore,
    history: History,
    games: list[tuple[str, int]],
    tally: ImportTally,
    expire_after_ms: int | None,
) -> None:
    waiting = await legacy.in_outbox(games)
    mine = [game for game, queued in zip(games, waiting, strict=True) if not queued]
    tally.games_waiting += len(games) - len(mine)
    stored = await legacy.load_results(mine)
    found = []
    for (room_id, gen), item in zip(mine, stored, strict=True):
        if item is None:
            tally.games_gone += 1
        else:
            found.append(((room_id, gen), item))
    added = await history.add_uncounted_games(
        [(room_id, blob, analysis) for (room_id, _gen), (blob, analysis) in found]
    )
    kept = []
    for (game, _item), outcome in zip(found, added, strict=True):
        if outcome is None:
            tally.games_unreadable += 1
            continue
        kept.append(game)
        if outcome:
            tally.games_added += 1
        else:
            tally.games_present += 1
    if expire_after_ms is not None and kept:
        await legacy.expire_results(kept, expire_after_ms)
        tally.keys_expired += len(kept)
