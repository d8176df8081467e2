"""Every message nodes exchange over pub/sub: one type each, encoded and decoded here.

Channels (names from `keys`) and what travels on them:

    room channel (`keys.channel`)   RoomFrame, BoardFrame, ProgressNote, Takeover,
                                    ReactionCounts
    daily channel (`keys.DAILY_UPDATES`)  DailyUpdate

On the wire a room message is an ASCII header, `|`, then its body:

    L<gen>:<phase>:<start>|<frame>  RoomFrame: a room-wide client frame (room, results),
                                    with the race (gen, phase, start time) it follows
    O<seat>:<epoch>:<offset>|<frame>  BoardFrame, the racer's own audience
    S<seat>:<epoch>:<offset>|<frame>  BoardFrame, the spectator audience (a refresh: what
                                    spectators may see grew, the board's progress did not)
    P<node>:<seat>:<epoch>:<offset>:<found>:<down>:<moves>:<status>:<seen>|<frame>
                                    ProgressNote: a board event as node <node> wrote it:
                                    its spectator frame, and in the header the board's
                                    progress (<seen>: the racer's knowledge when it
                                    grew, else empty; no header reaches a client)
    X|<msgpack [user, connection]>  Takeover: a newer connection speaks for the racer
    R|<msgpack {reaction: count}>   ReactionCounts: the reactions one node's connections
                                    sent to the room lately (at most one a second per
                                    node and room; never sent to clients as they are)

A daily message is msgpack `[date, variant text, count]`.

A board event is one message, its spectator frame and its progress together, so that
every node with a viewer of the room reads one message per move. Client frames travel as
the bytes they will be sent as; a board frame's header carries its (audience, seat,
epoch, offset), so nobody decodes a frame to learn where it belongs. The Lua scripts
concatenate a header and a frame that Python encoded separately (the frame is stored in
a stream too): `board_header` and `note_header` give those headers. A node drops its
own notes by their first bytes (`note_prefix`) when it has no spectator of the room.

Decoding never trusts its input: anything malformed raises `BusError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import msgpack

from klondike_live.errors import LiveError
from klondike_live.protocol.kinds import Audience, BoardPosition, Reaction
from klondike_live.race.live_board import Progress
from klondike_live.race.room import RoomPhase
from klondike_live.race.status import BoardStatus

_HEADER_MAX: Final = 160
"""Longer than any header: a node id (32) and eight numbers or words."""
_AUDIENCE_TAG: Final = {Audience.OWN: b"O", Audience.SPECTATOR: b"S"}
_TAG_AUDIENCE: Final = {tag: audience for audience, tag in _AUDIENCE_TAG.items()}
_STATUSES: Final = {str(status): status for status in BoardStatus}


class BusError(LiveError, ValueError):
    """A bus message that does not decode."""


@dataclass(frozen=True, slots=True)
class RoomFrame:
    """A frame for every viewer of the room (room state, results), and where the room's
    race stands after it: its number, phase and start time."""

    frame: bytes
    gen: int
    phase: RoomPhase
    start_at_ms: int


@dataclass(frozen=True, slots=True)
class BoardFrame:
    """A board frame and where it belongs: one audience's stream of one board of a race,
    at its offset."""

    position: BoardPosition
    frame: bytes


@dataclass(frozen=True, slots=True)
class ProgressNote:
    """A board event as published by the node `node` that wrote it: its spectator frame
    (`spectator`, of the board `progress.seat`) and the board's progress after it."""

    node: str
    progress: Progress
    spectator: BoardFrame


@dataclass(frozen=True, slots=True)
class Takeover:
    """Connection `conn_id` now speaks for `user` in the room: older ones close."""

    user: str
    conn_id: str


@dataclass(frozen=True, slots=True)
class DailyUpdate:
    """A daily leaderboard (`day` ISO date, `variant` text) now has `count` entries."""

    day: str
    variant: str
    count: int


@dataclass(frozen=True, slots=True)
class TournamentUpdate:
    """A tournament was written: nodes with watchers of it read it again."""

    tournament: str


@dataclass(frozen=True, slots=True)
class ReactionCounts:
    """How many of each reaction one node's connections sent to the room lately."""

    counts: dict[Reaction, int]


MAX_REACTION_COUNT: Final = 1_000_000
"""A count above this in a bus message is malformed (no node counts that many a second)."""

RoomMessage = RoomFrame | BoardFrame | ProgressNote | Takeover | ReactionCounts
"""What arrives on a room's channels."""


# ------------------------------------------------------------ encoding


def board_header(position: BoardPosition) -> bytes:
    """The header a board frame is published with (the script appends the frame)."""
    audience, seat, epoch, offset = position
    return _AUDIENCE_TAG[audience] + f"{seat}:{epoch}:{offset}|".encode()


def encode(message: RoomMessage) -> bytes:
    """One room channel message."""
    match message:
        case RoomFrame(frame, gen, phase, start_at_ms):
            return f"L{gen}:{phase}:{start_at_ms}|".encode() + frame
        case BoardFrame(position, frame):
            return board_header(position) + frame
        case ProgressNote(node, progress, BoardFrame(position, frame)):
            return note_header(node, progress, position.epoch, position.offset) + frame
        case Takeover(user, conn_id):
            return b"X|" + _pack([user, conn_id])
        case ReactionCounts(counts):
            return b"R|" + _pack({str(reaction): n for reaction, n in counts.items()})


def note_header(node: str, progress: Progress, epoch: int, offset: int) -> bytes:
    """The header a board event's spectator frame is published with when the event
    changed the board's progress (the script appends the frame)."""
    seen = "" if progress.seen is None else progress.seen
    return (
        f"P{node}:{progress.seat}:{epoch}:{offset}:{progress.found}:{progress.down}:"
        f"{progress.moves}:{progress.status}:{seen}|"
    ).encode()


def note_prefix(node: str) -> bytes:
    """How every progress note of node `node` starts: a node without spectators of the
    room drops its own notes, which pub/sub hands back to it, by this prefix, before
    decoding anything."""
    return b"P" + node.encode() + b":"


def encode_daily(update: DailyUpdate) -> bytes:
    """One daily channel message."""
    return _pack([update.day, update.variant, update.count])


def encode_tournament(update: TournamentUpdate) -> bytes:
    """One tournament channel message."""
    return _pack([update.tournament])


def _pack(value: object) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


# ------------------------------------------------------------ decoding


def decode(data: bytes) -> RoomMessage:
    """A room channel message; `BusError` when it is malformed."""
    split = data.find(b"|", 0, _HEADER_MAX)
    if split < 1:
        raise BusError("no message header")
    head, body = data[:split], data[split + 1 :]
    tag = head[:1]
    try:
        if tag == b"L":
            gen, phase, start_at = head[1:].decode().split(":")
            return RoomFrame(body, int(gen), RoomPhase(phase), int(start_at))
        audience = _TAG_AUDIENCE.get(tag)
        if audience is not None:
            seat, epoch, offset = head[1:].split(b":")
            return BoardFrame(BoardPosition(audience, int(seat), int(epoch), int(offset)), body)
        if tag == b"P":
            return _progress_note(head[1:].decode(), body)
        if tag == b"X":
            user, conn_id = _unpack(body)
            return Takeover(str(user), str(conn_id))
        if tag == b"R":
            return ReactionCounts(_reaction_counts(body))
    except (ValueError, TypeError) as exc:
        raise BusError(f"malformed {tag!r} message: {exc}") from None
    raise BusError(f"unknown message header {head[:8]!r}")


def _progress_note(head: str, frame: bytes) -> ProgressNote:
    node, seat_text, epoch, offset, found, down, moves, status_text, seen = head.split(":")
    status = _STATUSES.get(status_text)  # not `BoardStatus(...)`: this is every move
    if not node or status is None:
        raise ValueError(f"no node or an unknown status {status_text!r}")
    seat = int(seat_text)
    progress = Progress(
        seat, int(found), int(down), int(moves), status, int(seen) if seen else None
    )
    position = BoardPosition(Audience.SPECTATOR, seat, int(epoch), int(offset))
    return ProgressNote(node, progress, BoardFrame(position, frame))


def decode_daily(data: bytes) -> DailyUpdate:
    """A daily channel message; `BusError` when it is malformed."""
    try:
        day, variant, count = _unpack(data)
        return DailyUpdate(str(day), str(variant), int(count))
    except (ValueError, TypeError) as exc:
        raise BusError(f"malformed daily update: {exc}") from None


def decode_tournament(data: bytes) -> TournamentUpdate:
    """A tournament channel message; `BusError` when it is malformed."""
    try:
        (tournament,) = _unpack(data)
        if not isinstance(tournament, str):
            raise TypeError("the id is not text")
        return TournamentUpdate(tournament)
    except (ValueError, TypeError) as exc:
        raise BusError(f"malformed tournament update: {exc}") from None


def _reaction_counts(body: bytes) -> dict[Reaction, int]:
    try:
        value = msgpack.unpackb(body, raw=False)
    except Exception as exc:  # msgpack raises several unrelated types
        raise BusError(f"not msgpack: {exc}") from None
    if not isinstance(value, dict):
        raise BusError("reaction counts are not a msgpack map")
    counts: dict[Reaction, int] = {}
    for key, count in value.items():
        if (
            isinstance(count, bool)
            or not isinstance(count, int)
            or not 0 < count <= MAX_REACTION_COUNT
        ):
            raise BusError(f"a reaction count of {count!r}")
        counts[Reaction(key)] = count  # ValueError for an unknown reaction
    return counts


def _unpack(body: bytes) -> list[Any]:
    try:
        value = msgpack.unpackb(body, raw=False)
    except Exception as exc:  # msgpack raises several unrelated types
        raise BusError(f"not msgpack: {exc}") from None
    if not isinstance(value, list):
        raise BusError("not a msgpack array")
    return value
