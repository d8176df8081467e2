"""What each bot level is: its pace (think time per move) and its policy's settings.

    spec = LEVELS[BotLevel.STEADY]
    seconds = spec.pace.draw(rng)        # one think time, log-normal, clamped

Think times are log-normal: `exp(mu + sigma * N(0, 1))` seconds, clamped to
[`low`, `high`]. The human fit (`HUMAN`) comes from the move times the server stores
with every finished race (`tools/fit_pace.py` measures it, docs/rules.md says how);
each level scales the human median (`scale`) and keeps the human spread (`sigma`).

Policies (`policy.py`): *relaxed* and *steady* play the hint heuristic
(`solver.hints.move_score`) and, with probability `mistake_rate`, a weaker move (the
next-best distinct score); *expert* weighs its moves by heuristic playouts over samples
of the hidden cards consistent with its view, and once few cards are hidden plans with
the solver over such samples and follows a winning line while the cards it turns over
agree with it.

This module must stay pure: no I/O.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

from klondike_live.protocol.kinds import BotLevel


@dataclass(frozen=True, slots=True)
class Pace:
    """A log-normal think time in seconds, clamped to [low, high]."""

    mu: float
    sigma: float
    low: float = 0.25
    high: float = 20.0

    @property
    def median(self) -> float:
        return math.exp(self.mu)

    def draw(self, rng: random.Random) -> float:
        return min(self.high, max(self.low, math.exp(rng.gauss(self.mu, self.sigma))))

    def scaled(self, factor: float) -> Pace:
        """The same spread around `factor` times the median."""
        return Pace(self.mu + math.log(factor), self.sigma, self.low, self.high)


HUMAN: Final = Pace(mu=math.log(1.6), sigma=0.75)
"""Human think time per move. Prior until refitted: no recorded human races were
available where this was written (docs/rules.md, "Bots", says how to refit it with
`tools/fit_pace.py`)."""


@dataclass(frozen=True, slots=True)
class LevelSpec:
    """A level's pace and policy settings."""

    level: BotLevel
    factor: float  # its median think time over the human median
    pace: Pace
    mistake_rate: float  # heuristic levels: chance of playing a weaker move
    plans: bool  # plans with the solver (expert)
    name: str  # the default display name of a bot of this level


def _level(level: BotLevel, factor: float, mistakes: float, plans: bool, name: str) -> LevelSpec:
    return LevelSpec(level, factor, HUMAN.scaled(factor), mistakes, plans, name)


LEVELS: Final = {
    BotLevel.RELAXED: _level(BotLevel.RELAXED, 1.5, 0.25, False, "Relaxed bot"),
    BotLevel.STEADY: _level(BotLevel.STEADY, 1.0, 0.08, False, "Steady bot"),
    BotLevel.EXPERT: _level(BotLevel.EXPERT, 0.6, 0.0, True, "Expert bot"),
}
