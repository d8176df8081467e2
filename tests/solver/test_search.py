"""The exact solver: verdicts, replayed solutions, budgets."""

from __future__ import annotations

import dataclasses

import pytest

from klondike_live.engine import Board, Variant
from klondike_live.engine.variant import UNLIMITED
from klondike_live.solver import Budget, Reductions, solve
from klondike_live.solver.search import SolverError, check_line
from klondike_live.solver.state import Position

from solver_helpers import position

DRAW1 = Variant(draw=1, passes=1)
DRAW3 = Variant(draw=3, passes=3)
# Every heart from 6H up lies face down under the KS; only the AH is on a foundation.
HEARTS_UNDER_KS = "#KH #QH #JH #TH #9H #8H #7H #6H KS"


def replays_to_win(board: Board, moves: list[str]) -> bool:
    """Replay tokens through the checked `Board.play`; True when the game is won."""
    replay = board.copy()
    for token in moves:
        replay.play(token)
    return replay.is_won()


@pytest.mark.parametrize(
    ("seed", "variant"), [("4", DRAW1), ("13", DRAW1), ("1", DRAW3), ("11", DRAW3)]
)
def test_solvable_deals_replay_to_a_win(seed: str, variant: Variant) -> None:
    """A `solvable` answer on a full deal is a token list the engine replays to a win."""
    board = Board.from_seed(seed, variant)
    result = solve(board, Budget(seconds=20))
    assert result.result == "solvable"
    assert replays_to_win(board, result.moves)


def test_blocked_heart_is_unsolvable() -> None:
    """The 2H face down under the 3H and no black 4 to take the 3H: no win in any pass limit."""
    for variant in (DRAW1, DRAW3, Variant(draw=1, passes=UNLIMITED)):
        board = position(
            variant, ["#2H 3H", HEARTS_UNDER_KS], stock="4H 5H", foundations=(13, 13, 1, 12)
        )
        assert solve(board).result == "unsolvable", variant


def test_stock_order_decides_draw3_but_not_draw1() -> None:
    """Stock 3H 2H 4H: draw-1 plays 2H then 3H; draw-3 only ever shows the 4H on top."""
    piles = ["#KH #QH #JH #TH #9H #8H #7H #6H #KS 5H"]
    for variant, verdict in (
        (Variant(draw=1, passes=1), "solvable"),
        (Variant(draw=3, passes=1), "unsolvable"),
        (Variant(draw=3, passes=3), "unsolvable"),
        (Variant(draw=3, passes=UNLIMITED), "unsolvable"),
    ):
        board = position(variant, piles, stock="3H 2H 4H", foundations=(13, 13, 1, 12))
        result = solve(board)
        assert result.result == verdict, variant
        if verdict == "solvable":
            assert replays_to_win(board, result.moves)


def test_single_pass_runs_out_where_two_passes_win() -> None:
    """Stock 3H 4H 2H in draw-1: the 4H buries the 3H in one pass; a second pass frees it."""
    piles = ["#KH #QH #JH #TH #9H #8H #7H #6H #KS 5H"]
    one = position(Variant(draw=1, passes=1), piles, stock="3H 4H 2H", foundations=(13, 13, 1, 12))
    assert solve(one).result == "unsolvable"
    two = position(Variant(draw=1, passes=2), piles, stock="3H 4H 2H", foundations=(13, 13, 1, 12))
    result = solve(two)
    assert result.result == "solvable"
    assert "R" in result.moves and replays_to_win(two, result.moves)


F2T_PILES = [
    "#2H 3H",
    "#KC #QC #JC #TC #9C #8C #7C #6C #5C #KD #QD #JD #TD #9D #8D #7D #6D 5D",
    "#KH #QH #JH #TH #9H #8H #7H #6H #5H 4H",
]


def test_foundation_to_tableau_can_be_the_only_way() -> None:
    """Only with f2t: the 4C comes back onto the 5D to take the 3H off the buried 2H."""
    for f2t, verdict in ((False, "unsolvable"), (True, "solvable")):
        board = position(Variant(draw=1, passes=1, f2t=f2t), F2T_PILES, foundations=(4, 4, 1, 13))
        result = solve(board)
        assert result.result == verdict, f2t
        if f2t:
            assert "FC2" in result.moves
            assert replays_to_win(board, result.moves)


def test_won_and_trivially_won_positions() -> None:
    """A finished game needs no move; an all-face-up one is finished by foundation moves alone."""
    won = position(DRAW1, [], foundations=(13, 13, 13, 13))
    assert solve(won).result == "solvable" and solve(won).moves == []
    open_board = position(DRAW1, ["KH QS", "KS QH"], foundations=(13, 13, 11, 11))
    result = solve(open_board)
    assert result.result == "solvable" and len(result.moves) == 4
    assert replays_to_win(open_board, result.moves)


def test_budget_out_says_unknown() -> None:
    """When the node budget runs out first the verdict is `unknown`, with no moves."""
    board = Board.from_seed("2", DRAW1)
    result = solve(board, Budget(nodes=2000))
    assert result.result == "unknown" and result.moves == []
    assert 2000 <= result.nodes < 3000


def test_time_budget_is_kept() -> None:
    """A time budget stops the search within a small margin."""
    result = solve(Board.from_seed("2", DRAW1), Budget(seconds=0.3))
    assert result.result == "unknown"  # stopped by the clock: it has no node budget
    # The clock is read every 512 nodes; a machine busy with other work runs fewer of
    # them per second, so the margin is generous.
    assert result.seconds < 3.0


def test_cpu_time_budget() -> None:
    """A CPU-time budget stops the search too, and reports CPU seconds."""
    result = solve(Board.from_seed("2", DRAW1), Budget(seconds=0.3, cpu=True))
    assert result.result == "unknown"
    assert 0.3 <= result.seconds < 1.0


def test_failed_replay_is_an_error() -> None:
    """A line the engine rejects raises `SolverError`; it is never reported as a success."""
    board = Board.from_seed("4", DRAW1)
    with pytest.raises(SolverError, match="move 1"):
        check_line(board, ["W1"])
    with pytest.raises(SolverError, match="does not win"):
        check_line(board, ["D"])


def test_brute_force_agrees_on_constructed_positions() -> None:
    """With every reduction off, the constructed positions get the same verdicts."""
    piles = ["#KH #QH #JH #TH #9H #8H #7H #6H #KS 5H"]
    for variant, stock, verdict in (
        (Variant(1, 1), "3H 2H 4H", "solvable"),
        (Variant(3, 3), "3H 2H 4H", "unsolvable"),
        (Variant(1, 1), "3H 4H 2H", "unsolvable"),
        (Variant(1, 2), "3H 4H 2H", "solvable"),
    ):
        board = position(variant, piles, stock=stock, foundations=(13, 13, 1, 12))
        assert solve(board, reductions=Reductions.none()).result == verdict
    # With f2t the positions without a table explode; a visited set keeps it exhaustive.
    plain = dataclasses.replace(Reductions.none(), tt=True)
    for f2t, verdict in ((False, "unsolvable"), (True, "solvable")):
        board = position(Variant(1, 1, f2t), F2T_PILES, foundations=(4, 4, 1, 13))
        assert solve(board, reductions=plain).result == verdict


def test_a_stuck_card_is_a_dead_end_found_without_search() -> None:
    """The 3H over the 2H with both black 4s up can never move: lost at once (`dead`)."""
    board = position(DRAW1, ["#2H 3H", HEARTS_UNDER_KS], stock="4H 5H", foundations=(13, 13, 1, 12))
    assert Position(board).is_dead()
    quick = solve(board)
    assert quick.result == "unsolvable" and quick.nodes == 0
    assert solve(board, reductions=Reductions(dead=False)).result == "unsolvable"


def test_a_king_or_a_free_parent_is_never_stuck() -> None:
    """A king can wait for an empty column; a card with a parent still in play can move."""
    king = position(
        DRAW1,
        ["#QH KH", "#KS #QS #JS #TS #9S #8S #7S #6S #5S #4S #3S 2S"],
        foundations=(13, 13, 11, 1),
    )
    assert not Position(king).is_dead()
    piles = ["#2H 3H", HEARTS_UNDER_KS, "#KC #QC #JC #TC #9C #8C #7C #6C 5C"]
    free = position(DRAW1, piles, stock="4H 5H 4C", foundations=(3, 13, 1, 12))
    assert not Position(free).is_dead()
    assert solve(free).result == solve(free, reductions=Reductions(dead=False)).result


def test_the_waste_is_a_dead_end_only_in_the_last_pass() -> None:
    """The 3H over the 2H in the waste: stuck with no recycle left, not with one."""
    piles = ["#KH #QH #JH #TH #9H #8H #7H #6H #KS 5H"]
    args = {"stock": "4H", "waste": "2H 3H", "foundations": (13, 13, 1, 12)}
    last = position(Variant(draw=1, passes=1), piles, **args)  # type: ignore[arg-type]
    assert Position(last).is_dead() and solve(last).result == "unsolvable"
    more = position(Variant(draw=1, passes=2), piles, **args)  # type: ignore[arg-type]
    assert not Position(more).is_dead()
    assert solve(more).result == solve(more, reductions=Reductions(dead=False)).result
    f2t = position(Variant(draw=1, passes=1, f2t=True), piles, **args)  # type: ignore[arg-type]
    assert not Position(f2t).is_dead()
