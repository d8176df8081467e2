"""Decoding the friends requests: each to its own message, a name checked as display
names are, and bad fields refused with stable codes."""

from __future__ import annotations

import msgpack
import pytest

from klondike_live.engine import Variant
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.incoming import ProtocolError, decode_client


def decode(data: dict[str, object]) -> msg.ClientMessage:
    return decode_client(msgpack.packb(data))


def test_each_friends_request_decodes_to_its_message() -> None:
    assert decode({"t": "follow", "user": "u_bob", "name": " Bob ", "rid": 3}) == msg.Follow(
        "u_bob", "Bob", 3
    )
    assert decode({"t": "unfollow", "user": "u_bob"}) == msg.Unfollow("u_bob")
    assert decode({"t": "block", "user": "u_bob"}) == msg.Block("u_bob")
    assert decode({"t": "unblock", "user": "u_bob", "rid": 1}) == msg.Unblock("u_bob", None, 1)
    assert decode({"t": "friends", "rid": 4}) == msg.FriendsList(4)
    assert decode({"t": "challenge", "user": "u_bob", "variant": "draw=3"}) == msg.Challenge(
        "u_bob", Variant.parse("draw=3")
    )
    answer = decode({"t": "challenge_answer", "user": "u_ann", "accept": False, "rid": 2})
    assert answer == msg.ChallengeAnswer("u_ann", False, 2)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"t": "follow"}, ErrorCode.BAD_FIELD),
        ({"t": "follow", "user": ""}, ErrorCode.BAD_FIELD),
        ({"t": "follow", "user": "x" * 129}, ErrorCode.BAD_FIELD),
        ({"t": "follow", "user": "u", "name": "   "}, ErrorCode.BAD_NAME),
        ({"t": "block", "user": "u", "room": "r"}, ErrorCode.BAD_FIELD),
        ({"t": "friends"}, ErrorCode.BAD_FIELD),
        ({"t": "challenge", "user": "u"}, ErrorCode.BAD_FIELD),
        ({"t": "challenge", "user": "u", "variant": "draw=9"}, ErrorCode.BAD_FIELD),
        ({"t": "challenge_answer", "user": "u", "accept": "yes"}, ErrorCode.BAD_FIELD),
    ],
)
def test_bad_friends_requests_are_refused(data: dict[str, object], code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as refused:
        decode(data)
    assert refused.value.code == code
