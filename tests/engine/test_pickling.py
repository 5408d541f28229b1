"""A player's view goes to the rendering helper pickled: cards, events and score items
pickle compactly and come back equal, the cards as the one object of their index."""

from __future__ import annotations

import pickle
import random

from engine import Game, Settings, player_view
from engine.cards import Card, full_deck


def test_cards_come_back_as_the_one_card_of_their_index() -> None:
    for card in full_deck():
        back = pickle.loads(pickle.dumps(card))
        assert back is Card.from_index(card.index) and back == card


def test_a_view_comes_back_equal_at_every_move_of_a_game() -> None:
    for players in (2, 3, 4):
        game = Game(Settings(players=players, target=61), f"pickle-{players}")
        rng = random.Random(players)
        while not game.is_over:
            for seat in range(players):
                view = player_view(game, seat)
                assert pickle.loads(pickle.dumps(view)) == view
            game.apply(rng.choice(game.legal_actions()))
