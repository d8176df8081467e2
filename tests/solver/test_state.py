"""The compact search position agrees with the engine move for move."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from klondike_live.engine import Board, Variant
from klondike_live.solver.state import FOUNDATION, K_TALON, Position, Reductions

from solver_helpers import position, random_position

HEARTS_UNDER_KS = "#KH #QH #JH #TH #9H #8H #7H #6H KS"


def same(position_: Position, board: Board) -> bool:
    """True when the compact position and the board hold the same cards in the same places."""
    return Position(board).snapshot()[:-2] == position_.snapshot()[:-2] and (
        position_.found == list(board.foundations)
        and (board.variant.unlimited or position_.passno == board.pass_number)
    )


def check_every_move(board: Board, red: Reductions) -> int:
    """Apply each generated move to the compact position and its tokens to the board."""
    compact = Position(board)
    snap = compact.snapshot()
    checked = 0
    for move in compact.moves(red):
        replay = board.copy()
        for token in compact.tokens(move):
            replay.play(token)
        assert compact.cost(move) == len(compact.tokens(move))
        compact.apply(move)
        assert same(compact, replay), (move, compact.tokens(move))
        compact.restore(snap)
        checked += 1
    return checked


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.integers(4, 40))
def test_moves_match_engine_on_random_positions(seed: int, left: int) -> None:
    """Each generated move expands to tokens the engine accepts, reaching the same position."""
    check_every_move(random_position(random.Random(seed), left), Reductions())


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32), st.integers(4, 40))
def test_unreduced_moves_match_engine(seed: int, left: int) -> None:
    """With every reduction off, each move (bare draws and recycles too) matches the engine."""
    check_every_move(random_position(random.Random(seed), left), Reductions.none())


def test_unreduced_moves_cover_engine_moves() -> None:
    """Without reductions the compact generator offers exactly the engine's legal moves."""
    rng = random.Random(7)
    for _ in range(200):
        board = random_position(rng, rng.randint(4, 40))
        compact = Position(board)
        ours = sorted(compact.tokens(m)[-1] for m in compact.moves(Reductions.none()))
        assert ours == sorted(str(m) for m in board.legal_moves())


def test_stock_move_recycles_to_reach_an_earlier_card() -> None:
    """A draw-3 stock move to a card passed earlier expands to draws, one R, then draws."""
    board = position(
        Variant(draw=3, passes=2),
        [HEARTS_UNDER_KS],
        stock="AH 4H 5H",
        waste="2H 3H",
        foundations=(13, 13, 0, 12),
    )
    compact = Position(board)
    moves = [m for m in compact.moves(Reductions()) if m[0] == K_TALON]
    # This pass shows 3H then 5H; the AH is the third card: D, R, D.
    to_ace = [m for m in moves if m[3] == FOUNDATION and m[2] == 1]
    assert [compact.tokens(m) for m in to_ace] == [["D", "R", "D", "WF"]]


def test_stock_moves_skip_positions_a_pass_cannot_reach() -> None:
    """In draw-3 only every third card (and the last) of the stock can become the waste top."""
    board = position(
        Variant(draw=3, passes=1),
        [HEARTS_UNDER_KS],
        stock="2H 3H 4H 5H AH",
        foundations=(13, 13, 0, 12),
    )
    compact = Position(board)
    talon_moves = [m for m in compact.moves(Reductions()) if m[0] == K_TALON]
    # Waste tops 4H (no play) and AH: the 2H and 3H can never be reached in this pass.
    assert talon_moves == [(K_TALON, 5, 0, FOUNDATION)]
    assert compact.tokens(talon_moves[0]) == ["D", "D", "WF"]
