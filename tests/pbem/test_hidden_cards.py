"""No mail names a card its recipient may not see — over whole games.

Whole 2-, 3- and 4-player games (to 61; one with muggins, so hands are claimed, mugged
and revealed) are played by the computer players. After every action every player's turn
mail (text, HTML and its ``view.json``) and the observer's mail (text and HTML) are
rendered, and each is scanned for every card the recipient may not see at that moment,
in each of its spellings (``10♥``, ``10H``). What a recipient may see is built from the
engine's state, not from the view the mail was made from: their own cards this hand, the
public cards of this hand (played, the starter, the hand or crib lying face up), and the
cards of the events since their previous mail that were public or theirs (a past hand's
show names cards that may be dealt again since). Every other card of the 52 — a hand,
the crib before its show, a card laid away, the pack — must appear nowhere.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from engine import OBSERVER, Card, Event, Game, computer, new_game, observer_view, player_view
from engine.cards import Card as CardType
from pbem.render import MailContext, render_observer, render_turn

NAMES = ("Alice", "Bob", "Carol", "Dave")
ALL_CARDS = tuple(CardType.from_index(i) for i in range(52))


SPELLINGS = {spelling: card for card in ALL_CARDS for spelling in (str(card), card.ascii)}
ANY_CARD = re.compile(
    r"(?<![0-9A-Za-z])("
    + "|".join(re.escape(s) for s in sorted(SPELLINGS, key=len, reverse=True))
    + r")(?![0-9A-Za-z])"
)
"""Any spelling of any card (``10♥``, ``10H``) as a word of its own: one pass a text."""


def event_cards(e: Event) -> set[Card]:
    return set(e.cards) | {c for item in e.items for c in item.cards}


def may_see(game: Game, seat: int, since: int) -> set[Card]:
    """The cards ``seat`` (or `OBSERVER`) may see now, told the events from ``since``."""
    seen: set[Card] = {c for _, c, _ in game.plays} | set(game.showing())
    if game.starter is not None:
        seen.add(game.starter)
    if seat != OBSERVER:
        seen |= set(game.holding(seat)) | set(game.kept(seat)) | set(game.laid_away(seat))
    mine = (None,) if seat == OBSERVER else (None, seat)
    starters = {e.hand: e.cards for e in game.events if e.kind == "starter"}
    for i, e in enumerate(game.events):
        if e.private_to not in mine:
            continue
        if (e.hand == game.hand_no and e.private_to is None) or i >= since:
            seen |= event_cards(e)
            seen |= set(starters.get(e.hand, ())) if i >= since else set()
    return seen


def assert_clean(where: str, texts: tuple[str, ...], allowed: set[Card]) -> None:
    for text in texts:
        named = {SPELLINGS[match] for match in ANY_CARD.findall(text)}
        leaked = named - allowed
        assert not leaked, f"{where}: {sorted(map(str, leaked))} may not be seen:\n{text}"


def context(game_id: int, players: int, seat: int, since: int) -> MailContext:
    return MailContext(
        game_id=game_id,
        names=NAMES[:players],
        recipient_seat=seat,
        reply_hint="Reply to this email with your move.",
        since_event=since,
    )


@pytest.mark.parametrize(
    ("players", "muggins", "seed"),
    [(2, False, "whole-2"), (3, True, "whole-3"), (4, False, "whole-4")],
)
def test_no_mail_of_a_whole_game_names_a_card_its_recipient_may_not_see(
    players: int, muggins: bool, seed: str
) -> None:
    game = new_game(players, seed=seed, target=61, muggins=muggins)
    rng = random.Random(seed)
    told = dict.fromkeys([*range(players), OBSERVER], 0)  # each recipient's previous mail
    mails = 0
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer.choose_action(game, seat, rng, "random"))
        for recipient, since in told.items():
            allowed = may_see(game, recipient, since)
            about = context(7, players, recipient, since)
            if recipient == OBSERVER:
                mail = render_observer(observer_view(game, since), about)
                texts: tuple[str, ...] = (mail.subject, mail.text, mail.html)
            else:
                view = player_view(game, recipient, since)
                mail = render_turn(view, about)
                attached = json.dumps(view.to_json(), ensure_ascii=False)
                texts = (mail.subject, mail.text, mail.html, attached)
            where = f"hand {game.hand_no}, mail to {recipient} after {game.actions[-1]}"
            assert_clean(where, texts, allowed)
            told[recipient] = len(game.events)
            mails += 1
    assert game.outcome is not None and mails > 40 * (players + 1)


def test_the_check_finds_a_hidden_card() -> None:
    """The scan is not blind: an opponent's hand pasted into a mail is caught."""
    game = new_game(2, seed="leak", target=61)
    view = player_view(game, 0, 0)
    mail = render_turn(view, context(1, 2, 0, 0))
    leaked = " ".join(str(c) for c in game.holding(1))
    with pytest.raises(AssertionError, match="may not be seen"):
        assert_clean("leak", (mail.text + leaked,), may_see(game, 0, 0))
