"""History: what outlives a game's hour in Valkey, in a SQL database.

`database.History` (SQLite by default, PostgreSQL for a cluster) holds finished games,
their analyses and players' statistics; `schema` its tables, `migrate` its versions.
The live service fills it from its outbox (`service.archive`) and reads it where
Valkey no longer holds a game (`service.queries`).
"""

from klondike_live.history.database import (
    UNRANKED,
    Cursor,
    GameFilter,
    GamesPage,
    History,
    HistoryError,
    database_url,
)
from klondike_live.history.migrate import MigrationError, SchemaTooNew

__all__ = [
    "UNRANKED",
    "Cursor",
    "GameFilter",
    "GamesPage",
    "History",
    "HistoryError",
    "MigrationError",
    "SchemaTooNew",
    "database_url",
]
