"""Client message decoding: exact values for good frames, stable codes for bad ones."""

from __future__ import annotations

import msgpack
import pytest

from klondike_live.engine import Variant
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.incoming import ProtocolError, decode_client
from klondike_live.protocol.kinds import DealMode, Reaction, Role, RoomKind


def frame(data: object) -> bytes:
    return bytes(msgpack.packb(data, use_bin_type=True))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"t": "hello", "v": 1}, msg.Hello(version=1)),
        ({"t": "hello", "v": 1, "token": "abc", "name": "Ann"}, msg.Hello(1, "abc", "Ann")),
        (
            {"t": "create", "rid": 3, "kind": "race", "variant": "draw=3", "seats": 4},
            msg.Create(3, RoomKind.RACE, Variant(draw=3), 4, 0, False),
        ),
        (
            {"t": "create", "rid": 4, "kind": "solo", "variant": "passes=unlimited"},
            msg.Create(4, RoomKind.SOLO, Variant(passes=0), 1, 0, False),
        ),
        (
            {"t": "join", "room": "abcdefgh", "as": "racer", "since": [[1, 2, 3]]},
            msg.Join("abcdefgh", Role.RACER, (msg.Since(1, 2, 3),)),
        ),
        (
            {"t": "move", "room": "abcdefgh", "id": 9, "m": "36:2"},
            msg.MoveRequest("abcdefgh", 9, "36:2"),
        ),
        ({"t": "ready", "room": "abcdefgh", "ready": False}, msg.Ready("abcdefgh", False)),
        ({"t": "ping"}, msg.Ping()),
        ({"t": "hint", "room": "abcdefgh", "rid": 5}, msg.HintRequest("abcdefgh", 5)),
        (
            {"t": "join", "room": "abcdefgh", "as": "racer", "reactions": True},
            msg.Join("abcdefgh", Role.RACER, reactions=True),
        ),
        (
            {"t": "react", "room": "abcdefgh", "r": "party"},
            msg.React("abcdefgh", Reaction.PARTY),
        ),
        (
            {"t": "show_reactions", "room": "abcdefgh", "on": False, "rid": 2},
            msg.ShowReactions("abcdefgh", False, 2),
        ),
    ],
)
def test_good_frames_decode_to_values(data: dict[str, object], expected: object) -> None:
    """Every field lands typed in its message value."""
    assert decode_client(frame(data)) == expected


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"", ErrorCode.MALFORMED),
        (b"\xc1", ErrorCode.MALFORMED),
        (frame([1, 2]), ErrorCode.MALFORMED),
        (frame({1: "x"}), ErrorCode.MALFORMED),
        (frame({"t": "fly"}), ErrorCode.UNKNOWN_TYPE),
        (frame({"x": 1}), ErrorCode.UNKNOWN_TYPE),
        (frame({"t": "move", "room": "abcdefgh", "id": True, "m": "D"}), ErrorCode.BAD_FIELD),
        (frame({"t": "move", "room": "abcdefgh", "id": 0, "m": "D"}), ErrorCode.BAD_FIELD),
        (frame({"t": "move", "room": "abcdefgh", "id": 2**60, "m": "D"}), ErrorCode.BAD_FIELD),
        (frame({"t": "move", "room": "x" * 65, "id": 1, "m": "D"}), ErrorCode.BAD_FIELD),
        (frame({"t": "move", "room": "abcdefgh", "id": 1, "m": "D" * 9}), ErrorCode.BAD_FIELD),
        (frame({"t": "move", "room": "abcdefgh", "id": 1, "m": "D", "z": 0}), ErrorCode.BAD_FIELD),
        (
            frame({"t": "create", "rid": 1, "kind": "race", "variant": "draw=2", "seats": 2}),
            ErrorCode.BAD_FIELD,
        ),
        (
            frame({"t": "create", "rid": 1, "kind": "race", "variant": "draw=1", "seats": 9}),
            ErrorCode.BAD_FIELD,
        ),
        (
            frame({"t": "create", "rid": 1, "kind": "race", "variant": "draw=1"}),
            ErrorCode.BAD_FIELD,
        ),
        (
            frame({"t": "create", "rid": 1, "kind": "solo", "variant": "draw=1", "seats": 2}),
            ErrorCode.BAD_FIELD,
        ),
        (
            frame({"t": "join", "room": "abcdefgh", "as": "racer", "since": [[100, 1, 1]]}),
            ErrorCode.BAD_FIELD,
        ),
        (
            frame({"t": "join", "room": "abcdefgh", "as": "racer", "since": "x"}),
            ErrorCode.BAD_FIELD,
        ),
        (frame({"t": "ready", "room": "abcdefgh", "ready": 1}), ErrorCode.BAD_FIELD),
        (frame({"t": "hello", "v": "1"}), ErrorCode.BAD_FIELD),
        (frame({"t": "react", "room": "abcdefgh", "r": "boo"}), ErrorCode.BAD_FIELD),
        (frame({"t": "react", "room": "abcdefgh", "r": "clap", "text": "hi"}), ErrorCode.BAD_FIELD),
        (frame({"t": "show_reactions", "room": "abcdefgh"}), ErrorCode.BAD_FIELD),
        (
            frame({"t": "join", "room": "abcdefgh", "as": "racer", "reactions": 1}),
            ErrorCode.BAD_FIELD,
        ),
    ],
)
def test_bad_frames_get_stable_codes(raw: bytes, code: ErrorCode) -> None:
    """Malformed frames, unknown types and bad fields raise ProtocolError with a code."""
    with pytest.raises(ProtocolError) as info:
        decode_client(raw)
    assert info.value.code == code
    assert info.value.message


def test_errors_carry_the_request_id() -> None:
    """A refused request keeps its rid so the client can match the error."""
    with pytest.raises(ProtocolError) as info:
        decode_client(frame({"t": "hint", "room": 5, "rid": 77}))
    assert info.value.rid == 77


def test_error_messages_quote_little_of_the_input() -> None:
    """An unknown type is quoted briefly, never echoed whole."""
    with pytest.raises(ProtocolError) as info:
        decode_client(frame({"t": "z" * 500}))
    assert len(info.value.message) < 80


@pytest.mark.parametrize(
    "data",
    [
        {"t": "start", "room": "A" * 16},
        {"t": "ready", "room": "A" * 16, "ready": True},
        {"t": "leave", "room": "A" * 16},
        {"t": "resign", "room": "A" * 16},
        {"t": "rematch", "room": "A" * 16},
        {"t": "move", "room": "A" * 16, "id": 3, "m": "D"},
    ],
)
def test_every_message_may_carry_a_request_id(data: dict[str, object]) -> None:
    """`rid` is accepted on any message, and checked like any other field."""
    assert decode_client(frame({**data, "rid": 7})) == decode_client(frame(data))
    with pytest.raises(ProtocolError) as caught:
        decode_client(frame({**data, "rid": "seven"}))
    assert caught.value.code == ErrorCode.BAD_FIELD
    assert "rid" in str(caught.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"t": "hello", "v": 1, "token": ""}, msg.Hello(1, "", None)),
        ({"t": "hello", "v": 1, "name": ""}, msg.Hello(1, None, "")),
        ({"t": "hello", "v": 1, "name": "Ann\nLee"}, msg.Hello(1, None, "Ann\nLee")),
        ({"t": "hello", "v": 1, "token": "x" * 5000}, msg.Hello(1, "x" * 5000, None)),
    ],
)
def test_hello_leaves_token_and_name_content_to_auth(
    data: dict[str, object], expected: msg.Hello
) -> None:
    """Any string decodes as a token or name: their rules give token_invalid/bad_name."""
    assert decode_client(frame(data)) == expected


@pytest.mark.parametrize("field", ["token", "name"])
@pytest.mark.parametrize("value", [5, b"abc", ["a"], True])
def test_hello_token_and_name_must_be_strings(field: str, value: object) -> None:
    """A token or name that is not a string is bad_field."""
    with pytest.raises(ProtocolError) as info:
        decode_client(frame({"t": "hello", "v": 1, field: value}))
    assert info.value.code == ErrorCode.BAD_FIELD


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"t": "rename", "name": "Alice"}, msg.Rename("Alice")),
        ({"t": "rename", "name": "Alice", "rid": 7}, msg.Rename("Alice", 7)),
        # canonical form, as hello's name: NFC, runs of spaces collapsed, trimmed
        ({"t": "rename", "name": "  Zoe\u0301   Lee "}, msg.Rename("Zoé Lee")),
        ({"t": "rename", "name": "x" * 24}, msg.Rename("x" * 24)),
    ],
)
def test_rename_decodes_to_the_canonical_name(data: dict[str, object], expected: object) -> None:
    """`rename` carries the name in the form every viewer is shown."""
    assert decode_client(frame(data)) == expected


@pytest.mark.parametrize(
    "name", ["", "   ", "x" * 25, "Ann\nLee", "Ann\u202eLee", "Zero\u200bwidth", "\ue000"]
)
def test_a_refused_rename_is_bad_name_with_its_rid(name: str) -> None:
    """A name hello would refuse is `bad_name`, naming the request by its rid."""
    with pytest.raises(ProtocolError) as info:
        decode_client(frame({"t": "rename", "name": name, "rid": 4}))
    assert info.value.code == ErrorCode.BAD_NAME
    assert info.value.rid == 4


@pytest.mark.parametrize(
    "data",
    [
        {"t": "rename"},
        {"t": "rename", "name": 5},
        {"t": "rename", "name": None},
        {"t": "rename", "name": ["Ann"]},
        {"t": "rename", "name": "Ann", "room": "abcdefgh"},
        {"t": "rename", "name": "Ann", "rid": -1},
    ],
)
def test_a_malformed_rename_is_bad_field(data: dict[str, object]) -> None:
    """A missing or non-string name, an unknown field or a bad rid is `bad_field`."""
    with pytest.raises(ProtocolError) as info:
        decode_client(frame(data))
    assert info.value.code == ErrorCode.BAD_FIELD


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"t": "create", "rid": 1, "kind": "solo", "variant": "draw=1"},
            msg.Create(1, RoomKind.SOLO, Variant(draw=1), 1, 0, False, DealMode.CERTIFIED),
        ),
        (
            {"t": "create", "rid": 2, "kind": "race", "variant": "draw=3", "seats": 2},
            msg.Create(2, RoomKind.RACE, Variant(draw=3), 2, 0, False, DealMode.CERTIFIED),
        ),
        (
            {"t": "create", "rid": 3, "kind": "daily", "variant": "draw=1"},
            msg.Create(3, RoomKind.DAILY, Variant(draw=1), 1, 0, False, DealMode.CERTIFIED),
        ),
        (
            {"t": "create", "rid": 4, "kind": "solo", "variant": "f2t=no", "time_limit": None},
            msg.Create(4, RoomKind.SOLO, Variant(), 1, 0, False, DealMode.CERTIFIED),
        ),
    ],
)
def test_create_defaults(data: dict[str, object], expected: msg.Create) -> None:
    """Optional create fields default: seats 1 (solo, daily), time_limit 0, public false,
    deal certified; variant keys default to draw=1, the draw's passes, f2t=no."""
    assert decode_client(frame(data)) == expected


def test_create_a_match() -> None:
    """A race may be a match of 3, 5 or 7 deals (`best_of`; 1 or absent: one race)."""
    data = {"t": "create", "rid": 2, "kind": "race", "variant": "draw=1", "seats": 2}
    request = decode_client(frame({**data, "best_of": 5}))
    assert isinstance(request, msg.Create) and request.best_of == 5
    single = decode_client(frame({**data, "best_of": 1}))
    assert isinstance(single, msg.Create) and single.best_of == 1


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "race", "seats": 2, "best_of": 4},
        {"kind": "race", "seats": 2, "best_of": 9},
        {"kind": "race", "seats": 2, "best_of": True},
        {"kind": "daily", "best_of": 3},
        {"kind": "solo", "best_of": 3},
    ],
)
def test_a_match_is_a_race_of_3_5_or_7(data: dict[str, object]) -> None:
    """Another length, or a match of a daily attempt or a solo game, is `bad_field`."""
    with pytest.raises(ProtocolError) as info:
        decode_client(frame({"t": "create", "rid": 1, "variant": "draw=1", **data}))
    assert info.value.code == ErrorCode.BAD_FIELD and "best_of" in info.value.message


@pytest.mark.parametrize("missing", ["rid", "kind", "variant"])
def test_create_requires_rid_kind_and_variant(missing: str) -> None:
    """`rid`, `kind` and `variant` are required on every create."""
    data = {"t": "create", "rid": 1, "kind": "solo", "variant": "draw=1"}
    del data[missing]
    with pytest.raises(ProtocolError) as info:
        decode_client(frame(data))
    assert info.value.code == ErrorCode.BAD_FIELD and missing in info.value.message


def test_nil_optional_field_counts_as_absent() -> None:
    """An optional field sent as nil is the same as leaving it out."""
    bare = {"t": "join", "room": "abcdefgh", "as": "racer"}
    nils = {**bare, "since": None, "rid": None}
    assert decode_client(frame(nils)) == decode_client(frame(bare))


@pytest.mark.parametrize(
    ("data", "ok"),
    [
        ({"t": "move", "room": "abcdefgh", "id": 1, "m": "D"}, True),
        ({"t": "move", "room": "abcdefgh", "id": 2**53 - 1, "m": "D"}, True),
        ({"t": "move", "room": "abcdefgh", "id": 2**53, "m": "D"}, False),
        ({"t": "move", "room": "abcdefgh", "id": 0, "m": "D"}, False),
        ({"t": "move", "room": "abcdefgh", "id": -1, "m": "D"}, False),
        ({"t": "undo", "room": "abcdefgh", "id": 2**53 - 1}, True),
        ({"t": "undo", "room": "abcdefgh", "id": 2**53}, False),
        ({"t": "ping", "rid": 0}, True),
        ({"t": "ping", "rid": 2**53 - 1}, True),
        ({"t": "ping", "rid": 2**53}, False),
        ({"t": "ping", "rid": -1}, False),
    ],
)
def test_ids_are_bounded_by_the_largest_safe_integer(data: dict[str, object], ok: bool) -> None:
    """Move ids are 1..2^53-1 and rids 0..2^53-1 (exact in every JSON/JS number)."""
    if ok:
        decode_client(frame(data))
    else:
        with pytest.raises(ProtocolError) as info:
            decode_client(frame(data))
        assert info.value.code == ErrorCode.BAD_FIELD


def _members(union: object) -> set[type]:
    """The classes of a union of message types, nested unions flattened."""
    args = getattr(union, "__args__", None)
    if args is None:
        assert isinstance(union, type)
        return {union}
    return set().union(*(_members(arg) for arg in args))


def test_every_message_type_is_the_service_s_but_the_transport_s() -> None:
    """A message type is declared once: `ServiceRequest` holds every decodable message
    but the transport's own (hello, ping, the account requests), so the gateway hands
    it on without listing it."""
    service = _members(msg.ServiceRequest)
    transport = {msg.Hello, msg.Ping} | _members(msg.AccountRequest)
    assert _members(msg.ClientMessage) == service | transport
    assert not service & transport
    assert len(service) == len(msg.CLIENT_TYPES) - len(transport)
