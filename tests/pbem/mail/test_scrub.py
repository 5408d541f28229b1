"""`pbem.mail.scrub`: a person's traces replaced in headers (RFC 2047 words too), in text
parts whatever their transfer encoding, in HTML, in attachments; nothing else touched."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

from pbem.mail.scrub import Traces, scrub_message

TRACES = Traces.build(
    mailboxes={"alice@example.com"},
    address_to="forgotten-1@forgotten.invalid",
    names={"Alice Ørsted", "Al"},
    name_to="Forgotten player 1",
    message_ids={"cut-1@mail.example.com": "forgotten-1-7@forgotten.invalid"},
)


def everything(raw: bytes) -> str:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    out = [raw.decode("latin-1")]
    for part in msg.walk():
        out += [f"{k}: {v}" for k, v in part.items()]
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            out.append(payload.decode("utf-8", "replace"))
    return "\n".join(out)


def test_text_forms_of_the_address_and_the_name() -> None:
    assert TRACES.text("mail ALICE+cribbage@Example.COM now") == (
        "mail forgotten-1@forgotten.invalid now"
    )
    assert TRACES.text("malice@example.com, alice@example.community") == (
        "malice@example.com, alice@example.community"
    )
    assert TRACES.text("Alice Ørsted played; Al is too short; Also") == (
        "Forgotten player 1 played; Al is too short; Also"
    )
    assert TRACES.text("<cut-1@mail.example.com>") == "<forgotten-1-7@forgotten.invalid>"
    assert TRACES.json({"alice@example.com": ["Alice Ørsted", 3]}) == {
        "forgotten-1@forgotten.invalid": ["Forgotten player 1", 3]
    }


def test_a_whole_mail_is_scrubbed_whatever_its_encodings() -> None:
    msg = EmailMessage()
    msg["From"] = "Alice Ørsted <alice@example.com>"  # an RFC 2047 encoded word
    msg["To"] = "cribbage@pbem.test"
    msg["Subject"] = "Re: your turn, Alice Ørsted"
    msg["Message-ID"] = "<cut-1@mail.example.com>"
    msg["Received"] = "from mx.example.com by pbem.test for <alice@example.com>"
    msg["X-Other"] = "kept as it was"
    msg.set_content("Hi, Alice Ørsted here (alice@example.com).\n", cte="base64")
    msg.add_alternative("<p>Alice &Oslash;rsted &lt;alice@example.com&gt;</p>\n", subtype="html")
    msg.add_attachment(b"view of alice@example.com", maintype="application", subtype="octet-stream")
    raw = msg.as_bytes()
    assert "alice@example.com" in everything(raw)
    out = scrub_message(raw, TRACES)
    text = everything(out)
    assert "alice@example.com" not in text.lower()
    assert "Alice Ørsted" not in text and "cut-1@mail.example.com" not in text
    assert "forgotten-1@forgotten.invalid" in text and "Forgotten player 1" in text
    assert "<forgotten-1-7@forgotten.invalid>" in text
    assert "X-Other: kept as it was" in text
    assert "&Oslash;rsted" not in text  # HTML naming her in character references: emptied
    parsed = email.message_from_bytes(out, policy=email.policy.default)
    assert parsed.get_body(("plain",)).get_content() == (  # type: ignore[union-attr]
        "Hi, Forgotten player 1 here (forgotten-1@forgotten.invalid).\n"
    )
    # A forgotten player's own mail keeps only the headers asked for.
    own = everything(scrub_message(raw, TRACES, keep_headers=("From", "Subject", "Content-Type")))
    assert "Received" not in own and "X-Other" not in own and "Subject:" in own


def test_a_mail_without_traces_is_left_as_it_was() -> None:
    raw = b"From: bob@example.org\r\nSubject: hi\r\n\r\nplay 5h\r\n"
    assert scrub_message(raw, TRACES) == raw
