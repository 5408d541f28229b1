"""The invitation mail: it names the challenger alone, its subject names no one, and its
footer says truthfully what may follow."""

from __future__ import annotations

import html
import inspect

import pytest

from pbem.render.invite import SUBJECT, render_invite

RULES = "2 players, to 121, skunk rule: skunk"


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    "name",
    [
        "Alice",
        "PayPal Security <security@paypal.com>\u202e",
        "=?utf-8?b?RXZpbA0KQmNjOiBldmVAZXZpbC50ZXN0?=",
        "\u202eecilA\u2066\u200b",
    ],
)
def test_the_subject_names_no_one(name: str) -> None:
    mail = render_invite(name, "alice@example.com", RULES, "2026-05-08")
    assert mail.subject == SUBJECT == "[Cribbage] An invitation to a game by email"


def test_the_challenger_is_named_cleaned_in_the_body() -> None:
    mail = render_invite("\u202eecilA\u2066 =?x?= \u200b", "alice@example.com", RULES, "2026-05-08")
    for part in (mail.text, mail.html):
        assert "\u202e" not in part and "\u2066" not in part and "\u200b" not in part
        assert "=?" not in part and "?=" not in part
    assert "ecilA x <alice@example.com> invites you" in flat(mail.text)


def test_no_other_invitee_can_be_named() -> None:
    assert "others" not in inspect.signature(render_invite).parameters
    mail = render_invite("Alice", "alice@example.com", RULES, "2026-05-08")
    assert "Also invited" not in mail.text and "Also invited" not in mail.html


def test_the_footer_says_what_may_follow() -> None:
    mail = render_invite("Alice", "alice@example.com", RULES, "2026-05-08")
    promise = (
        "If you do not answer, this invitation lapses on 2026-05-08 and you will not be "
        "invited again for 30 days; reply 'never' to get no more invitations from this "
        "service."
    )
    assert promise in flat(mail.text) and promise in flat(html.unescape(mail.html))
    assert "nothing more will be sent" not in flat(mail.text)
    assert "never" in mail.text.split("How to answer", 1)[1]
    quieter = render_invite("Alice", "alice@example.com", RULES, "2026-05-08", quiet_days=14)
    assert "you will not be invited again for 14 days" in flat(quieter.text)
