"""Redis key and channel names: the one place they are spelled.

Everything about a room shares the hash tag `{r:<room id>}`, so a room's keys live in
one Redis Cluster slot and its Lua scripts touch a single slot. Room ids are checked
against `ROOM_ID` before they reach a key name. A few global indexes (public lobbies,
live games, finished games, timers) are deliberately untagged; no script touches them
together with a room's keys.
"""

from __future__ import annotations

import re
from typing import Final

PREFIX: Final = "kl"
ROOM_ID: Final = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

PUBLIC_ROOMS: Final = f"{PREFIX}:public"
"""Sorted set of public rooms in the lobby, scored by creation time (ms)."""

LIVE: Final = f"{PREFIX}:live"
"""Sorted set of public games being played (countdown or racing), scored by start time (ms)."""

FINISHED: Final = f"{PREFIX}:finished"
"""Sorted set of `room:gen` for finished games (races and solo), scored by end time (ms)."""

TIMERS: Final = f"{PREFIX}:timers"
"""Sorted set of due work `room|kind|arg`, scored by due time (ms); any node may run it."""


def is_room_id(text: str) -> bool:
    """True when `text` has the shape of a room id (so it is safe in a key name)."""
    return ROOM_ID.match(text) is not None


def _tag(room: str) -> str:
    return f"{PREFIX}:{{r:{room}}}"


def room(room: str) -> str:
    """Hash: the room's state blob (`state`) and its revision (`rev`)."""
    return f"{_tag(room)}:room"


def channel(room: str) -> str:
    """Pub/sub channel of every event of the room (routing header + frame)."""
    return f"{_tag(room)}:ev"


def spectator_channel(room: str) -> str:
    """Pub/sub channel of the room's spectator frames (only nodes with spectators listen)."""
    return f"{_tag(room)}:spec"


def connection(room: str, user: str) -> str:
    """String: id of the connection that currently speaks for `user` in the room."""
    return f"{_tag(room)}:conn:{user}"


def board(room: str, gen: int, seat: int) -> str:
    """Hash: one board's sequence number, offsets, status and progress."""
    return f"{_tag(room)}:g{gen}:b{seat}"


def moves(room: str, gen: int, seat: int) -> str:
    """List: the board's move tokens, in order."""
    return f"{_tag(room)}:g{gen}:b{seat}:moves"


def times(room: str, gen: int, seat: int) -> str:
    """List: when each stored move was applied (ms since the race's start), parallel to
    `moves`."""
    return f"{_tag(room)}:g{gen}:b{seat}:times"


def stream(room: str, gen: int, seat: int, audience: str) -> str:
    """Capped stream of one board's events for one audience (`own` or `spectator`)."""
    return f"{_tag(room)}:g{gen}:b{seat}:{audience}"


def results(room: str, gen: int) -> str:
    """String: the encoded results of a finished race (ranking, seed, records)."""
    return f"{_tag(room)}:g{gen}:results"


def watchers(room: str) -> str:
    """Hash: spectator count per node (`node -> count:timestamp`)."""
    return f"{_tag(room)}:watchers"


def board_keys(room_id: str, gen: int, seat: int) -> list[str]:
    """The keys of one board, in the order the board script expects them."""
    return [
        board(room_id, gen, seat),
        moves(room_id, gen, seat),
        stream(room_id, gen, seat, "own"),
        stream(room_id, gen, seat, "spectator"),
        channel(room_id),
        spectator_channel(room_id),
        times(room_id, gen, seat),
    ]
