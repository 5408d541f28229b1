"""Authentication-Results: only the topmost header of the trusted server decides, read
tolerantly; when even that reading fails the mail is unproven, never vouched for by a
header further down."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.authresults import Verdict, authserv_id_of, from_verdict, organizational_domain
from pbem.mail.reading import read_message

TRUSTED = "mx.example.org"
SENDER = "alice@example.org"
FORGED = f"{TRUSTED}; dmarc=pass header.from=example.org"
PASS = FORGED


def verdict(*values: str, sender: str = SENDER) -> Verdict:
    return from_verdict(list(values), TRUSTED, sender)


def passes(*values: str, sender: str = SENDER) -> bool:
    return verdict(*values, sender=sender).passed


# -- the attack: an odd top header, a forged pass below it ---------------------------

ODD_TOP_HEADERS = [
    pytest.param(value, id=name)
    for name, value in [
        # IP-literal HELO names.
        ("helo-ipv4", f"{TRUSTED}; spf=none smtp.helo=[192.0.2.1]; dmarc=none"),
        ("helo-ipv6", f"{TRUSTED}; spf=softfail smtp.helo=[IPv6:2001:db8::1]; dmarc=fail"),
        # An envelope sender in angle brackets.
        ("mailfrom-angle", f"{TRUSTED}; spf=fail smtp.mailfrom=<x@y.test>; dmarc=none"),
        ("mailfrom-angle-unaligned", f"{TRUSTED}; spf=pass smtp.mailfrom=<x@y.test>; dkim=none"),
        # 8-bit text, as decoded from raw bytes or as UTF-8.
        ("utf8", f"{TRUSTED}; spf=fail smtp.mailfrom=jürgen@exämple.org; dmarc=fail"),
        ("8bit", f"{TRUSTED}; spf=fail smtp.helo=h\u00c3\u00bcgel\ufffd; dmarc=none"),
        ("nul", f"{TRUSTED}; spf=fail smtp.helo=a\x00b; dmarc=none"),
        # Longer than any provider writes.
        ("long-helo", f"{TRUSTED}; spf=fail smtp.helo={'a' * 8001}; dmarc=none"),
        ("long-comment", f"{TRUSTED}; dmarc=pass header.from=example.org (" + "x" * 8001 + ")"),
        # Not readable even tolerantly.
        ("unclosed-comment", f"{TRUSTED}; spf=pass smtp.helo=x (unclosed; dmarc=pass"),
        ("unclosed-quote", f'{TRUSTED}; spf=pass smtp.helo="x; dmarc=pass'),
        ("unclosed-angle", f"{TRUSTED}; spf=pass smtp.mailfrom=<a@example.org; dmarc=none"),
        ("garbage", f"{TRUSTED}; \x00 garbage ;;"),
        ("version-2", f"{TRUSTED} 2; dmarc=pass header.from=example.org"),
        ("junk-after-id", f"{TRUSTED} junk; dmarc=pass header.from=example.org"),
        ("none", f"{TRUSTED}; none"),
        ("no-resinfo", f"{TRUSTED}"),
    ]
]


@pytest.mark.parametrize("top", ODD_TOP_HEADERS)
def test_a_forged_pass_under_an_odd_top_header_is_never_read(top: str) -> None:
    alone = verdict(top)
    assert not alone.passed
    assert verdict(top, FORGED) == alone
    assert verdict("relay.internal; dmarc=fail", top, FORGED, FORGED) == alone


@pytest.mark.parametrize(
    ("top", "reason"),
    [
        (f"{TRUSTED}; dmarc=pass (" + "x" * 8001 + ")", "over 8000 characters"),
        (f"{TRUSTED}; spf=pass smtp.helo=x (unclosed; dmarc=pass", "comment is not closed"),
        (f"{TRUSTED}; spf=pass smtp.helo=x) dmarc=pass", "never opened"),
        (f'{TRUSTED}; spf=pass smtp.helo="x; dmarc=pass', "quoted string is not closed"),
        (f"{TRUSTED}; spf=pass smtp.mailfrom=<a@example.org", "<address> is not closed"),
        (f"{TRUSTED} 2; dmarc=pass", "unknown version"),
        (f"{TRUSTED} {'9' * 5000}; dmarc=pass", "unknown version"),
        (f"{TRUSTED} junk; dmarc=pass", "unknown version"),
        (f"{TRUSTED}; dmarc=pass header.from", "bad property"),
        (f"{TRUSTED}; dmarc", "no result"),
        (f"{TRUSTED}; =pass", "without a method"),
        (f"{TRUSTED}; dmarc=pass header.from=<example.org>x=1", "nothing between"),
        (f'{TRUSTED}; dmarc=pass"x"', "nothing between"),
    ],
    ids=lambda param: param[:20] if param.startswith(TRUSTED) else param,
)
def test_an_unreadable_trusted_header_is_unproven(top: str, reason: str) -> None:
    result = verdict(top, FORGED)
    assert not result.passed
    assert "cannot be read" in result.reason
    assert reason in result.reason


def test_odd_but_legitimate_values_are_read() -> None:
    assert verdict(
        f"{TRUSTED}; spf=pass smtp.helo=[192.0.2.1] smtp.mailfrom=bounce@example.org"
    ) == Verdict(True, "aligned SPF passed")
    assert passes(f"{TRUSTED}; spf=pass smtp.helo=[IPv6:2001:db8::1] smtp.mailfrom=example.org")
    assert passes(f"{TRUSTED}; spf=pass smtp.mailfrom=<a@example.org>")
    assert passes(f"{TRUSTED}; spf=pass smtp.mailfrom=< a@Example.ORG >")
    assert passes(f'{TRUSTED}; spf=pass smtp.mailfrom=<"a b"@example.org>')
    assert passes(f'{TRUSTED}; spf=pass smtp.mailfrom="a b"@example.org')
    assert passes(f"{TRUSTED}; spf=pass smtp.mailfrom=prvs=1234abcd=a@example.org")
    assert not passes(f"{TRUSTED}; spf=pass smtp.mailfrom=<>")
    assert not passes(f"{TRUSTED}; spf=pass smtp.mailfrom=<x@y.test>")
    assert passes(
        f"{TRUSTED}; dkim=pass header.d=example.org header.i=jürgen@example.org; "
        "dmarc=pass header.from=example.org"
    )
    assert passes(
        f"{TRUSTED}; dkim=pass header.d=exämple.org; dmarc=none", sender="jürgen@exämple.org"
    )


def test_the_top_trusted_header_decides_against_a_forged_pass() -> None:
    assert verdict(f"{TRUSTED}; dmarc=fail header.from=example.org", FORGED) == Verdict(
        False, f"DMARC failed at {TRUSTED}"
    )
    assert not passes(f"{TRUSTED}; dmarc=none header.from=example.org", FORGED)
    assert not passes(f"{TRUSTED}; dkim=pass header.d=evil.test", FORGED)
    assert not passes(f"{TRUSTED.upper()}; dmarc=fail", FORGED)
    assert not passes(f"  (the provider)  {TRUSTED}  (v1) 1 ; dmarc=fail", FORGED)
    assert not passes(f'"{TRUSTED}"; dmarc=fail', FORGED)


def test_headers_of_other_servers_are_ignored() -> None:
    assert passes("relay.internal; dmarc=fail", PASS)
    assert passes(
        "relay.internal; ((((( unreadable", f"{TRUSTED}; dmarc=pass header.from=example.org"
    )
    assert passes(
        "relay.internal; dmarc=pass (" + "x" * 9000,
        f"{TRUSTED}; dmarc=pass header.from=example.org",
    )
    assert passes(
        f"{TRUSTED}.evil.test; dmarc=fail", f"{TRUSTED}; dmarc=pass header.from=example.org"
    )
    assert not passes(f"other.{TRUSTED}; dmarc=pass", f"{TRUSTED}; dmarc=fail")
    assert not passes("evil.test; dmarc=pass header.from=example.org")
    assert verdict() == Verdict(False, f"no Authentication-Results verdict from {TRUSTED}")


def test_none_is_no_verdict() -> None:
    for top in (f"{TRUSTED}; none", f"{TRUSTED} 1; none", f"{TRUSTED};", f"{TRUSTED} (x)"):
        result = verdict(top, FORGED)
        assert not result.passed
        assert result.reason.startswith(f"no Authentication-Results verdict from {TRUSTED}")


def test_comments_quotes_and_versions() -> None:
    assert passes(f"{TRUSTED} 1; dmarc=pass header.from=example.org")
    assert passes(f"{TRUSTED} 01; dmarc=pass header.from=example.org")
    assert passes(f"(comment) {TRUSTED}(comment)1(comment); dmarc=pass header.from=example.org")
    assert passes(
        f"{TRUSTED}; dmarc=pass (p=none sp=none (nested (twice)) dis=none) header.from=example.org"
    )
    assert passes(
        f"{TRUSTED}; dmarc (the method) = (and) pass (the result) header.from=example.org"
    )
    assert passes(f"{TRUSTED}; dkim/1=pass header.d=example.org")
    assert passes(f"{TRUSTED}; dkim / 1 = pass header . d = example.org")
    assert passes(f'{TRUSTED}; dkim=pass reason="good \\"signature\\"; ok" header.d=example.org')
    assert passes(f"{TRUSTED}; dkim=pass (a \\) quoted paren) header.d=example.org")
    assert passes(f"{TRUSTED};\r\n\tdkim=pass\r\n\theader.d=example.org;")
    assert passes(f'"{TRUSTED}" 1; dmarc=pass header.from=example.org')
    assert not passes(f"{TRUSTED}; dmarc=pass (unclosed (nested)")
    # A result inside a quoted string or a comment may be a real one hidden by the sender.
    for hidden in (
        f'{TRUSTED}; spf=pass smtp.mailfrom="a; dmarc=fail"@example.org',
        f"{TRUSTED}; spf=pass (domain of a; dmarc=fail) smtp.mailfrom=a@example.org",
    ):
        result = verdict(hidden)
        assert not result.passed
        assert "inside a quoted string or comment" in result.reason


def test_dmarc_first_then_aligned_dkim_or_spf() -> None:
    assert verdict(f"{TRUSTED}; dmarc=pass header.from=example.org") == Verdict(
        True, "DMARC passed"
    )
    assert not passes(f"{TRUSTED}; dkim=pass header.d=example.org; dmarc=fail")
    assert not passes(f"{TRUSTED}; dmarc=pass; dmarc=fail")
    assert verdict(f"{TRUSTED}; dkim=pass header.d=example.org; dmarc=none") == Verdict(
        True, "aligned DKIM passed"
    )
    assert passes(f"{TRUSTED}; dkim=pass header.d=example.org; dmarc=temperror")
    # Relaxed alignment: a subdomain either way.
    assert passes(f"{TRUSTED}; dkim=pass header.d=example.org", sender="a@mail.example.org")
    assert passes(f"{TRUSTED}; dkim=pass header.d=mail.example.org", sender="a@example.org")
    assert passes(f"{TRUSTED}; dkim=pass header.d=Example.ORG.", sender="a@example.org")
    assert not passes(f"{TRUSTED}; dkim=pass header.d=notexample.org")
    assert not passes(f"{TRUSTED}; dkim=pass header.d=example.org.evil.test")
    assert not passes(f"{TRUSTED}; dkim=fail header.d=example.org")
    assert not passes(f"{TRUSTED}; dkim=pass header.i=@example.org")
    assert not passes(f"{TRUSTED}; dkim=pass header.d=")
    # The same property twice: each must align.
    assert not passes(f"{TRUSTED}; dkim=pass header.d=evil.test header.d=example.org")
    assert passes(f"{TRUSTED}; dkim=fail header.d=evil.test; dkim=pass header.d=example.org")
    assert passes(f"{TRUSTED}; spf=pass smtp.mailfrom=bounce@mail.example.org")
    assert passes(f"{TRUSTED}; spf=pass smtp.mailfrom=example.org")
    assert not passes(f"{TRUSTED}; spf=pass smtp.mailfrom=a@evil.test")
    assert not passes(f"{TRUSTED}; spf=softfail smtp.mailfrom=a@example.org")
    assert not passes(f"{TRUSTED}; spf=pass smtp.helo=example.org")
    assert not passes(f"{TRUSTED}; iprev=pass policy.iprev=192.0.2.1")


def test_headers_providers_write() -> None:
    microsoft = (
        f"{TRUSTED}; spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=example.org; "
        "dkim=pass (signature was verified) header.d=example.org;dmarc=pass action=none "
        "header.from=example.org;compauth=pass reason=100"
    )
    gmail = (
        f"{TRUSTED};\r\n       dkim=pass header.i=@example.org header.s=s1 header.b=Ab+/c9==;"
        "\r\n       spf=pass (example: domain of bounce@example.org designates 192.0.2.1 as"
        " permitted sender) smtp.mailfrom=bounce@example.org;\r\n"
        "       dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.org"
    )
    fastmail = (
        f"{TRUSTED} 1; dkim=pass (2048-bit rsa key sha256) header.d=example.org "
        "header.i=@example.org header.b=Ab12 header.a=rsa-sha256 header.s=s1 "
        "x-bits=2048; dmarc=pass policy.published-domain-policy=none "
        "policy.evaluated-disposition=none (p=none,sp=none,d=none,d.eval=none) "
        "policy.policy-from=p header.from=example.org; iprev=pass smtp.remote-ip=192.0.2.1 "
        "(mail.example.org); spf=pass smtp.mailfrom=bounce@example.org "
        "smtp.helo=mail.example.org; x-aligned-from=pass (Address match)"
    )
    for header in (microsoft, gmail, fastmail):
        assert verdict(header, FORGED) == Verdict(True, "DMARC passed")
        failed = header.replace("dmarc=pass", "dmarc=fail")
        assert verdict(failed, FORGED) == Verdict(False, f"DMARC failed at {TRUSTED}")


def test_authserv_id_of() -> None:
    assert authserv_id_of("mx.example.org; dmarc=pass") == "mx.example.org"
    assert authserv_id_of("  Mx.Example.Org 1 ; none") == "Mx.Example.Org"
    assert authserv_id_of("(a (nested) comment)\t mx.example.org(x); y") == "mx.example.org"
    assert authserv_id_of('"mx \\"quoted\\"" 1; none') == 'mx "quoted"'
    assert authserv_id_of("mx.example.org") == "mx.example.org"
    # The rest of the header need not be readable.
    assert authserv_id_of("mx.example.org; spf=pass smtp.helo=[1.2.3.4] ((((") == "mx.example.org"
    assert authserv_id_of("mx.example.org; " + "ü" * 100_000) == "mx.example.org"
    for nothing in ("", "   ", "; dmarc=pass", "(unclosed mx.example.org", '"unclosed', '""'):
        assert authserv_id_of(nothing) is None


def test_eight_bit_header_through_read_message() -> None:
    raw = (
        b"Authentication-Results: mx.example.org; spf=fail smtp.mailfrom=j\xfcrgen@x.test;\r\n"
        b"\tdmarc=none header.from=example.org\r\n"
        b"Authentication-Results: mx.example.org; dmarc=pass header.from=example.org\r\n"
        b"From: alice@example.org\r\nTo: play@cribbage.example.org\r\n"
        b"Subject: hi\r\n\r\nplay 7c\r\n"
    )
    mail = read_message(raw)
    assert len(mail.auth_results) == 2
    result = from_verdict(mail.auth_results, TRUSTED, SENDER)
    assert result == Verdict(False, f"neither DMARC nor an aligned DKIM or SPF passed at {TRUSTED}")
    legit = raw.replace(b"spf=fail", b"spf=pass").replace(b"x.test", b"example.org")
    assert from_verdict(read_message(legit).auth_results, TRUSTED, SENDER).passed


def test_huge_values_cost_little() -> None:
    for huge in (
        f"{TRUSTED}; dmarc=none (" + "(" * 1_000_000,
        "(" * 1_000_000 + ")" * 1_000_000 + f" {TRUSTED}; dmarc=none",
        f"{TRUSTED}; " + "dkim=pass header.d=evil.test; " * 100_000,
    ):
        assert verdict(huge, FORGED) == verdict(huge)
        assert not verdict(huge).passed
    # Another server's huge header is passed over.
    assert passes(
        "relay.internal; " + '"' * 1_000_000, f"{TRUSTED}; dmarc=pass header.from=example.org"
    )


# -- fuzzing -------------------------------------------------------------------------

PIECES = [
    TRUSTED,
    "relay.internal",
    " ",
    "\t",
    "\r\n ",
    ";",
    "=",
    ".",
    "/",
    "1",
    "2",
    "(",
    ")",
    '"',
    "\\",
    "<",
    ">",
    "@",
    "[",
    "]",
    "[192.0.2.1]",
    "<x@y.test>",
    "smtp.helo",
    "smtp.mailfrom",
    "header.d",
    "header.from",
    "reason",
    "dmarc",
    "dkim",
    "spf",
    "pass",
    "fail",
    "none",
    "example.org",
    "mail.example.org",
    "evil.test",
    "ü",
    "\ufffd",
    "\udcfc",
    "\x00",
    "a" * 8001,
]
stitched = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
header_text = st.one_of(st.text(max_size=300), stitched)


@settings(max_examples=300, deadline=None)
@given(st.lists(header_text, max_size=5), st.text(max_size=40), st.text(max_size=40))
def test_nothing_raises(values: list[str], authserv_id: str, sender: str) -> None:
    result = from_verdict(values, authserv_id, sender)
    assert isinstance(result.passed, bool)
    assert isinstance(result.reason, str)
    authserv_id_of(values[0] if values else "")


@settings(max_examples=300, deadline=None)
@given(header_text, st.lists(header_text, max_size=3), st.booleans(), header_text)
def test_a_forged_header_below_the_top_trusted_one_never_decides(
    tail: str, above: list[str], with_space: bool, forged_tail: str
) -> None:
    top = TRUSTED + (" " if with_space else "") + tail
    if (authserv_id_of(top) or "").lower() != TRUSTED:
        top = f"{TRUSTED};{tail}"
    others = [f"relay.internal{text}" for text in above]
    alone = verdict(top)
    for forged in (FORGED, f"{TRUSTED}; dkim=pass header.d=example.org", TRUSTED + forged_tail):
        assert verdict(*others, top, forged) == alone
        assert verdict(top, forged, forged) == alone
    if alone.passed:
        assert "pass" in top.lower()


def test_a_dmarc_pass_counts_only_for_the_from_it_names() -> None:
    """DMARC judges one From domain: a pass that names another one (or none) vouches for
    nothing here, and an aligned DKIM or SPF pass is still looked for."""
    assert passes(f"{TRUSTED}; dmarc=pass header.from=EXAMPLE.org")
    assert not passes(f"{TRUSTED}; dmarc=pass header.from=evil.test")
    assert verdict(f"{TRUSTED}; dmarc=pass header.from=evil.test") == Verdict(
        False, f"DMARC passed at {TRUSTED} for another domain than the From's"
    )
    assert not passes(f"{TRUSTED}; dmarc=pass")
    assert not passes(f"{TRUSTED}; dmarc=pass header.from=mail.example.org")
    assert passes(f"{TRUSTED}; dmarc=pass header.from=evil.test; dkim=pass header.d=example.org")


def test_alignment_stops_at_the_public_suffix() -> None:
    """Relaxed alignment is by organizational domain (the Public Suffix List): a
    subdomain aligns, a public suffix never does."""
    assert passes(f"{TRUSTED}; dkim=pass header.d=mail.example.org")
    assert passes(f"{TRUSTED}; spf=pass smtp.mailfrom=b@bounce.example.org")
    assert passes(f"{TRUSTED}; dkim=pass header.d=example.co.uk", sender="a@mail.example.co.uk")
    for suffix in ("org", "co.uk", "test"):
        domain = {"org": "example.org", "co.uk": "example.co.uk", "test": "victim.test"}[suffix]
        assert not passes(f"{TRUSTED}; dkim=pass header.d={suffix}", sender=f"a@{domain}")
        assert not passes(f"{TRUSTED}; spf=pass smtp.mailfrom=x@{suffix}", sender=f"a@{domain}")
    # Two sites under one public suffix of a hosting provider are two organizations.
    assert not passes(f"{TRUSTED}; dkim=pass header.d=evil.github.io", sender="a@me.github.io")
    assert organizational_domain("a.b.example.com") == "example.com"
    assert organizational_domain("github.io") is None
