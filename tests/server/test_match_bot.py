"""A match end to end: real Valkey, a real node, a real websocket client against an
in-server bot, every frame of both read by the leak auditor (`leak_audit`), and the
match read back over HTTP (`http_audit`)."""

from __future__ import annotations

from collections.abc import Callable

from klondike_live.client import Message
from klondike_live.config import Settings
from klondike_live.engine import Deal
from klondike_live.gateway.server import running
from klondike_live.race.room import commitment

from auditor import http_audit
from helpers import WON
from test_bots import BOT_FAST
from test_http_api import get, get_ok
from waits import connect_client, scaled


def own_board(gen: int) -> Callable[[Message], bool]:
    """Matches the first own board of race `gen`."""
    return lambda m: bool(m["t"] == "board" and m["audience"] == "own" and m["epoch"] == gen)


def results_of(gen: int) -> Callable[[Message], bool]:
    """Matches the results of race `gen`."""
    return lambda m: bool(m["t"] == "results" and m["gen"] == gen)


__all__ = ["http_audit"]  # the fixture, imported for pytest


async def test_a_person_and_a_bot_play_a_match(make_settings: Callable[..., Settings]) -> None:
    """Alice plays a best of 3 against a bot, winning each deal she can: every deal is
    dealt in turn, its commitment in the room before its first board, its results
    carry the score, and the match stops at two deals won."""
    settings = make_settings(**BOT_FAST, match_interval_seconds=0.3)
    async with running(settings, seed_source=lambda: str(WON.seed)) as node:
        alice = await connect_client(node.ws_url, name="Alice")
        try:
            room = await alice.create_race("draw=1", seats=2, bots=True, best_of=3, time_limit=300)
            await alice.join(room)
            await alice.add_bot(room, "relaxed")
            await alice.ready(room)
            await alice.start(room)
            results: Message = {}
            for gen in range(1, 6):
                await alice.expect(own_board(gen))
                for token in WON.moves:
                    if alice.own_board(room, 0).status != "playing":
                        break
                    await alice.move(room, token)
                results = await alice.expect(results_of(gen), timeout=scaled(240))
                if results["match"]["over"]:
                    break
            match = results["match"]
            assert match["over"] and max(match["score"]) == 2 and match["forfeit"] is None
            assert match["winner"] == match["score"].index(2)
            assert len(match["deals"]) == results["gen"] >= 2
            frames = [m for m in alice.received if m.get("room") == room]
            for gen in range(1, results["gen"] + 1):
                dealt = next(
                    i
                    for i, m in enumerate(frames)
                    if m["t"] == "room" and m["gen"] == gen and "commitment" in m
                )
                assert frames[dealt]["commitment"] == commitment(Deal.from_seed(str(WON.seed)))
                first_board = next(
                    i for i, m in enumerate(frames) if m["t"] == "board" and m["epoch"] == gen
                )
                assert dealt < first_board
            final = [m for m in frames if m["t"] == "room"][-1]
            assert final["match"] == {k: v for k, v in match.items() if k != "next_at"}

            record = await get_ok(node, f"api/matches/{room}/1")
            assert (record["score"], record["winner"], record["over"]) == (
                match["score"],
                match["winner"],
                True,
            )
            assert [d["gen"] for d in record["deals"]] == list(range(1, results["gen"] + 1))
            assert [d["winner"] for d in record["deals"]] == match["deals"]
            replay = await get_ok(node, f"api/replay/{room}/{results['gen']}")
            assert replay["match"] == match
            status, _, _ = await get(node, f"api/matches/{room}/{results['gen'] + 1}")
            assert status == 404
        finally:
            await alice.close()
