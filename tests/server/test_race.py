"""End to end: real Valkey, real server, real websocket clients on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import pytest

from klondike_live.client import Client
from klondike_live.config import Settings
from klondike_live.engine import GameRecord
from klondike_live.gateway.server import Node, running
from klondike_live.protocol.kinds import Audience
from klondike_live.store.connect import RedisClient

from auditor import Truth, audit, check_reactions
from testdata import DATA
from waits import connect_client, scaled

if TYPE_CHECKING:
    from conftest import WaitFor

WON = GameRecord.parse((DATA / "won-draw1-seed31.txt").read_text())


def _reacted(client: Client) -> dict[str, int]:
    """The reactions a client was shown, added up."""
    counts: dict[str, int] = {}
    for m in client.received:
        if m["t"] == "reactions":
            for reaction, n in m["counts"].items():
                counts[reaction] = counts.get(reaction, 0) + n
    return counts


@pytest.fixture
async def node(make_settings: Callable[..., Settings], redis: RedisClient) -> AsyncIterator[Node]:
    """A server node on a free port, racing on the deal of the stored won game."""
    settings = make_settings(
        countdown_seconds=0.3, tick_seconds=0.05, rate_per_second=1000.0, rate_burst=1000
    )
    async with running(settings, seed_source=lambda: str(WON.seed)) as started:
        yield started


async def test_two_racers_race_to_a_win_while_a_spectator_watches(
    node: Node, wait_for: WaitFor
) -> None:
    """Both racers play the known win; the results rank them; nobody saw what they may not."""
    alice = await connect_client(node.ws_url, name="Alice")
    bob = await connect_client(node.ws_url, name="Bob")
    carol = await connect_client(node.ws_url, name="Carol")
    try:
        room = await alice.create_race("draw=1", seats=2)
        await alice.join(room)
        await bob.join(room)
        await carol.join(room, "spectator")
        await alice.ready(room)
        await bob.ready(room)
        await alice.expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
        await alice.start(room)
        await alice.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        await bob.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
        await carol.expect(lambda m: m["t"] == "board" and m["seat"] == 1)
        # A spectator reacts: it gets the room's counts; racers playing have them off.
        await carol.react(room, "clap")
        await carol.react(room, "clap")
        await wait_for(lambda: _reacted(carol) == {"clap": 2})
        moves = list(WON.moves)
        for i, token in enumerate(moves):
            if alice.own_board(room, 0).status == "playing":
                await alice.move(room, token)
            if i < len(moves) - 1 and bob.own_board(room, 1).status == "playing":
                await bob.move(room, token)
        assert alice.own_board(room, 0).status == "won"
        results = await carol.expect(lambda m: m["t"] == "results", timeout=scaled(30))
        assert results["seed"] == WON.seed
        ranking = [(r["name"], r["rank"], r["status"]) for r in results["ranking"]]
        assert ranking[0] == ("Alice", 1, "won")
        # Bob's 105th move leaves his board forced: the server finishes it, a win too,
        # a move after Alice's; in the same millisecond it is a tie (equal keys, one rank).
        alice_ms, bob_ms = (r["time_ms"] for r in results["ranking"])
        assert ranking[1] == ("Bob", 1 if bob_ms == alice_ms else 2, "won")
        truth = Truth.from_results(results)
        assert audit(alice.received, truth, role="racer", seat=0) > 50
        assert audit(bob.received, truth, role="racer", seat=1) > 10
        assert audit(carol.received, truth, role="spectator") > 50
        assert not _reacted(alice) and not _reacted(bob)
        final = alice.own_board(room, 0).view
        assert final.foundations == (13, 13, 13, 13)
        # Spectator frames travel on their own channel and may follow the results.
        spectator_board = carol.boards[(room, 0, Audience.SPECTATOR)]
        await wait_for(lambda: spectator_board.status == "won")
        assert spectator_board.view.foundations == (13, 13, 13, 13)
    finally:
        for client in (alice, bob, carol):
            await client.close()


@pytest.mark.parametrize(
    "frame",
    [
        {"t": "reactions", "room": "r1", "counts": {"clap": 2}, "msg": "hello"},
        {"t": "reactions", "room": "r1", "counts": {"boo": 1}},
        {"t": "reactions", "room": "r1", "counts": {"clap": 0}},
        {"t": "reactions", "room": "r1", "counts": {"clap": "9C"}},
        {"t": "reactions", "room": "r1", "counts": {}},
    ],
)
def test_the_auditor_refuses_a_reactions_frame_with_more_than_counts(
    frame: dict[str, object],
) -> None:
    """A `reactions` frame may carry counts of the known reactions and nothing else
    (no text, no card): the auditor fails anything more, and passes a plain one."""
    check_reactions({"t": "reactions", "room": "r1", "counts": {"clap": 2, "party": 1}}, "ok")
    with pytest.raises(AssertionError):
        check_reactions(frame, "frame")
