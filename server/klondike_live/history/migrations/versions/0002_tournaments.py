"""Tournaments that are over, kept with their archive.

Revision 0002_tournaments: the `tournaments` table of `history.schema`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_tournaments"
down_revision = "0001_games"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index(
        op.f("ix_tournaments_public_created_at"), "tournaments", ["public", "created_at"]
    )


def downgrade() -> None:
    op.drop_table("tournaments")
