"""Races driven by test clients, for every end-to-end folder (tests/server, tests/cluster).

start_race(racers, watchers, variant="draw=1", public=False) -> room (async)
    The first racer creates a race with a seat per racer; everyone joins (watchers as
    spectators), the racers ready up, the host starts, and it returns once every racer
    has its board and every watcher the last one's.

assert_streams_follow(client)
    Per board, audience and race, each `diff` the client received is one past the last
    frame it applied (a `board` snapshot may set it anywhere): no repeat, no gap.
"""

from __future__ import annotations

from collections.abc import Sequence

from klondike_live.client import Client


async def start_race(
    racers: Sequence[Client],
    watchers: Sequence[Client] = (),
    *,
    variant: str = "draw=1",
    public: bool = False,
) -> str:
    """Create, join, ready and start a race (see the module docstring)."""
    room = await racers[0].create_race(variant, seats=len(racers), public=public)
    for racer in racers:
        await racer.join(room)
    for watcher in watchers:
        await watcher.join(room, "spectator")
    for racer in racers:
        await racer.ready(room)
    await racers[0].expect(lambda m: m["t"] == "room" and all(s and s["ready"] for s in m["seats"]))
    await racers[0].start(room)
    for racer in racers:
        await racer.expect(lambda m: m["t"] == "board" and m["audience"] == "own")
    for watcher in watchers:
        await watcher.expect(lambda m: m["t"] == "board" and m["seat"] == len(racers) - 1)
    return room


def assert_streams_follow(client: Client) -> None:
    """No repeated and no missing board event in what `client` received."""
    last: dict[tuple[str, int, str, int], int] = {}
    for message in client.received:
        if message.get("t") not in ("board", "diff"):
            continue
        key = (message["room"], message["seat"], message["audience"], message["epoch"])
        if message["t"] == "diff" and key in last:
            assert message["off"] == last[key] + 1, (client.name, key, last[key], message["off"])
        last[key] = message["off"]
