"""The solver's own failure: a line it found that the engine rejects.

Apart from the search so that the search compiles (mypyc compiles no class with two
built-in bases); `solver.search` raises it and exports it under the same name.
"""

from __future__ import annotations

from klondike_live.errors import LiveError


class SolverError(LiveError, RuntimeError):
    """The solver produced a line the engine rejects: a bug, never a verdict."""
