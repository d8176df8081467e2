"""The history database's tables: finished games, their players, players' statistics.

One schema for SQLite and PostgreSQL, written with SQLAlchemy Core; the migrations
(`history/migrations/versions/`) create exactly these tables, and a test holds the two
to each other (`alembic.autogenerate.compare_metadata` finds no difference).

- `games`: one row per finished game, keyed by room and generation. `results` is the
  game's stored results exactly as the live service built them (msgpack: ranking,
  seed, deal, records, move times; `race.results.build_results`), so that what a page
  may show of a game is decided by `race.redaction` whichever store it came from.
  `analysis` is its solver analysis (zlib-compressed msgpack) once computed.
- `game_players`: one row per seat, with what the player pages filter and page on
  (`user_id`, `ended_at`, the game's `kind` and `variant`, `result`), indexed for them.
- `player_stats`: per player and category (kind, variant), the counters of
  `race.stats.fold`, updated in the transaction that adds a game.
- `daily_days` and `daily_rows`: each closed day of the daily challenge in each variant:
  its record (seed, deal number, par, commitment, winning line) and its final
  leaderboard, a row per account in order, with its competition rank and its entry as
  the live leaderboard kept it (`daily.leaderboard.DailyResult`, JSON).
- `tournaments`: each tournament that is over (finished or cancelled), its state as the
  live service stored it (msgpack: settings, entrants, heats and their results, log;
  `race.tournament.TournamentState`), what its archive page shows.
- `accounts`, `passkeys` and `sessions`: guests made accounts (keyed by the guest's own
  user id): the username as shown and its key (`accounts.usernames`, unique), the
  argon2id hash of a password if it has one; its passkeys (WebAuthn credentials); its
  signed-in devices, each a session a token names (`sid`) until it is ended. A bot
  account is an `accounts` row with an `owner` (the owning account's user id) and no
  credential; its token is a `sessions` row of method `bot` (`history.bots`).
- `follows` and `blocks`: who follows whom and who blocked whom (user ids, guests'
  and accounts' alike), with the names shown when the row was written
  (`history.friends`).
- `erased_players`: each deleted account, by the marker its user id became
  (`history.erasure.deleted_id`: the user id itself is kept nowhere), and when it was
  erased: whatever reaches the database later from Valkey (a game from the
  outbox, a closed day's leaderboard, a tournament that ends) is erased before it is
  written.

Times are milliseconds since the epoch (the shared Redis clock's), as everywhere else.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
)

metadata: Final = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "pk": "pk_%(table_name)s",
        "fk": "fk_%(table_name)s_%(referred_table_name)s",
    }
)

games: Final = Table(
    "games",
    metadata,
    Column("room_id", String(64), primary_key=True),
    Column("gen", Integer, primary_key=True),
    Column("kind", String(16), nullable=False),  # solo, race, daily (`RoomKind`)
    Column("variant", String(48), nullable=False),  # `Variant` text, e.g. "draw=1"
    Column("public", Boolean, nullable=False),
    Column("certified", Boolean, nullable=False),
    Column("daily_date", String(10)),  # a daily game's day (ISO), else NULL
    Column("ranked", Boolean, nullable=False),  # a ranked daily attempt
    Column("seed", String(64), nullable=False),
    Column("commitment", String(128), nullable=False),
    Column("started_at", BigInteger, nullable=False),
    Column("ended_at", BigInteger, nullable=False),
    Column("players", SmallInteger, nullable=False),
    Column("results", LargeBinary, nullable=False),
    Column("analysis", LargeBinary),
    Index(None, "public", "ended_at"),
    Index(None, "daily_date", "variant"),
)

game_players: Final = Table(
    "game_players",
    metadata,
    Column("room_id", String(64), primary_key=True),
    Column("gen", Integer, primary_key=True),
    Column("seat", SmallInteger, primary_key=True),
    Column("user_id", String(128), nullable=False),
    Column("name", String(64), nullable=False),
    Column("bot", Boolean, nullable=False),
    Column("kind", String(16), nullable=False),  # the game's statistics kind (`StatsKind`)
    Column("variant", String(48), nullable=False),
    Column("status", String(16), nullable=False),  # `BoardStatus` at the end
    Column("result", String(8), nullable=False),  # won, lost (the player's, `GameResult`)
    Column("rank", SmallInteger, nullable=False),
    Column("found", SmallInteger, nullable=False),
    Column("moves", Integer, nullable=False),
    Column("time_ms", BigInteger),  # a completed board's time, else NULL
    Column("ended_at", BigInteger, nullable=False),
    ForeignKeyConstraint(["room_id", "gen"], ["games.room_id", "games.gen"], ondelete="CASCADE"),
    # A player's games, newest first (the cursor is ended_at, room_id, gen)...
    Index(None, "user_id", "ended_at", "room_id", "gen"),
    # ... of one kind and variant, or of one result.
    Index(None, "user_id", "kind", "variant", "ended_at"),
    Index(None, "user_id", "result", "ended_at"),
)

player_stats: Final = Table(
    "player_stats",
    metadata,
    Column("user_id", String(128), primary_key=True),
    Column("kind", String(16), primary_key=True),
    Column("variant", String(48), primary_key=True),
    Column("played", Integer, nullable=False),
    Column("won", Integer, nullable=False),
    Column("best_ms", BigInteger),
    Column("fewest", Integer),
    Column("streak", Integer, nullable=False),
    Column("best_streak", Integer, nullable=False),
)

daily_days: Final = Table(
    "daily_days",
    metadata,
    Column("date", String(10), primary_key=True),
    Column("variant", String(48), primary_key=True),
    Column("seed", String(64), nullable=False),
    Column("n", BigInteger, nullable=False),
    Column("par", Integer, nullable=False),
    Column("commitment", String(128), nullable=False),
    Column("moves", Text, nullable=False),  # the winning line, tokens separated by spaces
    Column("players", Integer, nullable=False),
)

daily_rows: Final = Table(
    "daily_rows",
    metadata,
    Column("date", String(10), primary_key=True),
    Column("variant", String(48), primary_key=True),
    Column("position", Integer, primary_key=True),  # 0-based, best first
    Column("rank", Integer, nullable=False),
    Column("user_id", String(128), nullable=False),
    Column("entry", Text, nullable=False),
    ForeignKeyConstraint(
        ["date", "variant"], ["daily_days.date", "daily_days.variant"], ondelete="CASCADE"
    ),
    Index(None, "date", "variant", "user_id", unique=True),
    Index(None, "user_id", "date"),
)

tournaments: Final = Table(
    "tournaments",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(128), nullable=False),
    Column("format", String(16), nullable=False),
    Column("public", Boolean, nullable=False),
    Column("phase", String(16), nullable=False),  # finished or cancelled
    Column("created_at", BigInteger, nullable=False),
    Column("ended_at", BigInteger, nullable=False),
    Column("state", LargeBinary, nullable=False),
    Index(None, "public", "created_at"),
)

accounts: Final = Table(
    "accounts",
    metadata,
    Column("user_id", String(128), primary_key=True),
    Column("username", String(64), nullable=False),  # as shown (NFKC)
    Column("username_key", String(128), nullable=False),  # `accounts.usernames.username_key`
    Column("password", String(256)),  # argon2id (PHC string), or NULL: passkeys only
    Column("created_at", BigInteger, nullable=False),
    Column("owner", String(128)),  # a bot account's owner (user id), NULL for a person
    Index(None, "username_key", unique=True),
    Index(None, "owner"),
)

passkeys: Final = Table(
    "passkeys",
    metadata,
    Column("credential_id", String(1400), primary_key=True),  # base64url
    Column("user_id", String(128), nullable=False),
    Column("public_key", LargeBinary, nullable=False),  # COSE
    Column("sign_count", BigInteger, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    ForeignKeyConstraint(["user_id"], ["accounts.user_id"], ondelete="CASCADE"),
    Index(None, "user_id"),
)

sessions: Final = Table(
    "sessions",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("user_id", String(128), nullable=False),
    Column("method", String(16), nullable=False),  # passkey, password (how it signed in)
    Column("agent", String(160), nullable=False),  # the browser's User-Agent, shortened
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    ForeignKeyConstraint(["user_id"], ["accounts.user_id"], ondelete="CASCADE"),
    Index(None, "user_id"),
)

follows: Final = Table(
    "follows",
    metadata,
    Column("follower", String(128), primary_key=True),
    Column("followed", String(128), primary_key=True),
    Column("follower_name", String(64), nullable=False),
    Column("followed_name", String(64), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index(None, "followed"),
)

blocks: Final = Table(
    "blocks",
    metadata,
    Column("blocker", String(128), primary_key=True),
    Column("blocked", String(128), primary_key=True),
    Column("blocked_name", String(64), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index(None, "blocked"),
)

erased_players: Final = Table(
    "erased_players",
    metadata,
    Column("marker", String(128), primary_key=True),  # `deleted_id(user)`
    Column("erased_at", BigInteger, nullable=False),
)
