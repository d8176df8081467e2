"""Finished games, their players and players' statistics (the first schema).

Revision 0001_games: the tables of `history.schema` as first released.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_games"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("room_id", sa.String(length=64), nullable=False),
        sa.Column("gen", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("variant", sa.String(length=48), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("certified", sa.Boolean(), nullable=False),
        sa.Column("daily_date", sa.String(length=10), nullable=True),
        sa.Column("ranked", sa.Boolean(), nullable=False),
        sa.Column("seed", sa.String(length=64), nullable=False),
        sa.Column("commitment", sa.String(length=128), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.Column("players", sa.SmallInteger(), nullable=False),
        sa.Column("results", sa.LargeBinary(), nullable=False),
        sa.Column("analysis", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("room_id", "gen", name=op.f("pk_games")),
    )
    op.create_index(op.f("ix_games_public_ended_at"), "games", ["public", "ended_at"])
    op.create_index(op.f("ix_games_daily_date_variant"), "games", ["daily_date", "variant"])
    op.create_table(
        "game_players",
        sa.Column("room_id", sa.String(length=64), nullable=False),
        sa.Column("gen", sa.Integer(), nullable=False),
        sa.Column("seat", sa.SmallInteger(), nullable=False),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("bot", sa.Boolean(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("variant", sa.String(length=48), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("result", sa.String(length=8), nullable=False),
        sa.Column("rank", sa.SmallInteger(), nullable=False),
        sa.Column("found", sa.SmallInteger(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("time_ms", sa.BigInteger(), nullable=True),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["room_id", "gen"],
            ["games.room_id", "games.gen"],
            name=op.f("fk_game_players_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("room_id", "gen", "seat", name=op.f("pk_game_players")),
    )
    op.create_index(
        op.f("ix_game_players_user_id_ended_at_room_id_gen"),
        "game_players",
        ["user_id", "ended_at", "room_id", "gen"],
    )
    op.create_index(
        op.f("ix_game_players_user_id_kind_variant_ended_at"),
        "game_players",
        ["user_id", "kind", "variant", "ended_at"],
    )
    op.create_index(
        op.f("ix_game_players_user_id_result_ended_at"),
        "game_players",
        ["user_id", "result", "ended_at"],
    )
    op.create_table(
        "player_stats",
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("variant", sa.String(length=48), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("best_ms", sa.BigInteger(), nullable=True),
        sa.Column("fewest", sa.Integer(), nullable=True),
        sa.Column("streak", sa.Integer(), nullable=False),
        sa.Column("best_streak", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "kind", "variant", name=op.f("pk_player_stats")),
    )


def downgrade() -> None:
    op.drop_table("player_stats")
    op.drop_table("game_players")
    op.drop_table("games")
