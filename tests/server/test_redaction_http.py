"""End to end: what a finished daily game shows over HTTP while its day is open, and
once it has closed (the policy of `race.redaction`, docs/rules.md "What each viewer may
see"), checked by the leak auditor's HTTP audit (`auditor.audit_answer`, `audit_http`).

While the day is open, an account that finished its own ranked attempt is shown another
player's game only as that player saw it: no seed, no deal, no game record; the final
view, the replay's start and every replay step show no card the player had not seen.
After the close, everyone is shown everything."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import msgpack
import pytest

from klondike_live import keys
from klondike_live.client import apply_diff, view_from_wire
from klondike_live.daily.variants import DRAW1
from klondike_live.engine import ALL_CARDS, Board, Move, view_of
from klondike_live.gateway.server import Node
from klondike_live.protocol.kinds import RoomKind
from klondike_live.protocol.outgoing import view_wire
from klondike_live.race.redaction import Disclosure, replay_for
from klondike_live.store.connect import RedisClient

from auditor import (
    HTTP_ANSWERS,
    Asker,
    HttpAnswer,
    Truth,
    audit_answer,
    audit_http,
    http_audit,
    view_cards,
)
from daily_support import DAY, DayClock, get, get_ok, play, record_for, start_attempt
from helpers import close_all
from waits import connect_client

__all__ = ["http_audit"]  # the fixture, imported for pytest: audits every HTTP answer

PLAYED = 25
"""Moves of the day's winning line Alice plays before she resigns (cards stay hidden)."""


def replayed(seed: str, tokens: list[str] | tuple[str, ...]) -> Board:
    board = Board.from_seed(seed, DRAW1)
    for token in tokens:
        board.push(Move.parse(token))
    return board


async def stored_results(redis: RedisClient, room: str) -> dict[str, Any]:
    data = await redis.hget(keys.results(room, 1), "data")
    assert data is not None
    results: dict[str, Any] = msgpack.unpackb(data, raw=False)
    return results


async def test_an_open_days_game_shows_over_http_only_what_its_player_saw(
    daily_node: Node, clock: DayClock, redis: RedisClient
) -> None:
    """Carol, who finished her ranked attempt, fetches Alice's resigned attempt of the
    open day: results and replay without seed, deal or records, and every view (final,
    start, each step) exactly Alice's own at that point. Bob (still playing) and
    anonymous askers get 403. After the close, everyone gets everything."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    bob = await connect_client(daily_node.ws_url, name="Bob")
    carol = await connect_client(daily_node.ws_url, name="Carol")
    try:
        room, _ = await start_attempt(alice)
        await play(alice, room, record.moves[:PLAYED])
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
        carols, _ = await start_attempt(carol)
        await carol.resign(carols)
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == carols)
        await start_attempt(bob)

        stored = await stored_results(redis, room)
        truth = Truth.from_results(stored)
        assert truth.seed == record.seed and list(truth.moves[0]) == list(record.moves[:PLAYED])
        final = replayed(record.seed, record.moves[:PLAYED])
        assert final.seen != ALL_CARDS, "Alice's board keeps cards she never saw"
        as_played = Asker.as_played(truth)

        for path in (f"api/results/{room}/1", f"api/replay/{room}/1"):
            for token in (None, bob.token, "not-a-token"):
                assert await get(daily_node, path, token) == (403, {"error": "spoiler"})

        results = await get_ok(daily_node, f"api/results/{room}/1", carol.token)
        assert audit_answer(results, truth, as_played, "results") == 1
        assert "seed" not in results and "deal" not in results
        assert results["daily"]["closed"] is False
        (row,) = results["ranking"]
        assert "record" not in row and row["status"] == "resigned"
        assert row["view"] == view_wire(view_of(final, final.seen))
        for down, pile in row["view"]["tableau"]:
            assert all(c < 0 for c in pile[:down]) and all(c >= 0 for c in pile[down:])
        assert view_cards(row["view"]) < view_cards(stored["ranking"][0]["view"])

        replay = await get_ok(daily_node, f"api/replay/{room}/1", carol.token)
        assert audit_answer(replay, truth, as_played, "replay") == 1 + PLAYED
        assert "seed" not in replay and "deal" not in replay
        assert replay["daily"]["closed"] is False
        (board,) = replay["boards"]
        dealt = Board.from_seed(record.seed, DRAW1)
        assert board["start"] == view_wire(view_of(dealt, dealt.seen))
        assert len(view_cards(board["start"])) == 7, "the seven up-cards only"
        view = view_from_wire(DRAW1, board["start"])
        for step in board["steps"]:
            view = apply_diff(view, step["d"])
        assert view_wire(view) == row["view"], "the steps rebuild the final view shown"

        mine = await get_ok(daily_node, f"api/results/{room}/1", alice.token)
        assert mine["ranking"] == results["ranking"], "its player is shown the same"
        assert await audit_http(redis) >= 3

        clock.set(datetime(2030, 1, 2, 0, 0, 1, tzinfo=UTC))
        for token in (None, bob.token, carol.token):
            closed = await get_ok(daily_node, f"api/results/{room}/1", token)
            assert closed["seed"] == record.seed and closed["deal"]
            assert closed["daily"]["closed"] is True
            assert closed["ranking"][0]["record"] == stored["ranking"][0]["record"]
            assert closed["ranking"][0]["view"] == stored["ranking"][0]["view"]
            whole = await get_ok(daily_node, f"api/replay/{room}/1", token)
            assert whole["seed"] == record.seed and whole["daily"]["closed"] is True
            assert whole["boards"][0]["start"] == view_wire(view_of(dealt, ALL_CARDS))
            assert audit_answer(whole, truth, Asker.everything()) == 1 + PLAYED
    finally:
        await close_all([alice, bob, carol])


async def test_the_http_audit_catches_what_the_old_answers_showed(
    daily_node: Node, redis: RedisClient
) -> None:
    """Fed the answers the server used to give an account that finished (full final
    views without seed; a replay with every card, minus seed and deal), or any answer
    to an account that had not finished, the HTTP audit fails."""
    record = record_for(DAY, DRAW1)
    alice = await connect_client(daily_node.ws_url, name="Alice")
    carol = await connect_client(daily_node.ws_url, name="Carol")
    try:
        room, _ = await start_attempt(alice)
        await play(alice, room, record.moves[:PLAYED])
        await alice.resign(room)
        await alice.expect(lambda m: m["t"] == "results" and m["room"] == room)
        carols, _ = await start_attempt(carol)
        await carol.resign(carols)
        await carol.expect(lambda m: m["t"] == "results" and m["room"] == carols)
        stored = await stored_results(redis, room)
        truth = Truth.from_results(stored)
        as_played = Asker.as_played(truth)

        old_results = {k: v for k, v in stored.items() if k not in ("seed", "deal")}
        old_results["ranking"] = [
            {k: v for k, v in row.items() if k != "record"} for row in stored["ranking"]
        ]
        old_replay = {
            k: v
            for k, v in replay_for(room, RoomKind.DAILY, stored, Disclosure.FULL).items()
            if k not in ("seed", "deal")
        }
        old_replay["daily"] = old_replay["daily"] | {"closed": False}
        with pytest.raises(AssertionError, match="may not know"):
            audit_answer(old_results, truth, as_played)
        with pytest.raises(AssertionError, match="may not know"):
            audit_answer(old_replay, truth, as_played)
        with pytest.raises(AssertionError, match="secret deal"):
            audit_answer(stored, truth, as_played)

        now = time.time()
        for path, body in (
            (f"api/results/{room}/1", old_results),
            (f"api/replay/{room}/1", old_replay),
        ):
            HTTP_ANSWERS.append(HttpAnswer(path, carol.user, now, 200, body))
            with pytest.raises(AssertionError, match="may not know"):
                await audit_http(redis)
        shown = await get_ok(daily_node, f"api/results/{room}/1", carol.token)
        HTTP_ANSWERS.append(HttpAnswer(f"api/results/{room}/1", None, now, 200, shown))
        with pytest.raises(AssertionError, match="had not ended"):
            await audit_http(redis)
        HTTP_ANSWERS.append(HttpAnswer("api/daily", None, now, 200, {"x": record.seed}))
        with pytest.raises(AssertionError, match="seed of the open day"):
            await audit_http(redis)
        assert not HTTP_ANSWERS
    finally:
        await close_all([alice, carol])
