"""Accounts: guests made permanent, their passkeys and their signed-in sessions.

Revision 0004_accounts: the `accounts`, `passkeys` and `sessions` tables of
`history.schema`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_accounts"
down_revision = "0003_daily"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("username_key", sa.String(length=128), nullable=False),
        sa.Column("password", sa.String(length=256), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_accounts")),
    )
    op.create_index(op.f("ix_accounts_username_key"), "accounts", ["username_key"], unique=True)
    op.create_table(
        "passkeys",
        sa.Column("credential_id", sa.String(length=1400), nullable=False),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("sign_count", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["accounts.user_id"],
            name=op.f("fk_passkeys_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("credential_id", name=op.f("pk_passkeys")),
    )
    op.create_index(op.f("ix_passkeys_user_id"), "passkeys", ["user_id"])
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("agent", sa.String(length=160), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["accounts.user_id"],
            name=op.f("fk_sessions_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
    )
    op.create_index(op.f("ix_sessions_user_id"), "sessions", ["user_id"])


def downgrade() -> None:
    op.drop_table("sessions")
    op.drop_table("passkeys")
    op.drop_table("accounts")
