"""Players' game statistics: what a finished game counts for, per player and category.

    rows = outcomes(results)          # what a finished game counts for, per human player
    counters = fold(counters, row)    # the counters after one more game
    shown = summary(counters)         # per category, read back

A game counts once for each human player in it, under a **category**: its kind and
variant. Kinds (`StatsKind`):

- `solo`: a solo game;
- `race`: a race against people; `race_machine`: a race with one or more bot racers
  ("vs machine", counted apart). Bots (their results rows say `bot`) are never counted
  as players;
- `daily`: a ranked daily attempt. An unranked daily game (practice on a deal already
  played) counts for nothing.

Per category: games **played**; games **won** (a solo game or daily attempt won; a race
won when its player came first, rank 1, with the deal completed: a tie for first counts
for each); the **win rate** (won / played); the **best time** and **fewest moves** of the
games won; the current **streak** (games won in a row, the latest last: a loss ends it)
and the **best streak** ever, `fold`'s rule, which the history database applies in the
transaction that adds the game (`history.database`). Daily challenges keep their
day-based streaks too (`daily.stats`).

Pure functions over a game's stored results (`race.results.build_results`); no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.status import BoardStatus

RECENT_GAMES = 20
"""How many of a player's latest games its statistics show."""


class StatsKind(StrEnum):
    """What kind of game a statistic counts."""

    SOLO = "solo"
    RACE = "race"
    RACE_MACHINE = "race_machine"  # a race with bot racers ("vs machine")
    DAILY = "daily"  # ranked daily attempts


COUNTERS = ("played", "won", "best_ms", "fewest", "streak", "best_streak")
"""A category's counters as stored: `<counter>|<kind>|<variant>`."""


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game as it counts for one player."""

    user: str
    kind: StatsKind
    variant: str
    won: bool
    time_ms: int | None  # a win's time, else None
    moves: int

    @property
    def category(self) -> str:
        return f"{self.kind}|{self.variant}"


def stats_kind(results: Mapping[str, Any]) -> StatsKind | None:
    """The kind a finished game (its stored results) counts as, or None when it does not
    count: a race with a bot racer is "vs machine"."""
    kind = RoomKind(results.get("kind", RoomKind.RACE))  # older results named no kind
    if kind is RoomKind.SOLO:
        return StatsKind.SOLO
    if kind is RoomKind.RACE:
        bots = any(row.get("bot") for row in results["ranking"])
        return StatsKind.RACE_MACHINE if bots else StatsKind.RACE
    return StatsKind.DAILY if results.get("daily", {}).get("ranked") else None


def won_by(kind: StatsKind | None, row: Mapping[str, Any]) -> bool:
    """Whether a ranking row is a win: its deal completed, and in a race first (a tie
    for first wins for each); a game that counts for nothing is won when completed."""
    completed = BoardStatus(row["status"]) is BoardStatus.WON
    racing = kind in (StatsKind.RACE, StatsKind.RACE_MACHINE)
    return completed and (not racing or int(row["rank"]) == 1)


def outcomes(results: Mapping[str, Any]) -> list[GameOutcome]:
    """What a finished game (its stored results) counts for each human player (bots are
    never players)."""
    kind = stats_kind(results)
    if kind is None:
        return []
    out = []
    for row in results["ranking"]:
        if not row["user"] or row.get("bot"):
            continue
        won = won_by(kind, row)
        time_ms = row.get("time_ms") if won else None
        out.append(
            GameOutcome(
                user=str(row["user"]),
                kind=kind,
                variant=str(results["variant"]),
                won=won,
                time_ms=None if time_ms is None else int(time_ms),
                moves=int(row["moves"]),
            )
        )
    return out


def fold(counters: dict[str, int], outcome: GameOutcome) -> dict[str, int]:
    """The counters after one more game: the rule the store's script applies."""
    out = dict(counters)
    c = outcome.category

    def name(counter: str) -> str:
        return f"{counter}|{c}"

    out[name("played")] = out.get(name("played"), 0) + 1
    if not outcome.won:
        out[name("streak")] = 0
        return out
    out[name("won")] = out.get(name("won"), 0) + 1
    streak = out[name("streak")] = out.get(name("streak"), 0) + 1
    out[name("best_streak")] = max(out.get(name("best_streak"), 0), streak)
    if outcome.time_ms is not None:
        best = out.get(name("best_ms"))
        out[name("best_ms")] = outcome.time_ms if best is None else min(best, outcome.time_ms)
    fewest = out.get(name("fewest"))
    out[name("fewest")] = outcome.moves if fewest is None else min(fewest, outcome.moves)
    return out


@dataclass(frozen=True, slots=True)
class CategoryStats:
    """A player's statistics in one category, as shown."""

    kind: str
    variant: str
    played: int
    won: int
    best_ms: int | None
    fewest_moves: int | None
    streak: int
    best_streak: int

    @property
    def win_rate(self) -> float:
        """Won / played (0 before any game)."""
        return self.won / self.played if self.played else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "variant": self.variant,
            "played": self.played,
            "won": self.won,
            "win_rate": round(self.win_rate, 4),
            "best_ms": self.best_ms,
            "fewest_moves": self.fewest_moves,
            "streak": self.streak,
            "best_streak": self.best_streak,
        }


KIND_ORDER = {kind: index for index, kind in enumerate(StatsKind)}


def summary(counters: Mapping[str, int]) -> list[CategoryStats]:
    """Every category the counters hold, by kind (solo, race, vs machine, daily) and
    variant."""
    per: dict[tuple[str, str], dict[str, int]] = {}
    for field, value in counters.items():
        counter, _, category = field.partition("|")
        kind, _, variant = category.partition("|")
        if counter in COUNTERS and kind in KIND_ORDER and variant:
            per.setdefault((kind, variant), {})[counter] = value
    out = [
        CategoryStats(
            kind=kind,
            variant=variant,
            played=values.get("played", 0),
            won=values.get("won", 0),
            best_ms=values.get("best_ms"),
            fewest_moves=values.get("fewest"),
            streak=values.get("streak", 0),
            best_streak=values.get("best_streak", 0),
        )
        for (kind, variant), values in per.items()
    ]
    return sorted(out, key=lambda s: (KIND_ORDER[StatsKind(s.kind)], s.variant))


def totals(categories: Iterable[CategoryStats]) -> dict[str, Any]:
    """All categories together: played, won and win rate (the home page's summary)."""
    played = won = 0
    for stats in categories:
        played += stats.played
        won += stats.won
    return {"played": played, "won": won, "win_rate": round(won / played, 4) if played else 0.0}
