"""What a finished game shows, on every path: one policy for results and replays.

Every outbound path of a finished game goes through here: the websocket `results`
frames (`service.rooms.Rooms.shown`), `GET /api/results/ROOM/GEN`, `GET
/api/replay/ROOM/GEN` and `GET /api/analysis/ROOM/GEN` (`gateway/http.py`, daily games
included; an analysis is shown under `FULL` only: `analysis_for`). docs/rules.md ("What
each viewer may see") has the table of audiences and game states.

A finished game is shown under one of two disclosures:

- `Disclosure.FULL`: everything (seed, deal, commitment, each board's full final view
  and game record, the replay with every card). For a race or solo game once it is
  over, and for a daily game once its day has closed.
- `Disclosure.AS_PLAYED`: a daily game while its day is open (its deal is everyone's
  challenge until 00:00 UTC). No seed, no deal, no game records; each board's final
  view, and its replay's start view and every step, as that board's own player saw it
  at that point (`race.visibility.final_knowledge(seen, deal_secret=True)`): the start
  shows the deal's seven up-cards only.

Who is let in at all is the spoiler gate's business, not this module's: while a daily
day is open, only the game's player and accounts that finished their own ranked attempt
of that day and variant are shown a daily game (`DailyService.may_see`, applied by
`check_join` to joins and by `disclosure` to HTTP answers); anyone else is refused
(`spoiler`). Those let in get `disclosure(...)`.

The shown payloads are built from allow-lists: a field added to the stored results is
not shown under `AS_PLAYED` until it is added here. Pure functions, no I/O; the masks
come only from `race.visibility`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, Final

from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.results import final_views, replay_boards
from klondike_live.race.visibility import final_knowledge


class Disclosure(StrEnum):
    """How much of a finished game a viewer the gate lets in is shown."""

    FULL = "full"  # everything: seed, deal, full boards, game records, full replay
    AS_PLAYED = "as_played"  # no seed, deal or records; each board as its player saw it


RESULTS_FIELDS: Final = frozenset(
    {
        "gen",
        "kind",
        "certified",
        "public",
        "commitment",
        "variant",
        "started_at",
        "ended_at",
        "daily",
        "from",  # how many record moves came before the start (0 for a deal)
    }
)
"""Top-level results fields shown under `AS_PLAYED` (besides `ranking`)."""

ROW_FIELDS: Final = frozenset(
    {
        "seat",
        "user",
        "name",
        "bot",
        "level",
        "rank",
        "status",
        "time_ms",
        "moves",
        "found",
        "found_ms",
        "end_ms",
        "times",
    }
)
"""Ranking row fields shown under `AS_PLAYED` (besides the recomputed `view`)."""

REPLAY_FIELDS: Final = ("commitment", "started_at", "ended_at")
"""Replay fields taken from the results under every disclosure (with `gen`, `variant`)."""

SECRETS: Final = ("seed", "deal")
"""Fields that name the deal: shown under `FULL` only (with each row's `record`)."""


def disclosure(*, daily: bool, day_open: bool) -> Disclosure:
    """The disclosure of a finished game: `AS_PLAYED` for a daily game while its day is
    open, else `FULL`."""
    return Disclosure.AS_PLAYED if daily and day_open else Disclosure.FULL


def knowledge(shown: Disclosure) -> Callable[[int], int]:
    """A board's mask under `shown`, from what its player had seen at that point."""
    secret = shown is Disclosure.AS_PLAYED
    return lambda seen: final_knowledge(seen, deal_secret=secret)


def _daily(results: Mapping[str, Any], shown: Disclosure) -> dict[str, Any] | None:
    """A daily game's `daily` block with `closed` (its day closed: `FULL`)."""
    daily = results.get("daily")
    if not isinstance(daily, Mapping):
        return None
    return {**daily, "closed": shown is Disclosure.FULL}


def results_for(results: Mapping[str, Any], shown: Disclosure) -> dict[str, Any]:
    """Stored results (`race.results.build_results`) as shown under `shown`."""
    if shown is Disclosure.FULL:
        out = dict(results)
    else:
        out = {key: value for key, value in results.items() if key in RESULTS_FIELDS}
        views = final_views(results, knowledge(shown))
        out["ranking"] = [
            {key: value for key, value in row.items() if key in ROW_FIELDS}
            | {"view": views[int(row["seat"])]}
            for row in results["ranking"]
        ]
    daily = _daily(results, shown)
    if daily is not None:
        out["daily"] = daily
    return out


def replay_for(
    room_id: str, kind: RoomKind, results: Mapping[str, Any], shown: Disclosure
) -> dict[str, Any]:
    """A finished game's replay under `shown`, from its stored results: every board's
    start view and each step's diff made under that board's mask at that step."""
    out: dict[str, Any] = {
        "room": room_id,
        "gen": results["gen"],
        "kind": kind,
        "variant": results["variant"],
    }
    if shown is Disclosure.FULL:
        out |= {key: results[key] for key in SECRETS}
    out |= {key: results[key] for key in REPLAY_FIELDS}
    out["from"] = int(results.get("from", 0))  # record moves made before the start
    out["boards"] = replay_boards(results, knowledge(shown))
    daily = _daily(results, shown)
    if daily is not None:
        out["daily"] = daily
    if "match" in results:  # a match's deal: the score after it (no card, no seed)
        out["match"] = results["match"]
    return out


def analysis_for(analysis: Mapping[str, Any], shown: Disclosure) -> dict[str, Any] | None:
    """A finished game's solver analysis under `shown`: all of it under `FULL`, nothing
    (None) under `AS_PLAYED`. Its winning lines and verdicts speak of cards its player
    had not seen, so a daily game's analysis waits for its day to close, for everyone."""
    if shown is not Disclosure.FULL:
        return None
    return dict(analysis)
