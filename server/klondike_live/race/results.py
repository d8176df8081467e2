"""The end of a game: rebuild each board from its moves, rank, reveal, record, replay.

Pure functions over the stored board fields, moves and move times; the service stores
and publishes what they return. Everything is revealed here (seed, deal, full boards,
game records and replays), so this must only run for a game that is over: results are
built when a game finishes, and a replay only from stored results.

A daily attempt's deal stays secret until its day closes, even once the attempt is
over: `redact_results` gives its results without seed, deal and game records, each
final board shown only as far as its player saw it, and `redact_replay` its replay
without seed and deal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from klondike_live.engine import ALL_CARDS, Board, Deal, GameRecord, Move, Variant, diff, view_of
from klondike_live.protocol.outgoing import diff_wire, view_wire
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


def _aligned(times: Sequence[int], count: int) -> list[int]:
    """One time per move. The lists are written together, so they match; a board whose
    first moves were stored before times were kept gets 0 for those."""
    times = list(times[-count:]) if count else []
    return [0] * (count - len(times)) + times


def build_results(
    state: RoomState,
    boards: Mapping[int, tuple[Mapping[str, str], Sequence[str], Sequence[int]]],
) -> dict[str, Any]:
    """Ranking, seed, commitment, deal, final full boards, game records and move times.

    `boards` maps each seat to its stored fields, move tokens and move times (ms since
    the start, one per move).
    """
    standings = []
    rows: dict[int, dict[str, Any]] = {}
    for seat, (fields, moves, times) in sorted(boards.items()):
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
            "end_ms": int(fields["finish_ms"]) if "finish_ms" in fields else None,
            "times": _aligned(times, len(moves)),
            "view": view_wire(view_of(board, ALL_CARDS)),
            "record": str(record),
        }
    ranking = []
    for position, standing in rank(standings):
        row = rows[standing.seat]
        row["rank"] = position
        row["time_ms"] = standing.finish_ms if standing.won else None
        ranking.append(row)
    payload = {
        "gen": state.gen,
        "kind": state.kind,
        "certified": state.certified,
        "seed": state.seed,
        "commitment": state.commitment,
        "deal": str(Deal.from_seed(state.seed)),
        "variant": str(state.variant),
        "started_at": state.start_at_ms,
        "ended_at": state.ended_ms,
        "ranking": ranking,
    }
    if state.kind == "daily":
        payload["daily"] = {
            "date": state.daily,
            "variant": str(state.variant),
            "ranked": state.ranked,
        }
    return payload


def redact_results(results: Mapping[str, Any]) -> dict[str, Any]:
    """Results fit for a daily attempt's open day: no seed, deal or game records, and
    each final board as its player saw it (a lost board keeps its face-down cards)."""
    out = {key: value for key, value in results.items() if key not in ("seed", "deal")}
    variant = Variant.parse(results["variant"])
    deal = Deal.from_seed(results["seed"])
    rows = []
    for row in results["ranking"]:
        board = Board(deal, variant)
        for token in GameRecord.parse(row["record"]).moves:
            board.push(Move.parse(token))
        hidden = {key: value for key, value in row.items() if key != "record"}
        hidden["view"] = view_wire(view_of(board, board.seen))
        rows.append(hidden)
    out["ranking"] = rows
    return out


def redact_replay(replay: Mapping[str, Any]) -> dict[str, Any]:
    """A daily attempt's replay while its day is open: no seed and no deal text."""
    return {key: value for key, value in replay.items() if key not in ("seed", "deal")}


def build_replay(room_id: str, kind: str, results: Mapping[str, Any]) -> dict[str, Any]:
    """A finished game's boards step by step, in full, from its stored results.

    Per board: the full starting view and, per move, its token, its time (ms since the
    start) and the diff from the full view before it to the full view after it, in the
    wire formats of the board frames. Applying every diff to `start` gives the board's
    final `view` in the results.
    """
    variant = Variant.parse(results["variant"])
    deal = Deal.from_seed(results["seed"])
    boards = []
    for row in sorted(results["ranking"], key=lambda r: int(r["seat"])):
        tokens = GameRecord.parse(row["record"]).moves
        times = row.get("times")
        board = Board(deal, variant)
        before = view_of(board, ALL_CARDS)
        start = view_wire(before)
        steps = []
        for index, token in enumerate(tokens):
            board.push(Move.parse(token))
            after = view_of(board, ALL_CARDS)
            steps.append(
                {
                    "m": token,
                    "t": times[index] if times else None,
                    "d": diff_wire(diff(before, after)),
                }
            )
            before = after
        boards.append(
            {
                "seat": row["seat"],
                "name": row["name"],
                "rank": row["rank"],
                "status": row["status"],
                "time_ms": row["time_ms"],
                "end_t": row.get("end_ms"),
                "moves": len(tokens),
                "start": start,
                "steps": steps,
            }
        )
    out = {
        "room": room_id,
        "gen": results["gen"],
        "kind": kind,
        "variant": results["variant"],
        "seed": results["seed"],
        "deal": results["deal"],
        "commitment": results["commitment"],
        "started_at": results["started_at"],
        "ended_at": results["ended_at"],
        "boards": boards,
    }
    if "daily" in results:
        out["daily"] = results["daily"]
    return out
