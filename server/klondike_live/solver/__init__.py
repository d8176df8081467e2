"""The solver: decides winnability, finds solutions, pars and hints.

`solve(board, budget)` is the exact depth-first search (`search.py`) on the compact
position of `state.py`; `par(board, budget)` (`par.py`) looks for the shortest solution;
`hint(board)` (`hints.py`) suggests a next move. `worker.py` runs any of them in a child
process for the asyncio server, and `cli.py` adds the `solve` subcommand.

Everything here except `worker.py` is pure: no I/O, no asyncio.
"""

from klondike_live.solver.hints import Hint, hint
from klondike_live.solver.par import par
from klondike_live.solver.search import Budget, SolverError, SolveResult, solve
from klondike_live.solver.state import Reductions

__all__ = [
    "Budget",
    "Hint",
    "Reductions",
    "SolveResult",
    "SolverError",
    "hint",
    "par",
    "solve",
]
