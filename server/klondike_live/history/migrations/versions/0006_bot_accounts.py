"""Bot accounts: an account row may belong to an owner account.

Revision 0006_bot_accounts: the `owner` column of `accounts` (NULL for a person's
account, the owner's user id for a bot account) and its index. A bot's tokens are
rows of `sessions` (method `bot`), so they end the way sessions do.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_bot_accounts"
down_revision = "0005_friends"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("accounts") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=128), nullable=True))
    op.create_index(op.f("ix_accounts_owner"), "accounts", ["owner"])


def downgrade() -> None:
    op.drop_index(op.f("ix_accounts_owner"), table_name="accounts")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("owner")
