"""``pbem player forget`` reads the forgotten player's stored mail and no one else's, on
both databases: it finds their mail through the index of stored mail by the mailboxes it
names (`pbem.store.named`, written when a mail is stored) and through their games, counts
the rows it read, rewrites those, and leaves every other player's mail byte for byte as
it was. What the index finds (an address hidden in a base64 part of a stranger's mail)
and that it keeps up with pruned mail are tested here too."""

from __future__ import annotations

import base64
import email
import email.policy
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select, text

from pbem.mail.compose import compose
from pbem.mail.named import MANY, MAX_NAMED, NamedMail, named_mailboxes
from pbem.store.copy import tables
from pbem.store.retention import prune
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness


@pytest.fixture
def h(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine)
    yield harness
    harness.close()


def mails(db: Engine) -> dict[tuple[str, int], tuple[bytes, int | None, str]]:
    """Every stored mail: (table, id) → (raw, game, sender or recipient)."""
    found: dict[tuple[str, int], tuple[bytes, int | None, str]] = {}
    with db.connect() as connection:
        for i, raw, game, who in connection.execute(
            text(
                "SELECT id, r.raw, game_id, sender FROM inbound "
                "LEFT JOIN inbound_raw r ON r.inbound_id = id"
            )
        ):
            found[("inbound", int(i))] = (bytes(raw or b""), game, str(who))
        for i, raw, game, who in connection.execute(
            text(
                "SELECT id, r.raw, game_id, recipient FROM outbox "
                "LEFT JOIN outbox_raw r ON r.outbox_id = id"
            )
        ):
            found[("outbox", int(i))] = (bytes(raw or b""), game, str(who))
    return found


def decoded(raw: bytes) -> str:
    """A raw mail with every part decoded, as a person would read it."""
    parts = [raw.decode("latin-1")]
    for part in email.message_from_bytes(raw, policy=email.policy.default).walk():
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            parts.append(payload.decode("utf-8", "replace"))
    return "\n".join(parts)


def plain_mail(h: Harness, sender: str, body: str, *, b64: bool = False) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = h.settings.address
    msg["Subject"] = "help"
    msg["Date"] = format_datetime(h.clock())
    msg["Message-ID"] = f"<{abs(hash(body))}-{len(body)}@example.net>"
    msg.set_content(body + "\n", cte="base64" if b64 else None)
    return msg.as_bytes()


def test_forget_reads_only_the_players_mail(h: Harness) -> None:
    theirs = h.new_game([ALICE, BOB], seed="forget-index-a")
    h.play_until(theirs, lambda g: g.is_over)
    for people in ([CAROL, DAVE], [BOB, CAROL]):  # one after the other: each plays its newest mail
        h.play_until(h.new_game(people, seed="forget-index-b"), lambda g: g.is_over)
    h.deliver(plain_mail(h, CAROL[0], "help"))
    # A stranger's mail names her in a base64 part only: the index finds it all the same.
    hidden = plain_mail(h, DAVE[0], f"Have you seen {ALICE[0]} lately?", b64=True)
    assert ALICE[0].encode() not in hidden
    h.deliver(hidden)
    before = mails(h.db)
    hers = {
        key
        for key, (raw, game, who) in before.items()
        if game == theirs or ALICE[0] in decoded(raw).lower() or who == ALICE[0]
    }
    assert hers and len(hers) < len(before) // 2  # most of the mail is other players'

    report = h.service.forget(ALICE[0])
    # It read her mail, and only hers: each of her rows once (her own mails twice: once
    # more for the names and Message-IDs they carry), no other.
    own = sum(1 for (t, _), (_, _, who) in before.items() if t == "inbound" and who == ALICE[0])
    assert own > 0
    assert report.read["inbound"] == sum(1 for t, _ in hers if t == "inbound") + own
    assert report.read["outbox"] == sum(1 for t, _ in hers if t == "outbox")
    after = mails(h.db)
    for key, value in before.items():
        if key not in hers:
            assert after[key] == value, key  # not rewritten: byte for byte as it was
    for key in hers:
        assert ALICE[0] not in decoded(after[key][0]).lower(), key
    # No trace of her address in any table: the index names the pseudonym now.
    with h.db.connect() as connection:
        for table in tables():
            for row in connection.execute(select(table)):
                for column, value in row._mapping.items():
                    shown = decoded(value) if isinstance(value, bytes) else str(value)
                    assert ALICE[0] not in shown.lower(), (table.name, column)
        names = connection.execute(
            text("SELECT count(*) FROM mail_name WHERE mailbox = :p"), {"p": report.pseudonym}
        ).scalar_one()
    assert names > 0
    assert report.audit.ok and report.audit.replayed == 1
    # The end: no table written again whole (`pbem.store.erasure`).
    if h.db.dialect.name == "sqlite":
        assert report.storage == "the write-ahead log emptied"
    else:
        assert report.storage.startswith("VACUUM of player, inbound, outbox, inbound_raw")


def test_forget_finds_pruned_mail_by_its_row(h: Harness) -> None:
    """Mail whose bytes were pruned is found through the index all the same: its sender,
    recipient and Message-ID go to the pseudonym."""
    game_id = h.new_game([ALICE, BOB], seed="forget-index-pruned")
    h.play_until(game_id, lambda g: g.is_over)
    done = prune(
        h.db,
        now=h.clock.now + timedelta(days=2),
        keep=timedelta(days=30),
        keep_after_game=timedelta(days=1),
    )
    assert done.inbound and done.outbox
    report = h.service.forget(ALICE[0])
    assert report.read["outbox"] > 0
    with h.db.connect() as connection:
        senders = set(connection.execute(text("SELECT sender FROM inbound")).scalars())
        keys = list(connection.execute(text("SELECT message_key FROM inbound")).scalars())
        recipients = set(connection.execute(text("SELECT recipient FROM outbox")).scalars())
    assert ALICE[0] not in senders | recipients and report.pseudonym in senders | recipients
    assert not [k for k in keys if "example.com" in k]  # her Message-IDs: pseudonyms


def test_the_index_names_every_address_a_mail_shows() -> None:
    msg = EmailMessage()
    msg["From"] = "=?utf-8?q?Zo=C3=AB?= <Zoe+Games@Example.ORG>"
    msg["To"] = "cribbage@pbem.test"
    msg["Cc"] = "=?utf-8?b?" + base64.b64encode(b"Bo <bo@example.net>").decode() + "?="
    msg["Message-ID"] = "<abc@example.net>"
    msg.set_content("ask ann@example.com or \\u003cal@example.com\\u003e\n", cte="base64")
    named = named_mailboxes(msg.as_bytes())
    assert {"zoe@example.org", "bo@example.net", "ann@example.com", "al@example.com"} <= named
    assert "cribbage@pbem.test" in named and "abc@example.net" not in named  # an id
    assert "cribbage@pbem.test" not in named_mailboxes(msg.as_bytes(), own=["Cribbage+T@pbem.test"])
    assert not [n for n in named if "=" in n or "?" in n]
    many = " ".join(f"p{i}@example.com" for i in range(MAX_NAMED + 1)).encode()
    assert named_mailboxes(b"Subject: x\n\n" + many) == {MANY}
    assert named_mailboxes(b"") == set()
    assert "x@example.com" in named_mailboxes(b"\xff\xfe garbage x@example.com \x00")


_WORDS = st.lists(
    st.sampled_from([*'abz.+-_@ <>"=?,;:é\u200b\n', "x@y.org", "Zoë", "=?utf-8?q?a=40b.org?="]),
    max_size=30,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    name=_WORDS,
    subject=_WORDS,
    text_part=_WORDS,
    html=st.none() | _WORDS,
    parts=st.sampled_from(["both", "text", "html"]),
    page=st.none() | _WORDS,
    attached=st.sampled_from(["g.html", "a@b.org.html", "game é.html"]),
)
def test_a_composed_mail_names_what_parsing_it_finds(
    name: str,
    subject: str,
    text_part: str,
    html: str | None,
    parts: str,
    page: str | None,
    attached: str,
) -> None:
    """A mail the service composes carries the mailboxes it names, found where it was
    made: exactly those that parsing its bytes finds (so storing it need not parse it)."""
    attachments = [("view.json", "application/json", b'{"to": "json@example.org"}')]
    if page is not None:
        attachments.append((attached, "text/html", page.encode()))
    raw = compose(
        sender="cribbage+tok@pbem.test",
        sender_name="Cribbage",
        to="alice@example.org",
        to_name=name,
        subject=subject,
        text=text_part,
        html=html,
        message_id="a1.b@pbem.test",
        in_reply_to="<q@example.net>",
        references=["<r@example.net>"],
        reply_to="cribbage+tok@pbem.test",
        loop_value="loop",
        extra_headers={"List-Unsubscribe": f"<mailto:{name.strip() or 'u'}@pbem.test>"},
        attachments=attachments,
        parts=parts,
    )
    assert isinstance(raw, NamedMail)
    assert named_mailboxes(raw, ["x@pbem.test"]) == named_mailboxes(bytes(raw), ["x@pbem.test"])
    assert type(bytes(raw)) is bytes and not isinstance(raw + b"", NamedMail)  # changed: parsed


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab.-_+@ <>\n\\", "u003c", "x" * 60, "é", "@example.org", "a-b.c"]),
        max_size=40,
    ).map("".join)
)
def test_addresses_are_found_as_a_scan_of_the_whole_text_finds_them(text: str) -> None:
    """Looking only around each "@" finds what scanning every position finds."""
    from pbem.mail import named

    expected: set[str] = set()
    for match in named._ADDRESS.finditer(named._ESCAPE.sub(" ", text)):
        address = match.group(0).strip(".")
        if "@" in address and len(address) <= named.MAILBOX_MAX:
            expected.add(named.fold_mailbox(address))
    found: set[str] = set()
    named._found(text, found)
    assert found == expected
