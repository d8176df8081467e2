"""Erased players: the deleted accounts, so that what reaches the database
after the deletion (a game from the outbox, a closed day, a tournament) is erased too.

Revision 0007_erased_players: the `erased_players` table of `history.schema`: each
erased player's marker (`history.erasure.deleted_id`, never the user id itself).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_erased_players"
down_revision = "0006_bot_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erased_players",
        sa.Column("marker", sa.String(length=128), nullable=False),
        sa.Column("erased_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("marker", name=op.f("pk_erased_players")),
    )


def downgrade() -> None:
    op.drop_table("erased_players")
