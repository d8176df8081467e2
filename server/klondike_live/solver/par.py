"""Par: the shortest winning line, counting every token (draws and recycles included).

`par(board, budget)` first runs the depth-first solver (`search.solve`) for any win,
whose length is an upper bound, then an A* search for a strictly shorter line, where a
move's cost is its token count (a collapsed stock move costs its `D`/`R` tokens plus the
play) and the heuristic is admissible and consistent:

    h = cards not on the foundations + ceil(cards in the stock / draw)

since every card needs one move to its foundation and every stock card must be turned,
at most `draw` cards per `D`. When A* empties its open list under the bound, or pops a
goal, the line is minimal (`optimal=True`); when the budget runs out first, the best
line found so far is returned with `optimal=False`.

The reductions keep minimality: a safe foundation move is never longer than the line it
replaces, a stock move is reached by the fewest turns (one recycle at most), and
symmetric positions have equal distances.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

import heapq
import time
from itertools import count

from klondike_live.engine.board import Board
from klondike_live.solver.search import (
    SOLVABLE,
    Budget,
    Meter,
    OutOfBudget,
    SolveResult,
    check_line,
    settle,
    solve,
    to_tokens,
)
from klondike_live.solver.state import Position, Reductions, SMove, Snapshot

MAX_STATES = 3_000_000
"""A* gives up (not proven) past this many stored positions, to bound its memory."""

_Node = tuple[bytes, int]
"""A position in the A* tables: its canonical key and the pass number that matters."""


def lower_bound(position: Position) -> int:
    """Admissible estimate of the tokens still needed to win from `position`."""
    stock = len(position.talon) - position.pos
    return position.left() - (-stock // position.draw)


def par(
    board: Board,
    budget: Budget | None = None,
    reductions: Reductions | None = None,
    *,
    first_share: float = 0.5,
) -> SolveResult:
    """The shortest line found within `budget`, and whether it is proven minimal.

    `first_share` of the time budget goes to finding a first solution.
    """
    budget = budget or Budget()
    red = reductions or Reductions()
    start = time.perf_counter()
    first_budget = Budget(
        None if budget.seconds is None else budget.seconds * first_share, budget.nodes
    )
    first = solve(board, first_budget, red)
    if first.result != SOLVABLE:
        first.optimal = None
        return first
    left_seconds = None
    if budget.seconds is not None:
        left_seconds = max(0.0, budget.seconds - (time.perf_counter() - start))
    left_nodes = None if budget.nodes is None else max(0, budget.nodes - first.nodes)
    meter = Meter(Budget(left_seconds, left_nodes))
    best_path: list[SMove] | None = None
    optimal = False
    try:
        best_path = _astar(Position(board), red, meter, len(first.moves))
        optimal = True
    except OutOfBudget:
        pass
    nodes = first.nodes + meter.nodes
    seconds = time.perf_counter() - start
    if best_path is None:
        return SolveResult(SOLVABLE, first.moves, nodes, seconds, optimal)
    tokens = to_tokens(board, best_path)
    check_line(board, tokens)
    return SolveResult(SOLVABLE, tokens, nodes, seconds, optimal)


def _astar(position: Position, red: Reductions, meter: Meter, bound: int) -> list[SMove] | None:
    """A* for a line shorter than `bound` tokens: its path, or None when there is none."""
    root_path: list[SMove] = []
    settle(position, red, root_path)
    symmetry = red.symmetry
    root: _Node = (position.key(symmetry), position.pass_key())
    # node -> (cost so far, parent node, moves from the parent)
    parents: dict[_Node, tuple[int, _Node | None, list[SMove]]] = {
        root: (len(root_path), None, root_path)
    }
    tie = count()
    g0 = len(root_path)
    heap: list[tuple[int, int, int, _Node, Snapshot, bool]] = []
    if position.is_won() or position.is_trivially_won():
        return root_path + position.finishing_moves()
    heapq.heappush(
        heap, (g0 + lower_bound(position), -g0, next(tie), root, position.snapshot(), False)
    )
    while heap:
        f, neg_g, _, node, snap, goal = heapq.heappop(heap)
        g = -neg_g
        if f >= bound:
            return None
        if goal:
            position.restore(snap)
            tail = position.finishing_moves()
            return _path_to(parents, node) + tail
        if parents[node][0] < g:
            continue  # a stale entry: this node was reached more cheaply since
        meter.nodes += 1
        if meter.nodes >= meter.next_check:
            meter.check()
            if len(parents) > MAX_STATES:
                raise OutOfBudget
        position.restore(snap)
        for move in position.moves(red):
            cost = position.cost(move)
            segment = [move]
            position.apply(move)
            settle(position, red, segment)
            child_g = g + cost + len(segment) - 1
            child: _Node = (position.key(symmetry), position.pass_key())
            known = parents.get(child)
            if known is None or known[0] > child_g:
                won = position.is_won() or position.is_trivially_won()
                child_f = child_g + lower_bound(position)
                if child_f < bound:
                    parents[child] = (child_g, node, segment)
                    heapq.heappush(
                        heap, (child_f, -child_g, next(tie), child, position.snapshot(), won)
                    )
            position.restore(snap)
    return None


def _path_to(
    parents: dict[_Node, tuple[int, _Node | None, list[SMove]]], node: _Node
) -> list[SMove]:
    segments: list[list[SMove]] = []
    current: _Node | None = node
    while current is not None:
        _, parent, segment = parents[current]
        segments.append(segment)
        current = parent
    return [move for segment in reversed(segments) for move in segment]
