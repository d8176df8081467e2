"""Certifying deals: a seed is certified when the solver finds a winning line for it.

    outcome = await certify(seed, variant, Budget(seconds=5, nodes=300_000))
    if outcome.deal is not None:            # verdict "solvable"
        outcome.deal.par                    # tokens in the winning line

The search runs in a child process (`solver.worker.solve_in_worker`), so the event loop
never runs it and cancelling the caller kills it. The winning line is the certificate:
`check_line` replays it through the engine's checked `Board.play`, and a deal whose line
does not end in a won game is never called certified. With a `par_budget`, the par
search (`par_in_worker`) may shorten the line afterwards.

This module must never treat `unknown` (the budget ran out) as winnable, and never
log or repr a seed: a certified deal may be raced, so its seed is a secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from klondike_live.engine import Board, KlondikeError, Variant
from klondike_live.errors import LiveError
from klondike_live.solver import Budget
from klondike_live.solver.search import SOLVABLE, Verdict
from klondike_live.solver.worker import par_in_worker, solve_in_worker

__all__ = ["CertificateError", "Certification", "CertifiedDeal", "certify", "check_line"]


class CertificateError(LiveError, ValueError):
    """A winning line that does not win its deal."""


@dataclass(frozen=True, slots=True)
class CertifiedDeal:
    """A seed, its variant and a winning line (the certificate), in notation tokens.

    `par` is the length of that line: every token, draws and recycles included. The
    seed and the line are left out of the repr (they give the deal away).
    """

    seed: str = field(repr=False)
    variant: Variant
    moves: tuple[str, ...] = field(repr=False)

    @property
    def par(self) -> int:
        return len(self.moves)

    def check(self) -> None:
        """Replay the line from the seed's deal; `CertificateError` unless it wins."""
        check_line(self.seed, self.variant, self.moves)


@dataclass(frozen=True, slots=True)
class Certification:
    """The solver's verdict on a seed; `deal` is set exactly when it is `solvable`."""

    verdict: Verdict
    deal: CertifiedDeal | None = None


def check_line(seed: str, variant: Variant, moves: tuple[str, ...] | list[str]) -> None:
    """Raise `CertificateError` unless `moves` wins the deal of `seed` in `variant`."""
    board = Board.from_seed(seed, variant)
    try:
        for token in moves:
            board.play(token)
    except KlondikeError as exc:
        raise CertificateError(f"the winning line does not replay: {exc}") from None
    if not board.is_won():
        raise CertificateError("the winning line does not end in a won game")


async def certify(
    seed: str, variant: Variant, budget: Budget, *, par_budget: Budget | None = None
) -> Certification:
    """Run the solver on the deal of `seed`; a `CertifiedDeal` only when it wins.

    With `par_budget`, a par search follows and the shorter of the two lines is kept.
    """
    board = Board.from_seed(seed, variant)
    result = await solve_in_worker(board, budget)
    if result.result != SOLVABLE:
        return Certification(result.result)
    moves = result.moves
    if par_budget is not None:
        shorter = await par_in_worker(board, par_budget)
        if shorter.result == SOLVABLE and len(shorter.moves) < len(moves):
            moves = shorter.moves
    deal = CertifiedDeal(seed, variant, tuple(moves))
    deal.check()  # the worker replayed it already; a certificate is checked where it is made
    return Certification(SOLVABLE, deal)
