"""Race ranking, exactly as the rules say.

Winners first, by finish time (earlier is better). Everyone else after them, by cards on
the foundations (more is better), then by when they reached that count (earlier is
better). Equal keys share a rank, and the next rank skips (1, 1, 3): ties are shown as
ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Standing:
    """One racer's result: `finish_ms` for winners, `found_ms` when `found` was reached."""

    seat: int
    won: bool
    finish_ms: int
    found: int
    found_ms: int

    def sort_key(self) -> tuple[int, int, int]:
        if self.won:
            return (0, self.finish_ms, 0)
        return (1, -self.found, self.found_ms)


def rank(standings: Sequence[Standing]) -> list[tuple[int, Standing]]:
    """`(rank, standing)` pairs in ranking order; equal keys share the lower rank number."""
    ordered = sorted(standings, key=lambda s: (s.sort_key(), s.seat))
    out: list[tuple[int, Standing]] = []
    for position, standing in enumerate(ordered, start=1):
        if out and out[-1][1].sort_key() == standing.sort_key():
            out.append((out[-1][0], standing))
        else:
            out.append((position, standing))
    return out
