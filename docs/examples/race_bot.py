"""A bot account that races people through the protocol, deciding from its own view.

    .venv/bin/klondike-live token --bot "My Bot" > bot.token
    .venv/bin/python docs/examples/race_bot.py ws://127.0.0.1:8765/ws "$(cat bot.token)" ROOM

It joins room ROOM (a race whose host allowed bots) as a racer, says it is ready, and
once the race starts plays its board until it is over: each move is chosen from the
view its own `board`/`diff` frames make (face-down cards and the stock are counts there),
which the client keeps as an engine `View` (`client.own_board(room, seat).view`: the
`board` frame's view, then each `diff` applied by `ViewDiff.apply`), here with the
server's own heuristic policy (`klondike_live.bots.policy`, the *steady* level without
its mistakes). It paces itself (one move per `PAUSE` seconds, well inside the rate
limit) and prints the results.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from typing import Any

from klondike_live.bots.levels import LEVELS
from klondike_live.bots.policy import Player
from klondike_live.client import Client
from klondike_live.protocol.kinds import BotLevel

PAUSE = 0.05
"""Seconds between two moves."""


async def race(url: str, token: str, room: str) -> dict[str, Any]:
    """Join `room`, race in it, return its `results` frame."""
    client = await Client.connect(url, token=token)
    try:
        state = await client.join(room)
        seat = next(s["seat"] for s in state["seats"] if s and s["user"] == client.user)
        await client.ready(room)
        await client.expect(lambda m: m["t"] == "board" and m["audience"] == "own", 600)
        player = Player(replace(LEVELS[BotLevel.STEADY], mistake_rate=0.0), seed=1)
        while client.own_board(room, seat).status == "playing":
            token_ = player.choose(client.own_board(room, seat).view)
            if token_ is None:
                await client.resign(room)
                break
            await client.move(room, token_)
            await asyncio.sleep(PAUSE)
        return await client.expect(lambda m: m["t"] == "results" and m["room"] == room, 600)
    finally:
        await client.close()


def main() -> None:
    url, token, room = sys.argv[1:4]
    results = asyncio.run(race(url, token, room))
    for row in results["ranking"]:
        label = " (bot)" if row.get("bot") else ""
        print(f"{row['rank']}. {row['name']}{label}: {row['status']}, {row['moves']} moves")


if __name__ == "__main__":
    main()
