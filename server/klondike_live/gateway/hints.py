"""Hints for practice games, computed off the event loop.

The solver is CPU-bound, so it runs in a worker process: the event loop only waits for
the answer. A hint is the next move of a winning line found within `HINT_SECONDS`; when
the search proves there is none the verdict is `lost`; when it runs out of time the
verdict is `unknown` and the move is the first legal one in the engine's order
(foundation moves first).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Final

from klondike_live.engine import Board, format_position, parse_position

HINT_SECONDS: Final = 1.0

_pool: concurrent.futures.ProcessPoolExecutor | None = None


def _pool_instance() -> concurrent.futures.ProcessPoolExecutor:
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ProcessPoolExecutor(max_workers=1)
    return _pool


def shutdown() -> None:
    """Stop the worker process (at server shutdown)."""
    global _pool
    if _pool is not None:
        _pool.shutdown(cancel_futures=True)
        _pool = None


def _hint_in_worker(position_text: str) -> tuple[str | None, str]:
    from klondike_live.solver import Budget, solve

    board = parse_position(position_text)
    result = solve(board, Budget(seconds=HINT_SECONDS))
    if result.result == "solvable" and result.moves:
        return result.moves[0], "winnable"
    legal = board.legal_moves()
    if result.result == "unsolvable":
        return (str(legal[0]) if legal else None), "lost"
    return (str(legal[0]) if legal else None), "unknown"


async def next_hint(board: Board) -> tuple[str | None, str]:
    """(move token or None, verdict) for `board`'s position."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_pool_instance(), _hint_in_worker, format_position(board))


__all__ = ["HINT_SECONDS", "next_hint", "shutdown"]
