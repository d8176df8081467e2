"""What everyone is shown of a tournament: its `tournament` frame and HTTP answer.

`tournament_wire(state, series_rounds, now_ms)` is the one place that decides it. A
heat's seed appears only once the heat is over (its race finished, or cancelled), with
the commitment published from the tournament's creation; a series day's seed only once
that day has closed (the daily rule), its commitment once the day's deal is prepared.
Results carry no card: places, points, won, time, cards on the foundations, moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from klondike_live.engine import Variant
from klondike_live.protocol.kinds import TournamentFormat
from klondike_live.race.tournament import (
    HeatPhase,
    Result,
    Scored,
    TournamentState,
    score_round,
    standings,
)


@dataclass(frozen=True, slots=True)
class SeriesRound:
    """One day and variant of a series, as read from its daily leaderboard."""

    day: date
    variant: Variant
    started: bool  # the day has begun (its leaderboard may have entries)
    closed: bool  # the day has closed: its seed may be shown
    commitment: str  # "" until the day's deal is prepared
    seed: str  # "" until the day has closed
    results: tuple[Result, ...]


def points_wire(points: float) -> int | float:
    """Points on the wire: an integer when whole (the protocol's integers are never
    floats), else the half a shared place gives."""
    return int(points) if points.is_integer() else points


def _results(scored: Sequence[Scored], names: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "user": item.result.user,
            "name": names.get(item.result.user, ""),
            "place": item.place,
            "points": points_wire(item.points),
            "won": item.result.won,
            "time_ms": item.result.time_ms,
            "found": item.result.found,
            "moves": item.result.moves,
            **({"game": item.result.game} if item.result.game else {}),
        }
        for item in scored
    ]


def _counted(results: Sequence[Result], entrants: set[str]) -> list[Scored]:
    return score_round(r for r in results if r.user in entrants)


def tournament_wire(
    state: TournamentState, series_rounds: Sequence[SeriesRound], *, now_ms: int
) -> dict[str, Any]:
    """The tournament as clients see it (docs/protocol.md, `tournament`)."""
    names = {e.user: e.name for e in state.entrants}
    users = set(names)
    rounds: list[dict[str, Any]] = []
    scored: list[list[Scored]] = []
    if state.format is TournamentFormat.HEATS:
        for heat in state.heats:
            over = heat.phase in (HeatPhase.FINISHED, HeatPhase.CANCELLED)
            counted = _counted(heat.results, users) if heat.phase is HeatPhase.FINISHED else []
            if heat.phase is HeatPhase.FINISHED:
                scored.append(counted)
            item: dict[str, Any] = {
                "round": heat.number,
                "label": f"Heat {heat.number}",
                "state": str(heat.phase),
                "commitment": heat.commitment,
                "certified": heat.certified,
                "results": _results(counted, names),
            }
            if heat.start_at_ms:
                item["start_at"] = heat.start_at_ms
            if heat.room:
                item["room"] = heat.room
                item["gen"] = heat.gen
            if over and heat.room and heat.phase is HeatPhase.FINISHED:
                item["seed"] = heat.seed
            rounds.append(item)
    else:
        for number, day in enumerate(series_rounds, start=1):
            counted = _counted(day.results, users)
            scored.append(counted)
            item = {
                "round": number,
                "label": f"{day.day.isoformat()} {day.variant}",
                "date": day.day.isoformat(),
                "variant": str(day.variant),
                "state": "closed" if day.closed else "open" if day.started else "scheduled",
                "commitment": day.commitment,
                "results": _results(counted, names),
            }
            if day.closed and day.seed:
                item["seed"] = day.seed
            rounds.append(item)
    table = standings(state.entrants, scored)
    data: dict[str, Any] = {
        "id": state.id,
        "name": state.name,
        "format": str(state.format),
        "variants": [str(v) for v in state.variants],
        "public": state.public_listing,
        "cap": state.cap,
        "organizer": {"user": state.organizer, "name": state.organizer_name},
        "created_at": state.created_ms,
        "opens_at": state.opens_ms,
        "closes_at": state.closes_ms,
        "registration": "open" if state.registration_open(now_ms) else "closed",
        "state": str(state.phase),
        "entrants": [{"user": e.user, "name": e.name} for e in state.entrants],
        "rounds": rounds,
        "standings": [
            {
                "rank": row.rank,
                "user": row.user,
                "name": row.name,
                "points": points_wire(row.points),
                "wins": row.wins,
                "rounds": row.rounds,
            }
            for row in table
        ],
        "log": [
            {"at": e.at_ms, "by": e.by, "text": e.text, "kind": e.kind, "args": dict(e.args)}
            for e in state.log
        ],
    }
    if state.format is TournamentFormat.SERIES:
        data["series"] = {"from": state.first_day, "to": state.last_day}
    else:
        data["heats"] = {
            "count": len(state.heats),
            "start_at": state.heats[0].start_at_ms if state.heats else 0,
            "pause": state.pause_s,
            "time_limit": state.time_limit_s,
        }
    if state.ended_ms:
        data["ended_at"] = state.ended_ms
    return data
