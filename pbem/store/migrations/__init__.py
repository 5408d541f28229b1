"""Alembic migrations of the store (run them with `pbem.store.db.migrate`)."""
