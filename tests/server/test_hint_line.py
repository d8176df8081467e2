"""Hints follow a winning line once one is found: a player who always plays the hint wins."""

from __future__ import annotations

import pytest

from klondike_live.client import ServerError
from klondike_live.engine import Board, Variant
from klondike_live.gateway.server import Node
from klondike_live.service import boards
from klondike_live.solver.hints import Hint, KnownLine
from klondike_live.solver.worker import hint_in_worker

from helpers import WON, close_all, node, started_race
from waits import connect_client, wait_for

__all__ = ["node"]  # the fixture, imported for pytest


async def test_playing_every_hint_wins_with_one_search(
    node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a winnable deal, a client that plays each hint wins; after the first winning
    line is found, no hint searches again (each one follows the kept line)."""
    searches: list[int] = []

    async def counted(board: Board, seconds: float = 1.0) -> Hint:
        searches.append(len(board.moves))
        return await hint_in_worker(board, seconds=seconds)

    monkeypatch.setattr(boards, "hint_in_worker", counted)
    solo = await connect_client(node.ws_url, name="Follower")
    try:
        room = await solo.create_solo(str(WON.variant))
        await solo.join(room)
        await solo.expect(lambda m: m["t"] == "board")
        verdicts: list[str] = []
        for _ in range(400):
            own = solo.own_board(room, 0)
            if own.status != "playing":
                break
            advice = await solo.hint(room)
            if advice["verdict"] == "won":  # the winning move's status event is on its way
                break
            verdicts.append(advice["verdict"])
            assert isinstance(advice["m"], str), (advice["verdict"], advice["msg"], len(verdicts))
            await solo.move(room, advice["m"])
        # the status event follows the winning move's diff
        await wait_for(lambda: solo.own_board(room, 0).status == "won", 10)
        assert verdicts and set(verdicts) == {"winning"}, verdicts
        assert searches == [0], f"searched again after moves {searches[1:]}"
    finally:
        await solo.close()


def test_known_line_follows_the_player_and_lets_go_when_they_leave_it() -> None:
    """The kept line answers from every position it passes through (also after an undo
    back onto it) and nothing once the position is off the line."""
    board = Board.from_seed(str(WON.seed), Variant.parse(str(WON.variant)))
    line = [str(m) for m in WON.moves]
    known = KnownLine.of(board, line)
    follower = board.copy()
    for token in line[:10]:
        advice = known.follow(follower)
        assert advice is not None and advice.move == token
        follower.play(token)
    assert known.follow(board) is not None and known.follow(board).move == line[0]  # type: ignore[union-attr]
    off = board.copy()
    others = [m for m in off.legal_moves() if str(m) != line[0]]
    assert others, "the deal offers another first move"
    off.play(others[0])
    assert known.follow(off) is None


async def test_finish_check_in_practice_games_only(node: Node) -> None:
    """A practice game can ask whether its rest is forced (not at the deal: cards are
    face down); a race is refused, as it is for hints."""
    solo = await connect_client(node.ws_url, name="Finisher")
    try:
        room = await solo.create_solo(str(WON.variant))
        await solo.join(room)
        await solo.expect(lambda m: m["t"] == "board")
        answer = await solo.finish(room)
        assert answer["ok"] is False and answer["room"] == room
    finally:
        await solo.close()
    race, (alice, bob), _ = await started_race(node, "Alice", "Bob")
    try:
        with pytest.raises(ServerError) as info:
            await alice.finish(race)
        assert info.value.code == "not_allowed"
    finally:
        await close_all([alice, bob])
