"""Closed sets of values that clients send and see (roles, room kinds, deal modes,
audiences), and where a board frame belongs (`BoardPosition`).

Each set is a `StrEnum` whose values are the wire strings, so a member compares, hashes
and encodes as its text.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, NamedTuple


class Role(StrEnum):
    """How a connection is in a room."""

    RACER = "racer"
    SPECTATOR = "spectator"


class RoomKind(StrEnum):
    """What a room is for."""

    RACE = "race"  # two to eight racers on one deal
    SOLO = "solo"  # one player, practice rules
    DAILY = "daily"  # a daily challenge: one ranked attempt, or practice on its deal


class DealMode(StrEnum):
    """Where a room's deals come from."""

    CERTIFIED = "certified"  # from the pool of deals proven winnable, when it has one
    ANY = "any"  # a random deal


class BotLevel(StrEnum):
    """How an in-server bot racer plays (docs/rules.md, "Bots")."""

    RELAXED = "relaxed"  # slow, the hint heuristic, often a weaker move
    STEADY = "steady"  # human pace, the hint heuristic, now and then a weaker move
    EXPERT = "expert"  # quick, plans with the solver over what its view shows


class TournamentFormat(StrEnum):
    """How a tournament is played (docs/tournaments.md)."""

    SERIES = "series"  # each day's daily deal over a date range
    HEATS = "heats"  # scheduled live races of every entrant on one deal


class Reaction(StrEnum):
    """The reactions spectators and finished racers may send (docs/protocol.md, 7f): a
    fixed set of ids, drawn by clients as they like (no free text, nothing to moderate)."""

    CLAP = "clap"
    FIRE = "fire"
    WOW = "wow"
    LAUGH = "laugh"
    SAD = "sad"
    PARTY = "party"


class Audience(StrEnum):
    """Who a live board stream is for (each board has one stream per audience)."""

    OWN = "own"  # the racer
    SPECTATOR = "spectator"  # everyone watching live


class BoardPosition(NamedTuple):
    """Where a board frame belongs: its audience's stream of board `seat` in race
    `epoch` (the room's `gen`), at stream offset `offset`. The same value goes on the
    wire (a frame's `audience`, `seat`, `epoch`, `off`), in the bus header of a
    published frame, and in the node's records of what each viewer was sent."""

    audience: Audience
    seat: int
    epoch: int
    offset: int

    @property
    def stream(self) -> tuple[Audience, int]:
        """Which stream: (audience, seat)."""
        return (self.audience, self.seat)

    @property
    def at(self) -> tuple[int, int]:
        """How far along it: (epoch, offset), ordered."""
        return (self.epoch, self.offset)


BEST_OF: Final = (1, 3, 5, 7)
"""The match lengths a race may be created with (`create`'s `best_of`; 1: one race)."""
