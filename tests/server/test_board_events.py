"""What the board script publishes (real Valkey): a move one progress note carrying its
spectator frame; a spectator refresh its frame only, since it changes nothing of the
board's progress (a note would make every node send its racers the same progress again).
"""

from __future__ import annotations

import asyncio

from klondike_live import keys
from klondike_live.bus.messages import BoardFrame, ProgressNote, RoomMessage, decode
from klondike_live.bus.subscriber import Subscriber
from klondike_live.engine import Board, Move
from klondike_live.protocol.kinds import Audience, BoardPosition
from klondike_live.race.live_board import LiveBoard
from klondike_live.race.status import BoardStatus
from klondike_live.race.visibility import SeatKnowledge
from klondike_live.store.connect import RedisClient
from klondike_live.store.records import WriteStatus
from klondike_live.store.store import Store

from waits import scaled

ROOM = "events-room-0001"


class Heard:
    """What the node's own bus subscriber hears on the room's channel."""

    def __init__(self) -> None:
        self.published: list[bytes] = []
        self.arrived = asyncio.Event()

    async def on_message(self, channel: str, data: bytes) -> None:
        self.published.append(data)  # decoded after: an empty message counts too
        self.arrived.set()

    async def at_least(self, count: int) -> list[RoomMessage]:
        """The messages once `count` have come, and a moment later (anything more that
        was published would be here by then), decoded."""
        async with asyncio.timeout(scaled(5)):
            while len(self.published) < count:
                self.arrived.clear()
                await self.arrived.wait()
        await asyncio.sleep(scaled(0.3))  # a pause: nothing more comes
        return [decode(data) for data in self.published]


async def test_a_refresh_publishes_its_spectator_frame_and_no_progress_note(
    redis: RedisClient, valkey_url: str
) -> None:
    store = Store(redis, node_id="node-one")
    await redis.hset(
        keys.board(ROOM, 1, 0),
        mapping={"seq": 0, "status": "playing", "start_at": 0, "deadline": 0, "found": 0},
    )
    board = LiveBoard(ROOM, 0, 1, Board.from_seed("1"), race=True)
    rival = Board.from_seed("1")  # has seen the seven up-cards only
    seats = {1: SeatKnowledge(rival.seen, BoardStatus.PLAYING)}

    heard = Heard()
    subscriber = Subscriber(redis, valkey_url, heard.on_message)
    await subscriber.start(keys.DAILY_UPDATES)
    try:
        await subscriber.subscribe(keys.channel(ROOM))
        move = board.apply_move(Move.parse("2F"), 1, seats)  # turns up a card the rival lacks
        assert move.progress is not None
        result = await store.write_board_event(ROOM, 1, 0, "amy", "", move, 0, publish_own=False)
        assert result.status is WriteStatus.OK
        board.confirm()
        rival.play("2F")  # the rival has seen it too: spectators may see it on this board
        refresh = board.apply_refresh({1: SeatKnowledge(rival.seen, BoardStatus.PLAYING)})
        assert refresh is not None and refresh.own_frame is None and refresh.progress is None
        result = await store.write_board_event(ROOM, 1, 0, "", "", refresh, 1)
        assert result.status is WriteStatus.OK
        board.confirm()
        messages = await heard.at_least(2)
    finally:
        await subscriber.stop()

    # One message each, in order: the move's note with its frame, the refresh's frame.
    assert len(messages) == 2
    note, frame = messages
    assert isinstance(note, ProgressNote) and isinstance(frame, BoardFrame)
    assert note.node == "node-one" and note.progress == move.progress
    assert note.spectator == BoardFrame(BoardPosition(Audience.SPECTATOR, 0, 1, 1), move.spec_frame)
    assert frame == BoardFrame(BoardPosition(Audience.SPECTATOR, 0, 1, 2), refresh.spec_frame)
