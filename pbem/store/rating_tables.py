"""The stored standings' tables (`pbem.store.ratings` reads and writes them); part of
`pbem.store.models`, which names them as the others."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from pbem.store.types import ID_TYPE, UTCDateTime


class Rating(SQLModel, table=True):
    """One line of the standings (`pbem.ratings.Standing`), stored and updated once for
    each game the player finishes (`pbem.service.game.standings`), so the standings are a read
    of this table. ``key`` is the player's address, or ``computer:LEVEL`` for a computer
    level (``player_id`` None); ``rating`` is ``mu - 3 sigma``, the table's order."""

    __tablename__ = "rating"
    # The table's order (best rating, then more games, then the key), read from its top.
    __table_args__ = (Index(None, "rating", "games"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    key: str = Field(unique=True)
    player_id: int | None = Field(default=None, foreign_key="player.id", sa_type=ID_TYPE)
    name: str
    computer: bool = False
    mu: float
    sigma: float
    rating: float
    games: int = 0
    wins: int = 0
    skunks: int = 0
    skunked: int = 0
    hands: int = 0
    cribs: int = 0
    pegging: int = 0
    hand: int = 0
    crib: int = 0


class RatedGame(SQLModel, table=True):
    """A finished game the stored standings count, in the order they were rated
    (``seq``: 1, 2, …): each game once, never an aborted one."""

    __tablename__ = "rated_game"

    game_id: int = Field(primary_key=True, foreign_key="game.id", sa_type=ID_TYPE)
    seq: int = Field(unique=True)
    rated_at: datetime = Field(sa_type=UTCDateTime)


class RatingTotal(SQLModel, table=True):
    """The one row that counts the rated games: each game's rating takes its row lock
    first, so games that end at once are rated one after the other, in ``seq`` order."""

    __tablename__ = "rating_total"

    id: int = Field(default=1, primary_key=True, sa_type=ID_TYPE)
    games: int = 0
