"""End to end: a solo practice game started from a position (a seed and the moves made
on its deal before the start), on a real node and Valkey.

The board the player is sent is exactly the engine's board after those moves; the game
is playable from there (moves, undo back to the start position but not beyond it), and
its results hold the whole record (the moves before the start, then the game's) while
the replay starts at the start position (`from`).
"""

from __future__ import annotations

from typing import Any

import pytest

from klondike_live.client import Client, ServerError
from klondike_live.engine import ALL_CARDS, Board, GameRecord, view_of
from klondike_live.gateway.server import Node
from klondike_live.protocol.outgoing import view_wire

from auditor import http_audit
from daily_support import get_ok
from helpers import WON, close_all, node
from waits import connect_client

__all__ = ["http_audit", "node"]  # the fixtures, imported for pytest

PREFIX = 30


async def create_from(client: Client, seed: str, moves: list[str], **extra: Any) -> str:
    created = await client.call(
        {
            "t": "create",
            "rid": 31,
            "kind": "solo",
            "variant": str(WON.variant),
            "seed": seed,
            "moves": moves,
            **extra,
        },
        lambda m: m["t"] == "created" and m.get("rid") == 31,
    )
    return str(created["room"])


def engine_after(tokens: tuple[str, ...] | list[str]) -> Board:
    board = Board.from_seed(str(WON.seed), WON.variant)
    for token in tokens:
        board.play(token)
    return board


async def test_a_solo_game_starts_at_the_position_after_the_moves(node: Node) -> None:
    """The player's board is the engine's after the moves; moves and undo work from
    there, never undoing past the start; the record holds every move and the replay
    starts at the start position."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        prefix = list(WON.moves[:PREFIX])
        room = await create_from(alice, str(WON.seed), prefix)
        await alice.join(room)
        await alice.expect(lambda m: m["t"] == "board" and m.get("room") == room)
        start = engine_after(prefix)
        mine = alice.own_board(room, 0)
        assert mine.view == view_of(start, start.seen), "the start position"
        assert mine.moves == 0

        await alice.move(room, WON.moves[PREFIX])
        after = engine_after(WON.moves[: PREFIX + 1])
        assert alice.own_board(room, 0).view == view_of(after, after.seen)
        await alice.undo(room)
        assert alice.own_board(room, 0).view == view_of(start, start.seen)
        with pytest.raises(ServerError):
            await alice.undo(room)  # the moves before the start cannot be undone

        played = list(WON.moves[PREFIX : PREFIX + 5])
        for token in played:
            await alice.move(room, token)
        await alice.resign(room)
        results = await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
        (row,) = results["ranking"]
        record = GameRecord.parse(row["record"])
        assert list(record.moves) == prefix + played and record.seed == WON.seed
        assert row["moves"] == len(played)

        replay = await get_ok(node, f"api/replay/{room}/1")
        assert replay["from"] == PREFIX
        (board,) = replay["boards"]
        assert board["start"] == view_wire(view_of(start, ALL_CARDS))
        assert [step["m"] for step in board["steps"]] == played
    finally:
        await close_all([alice])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"seed": "31", "moves": ["99"]}, "move 1 '99'"),
        ({"seed": "31", "moves": list(WON.moves)}, "win the game"),
        ({"moves": ["D"]}, "'seed'"),
        ({"seed": "31", "moves": "D"}, "'moves'"),
        ({"seed": "31", "kind": "race", "seats": 2}, "'seed'"),
    ],
)
async def test_bad_start_positions_are_refused(
    node: Node, fields: dict[str, Any], message: str
) -> None:
    """An illegal or winning prefix, moves without a seed, a malformed list, a seed for
    a race: `bad_field`, naming the problem."""
    alice = await connect_client(node.ws_url, name="Alice")
    try:
        request = {"t": "create", "rid": 5, "kind": "solo", "variant": "draw=1", **fields}
        await alice.send(request)
        error = await alice.expect(lambda m: m["t"] == "error" and m.get("rid") == 5)
        assert error["code"] == "bad_field" and message in error["msg"], error
    finally:
        await close_all([alice])
