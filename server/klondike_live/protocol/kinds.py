"""Closed sets of values that clients send and see: roles, room kinds, deal modes.

Each is a `StrEnum` whose values are the wire strings, so a member compares, hashes and
encodes as its text.
"""

from __future__ import annotations

from enum import StrEnum


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
