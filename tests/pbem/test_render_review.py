"""The review after a game in words (`pbem.render.review`): why a discard or a play cost
points, in a cribbage player's words; each hand's line with its marks; the summary and
its total; and the game-over mail's text and HTML parts with the review (none without)."""

from __future__ import annotations

import pytest

from engine import Card, Game, Settings, parse_cards, player_view
from engine.analysis import DiscardAnalysis, DiscardOption, Threat
from engine.computer import computer_move, computer_view
from engine.review import DiscardDecision, GameReview, PlayDecision, review_game
from engine.scoring import FIFTEEN, THIRTY_ONE
from pbem.render import MailContext, render_turn
from pbem.render.review import SAME, discard_why, hand_lines, play_why, review_text
from pbem.render.words import plain

NAMES = ["Nia", "Otto"]


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_cards(text))


def option(kept: str, laid: str, hand: float, crib: float) -> DiscardOption:
    return DiscardOption(cards(kept), cards(laid), hand, crib, 0.0)


def discard(
    made: DiscardOption, hard: DiscardOption, *, dealer: int = 1, own: bool = False
) -> DiscardDecision:
    holding = tuple(sorted((*made.kept, *made.laid_away)))
    analysis = DiscardAnalysis(own, (hard, made))
    return DiscardDecision(1, dealer, own, holding, made, hard, analysis)


@pytest.mark.parametrize(
    ("laid", "why"),
    [
        ("5h 5s", "a pair is 2 in the crib before the starter is even cut"),
        ("7h 8s", "cards that make fifteen are 2 in the crib already"),
        ("5h 2s", "a five is the best card a crib can get"),
        ("9h js", "cards that touch help the crib to a run"),
        ("2h ks", "Otto's crib expects 5.0 with yours against 3.2"),
    ],
)
def test_a_discard_to_the_opponents_crib(laid: str, why: str) -> None:
    made = option("3c 4d 6c 9d", laid, 6.0, -5.0)
    hard = option("3c 4d 6c qd", "9c 10c", 6.2, -3.2)
    said = plain(discard_why(discard(made, hard), 0, NAMES))
    assert said.startswith(
        f"Hand 1: you kept 3♣ 4♦ 6♣ 9♦ and laid away {' '.join(map(str, made.laid_away))} "
    )
    assert "to Otto's crib; keeping 3♣ 4♦ 6♣ Q♦ and laying away 9♣ 10♣, as the computer" in said
    assert "is worth about 2.0 points more a hand — " in said
    assert why in said


def test_a_discard_that_costs_in_the_hand_and_to_ones_own_crib() -> None:
    made = option("3c 4d 6c 9d", "5h 5s", 4.0, 5.0)
    hard = option("4d 5h 5s 6c", "3c 9d", 9.0, 3.0)
    said = plain(discard_why(discard(made, hard, dealer=0, own=True), 0, NAMES))
    assert "to your crib" in said
    assert "about 3.0 points more a hand — the hand kept shows 4.0 on average against 9.0" in said
    closer = option("3c 4d 6c 9d", "5h 5s", 4.0, 2.0)
    said = plain(discard_why(discard(closer, hard, dealer=0, own=True), 0, NAMES))
    assert "your own crib expects 2.0 with yours against 3.0" not in said  # hand 5 > crib 1
    crib_first = option("4d 5h 5s 6c", "3c 9d", 8.0, 1.0)
    said = plain(
        discard_why(
            discard(crib_first, option("3c 4d 6c 9d", "5h 5s", 7.5, 3.0), dealer=0, own=True),
            0,
            NAMES,
        )
    )
    assert "your own crib expects 1.0 with yours against 3.0" in said
    assert "about 1.5 points more" in said


def play(
    made: str,
    hard: str,
    *,
    count_cards: str = "6c 9c",
    values: tuple[float, float] = (0.0, 1.0),
    made_points: int = 0,
    hard_points: int = 0,
    threat: Threat | None = None,
) -> PlayDecision:
    a, b = cards(made)[0], cards(hard)[0]
    on = cards(count_cards) if count_cards else ()
    return PlayDecision(
        hand_no=4,
        count=sum(c.value for c in on),
        count_cards=on,
        holding=tuple(sorted({a, b})),
        made=a,
        computer=b,
        values=((b, values[1]), (a, values[0])),
        made_points=made_points,
        computer_points=hard_points,
        answering=1,
        threat=threat,
    )


def test_a_play_that_missed_points_at_once() -> None:
    said = plain(play_why(play("3h", "ks", count_cards="5c", hard_points=2), NAMES))
    assert said == (
        "Hand 4, count 5 on 5♣: you played 3♥ (8); K♠, as the computer would, is about "
        "1.0 point better by the end of the play — K♠ makes fifteen for 2 at once."
    )


def test_a_play_that_left_the_opponent_a_score() -> None:
    threat = Threat((10, 11, 12, 13), 2, (THIRTY_ONE,), 0.62)
    said = plain(play_why(play("6h", "2s", values=(0.0, 1.25), threat=threat), NAMES))
    assert said.startswith("Hand 4, count 15 on 6♣ 9♣: you played 6♥ (21); 2♠, as")
    assert "about 1.2 points better" in said or "about 1.3 points better" in said
    assert said.endswith("— after your 6♥, a ten card makes 31 for 2 (Otto holds one: about 62%).")


def test_a_lead_that_keeps_worse_cards() -> None:
    said = plain(play_why(play("5h", "4s", count_cards=""), NAMES))
    assert said.startswith("Hand 4, leading: you played 5♥ (5); 4♠, as the computer would")
    assert said.endswith("— 4♠ keeps the better cards for later in the play.")
    fifteen = Threat((10, 11, 12, 13), 2, (FIFTEEN,), 0.8)
    said = plain(play_why(play("5h", "4s", count_cards="", threat=fifteen), NAMES))
    assert said.endswith("a ten card makes fifteen for 2 (Otto holds one: about 80%).")


def test_the_hand_lines_mark_each_decision() -> None:
    made = option("3c 4d 6c 9d", "5h 5s", 6.0, -5.0)
    same = discard(made, made)
    worse = play("6h", "2s", values=(0.0, 0.5))
    level = play("6d", "7s", values=(1.0, 1.02))
    lines = hand_lines(GameReview(0, "hard", (same, worse, level)))
    assert [plain(line) for line in lines] == [
        f"Hand 1: laid away 5♥ 5♠\u00a0{SAME}",  # the mark kept by its card
        "Hand 4: played 6♥ (computer 2♠, −0.5), 6♦ (computer 7♠: as good)",
    ]


def test_no_decision_no_review() -> None:
    assert review_text(GameReview(0, "hard", ()), NAMES) is None


def _game() -> Game:
    game = Game(Settings(players=2, target=61), "render-review")
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), "easy" if seat == 0 else "hard"))
    return game


def test_the_game_over_mail_with_and_without_the_review() -> None:
    game = _game()
    review = review_game(game, 0)
    words = review_text(review, ["Nia", "Computer"])
    assert words is not None
    view = player_view(game, 0, len(game.events) - 2)
    ctx = MailContext(game_id=3, names=("Nia", "Computer"), recipient_seat=0, reply_hint="")
    plain_mail = render_turn(view, ctx)
    assert "Your game, reviewed" not in plain_mail.text + plain_mail.html
    mail = render_turn(view, MailContext(**{**ctx.__dict__, "review": review}))
    text = " ".join(mail.text.split())
    assert "Your game, reviewed" in text and "Your game, reviewed" in mail.html
    assert f"About {review.total:.1f} points given away in all" in text
    for line in (*words.costliest, *words.hands):
        assert " ".join(plain(line).split()) in text
    assert all(len(line) <= 78 for line in mail.text.splitlines())
    assert mail.html.count("<li>") >= len(words.costliest) + len(words.hands)
    # Only in the game-over mail: a turn mail's context may not carry one.
    turn = render_turn(
        player_view(Game(Settings(players=2), "x"), 0),
        MailContext(**{**ctx.__dict__, "review": review}),
    )
    assert "Your game, reviewed" not in turn.text
