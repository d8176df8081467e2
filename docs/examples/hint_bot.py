"""A bot that plays a solo game through a Klondike Live server by following its hints.

.venv/bin/python docs/examples/hint_bot.py [ws://127.0.0.1:8765/ws]
"""

import asyncio
import sys

from klondike_live.client import Client


async def main(url: str) -> None:
    client = await Client.connect(url, name="HintBot")
    room = await client.create_solo("draw=1 passes=unlimited")
    await client.join(room)
    await client.expect(lambda m: m["t"] == "board")
    for _ in range(500):
        if client.own_board(room, 0).status != "playing":
            break
        hint = await client.hint(room)
        if hint["m"] is None:
            break
        await client.move(room, hint["m"])
    board = client.own_board(room, 0)
    print(f"{board.moves} moves, foundations {list(board.view.foundations)}")
    await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "ws://127.0.0.1:8765/ws"))
