"""The built-in players' mail client (`pbem.demo.bots`): a reply copies folded headers as a
mail client does, unfolded."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime

from pbem.demo.bots import quoted_reply, unfold


def test_a_reply_unfolds_the_headers_it_copies() -> None:
    original = email.message_from_bytes(
        b"From: Cribbage by mail <svc@pbem.test>\r\n"
        b"Reply-To: Cribbage by mail\r\n"
        b" <a-rather-long-service-name+abcdefghijklmnop@pbem.test>\r\n"
        b"Subject: [Cribbage 1] Hand 1\r\n \xe2\x80\x94 your turn\r\n"
        b"Message-ID:\r\n <g1.sa0.turn.abcdefghijklmnop@pbem.test>\r\n"
        b"\r\nYour turn.\r\n"
    )
    raw = quoted_reply(original, "p@pbem.test", "P", "discard 2h 3h", datetime.now(UTC))
    reply = email.message_from_bytes(raw, policy=email.policy.default)
    assert reply["To"].addresses[0].addr_spec == (
        "a-rather-long-service-name+abcdefghijklmnop@pbem.test"
    )
    assert reply["In-Reply-To"] == "<g1.sa0.turn.abcdefghijklmnop@pbem.test>"
    assert str(reply["Subject"]).startswith("Re: [Cribbage 1] Hand 1")
    assert unfold("a\r\n b\n\tc") == "a b\tc"
