"""Golden games for the browser client's unit tests, made by the engine.

`client_web/test/fixtures/games.json` holds, for a few seeded games, each move token
with the racer's view before and after it and the wire diff between them; the client's
tests check that its diff application and its move predictions agree with the engine.
`test_client_fixtures.py` fails when the file no longer matches what the engine makes;
refresh it with `.venv/bin/python tests/browser/client_fixtures.py`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, TypedDict

from klondike_live.engine import Board, Move, Variant, diff
from klondike_live.engine.view import racer_view
from klondike_live.protocol.outgoing import diff_wire, view_wire

FIXTURE = Path(__file__).resolve().parents[2] / "client_web" / "test" / "fixtures" / "games.json"
GAMES = [
    ("7", "draw=1 passes=unlimited f2t=no"),
    ("42", "draw=3 passes=3 f2t=no"),
    ("1234", "draw=1 passes=1 f2t=no"),
    ("99", "draw=3 passes=unlimited f2t=yes"),
]
MOVES_PER_GAME = 160

Wire = dict[str, Any]  # a view or diff as the server sends it (view_wire, diff_wire)


class Step(TypedDict):
    m: str  # the move token
    d: Wire  # the diff from the view before the move
    view: Wire  # the view after it


class Game(TypedDict):
    seed: str
    variant: str
    start: Wire
    steps: list[Step]


def _choose(board: Board, rng: random.Random) -> Move:
    """A legal move, preferring any that is not a turn of the stock (more variety)."""
    moves = board.legal_moves()
    others = [m for m in moves if str(m) not in ("D", "R")]
    return rng.choice(others if others and rng.random() < 0.7 else moves)


def build() -> list[Game]:
    games: list[Game] = []
    for seed, variant_text in GAMES:
        board = Board.from_seed(seed, Variant.parse(variant_text))
        rng = random.Random(seed)
        start = racer_view(board)
        before = start
        steps: list[Step] = []
        for _ in range(MOVES_PER_GAME):
            if not board.legal_moves():
                break
            move = _choose(board, rng)
            board.play(move)
            after = racer_view(board)
            change = diff_wire(diff(before, after))
            steps.append({"m": str(move), "d": change, "view": view_wire(after)})
            before = after
        games.append(
            {"seed": seed, "variant": variant_text, "start": view_wire(start), "steps": steps}
        )
    return games


def render() -> str:
    return json.dumps(build(), separators=(",", ":")) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(render())
    print(f"wrote {FIXTURE}")
