"""A match of several deals: who takes each deal, the score, and when the match is over.

A race room with `best_of` 3, 5 or 7 plays deals until one racer has won the majority
of them (`majority(best_of)`). Each deal goes to the race's first by the ranking rule
(`race.ranking`): the fastest finisher, or, when nobody finished, the racer with the
most cards home. Two finishers with the same time, or (nobody finished) two racers
level on cards home at the top, make a drawn deal that counts for nobody. A racer
who leaves the match forfeits it: the match is over at once, and the best of the others
by deals won takes it (nobody, when they are level).

Pure functions over plain values; `race.room.RoomState` keeps a match's deals and
calls these. Each deal's stored results carry the match as it stood after it (its
`match`), so a finished match is read back from its games (`match_record`): the
history database needs nothing more than the games it keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from klondike_live.protocol.kinds import BEST_OF
from klondike_live.race.ranking import Standing

__all__ = [
    "BEST_OF",
    "DRAWN",
    "MAX_DEALS",
    "deal_winner",
    "majority",
    "match_record",
    "match_winner",
    "score",
    "winner_of",
]

DRAWN = -1
"""A deal's winner when it counts for nobody."""


def majority(best_of: int) -> int:
    """Deals a racer must win to take a best-of-`best_of` match."""
    return best_of // 2 + 1


def deal_winner(standings: Sequence[Standing]) -> int:
    """The seat that takes a deal from its standings, or `DRAWN`.

    The first by the ranking rule: the earliest finisher; with no finisher, the most
    cards home. A tie for that first place (same finish time; same count of cards
    home) is a drawn deal: when a count was reached does not split a match's deal.
    """
    winners = [s for s in standings if s.won]
    if winners:
        best = min(s.finish_ms for s in winners)
        first = [s.seat for s in winners if s.finish_ms == best]
    else:
        if not standings:
            return DRAWN
        most = max(s.found for s in standings)
        first = [s.seat for s in standings if s.found == most]
    return first[0] if len(first) == 1 else DRAWN


def score(deals: Sequence[int], seats: int) -> list[int]:
    """Deals won per seat (index: seat) from each deal's winner."""
    wins = [0] * seats
    for winner in deals:
        if 0 <= winner < seats:
            wins[winner] += 1
    return wins


def match_winner(
    best_of: int, deals: Sequence[int], racers: Sequence[int], forfeit: int = DRAWN
) -> int | None:
    """The match's winner (a seat of `racers`, the match's seats), `DRAWN` for a match
    over with no winner, or None while it goes on. A forfeit ends it: the sole leader
    of the others takes it."""
    wins = score(deals, max(racers, default=-1) + 1)
    if forfeit != DRAWN:
        others = [(wins[seat], seat) for seat in racers if seat != forfeit]
        if not others:
            return DRAWN
        top = max(w for w, _ in others)
        leaders = [seat for w, seat in others if w == top]
        return leaders[0] if len(leaders) == 1 else DRAWN
    need = majority(best_of)
    return next((seat for seat in racers if wins[seat] >= need), None)


def winner_of(ranking: Sequence[Mapping[str, Any]]) -> int:
    """`deal_winner` of a finished race's ranking rows (`race.results.build_results`)."""
    return deal_winner(
        [
            Standing(
                seat=int(row["seat"]),
                won=row["status"] == "won",
                finish_ms=int(row["time_ms"] or 0),
                found=int(row["found"]),
                found_ms=int(row["found_ms"]),
            )
            for row in ranking
        ]
    )


MAX_DEALS = 100
"""Deals a match's record is read over at most (drawn deals make a match longer than
its best-of; a hundred is far beyond any real one)."""


def match_record(room_id: str, deals: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A match's record from its deals' stored results, in order (each with its
    `match` as it stood after that deal): the racers, each deal's winner and ranking,
    and the match as the last deal left it (`over` false: it goes on, or was left
    unfinished)."""
    last = deals[-1]
    match = last["match"]
    return {
        "room": room_id,
        "best_of": match["best_of"],
        "from": match["from"],
        "score": match["score"],
        "over": match["over"],
        "winner": match["winner"],
        "forfeit": match["forfeit"],
        "players": [
            {"seat": row["seat"], "name": row["name"], "bot": bool(row.get("bot", False))}
            for row in sorted(last["ranking"], key=lambda r: int(r["seat"]))
        ],
        "deals": [
            {
                "gen": deal["gen"],
                "winner": deal["match"]["deals"][-1],
                "ended_at": deal["ended_at"],
                "ranking": [
                    {k: row[k] for k in ("rank", "seat", "name", "status", "time_ms", "found")}
                    for row in deal["ranking"]
                ],
            }
            for deal in deals
        ],
    }
