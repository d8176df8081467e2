"""Hints: the next move of a winning line, a proof of loss, or the heuristic's choice."""

from __future__ import annotations

from klondike_live.engine import Board, Variant
from klondike_live.engine.moves import Move
from klondike_live.solver.hints import NO_WIN, best_move, forced_finish, hint, move_score

from solver_helpers import position


def test_hint_starts_a_winning_line() -> None:
    """On a winnable deal the hint is the first token of a line that wins from here."""
    board = Board.from_seed("13", Variant(draw=1, passes=1))
    advice = hint(board, seconds=5.0)
    assert advice.status == "winning" and advice.move == advice.line[0]
    board.play(advice.move)
    for token in advice.line[1:]:
        board.play(token)
    assert board.is_won()


def test_hint_says_when_no_winning_line_exists() -> None:
    """A position the search proves lost gets the clear 'no winning line' answer and no move."""
    lost = position(
        Variant(draw=1, passes=1),
        ["#2H 3H", "#KH #QH #JH #TH #9H #8H #7H #6H KS"],
        stock="4H 5H",
        foundations=(13, 13, 1, 12),
    )
    advice = hint(lost)
    assert (advice.status, advice.move, advice.message) == ("lost", None, NO_WIN)


def test_heuristic_hint_when_the_budget_runs_out() -> None:
    """With no time to decide, the hint is the legal move the documented heuristic ranks first."""
    board = Board.from_seed("2", Variant(draw=1, passes=1))
    advice = hint(board, seconds=0.01, nodes=50)
    assert advice.status == "heuristic"
    assert advice.move == str(best_move(board))
    assert advice.move in {str(m) for m in board.legal_moves()}


def test_heuristic_prefers_safe_foundation_then_uncovering() -> None:
    """An ace up beats turning a face-down card, which beats a draw."""
    board = position(
        Variant(draw=1, passes=1),
        ["AH", "#KC #QC 9S", "#JC #TC 8H"],
        stock="2H 3H 4H 5H 6H 7H 9H TH JH QH KH 9C TS JS QS KS",
        foundations=(8, 13, 0, 8),
    )
    scores = {str(m): move_score(board, m) for m in board.legal_moves()}
    assert scores["1F"] > scores["32"] > scores["D"]
    assert str(best_move(board)) == "1F"
    assert move_score(board, Move.parse("32")) == 80 + 2


def test_won_position_needs_no_hint() -> None:
    """A won game gets status 'won' and no move."""
    won = position(Variant(), [], foundations=(13, 13, 13, 13))
    assert hint(won).status == "won" and hint(won).move is None


def test_forced_finish_plays_cards_home_turning_the_stock() -> None:
    """With every card face up, the rest is forced when moving cards home (turning the
    stock when none can go) wins; with one pass the stock's order decides it."""
    one_pass = Variant(draw=1, passes=1)
    unlimited = Variant.parse("draw=1 passes=unlimited")
    home = (13, 13, 13, 1)  # clubs, diamonds and hearts home, and the ace of spades
    columns = ["5S", "6S", "7S", "8S", "9S", "TS", "JS"]
    orders = ("2S 3S 4S", "4S 3S 2S", "3S 2S 4S", "2S 4S 3S", "4S 2S 3S", "3S 4S 2S")
    results = {
        order: forced_finish(
            position(one_pass, columns, stock=order, waste="KS QS", foundations=home)
        )
        for order in orders
    }
    assert set(results.values()) == {True, False}, results
    for order in orders:
        board = position(unlimited, columns, stock=order, waste="KS QS", foundations=home)
        assert forced_finish(board), f"unlimited passes always finish ({order})"
    hidden = [f"#{columns[0]} KH", *columns[1:]]
    board = position(
        unlimited, hidden, stock="2S 3S 4S", waste="KS QS", foundations=(13, 13, 12, 1)
    )
    assert not forced_finish(board), "a face-down card: not forced"
