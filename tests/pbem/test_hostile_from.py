"""Who sent a mail: the one real mailbox of the one From header, and — behind a provider
the operator trusts — only when that provider vouched for it (DMARC)."""

from __future__ import annotations

import pytest

from pbem.mail.address import from_mailbox
from pbem.mail.authresults import from_verdict
from pbem.mail.reading import read_message
from tests.e2e.helpers import ALICE, BOB, STRANGER, Harness, reply

A, B = ALICE[0], BOB[0]


@pytest.mark.parametrize(
    ("values", "address", "problem"),
    [
        (['"Alice" <Alice@Example.com>'], "alice@example.com", None),
        (["alice@example.com (Alice)"], "alice@example.com", None),
        (["=?utf-8?q?Smith=2C_Bob?= <bob@example.org>"], "bob@example.org", None),
        (["John Q. Public <jq@x.test>"], "jq@x.test", None),
        # The display name is never the address, whatever it looks like.
        (['"alice@example.com" <mallory@evil.example>'], "mallory@evil.example", None),
        (["=?utf-8?q?alice=40example.com?= <mallory@evil.example>"], "mallory@evil.example", None),
        (["alice@example.com <mallory@evil.example>"], "", "not a valid address"),
        # ... unless the unquoted name is the address itself, as some clients write it.
        (["Alice@example.com <alice@example.com>"], "alice@example.com", None),
        (["a.b@x.test <A.B@x.test>"], "a.b@x.test", None),
        (["alice@example.com <alice@example.com.evil.example>"], "", "not a valid address"),
        (["alice@example.com, mallory@evil.example"], "", "2 addresses in From"),
        (["Smith, Bob <bob@example.org>"], "", "2 addresses in From"),
        (["alice@example.com", "mallory@evil.example"], "", "2 From headers"),
        (["friends: alice@example.com;"], "", "a group in From"),
        (["<alice@example.com\x00>"], "", "not a plain address"),
        (['"quoted local"@x.test'], "", "not a plain address"),
        (["nobody"], "", "not a valid address"),
        (["x" * 2000 + "@x.test"], "", "too long"),
        (["(" * 300 + "a@x.test"], "", "unreadable From header"),
        ([], "", "no sender address"),
    ],
)
def test_from_mailbox(values: list[str], address: str, problem: str | None) -> None:
    _, found, why = from_mailbox(values)
    assert found == address
    if problem is None:
        assert why is None
    else:
        assert why is not None and problem in why


def discard(h: Harness, game: int) -> str:
    cards = sorted(h.game(game).holding(0))[:2]
    return "discard " + " ".join(c.ascii for c in cards)


def with_from(raw: bytes, *values: bytes) -> bytes:
    """``raw`` with its From header replaced by ``values`` (one header each)."""
    head, _, body = raw.partition(b"\n\n")
    lines = [line for line in head.split(b"\n") if not line.lower().startswith(b"from:")]
    return b"\n".join([b"From: " + v for v in values] + lines) + b"\n\n" + body


@pytest.mark.parametrize(
    ("froms", "reason"),
    [
        ((b"alice@example.com <mallory@evil.example>",), "not a valid address"),
        ((b"alice@example.com, mallory@evil.example",), "2 addresses in From"),
        ((b"alice@example.com", b"mallory@evil.example"), "2 From headers"),
        ((b"Alice <alice@example.com>", b"Alice <alice@example.com>"), "2 From headers"),
        ((b'"alice@example.com" <mallory@evil.example>',), "unknown sender mallory@evil"),
    ],
)
def test_an_ambiguous_from_is_not_the_player(
    harness: Harness, froms: tuple[bytes, ...], reason: str
) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="strict-from")
    before = h.counts((A, B, STRANGER))
    h.deliver(with_from(reply(h.latest(A), A, "Alice", discard(h, game)), *froms))
    row = h.last_inbound()
    assert row.status == "ignored" and reason in (row.reason or "")
    assert h.log(game) == []
    assert h.counts((A, B, STRANGER)) == before  # nobody is mailed


def test_the_stored_sender_is_the_real_mailbox(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="stored-from")
    h.deliver(
        with_from(
            reply(h.latest(A), A, "Alice", discard(h, game)),
            b'"alice@example.com" <mallory@evil.example>',
        )
    )
    assert h.last_inbound().sender == STRANGER


# -- Authentication-Results -------------------------------------------------------------

TRUSTED = "mx.pbem.test"


def test_from_verdict() -> None:
    def verdict(*values: str, sender: str = A) -> bool:
        return from_verdict(list(values), TRUSTED, sender).passed

    assert verdict(f"{TRUSTED}; dmarc=pass header.from=example.com")
    assert not verdict(f"{TRUSTED}; dmarc=fail header.from=example.com")
    assert not verdict()  # nothing from the trusted server
    assert not verdict("other.example; dmarc=pass header.from=example.com")
    assert verdict(f"{TRUSTED}; dkim=pass header.d=example.com; dmarc=none")
    assert verdict(f"{TRUSTED}; spf=pass smtp.mailfrom=bounce@mail.example.com")
    assert not verdict(f"{TRUSTED}; dkim=pass header.d=evil.example; spf=fail")
    assert not verdict(f"{TRUSTED}; none")
    assert not verdict(f"{TRUSTED}; \x00 garbage ;;")
    assert not verdict(f"{TRUSTED}; " + "dmarc=pass; " * 1000)  # too long to be real
    assert not verdict(f"{TRUSTED}; " + "(" * 5000)
    # Only the topmost header of the trusted server counts: one below may be forged.
    assert not verdict(f"{TRUSTED}; dmarc=none", f"{TRUSTED}; dmarc=pass header.from=x")
    assert verdict("relay.internal; dmarc=fail", f"{TRUSTED}; dmarc=pass header.from=example.com")
    assert not verdict(f"{TRUSTED.upper()}; dmarc=fail", f"{TRUSTED}; dmarc=pass")


def with_auth(raw: bytes, *values: str) -> bytes:
    return b"".join(f"Authentication-Results: {v}\n".encode() for v in values) + raw


@pytest.mark.parametrize(
    ("results", "status", "reason"),
    [
        ((f"{TRUSTED}; dkim=pass header.d=example.com; dmarc=pass",), "applied", "applied:"),
        ((f"{TRUSTED}; spf=pass smtp.mailfrom=example.com; dmarc=fail",), "rejected", "DMARC"),
        ((), "rejected", "no Authentication-Results verdict"),
        # A forged pass under the provider's fail; a forged pass from another server.
        ((f"{TRUSTED}; dmarc=fail", f"{TRUSTED}; dmarc=pass"), "rejected", "DMARC failed"),
        (("evil.example; dmarc=pass",), "rejected", "no Authentication-Results verdict"),
    ],
)
def test_moves_need_the_trusted_provider_to_vouch_for_the_from(
    harness: Harness, results: tuple[str, ...], status: str, reason: str
) -> None:
    h = harness
    h.restart()
    h.daemon.service.settings = h.settings.model_copy(update={"trusted_authserv_id": TRUSTED})
    game = h.new_game((ALICE, BOB), seed="dmarc")
    before = h.counts((A, B))
    h.deliver(with_auth(reply(h.latest(A), A, "Alice", discard(h, game)), *results))
    row = h.last_inbound()
    assert row.status == status and reason in (row.reason or ""), row.reason
    if status == "rejected":
        assert h.log(game) == []
        assert h.counts((A, B)) == before  # no reply: the From may be forged
    else:
        assert h.log(game) != []


def test_auth_results_are_read_top_first() -> None:
    raw = with_auth(b"From: a@x.test\n\nhi\n", "one; dmarc=pass", "two; dmarc=fail")
    assert read_message(raw).auth_results == ("one; dmarc=pass", "two; dmarc=fail")


def test_without_a_trusted_id_authentication_results_are_not_read(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="no-dmarc")
    h.deliver(with_auth(reply(h.latest(A), A, "Alice", discard(h, game)), "x; dmarc=fail"))
    assert h.last_inbound().status == "applied"
