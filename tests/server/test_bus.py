"""The bus: typed messages round-trip, malformed ones are refused, and the subscriber's
reader stops even when a hook swallows its cancellation (against a real Valkey)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.client import PubSub

from klondike_live.bus import subscriber as subscriber_module
from klondike_live.bus.messages import (
    BoardFrame,
    BusError,
    DailyUpdate,
    ProgressNote,
    ReactionCounts,
    RoomFrame,
    RoomMessage,
    Takeover,
    board_header,
    decode,
    decode_daily,
    encode,
    encode_daily,
    note_header,
    note_prefix,
)
from klondike_live.bus.subscriber import Subscriber
from klondike_live.protocol.kinds import Audience, BoardPosition, Reaction
from klondike_live.race.live_board import Progress
from klondike_live.race.room import RoomPhase
from klondike_live.race.status import BoardStatus
from klondike_live.store.connect import RedisClient, open_redis
from klondike_live.store.redispy import handle_reply

from valkeys import start_server
from waits import scaled, wait_for

frames = st.binary(max_size=64)
ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=24)
messages: st.SearchStrategy[RoomMessage] = st.one_of(
    st.builds(
        RoomFrame,
        frames,
        st.integers(0, 10**6),
        st.sampled_from(RoomPhase),
        st.integers(0, 2**53),
    ),
    st.builds(
        BoardFrame,
        st.builds(
            BoardPosition,
            st.sampled_from(Audience),
            st.integers(0, 7),
            st.integers(0, 10**6),
            st.integers(0, 10**9),
        ),
        frames,
    ),
    st.builds(
        lambda node, progress, epoch, offset, frame: ProgressNote(
            node,
            progress,
            BoardFrame(BoardPosition(Audience.SPECTATOR, progress.seat, epoch, offset), frame),
        ),
        ids,
        st.builds(
            Progress,
            st.integers(0, 7),
            st.integers(0, 52),
            st.integers(0, 21),
            st.integers(0, 10**5),
            st.sampled_from(BoardStatus),
            st.none() | st.integers(0, 2**52 - 1),
        ),
        st.integers(0, 10**6),
        st.integers(0, 10**9),
        frames,
    ),
    st.builds(Takeover, ids, ids),
    st.builds(
        ReactionCounts,
        st.dictionaries(st.sampled_from(Reaction), st.integers(1, 1_000_000), min_size=1),
    ),
)


@given(messages)
def test_every_room_message_round_trips(message: RoomMessage) -> None:
    """decode(encode(m)) == m for every message type, whatever its frame bytes hold."""
    assert decode(encode(message)) == message


@given(st.builds(DailyUpdate, st.text(max_size=12), st.text(max_size=30), st.integers(0, 10**9)))
def test_daily_updates_round_trip(update: DailyUpdate) -> None:
    """A daily leaderboard update decodes to what was encoded."""
    assert decode_daily(encode_daily(update)) == update


def test_a_board_frame_is_its_header_then_the_frame_as_sent() -> None:
    """The scripts append the client frame to `board_header`: no re-encoding."""
    frame = b"\x81\xa1t\xa4diff"
    data = board_header(BoardPosition(Audience.SPECTATOR, 3, 2, 41)) + frame
    assert data == encode(BoardFrame(BoardPosition(Audience.SPECTATOR, 3, 2, 41), frame))
    assert decode(data) == BoardFrame(BoardPosition(Audience.SPECTATOR, 3, 2, 41), frame)


def test_a_progress_note_is_its_header_then_the_spectator_frame_as_sent() -> None:
    """A board event that changed the board's progress is one message: `note_header`,
    then the spectator frame, which decodes to the same board frame as a refresh's."""
    frame = b"\x81\xa1t\xa4diff"
    progress = Progress(3, 4, 17, 30, BoardStatus.PLAYING, None)
    data = note_header("node-1", progress, 2, 41) + frame
    assert data == b"Pnode-1:3:2:41:4:17:30:playing:|" + frame
    spectator = BoardFrame(BoardPosition(Audience.SPECTATOR, 3, 2, 41), frame)
    assert decode(data) == ProgressNote("node-1", progress, spectator)
    assert encode(ProgressNote("node-1", progress, spectator)) == data


@given(ids, ids, messages)
def test_a_nodes_own_notes_and_only_those_start_with_its_prefix(
    node: str, other: str, message: RoomMessage
) -> None:
    """A node drops its own progress notes by `note_prefix`, undecoded: every note it
    encodes starts with it, and no other node's note or other message does."""
    progress = Progress(1, 4, 17, 30, BoardStatus.PLAYING, 2**40 - 1)
    spectator = BoardFrame(BoardPosition(Audience.SPECTATOR, 1, 1, 9), b"P")
    assert encode(ProgressNote(node, progress, spectator)).startswith(note_prefix(node))
    if other != node:
        assert not encode(ProgressNote(other, progress, spectator)).startswith(note_prefix(node))
    if not isinstance(message, ProgressNote) or message.node != node:
        assert not encode(message).startswith(note_prefix(node))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"no header",
        b"Q|x",
        b"S|frame",
        b"Sx:1:1|f",
        b"O1:1|f",
        b"P|\x00",
        b"Pnode:1:2:3:4:5:6:playing|f",  # a field short
        b"P:1:2:3:4:5:6:playing:|f",  # no node
        b"Pnode:1:2:3:4:5:6:sleeping:|f",  # no such status
        b"Pnode:1:2:x:4:5:6:playing:|f",
        b"Pnode:1:2:3:4:5:6:won:\xff|f",  # not text
        b"X|\xc1",
        b"L1|f",
        b"R|\xc1",
        b"R|\x91\x01",  # a list, not a map
        b"R|\x81\xa3boo\x01",  # an unknown reaction
        b"R|\x81\xa4clap\x00",  # a count of 0
        b"R|\x81\xa4clap\xc3",  # a count of true
    ],
)
def test_malformed_room_messages_raise_bus_error(data: bytes) -> None:
    """Anything that is not a well-formed message is refused with `BusError`."""
    with pytest.raises(BusError):
        decode(data)


@pytest.mark.parametrize("data", [b"", b"\x93\x01\x02", b"\xc1", b"\x92\xa1a\xa1b"])
def test_malformed_daily_updates_raise_bus_error(data: bytes) -> None:
    """A daily update that is not `[date, variant, count]` is refused with `BusError`."""
    with pytest.raises(BusError):
        decode_daily(data)


async def test_stop_returns_when_a_hook_swallows_the_cancellation(
    redis: RedisClient, valkey_url: str
) -> None:
    """A hook whose library call swallows the cancellation (as redis-py may during
    shutdown) must not keep the reader listening, and the subscriber's stop waiting."""
    in_hook = asyncio.Event()

    async def on_message(_channel: str, _data: bytes) -> None:
        in_hook.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(60)

    subscriber = Subscriber(redis, valkey_url, on_message)
    await subscriber.start("kl:test:bus")
    await redis.publish("kl:test:bus", b"L1:lobby:0|frame")
    await wait_for(in_hook.wait(), timeout=5)
    # Not `wait_for(subscriber.stop())`: its timeout would cancel the reader twice.
    stopping = asyncio.create_task(subscriber.stop())
    done, _ = await asyncio.wait({stopping}, timeout=scaled(2))
    try:
        assert stopping in done, "the subscriber's stop still waits for its reader"
    finally:
        stopping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stopping


async def test_subscribe_returns_once_confirmed_and_messages_arrive_in_order(
    redis: RedisClient, valkey_url: str
) -> None:
    """A message published right after `subscribe` returns is delivered, in order."""
    seen: list[tuple[str, bytes]] = []
    done = asyncio.Event()

    async def on_message(channel: str, data: bytes) -> None:
        seen.append((channel, data))
        if len(seen) == 3:
            done.set()

    subscriber = Subscriber(redis, valkey_url, on_message)
    await subscriber.start("kl:test:always")
    try:
        await subscriber.subscribe("kl:test:room")
        for n in range(3):
            await redis.spublish("kl:test:room", f"m{n}".encode())
        await wait_for(done.wait(), timeout=5)
        assert seen == [("kl:test:room", b"m0"), ("kl:test:room", b"m1"), ("kl:test:room", b"m2")]
    finally:
        await subscriber.stop()


async def test_messages_skip_the_client_s_message_handling(
    redis: RedisClient, valkey_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A room's messages are handed over as read (`Subscriber._listen`); only the
    confirmations and PONGs go through redis-py's handling (`handle_reply`)."""
    handled: list[object] = []

    async def counted(pubsub: PubSub, reply: object) -> object:
        handled.append(reply)
        return await handle_reply(pubsub, reply)

    monkeypatch.setattr(subscriber_module, "handle_reply", counted)
    seen: list[bytes] = []
    done = asyncio.Event()

    async def on_message(_channel: str, data: bytes) -> None:
        seen.append(data)
        if len(seen) == 20:
            done.set()

    subscriber = Subscriber(redis, valkey_url, on_message)
    await subscriber.start()
    try:
        await subscriber.subscribe("kl:test:fast")
        confirmations = len(handled)
        for n in range(20):
            await redis.spublish("kl:test:fast", f"m{n}".encode())
        await wait_for(done.wait(), timeout=5)
        assert seen == [f"m{n}".encode() for n in range(20)]
        assert len(handled) == confirmations, "a message went through handle_reply"
    finally:
        await subscriber.stop()


async def test_a_stalled_server_is_noticed_and_the_channels_come_back(tmp_path: Path) -> None:
    """A server that stops answering (SIGSTOP) is taken for stalled after two silent
    heartbeats: the subscriber opens its connection anew once the server is back, tells
    that it lost messages, and messages flow again."""
    server = start_server(tmp_path / "valkey")
    url = str(server.connection_url)
    client = await open_redis(url)
    received: list[bytes] = []
    gaps: list[set[str]] = []

    async def on_message(_channel: str, data: bytes) -> None:
        received.append(data)

    async def on_resubscribed(channels: set[str]) -> None:
        gaps.append(channels)

    subscriber = Subscriber(client, url, on_message, on_resubscribed=on_resubscribed, heartbeat=0.2)
    try:
        await subscriber.start("kl:test:classic")
        await subscriber.subscribe("kl:test:room")
        process = server._process
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        await wait_for(lambda: not subscriber.connected)  # heartbeats without an answer
        os.kill(process.pid, signal.SIGCONT)
        deadline = asyncio.get_running_loop().time() + scaled(10)
        while not gaps and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        assert gaps == [{"kl:test:room"}]
        await client.spublish("kl:test:room", b"after")
        while b"after" not in received and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        assert b"after" in received
    finally:
        await subscriber.stop()
        await client.aclose()
        server.stop()


async def test_channels_subscribed_at_once_while_a_shard_connects_are_all_heard(
    redis: RedisClient, valkey_url: str
) -> None:
    """Many subscriptions made together while the shard's connection is still being
    set up are all sent, confirmed and heard (none is left out of the set-up loop)."""
    heard: set[str] = set()

    async def on_message(channel: str, _data: bytes) -> None:
        heard.add(channel)

    subscriber = Subscriber(redis, valkey_url, on_message)
    channels = [f"kl:test:burst:{n}" for n in range(20)]
    try:
        await asyncio.gather(subscriber.start(), *map(subscriber.subscribe, channels))
        for channel in channels:
            await redis.spublish(channel, b"hello")
        deadline = asyncio.get_running_loop().time() + scaled(5)
        while len(heard) < len(channels) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        assert heard == set(channels)
    finally:
        await subscriber.stop()
