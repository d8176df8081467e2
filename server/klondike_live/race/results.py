"""The end of a race: rebuild each board from its moves, rank, reveal, record.

Pure functions over the stored board fields and moves; the service stores and
publishes what they return. Everything is revealed here (seed, deal, full boards and
game records), so this must only run for a race that is over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from klondike_live.engine import ALL_CARDS, Board, Deal, GameRecord, Move, view_of
from klondike_live.protocol.outgoing import view_wire
from klondike_live.race.live_board import PLAYING, RESIGNED, TIMEOUT, WON
from klondike_live.race.ranking import Standing, rank
from klondike_live.race.room import RoomState

_RECORD_RESULT = {WON: "won", RESIGNED: "resigned", TIMEOUT: "timeout", PLAYING: "unfinished"}


def replay(state: RoomState, moves: Sequence[str]) -> Board:
    """The board after stored moves (they were checked when played)."""
    board = Board(Deal.from_seed(state.seed), state.variant)
    for token in moves:
        board.push(Move.parse(token))
    return board


def build_results(
    state: RoomState,
    boards: Mapping[int, tuple[Mapping[str, str], Sequence[str]]],
) -> dict[str, Any]:
    """Ranking, seed, commitment, deal, final full boards and game records."""
    standings = []
    rows: dict[int, dict[str, Any]] = {}
    for seat, (fields, moves) in sorted(boards.items()):
        status = fields.get("status", PLAYING)
        board = replay(state, moves)
        standings.append(
            Standing(
                seat=seat,
                won=status == WON,
                finish_ms=int(fields.get("finish_ms", 0)),
                found=board.foundation_count,
                found_ms=int(fields.get("found_ms", 0)),
            )
        )
        occupant = state.seats[seat] if seat < len(state.seats) else None
        record = GameRecord(
            variant=state.variant,
            seed=state.seed,
            moves=tuple(moves),
            result=_RECORD_RESULT.get(status, "unfinished"),
        )
        rows[seat] = {
            "seat": seat,
            "user": occupant.user if occupant else "",
            "name": occupant.name if occupant else "",
            "status": status,
            "moves": len(moves),
            "found": board.foundation_count,
            "found_ms": int(fields.get("found_ms", 0)),
            "view": view_wire(view_of(board, ALL_CARDS)),
            "record": str(record),
        }
    ranking = []
    for position, standing in rank(standings):
        row = rows[standing.seat]
        row["rank"] = position
        row["time_ms"] = standing.finish_ms if standing.won else None
        ranking.append(row)
    return {
        "gen": state.gen,
        "seed": state.seed,
        "commitment": state.commitment,
        "deal": str(Deal.from_seed(state.seed)),
        "variant": str(state.variant),
        "started_at": state.start_at_ms,
        "ended_at": state.ended_ms,
        "ranking": ranking,
    }
