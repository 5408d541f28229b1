"""Opting out: a stranger who says ``never``, ``stop`` or ``unsubscribe`` to the plain
address, or answers an invitation with ``decline`` or ``never``, or uses the
invitation's ``List-Unsubscribe`` (the mailto with subject ``never``, or the RFC 8058
one-click URI), gets no more mail for 30 days — whatever the attackers send: known
players inviting them under every spelling and withdrawing, and forged mail in their
own name asking to ``start`` again, for games, to watch, to invite others, for help."""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.utils import parseaddr

import pytest

from pbem.demo.bots import text_of
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    Campaign,
    confirm_latest,
    forged,
    kinds_to,
    last_inbound_id,
    mails_to,
    reasons_from,
    spellings,
)
from tests.e2e.helpers import ALICE, BOB, Harness, reply

URL = "https://pbem.test/unsubscribe"

WAYS = ("never", "stop", "unsubscribe", "decline", "never-reply", "mailto", "one-click")
"""How each victim opts out: a word to the plain address, an answer to the invitation,
or the invitation's List-Unsubscribe."""

VICTIMS = {way: f"{way.replace('-', '')}@victims.test" for way in WAYS}


def invitation_to(h: Harness, address: str) -> tuple[EmailMessage, str, str]:
    """The one invitation ``address`` got, its reply address and that address's token."""
    (invite,) = [msg for msg in h.received(address) if msg["List-Unsubscribe"]]
    reply_to = parseaddr(str(invite["Reply-To"]))[1]
    return invite, reply_to, reply_to.split("@")[0].split("+", 1)[1]


def unsubscribe_header(invite: EmailMessage) -> str:
    return " ".join(str(invite["List-Unsubscribe"]).split())


def test_an_invitation_says_never_in_its_list_unsubscribe(build: Build) -> None:
    """Without ``unsubscribe_url``: the mailto alone, subject ``never``, to the
    invitation's own reply address (with the URL set, see the test below)."""
    h = build()
    h.new_game((ALICE, BOB))
    h.deliver(forged(ALICE[0], f"challenge {VICTIMS['mailto']}"))
    confirm_latest(h, ALICE[0])  # a From alone: Alice confirms with one click
    invite, reply_to, _ = invitation_to(h, VICTIMS["mailto"])
    assert unsubscribe_header(invite) == f"<mailto:{reply_to}?subject=never>"
    assert invite["List-Unsubscribe-Post"] is None
    assert "never" in text_of(invite)


@pytest.mark.parametrize("budget", [10, 100])
def test_opted_out_mailboxes_get_nothing_more(
    build: Build, budget: int, record_property: Record
) -> None:
    # (Alice confirms her four challenges in one day: more than the default answers a
    # day to a From alone.)
    h = build(lobby="open", unsubscribe_url=URL, max_unproven_answers_per_day=6)
    a, b = ALICE[0], BOB[0]
    h.new_game((ALICE, BOB))  # two known players to attack with
    h.deliver(forged(b, "new"))  # a game against the computer, open to watchers
    watched = h.last_inbound().game_id
    assert watched is not None
    # -- each victim opts out its own way --------------------------------------------
    for way in ("never", "stop", "unsubscribe"):
        # A From alone could be anyone's: the mailbox confirms with one click.
        h.deliver(forged(VICTIMS[way], way))
        row = h.last_inbound()
        assert row.status == "applied", row.reason
        confirm_latest(h, VICTIMS[way])
    for way in ("decline", "never-reply", "mailto", "one-click"):
        h.deliver(forged(a, f"challenge {VICTIMS[way]}"))
        assert h.last_inbound().status == "applied", h.last_inbound().reason
        confirm_latest(h, a)
    for way in ("decline", "never-reply", "mailto", "one-click"):
        victim = VICTIMS[way]
        invite, reply_to, token = invitation_to(h, victim)
        # Both ways of the List-Unsubscribe: the one-click URI first, then the mailto.
        one_click, mailto = f"<{URL}/{token}>", f"<mailto:{reply_to}?subject=never>"
        assert unsubscribe_header(invite) == f"{one_click}, {mailto}"
        assert str(invite["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
        if way == "decline":
            h.deliver(reply(invite, victim, "Victim", "decline"))
        elif way == "never-reply":
            h.deliver(reply(invite, victim, "Victim", "never"))
        elif way == "mailto":
            # What a mail client does with the mailto: subject "never", no text.
            target = re.search(r"<mailto:([^?>]+)\?subject=never>", unsubscribe_header(invite))
            assert target is not None
            h.deliver(forged(victim, "", to=target.group(1), subject="never"))
        else:
            assert h.service.unsubscribe(token)
        if way != "one-click":
            row = h.last_inbound()
            assert row.status == "applied", row.reason
    before = {way: mails_to(h, VICTIMS[way]) for way in WAYS}
    start = last_inbound_id(h)
    # -- 30 days of attacks ----------------------------------------------------------
    spell = {way: spellings(VICTIMS[way]) for way in WAYS}

    def mail(i: int) -> bytes:
        way, n = WAYS[i % len(WAYS)], i // len(WAYS)
        victim = spell[way](n)
        attacks = (
            (victim, "start"),
            (a, f"challenge {victim}"),
            (victim, "new"),
            (b, f"challenge {victim}"),
            (victim, f"watch {watched}"),
            (a, "cancel"),
            (victim, "challenge someone@elsewhere.test"),
            (victim, "help"),
            (victim, "games"),
        )
        sender, body = attacks[n % len(attacks)]
        return forged(sender, body)

    Campaign(h, budget, mail).run()
    more = {way: mails_to(h, VICTIMS[way]) - before[way] for way in WAYS}
    for way, n in more.items():
        record_property(f"more_mails_{way}", n)
    assert more == dict.fromkeys(WAYS, 0), {
        way: (kinds_to(h, VICTIMS[way])[before[way] :], reasons_from(h, VICTIMS[way], start))
        for way, n in more.items()
        if n
    }
