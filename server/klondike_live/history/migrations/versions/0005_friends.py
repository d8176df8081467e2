"""Friends: who follows whom and who blocked whom.

Revision 0005_friends: the `follows` and `blocks` tables of `history.schema`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_friends"
down_revision = "0004_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "follows",
        sa.Column("follower", sa.String(length=128), nullable=False),
        sa.Column("followed", sa.String(length=128), nullable=False),
        sa.Column("follower_name", sa.String(length=64), nullable=False),
        sa.Column("followed_name", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("follower", "followed", name=op.f("pk_follows")),
    )
    op.create_index(op.f("ix_follows_followed"), "follows", ["followed"])
    op.create_table(
        "blocks",
        sa.Column("blocker", sa.String(length=128), nullable=False),
        sa.Column("blocked", sa.String(length=128), nullable=False),
        sa.Column("blocked_name", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("blocker", "blocked", name=op.f("pk_blocks")),
    )
    op.create_index(op.f("ix_blocks_blocked"), "blocks", ["blocked"])


def downgrade() -> None:
    op.drop_table("blocks")
    op.drop_table("follows")
