"""Server -> client messages: builders that return encoded msgpack frames.

Each builder takes typed values and returns the frame's bytes, encoded once, so a frame
can be stored in a stream, published on the bus and broadcast to many sockets as is.
Card identities only enter a frame through `view_wire` and `diff_wire`, which take engine
`View`/`ViewDiff` values that are already redacted for their audience, and through
`results` (sent only when a race is over).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgpack

from klondike_live.engine import View, ViewDiff
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.incoming import PROTOCOL_VERSION
from klondike_live.protocol.kinds import BoardPosition


def _optional(data: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """`data` with each given field added unless it is None (absent on the wire)."""
    data.update((key, value) for key, value in fields.items() if value is not None)
    return data


def pack(message: dict[str, Any]) -> bytes:
    """Encode one message map."""
    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


def view_wire(view: View) -> dict[str, Any]:
    """A view as wire data: piles as [face_down, [card...]], cards 0..51 or -1 unknown."""
    return {
        "tableau": [
            [down, list(pile)] for pile, down in zip(view.tableau, view.face_down, strict=True)
        ],
        "waste": list(view.waste),
        "stock": view.stock,
        "foundations": list(view.foundations),
        "foundations_hidden": view.foundation_hidden,
        "pass": view.pass_number,
    }


def diff_wire(diff: ViewDiff) -> dict[str, Any]:
    """A view diff as wire data; absent keys are unchanged."""
    data: dict[str, Any] = {
        "piles": [[p, keep, down, list(cards)] for p, keep, down, cards in diff.piles]
    }
    if diff.stock is not None:
        data["stock"] = diff.stock
    if diff.foundations is not None:
        data["foundations"] = list(diff.foundations)
    if diff.foundation_hidden is not None:
        data["foundations_hidden"] = diff.foundation_hidden
    if diff.pass_number is not None:
        data["pass"] = diff.pass_number
    return data


def welcome(user: str, name: str, token: str, now_ms: int) -> bytes:
    return pack(
        {
            "t": "welcome",
            "v": PROTOCOL_VERSION,
            "user": user,
            "name": name,
            "token": token,
            "now": now_ms,
        }
    )


def error(
    code: ErrorCode,
    message: str,
    *,
    rid: int | None = None,
    room: str | None = None,
    move_id: int | None = None,
) -> bytes:
    data = {"t": "error", "code": str(code), "msg": message}
    return pack(_optional(data, rid=rid, room=room, id=move_id))


def pong(rid: int | None, now_ms: int) -> bytes:
    return pack(_optional({"t": "pong", "now": now_ms}, rid=rid))


def created(rid: int, room: str, *, daily: dict[str, Any] | None = None) -> bytes:
    """The reply to `create`; a daily attempt's also says which (`daily`)."""
    return pack(_optional({"t": "created", "rid": rid, "room": room}, daily=daily))


def _board_frame(
    kind: str, room: str, at: BoardPosition, moves: int, status: str
) -> dict[str, Any]:
    return {
        "t": kind,
        "room": room,
        "seat": at.seat,
        "audience": at.audience,
        "epoch": at.epoch,
        "off": at.offset,
        "moves": moves,
        "status": status,
    }


def board(
    room: str,
    at: BoardPosition,
    view: View,
    *,
    moves: int,
    status: str,
    score: int | None = None,
    last_id: int | None = None,
) -> bytes:
    """A full snapshot of one board for one audience (`last_id`: the racer's last
    applied move id, sent to the racer only)."""
    data = _board_frame("board", room, at, moves, status)
    data["view"] = view_wire(view)
    return pack(_optional(data, score=score, last_id=last_id))


def diff(
    room: str,
    at: BoardPosition,
    change: ViewDiff,
    *,
    moves: int,
    move: str | None,
    status: str,
    score: int | None = None,
    move_id: int | None = None,
) -> bytes:
    """One event of a board stream: the change from the previous offset's view.

    In the racer's own stream, the event of an applied move (or undo) carries the
    client's move id: it is that move's acknowledgement.
    """
    data = _board_frame("diff", room, at, moves, status)
    data["d"] = diff_wire(change)
    return pack(_optional(data, m=move, score=score, id=move_id))


def ack(room: str, move_id: int, offset: int) -> bytes:
    return pack({"t": "ack", "room": room, "id": move_id, "off": offset})


def room_state(state: dict[str, Any]) -> bytes:
    """The room's lobby/race state (see docs/protocol.md for its fields)."""
    return pack({"t": "room", **state})


def progress(room: str, boards: Sequence[Sequence[Any]], spectators: int) -> bytes:
    """Progress of every board, coalesced per tick.

    Each board is `[seat, foundation cards, face-down cards, moves, status]`.
    """
    return pack(
        {
            "t": "progress",
            "room": room,
            "boards": [list(b) for b in boards],
            "spectators": spectators,
        }
    )


def results(room: str, payload: dict[str, Any]) -> bytes:
    """The end of a race: ranking, seed, commitment, deal and records (sent only when over)."""
    return pack({"t": "results", "room": room, **payload})


def hint(room: str, rid: int, move: str | None, verdict: str, message: str) -> bytes:
    """A practice hint: the move to play (or None) and why (see docs/protocol.md)."""
    return pack(
        {"t": "hint", "room": room, "rid": rid, "m": move, "verdict": verdict, "msg": message}
    )


def finish(room: str, rid: int, ok: bool) -> bytes:
    """Whether the rest of a practice game is forced (see docs/protocol.md, `finish`)."""
    return pack({"t": "finish", "room": room, "rid": rid, "ok": ok})


def daily_update(day: str, variant: str, count: int, rid: int | None = None) -> bytes:
    """A day's leaderboard changed (or, with `rid`, its state when watching began)."""
    return pack(
        _optional({"t": "daily_update", "date": day, "variant": variant, "count": count}, rid=rid)
    )


def tournament_created(rid: int, tournament_id: str) -> bytes:
    """A tournament was created: its id (the invite link's part)."""
    return pack({"t": "tournament_created", "rid": rid, "tournament": tournament_id})


def tournament(data: dict[str, Any], rid: int | None) -> bytes:
    """A tournament as everyone sees it (`race.tournament_view`): when watching began,
    after each change, and as the answer to a request about it (with its `rid`)."""
    return pack(_optional({"t": "tournament", "tournament": data}, rid=rid))
