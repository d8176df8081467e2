"""The tournaments' part of the HTTP JSON API (routing and responses: `http.py`).

    GET /api/tournaments                    public tournaments, newest first, in brief
    GET /api/tournaments/<id>               one tournament: settings, entrants, rounds
                                            with their results, standings, the log
    GET /api/tournaments/<id>/standings     its standings alone
    GET /api/tournaments/<id>/archive       once it is over: the final standings, every
                                            round's deal revealed with its commitment,
                                            and each result's replay (409 before)

An unlisted tournament is reachable by its id only (the invite link). What is shown is
`race.tournament_view`'s decision alone: no heat's seed before its heat is over, no daily
seed of an open day, no card anywhere.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from klondike_live import keys
from klondike_live.errors import Refusal
from klondike_live.service.tournaments import Tournaments


class TournamentApi:
    """Answers for `/api/tournaments...`: (status, JSON-ready data)."""

    def __init__(self, tournaments: Tournaments) -> None:
        self.tournaments = tournaments

    async def route(self, route: str) -> tuple[HTTPStatus, Any]:
        parts = route.split("/")
        if parts == ["tournaments"]:
            return HTTPStatus.OK, await self.tournaments.listed()
        if len(parts) not in (2, 3) or not keys.is_room_id(parts[1]):
            return HTTPStatus.NOT_FOUND, {"error": "not_found"}
        what = parts[2] if len(parts) == 3 else ""
        if what not in ("", "standings", "archive"):
            return HTTPStatus.NOT_FOUND, {"error": "not_found"}
        try:
            state = await self.tournaments.load(parts[1])
        except Refusal:
            return HTTPStatus.NOT_FOUND, {"error": "not_found"}
        view = await self.tournaments.view(state)
        if what == "standings":
            return HTTPStatus.OK, {
                "id": view["id"],
                "state": view["state"],
                "standings": view["standings"],
            }
        if what == "archive":
            if not state.over:
                return HTTPStatus.CONFLICT, {"error": "not_over", "state": view["state"]}
            return HTTPStatus.OK, archive(view)
        return HTTPStatus.OK, view


def archive(view: dict[str, Any]) -> dict[str, Any]:
    """A finished tournament's record: every round with its deal and replays."""
    rounds = []
    for item in view["rounds"]:
        rounds.append(
            {
                **item,
                "results": [
                    {**row, **({"replay": f"/api/replay/{row['game']}"} if "game" in row else {})}
                    for row in item["results"]
                ],
            }
        )
    return {**view, "rounds": rounds}
