"""What the board script publishes (real Valkey): a move its spectator frame and its
progress note; a spectator refresh its frame only, since it changes nothing of the
board's progress (a note would make every node send its racers the same progress again).
"""

from __future__ import annotations

import asyncio

from klondike_live import keys
from klondike_live.bus.messages import BoardFrame, ProgressNote, RoomMessage, decode
from klondike_live.engine import Board, Move
from klondike_live.race.live_board import LiveBoard
from klondike_live.race.status import BoardStatus
from klondike_live.race.visibility import Audience, SeatKnowledge
from klondike_live.store.connect import RedisClient
from klondike_live.store.records import WriteStatus
from klondike_live.store.store import Store

ROOM = "events-room-0001"


async def published(redis: RedisClient, events: int) -> list[RoomMessage]:
    """Everything published on the room's channels while `events` are written."""
    pubsub = redis.pubsub()
    await pubsub.ssubscribe(keys.channel(ROOM), keys.spectator_channel(ROOM))
    try:
        for _ in range(2):  # the two confirmations
            await pubsub.get_message(timeout=5)
        out: list[RoomMessage] = []
        while len(out) < events:
            message = await pubsub.get_message(timeout=5)
            assert message is not None, f"only {len(out)} messages of {events}"
            if message["type"] == "smessage":
                out.append(decode(message["data"]))
        await asyncio.sleep(0.2)  # anything more would arrive now
        extra = await pubsub.get_message(timeout=0.1)
        assert extra is None, f"more than expected: {extra}"
        return out
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call]


async def test_a_refresh_publishes_its_spectator_frame_and_no_progress_note(
    redis: RedisClient,
) -> None:
    store = Store(redis, node_id="node-one")
    await redis.hset(
        keys.board(ROOM, 1, 0),
        mapping={"seq": 0, "status": "playing", "start_at": 0, "deadline": 0, "found": 0},
    )
    board = LiveBoard(ROOM, 0, 1, Board.from_seed("1"), race=True)
    rival = Board.from_seed("1")  # has seen the seven up-cards only
    seats = {1: SeatKnowledge(rival.seen, BoardStatus.PLAYING)}

    listening = asyncio.create_task(published(redis, 3))
    await asyncio.sleep(0.2)
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
    messages = await listening

    spectator = [m for m in messages if isinstance(m, BoardFrame)]
    notes = [m for m in messages if isinstance(m, ProgressNote)]
    assert [(m.audience, m.offset) for m in spectator] == [
        (Audience.SPECTATOR, 1),
        (Audience.SPECTATOR, 2),
    ]
    assert [n.progress for n in notes] == [move.progress]
