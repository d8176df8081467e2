"""Closed days of the daily challenge: their records and final leaderboards.

Revision 0003_daily: the `daily_days` and `daily_rows` tables of `history.schema`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_daily"
down_revision = "0002_tournaments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "daily_days",
        sa.Column("date", sa.String(length=10), nullable=False),
        sa.Column("variant", sa.String(length=48), nullable=False),
        sa.Column("seed", sa.String(length=64), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.Column("par", sa.Integer(), nullable=False),
        sa.Column("commitment", sa.String(length=128), nullable=False),
        sa.Column("moves", sa.Text(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("date", "variant", name=op.f("pk_daily_days")),
    )
    op.create_table(
        "daily_rows",
        sa.Column("date", sa.String(length=10), nullable=False),
        sa.Column("variant", sa.String(length=48), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("entry", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["date", "variant"],
            ["daily_days.date", "daily_days.variant"],
            name=op.f("fk_daily_rows_daily_days"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("date", "variant", "position", name=op.f("pk_daily_rows")),
    )
    op.create_index(
        op.f("ix_daily_rows_date_variant_user_id"),
        "daily_rows",
        ["date", "variant", "user_id"],
        unique=True,
    )
    op.create_index(op.f("ix_daily_rows_user_id_date"), "daily_rows", ["user_id", "date"])


def downgrade() -> None:
    op.drop_table("daily_rows")
    op.drop_table("daily_days")
