"""Helpers of the daily tests (the Valkey fixtures are in tests/conftest.py).

certified_deals(variant, count, nodes) -> list[CertifiedDeal]
    Fresh random seeds certified in this process (not through the pool), for tests that
    need many deals fast. With `EASY` (draw 1, unlimited passes) nearly every deal is
    won within a few hundred positions.
"""

from __future__ import annotations

import secrets

from klondike_live.daily.certify import CertifiedDeal
from klondike_live.engine import UNLIMITED, Board, Variant
from klondike_live.solver import Budget, solve

EASY = Variant(draw=1, passes=UNLIMITED)
TEST_SECRET = b"klondike-live-test-secret-0123456789abcdef"  # as in tests/conftest.py


def certified_deals(variant: Variant, count: int, nodes: int = 20_000) -> list[CertifiedDeal]:
    deals: list[CertifiedDeal] = []
    while len(deals) < count:
        seed = secrets.token_hex(16)
        result = solve(Board.from_seed(seed, variant), Budget(nodes=nodes))
        if result.result == "solvable":
            deals.append(CertifiedDeal(seed, variant, tuple(result.moves)))
    return deals
