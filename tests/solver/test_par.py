"""Par: the shortest winning line in tokens, proven minimal against breadth-first search."""

from __future__ import annotations

import random
from collections import deque

from klondike_live.engine import Board, Variant
from klondike_live.solver import Budget
from klondike_live.solver.par import lower_bound, par
from klondike_live.solver.state import Position

from solver_helpers import position, random_position

LIMITED = (Variant(1, 1), Variant(3, 3), Variant(1, 2), Variant(3, 1))


def shortest(board: Board) -> int | None:
    """Fewest tokens to a win by breadth-first search over the engine's own moves."""
    queue = deque([(board.copy(), 0)])
    seen = {board.key()}
    while queue:
        current, depth = queue.popleft()
        if current.is_won():
            return depth
        for move in current.legal_moves():
            current.push(move)
            key = current.key()
            if key not in seen:
                seen.add(key)
                queue.append((current.copy(), depth + 1))
            current.pop()
    return None


def test_par_matches_breadth_first_search() -> None:
    """On 40 small random positions par is proven minimal and as short as BFS finds."""
    rng = random.Random(5)
    proven = 0
    for _ in range(40):
        board = random_position(rng, rng.randint(4, 6), rng.choice(LIMITED))
        result = par(board, Budget(seconds=10))
        best = shortest(board)
        if best is None:
            assert result.result == "unsolvable"
            continue
        assert result.result == "solvable" and result.optimal
        assert len(result.moves) == best
        proven += 1
    assert proven >= 25


def test_par_counts_draws() -> None:
    """Every D counts: 15 cards to go up and 3 to turn make a par of 18, proven."""
    board = position(
        Variant(draw=1, passes=1),
        ["#KH #QH #JH #TH #9H #8H #7H #6H #5H #4H #3H 2H"],
        stock="QS KS AH",
        foundations=(13, 13, 0, 11),
    )
    result = par(board, Budget(seconds=10))
    assert result.optimal
    assert result.moves[:6] == ["D", "WF", "D", "WF", "D", "WF"]
    assert len(result.moves) == 18


def test_par_on_a_deal_replays_and_is_no_longer_than_the_first_solution() -> None:
    """On a full deal par returns a replayable line, flagged proven or not."""
    board = Board.from_seed("1", Variant(draw=3, passes=3))
    result = par(board, Budget(seconds=30, nodes=40_000))
    assert result.result == "solvable" and result.optimal is not None
    replay = board.copy()
    for token in result.moves:
        replay.play(token)
    assert replay.is_won()


def test_lower_bound_counts_cards_and_turns() -> None:
    """The A* estimate is cards left plus the turns needed to see the whole stock."""
    board = Board.from_seed("1", Variant(draw=3, passes=3))
    assert lower_bound(Position(board)) == 52 + 8
    board.play("D")
    assert lower_bound(Position(board)) == 52 + 7
