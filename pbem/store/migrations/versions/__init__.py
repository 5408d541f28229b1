"""Alembic revision scripts, oldest first by revision id."""
