"""Alembic's environment for the history database: migrations run on a connection the
caller opened (`history.migrate`), never from a URL of their own."""

from __future__ import annotations

from alembic import context

from klondike_live.history.schema import metadata

connection = context.config.attributes["connection"]
# Batch mode: SQLite alters a table by copying it, which Alembic does for us.
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
