"""Server frames: one type per message, each documented, each encoding its own `t`."""

from __future__ import annotations

import re
from pathlib import Path

import msgpack

from klondike_live.protocol import outgoing
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.incoming import MoveRequest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def documented_server_messages() -> list[str]:
    """The `t` of each row of docs/protocol.md's table of server messages."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## 6. Server") : text.index("## 7.")]
    return [t for t in re.findall(r"^\| `([a-z_]+)` \|", section, re.M) if t != "t"]


def test_every_server_frame_type_is_documented_and_every_documented_one_exists() -> None:
    """docs/protocol.md's table and the frame types name the same messages."""
    assert sorted(documented_server_messages()) == sorted(f.T for f in outgoing.SERVER_FRAMES)
    assert len({f.T for f in outgoing.SERVER_FRAMES}) == len(outgoing.SERVER_FRAMES)


def test_a_frame_encodes_its_own_type() -> None:
    """`encode()` writes the type's `t`; optional fields given as None stay off the wire."""
    frame = msgpack.unpackb(outgoing.Ack("r", 7, 3).encode())
    assert frame == {"t": "ack", "room": "r", "id": 7, "off": 3}
    error = msgpack.unpackb(outgoing.Error(ErrorCode.BUSY, "try again").encode())
    assert error == {"t": "error", "code": "busy", "msg": "try again"}


def test_renamed_carries_the_name_and_the_request_s_rid() -> None:
    """`renamed` answers `rename` with the name as shown (its rid when it had one)."""
    assert msgpack.unpackb(outgoing.Renamed("Zoé", 3).encode()) == {
        "t": "renamed",
        "name": "Zoé",
        "rid": 3,
    }
    assert msgpack.unpackb(outgoing.Renamed("Zoé").encode()) == {"t": "renamed", "name": "Zoé"}


def test_an_error_answering_a_request_names_it() -> None:
    """`Error.answering` carries the request's room and move id (a move has no rid)."""
    move = MoveRequest(room="room1", id=12, move="D")
    error = msgpack.unpackb(
        outgoing.Error.answering(move, ErrorCode.WRONG_STATE, "time is up").encode()
    )
    assert error == {
        "t": "error",
        "code": "wrong_state",
        "msg": "time is up",
        "room": "room1",
        "id": 12,
    }
