"""display_name and public_name: a player's name to themself, and to everyone else."""

from __future__ import annotations

import pytest

from pbem.service.context import Seated, display_name, public_name
from pbem.store import models as m
from tests.pbem.service.desk import NOW


def player(email: str = "ann.lee@play.example", name: str | None = None) -> m.Player:
    return m.Player(id=12, email=email, display_name=name, created_at=NOW)


def test_a_player_without_a_chosen_name_is_a_number_to_others() -> None:
    nameless = player()
    assert public_name(nameless) == "Player 12"
    assert display_name(nameless) == "Ann.lee"  # to themself: their own address's part
    assert Seated(m.Seat(game_id=1, seat=0, player_id=12, token="t"), nameless).name == "Player 12"


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("Ann", "Ann"),
        ("\u202eAnn\u200b \r\n Lee", "Ann Lee"),
        ("=?utf-8?b?QW5u?=", "utf-8?b?QW5u"),
    ],
)
def test_a_chosen_name_is_shown_cleaned(stored: str, shown: str) -> None:
    assert public_name(player(name=stored)) == shown
    assert display_name(player(name=stored)) == shown


@pytest.mark.parametrize("stored", ["", " \u200b\u202e ", "ann.lee@play.example", "Ann <a@b.c>"])
def test_an_empty_name_or_one_holding_an_address_is_not_shown_to_others(stored: str) -> None:
    assert public_name(player(name=stored)) == "Player 12"


def test_a_player_not_stored_yet_is_a_player() -> None:
    assert public_name(m.Player(email="x@y.example", created_at=NOW)) == "A player"
