"""The end of a game: rebuild each board from its moves, rank, reveal, record, replay.

Pure functions over the stored board fields, moves and move times; the service stores
and publishes what they return. The stored results hold everything (seed, deal, full
boards, game records), so this must only run for a game that is over: results are built
when a game finishes, and replays only from stored results.

What a viewer is shown of them, results and replays alike, is decided by
`race.redaction` alone (a daily game's deal stays secret until its day closes): it
calls `final_views` and `replay_boards` with the mask of its disclosure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from klondike_live.engine import Board, Deal, GameRecord, Move, Variant, diff, view_of
from klondike_live.protocol.kinds import RoomKind
from klondike_live.protocol.outgoing import diff_wire, view_wire
from klondike_live.race.ranking import Standing, rank
from klondike_live.race.room import RoomState
from klondike_live.race.status import BoardStatus
from klondike_live.race.visibility import final_knowledge

_RECORD_RESULT = {
    BoardStatus.WON: "won",
    BoardStatus.RESIGNED: "resigned",
    BoardStatus.TIMEOUT: "timeout",
    BoardStatus.PLAYING: "unfinished",
}


def board_after(state: RoomState, moves: Sequence[str]) -> Board:
    """The board after stored moves (they were checked when played), from the game's
    start position: the deal after the room's `prefix` (a game started from a position)."""
    board = Board(Deal.from_seed(state.seed), state.variant)
    if state.prefix:
        for token in state.prefix:
            board.push(Move.parse(token))
        board.start_here()
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
        status = BoardStatus(fields.get("status", BoardStatus.PLAYING))
        board = board_after(state, moves)
        standings.append(
            Standing(
                seat=seat,
                won=status is BoardStatus.WON,
                finish_ms=int(fields.get("finish_ms", 0)),
                found=board.foundation_count,
                found_ms=int(fields.get("found_ms", 0)),
            )
        )
        occupant = state.seats[seat] if seat < len(state.seats) else None
        record = GameRecord(
            variant=state.variant,
            seed=state.seed,
            moves=(*state.prefix, *moves),
            result=_RECORD_RESULT.get(status, "unfinished"),
        )
        rows[seat] = {
            "seat": seat,
            "user": occupant.user if occupant else "",
            "name": occupant.name if occupant else "",
            "bot": bool(occupant and occupant.bot),
            **({"level": occupant.bot} if occupant and occupant.bot not in ("", "api") else {}),
            "status": status,
            "moves": len(moves),
            "found": board.foundation_count,
            "found_ms": int(fields.get("found_ms", 0)),
            "end_ms": int(fields["finish_ms"]) if "finish_ms" in fields else None,
            "times": _aligned(times, len(moves)),
            "view": view_wire(view_of(board, final_knowledge(board.seen, deal_secret=False))),
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
        "public": state.public_room,
        "seed": state.seed,
        "commitment": state.commitment,
        "deal": str(Deal.from_seed(state.seed)),
        "variant": str(state.variant),
        "started_at": state.start_at_ms,
        "ended_at": state.ended_ms,
        "ranking": ranking,
        "from": len(state.prefix),
    }
    if state.is_match and state.match_from:
        payload["match"] = state.match_summary()
    if state.kind is RoomKind.DAILY:
        payload["daily"] = {
            "date": state.daily,
            "variant": str(state.variant),
            "ranked": state.ranked,
        }
    return payload


Knowledge = Callable[[int], int]
"""A board viewer's mask from what the board's player had seen at that point (the
disclosure of `race.redaction` chooses it)."""


def _played(results: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Board, tuple[str, ...]]]:
    """Each ranking row (in seat order) with a fresh board of the deal and its moves."""
    variant = Variant.parse(results["variant"])
    deal = Deal.from_seed(results["seed"])
    start = int(results.get("from", 0))  # record moves made before the game started
    out = []
    for row in sorted(results["ranking"], key=lambda r: int(r["seat"])):
        board = Board(deal, variant)
        moves = GameRecord.parse(row["record"]).moves
        for token in moves[:start]:
            board.push(Move.parse(token))
        out.append((row, board, moves[start:]))
    return out


def final_views(results: Mapping[str, Any], knowledge: Knowledge) -> dict[int, dict[str, Any]]:
    """Each seat's final board from its game record, in the wire format, under the mask
    `knowledge(seen)` of what its player had seen by the end."""
    views = {}
    for row, board, tokens in _played(results):
        for token in tokens:
            board.push(Move.parse(token))
        views[int(row["seat"])] = view_wire(view_of(board, knowledge(board.seen)))
    return views


def replay_boards(results: Mapping[str, Any], knowledge: Knowledge) -> list[dict[str, Any]]:
    """A finished game's boards step by step, from its stored results, in seat order.

    Per board: its starting view and, per move, its token, its time (ms since the
    start) and the diff from the view before it to the view after it, in the wire
    formats of the board frames. Each view is made under `knowledge(seen)` of what the
    board's player had seen at that point, so a diff never carries a card its newer view
    hides. Applying every diff to `start` gives the final view under the same knowledge
    (`final_views`).
    """
    boards = []
    for row, board, tokens in _played(results):
        times = row.get("times")
        before = view_of(board, knowledge(board.seen))
        start = view_wire(before)
        steps = []
        for index, token in enumerate(tokens):
            board.push(Move.parse(token))
            after = view_of(board, knowledge(board.seen))
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
                "bot": bool(row.get("bot", False)),
                **({"level": row["level"]} if "level" in row else {}),
                "rank": row["rank"],
                "status": row["status"],
                "time_ms": row["time_ms"],
                "end_t": row.get("end_ms"),
                "moves": len(tokens),
                "start": start,
                "steps": steps,
            }
        )
    return boards
