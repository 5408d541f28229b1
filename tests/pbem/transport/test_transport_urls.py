"""Transport URLs: forms, defaults, refusals, and passwords that never show."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.transport.base import TransportConfigError
from pbem.transport.imap import ImapInbound
from pbem.transport.maildir import MaildirInbound, MaildirOutbound
from pbem.transport.opening import open_inbound, open_outbound
from pbem.transport.smtp import SmtpOutbound
from pbem.transport.urls import (
    DEFAULT_MAX_SIZE,
    ImapConfig,
    LmtpConfig,
    MaildirConfig,
    SmtpConfig,
    mask_url,
    parse_inbound,
    parse_outbound,
)
from pbem.transport.woken import LmtpInbound

SECRET = "s3cr/t@p:ss"
ENCODED = "s3cr%2Ft%40p%3Ass"


def test_maildir_absolute_relative_and_triple_slash() -> None:
    assert parse_inbound("maildir:/srv/in") == MaildirConfig(Path("/srv/in"))
    assert parse_inbound("maildir:rel/in") == MaildirConfig(Path("rel/in"))
    assert parse_inbound("maildir:///srv/in") == MaildirConfig(Path("/srv/in"))
    assert parse_outbound("maildir:/srv/out") == MaildirConfig(Path("/srv/out"))


def test_maildir_inbound_parameters() -> None:
    config = parse_inbound("maildir:/in?poll=0.2&max_size=0")
    assert config == MaildirConfig(Path("/in"), poll=0.2, max_size=None)


@pytest.mark.parametrize(
    "url",
    [
        "maildir:",
        "maildir://host/path",
        "maildir:/in?poll=0",
        "maildir:/in?bogus=1",
        "maildir:/in#frag",
        "maildir:/in?poll=1&poll=2",
    ],
)
def test_bad_maildir_urls(url: str) -> None:
    with pytest.raises(TransportConfigError):
        parse_inbound(url)


def test_outbound_maildir_takes_no_parameters() -> None:
    with pytest.raises(TransportConfigError, match="unknown parameter 'poll'"):
        parse_outbound("maildir:/out?poll=1")


def test_imap_full_form_with_percent_decoding() -> None:
    config = parse_inbound(
        f"imap://bob%40pbem.test:{ENCODED}@127.0.0.1:10143/Games%2FCribbage"
        "?tls=none&processed=Done&poll=5&max_size=1048576&timeout=7&batch=3&idle=no&verify=no"
    )
    assert isinstance(config, ImapConfig)
    assert (config.host, config.port) == ("127.0.0.1", 10143)
    assert config.username == "bob@pbem.test"
    assert config.password == SECRET
    assert config.folder == "Games/Cribbage"
    assert (config.tls, config.processed, config.poll) == ("none", "Done", 5.0)
    assert (config.max_size, config.timeout, config.batch) == (1048576, 7.0, 3)
    assert (config.idle, config.verify) == (False, False)


def test_imap_defaults() -> None:
    config = parse_inbound("imap://u:p@mail.example")
    assert isinstance(config, ImapConfig)
    assert (config.folder, config.tls, config.port) == ("INBOX", "starttls", 143)
    assert (config.max_size, config.poll, config.processed) == (DEFAULT_MAX_SIZE, 60.0, None)
    implicit = parse_inbound("imaps://u:p@mail.example")
    assert isinstance(implicit, ImapConfig)
    assert (implicit.tls, implicit.port) == ("implicit", 993)
    assert parse_inbound("imap://u:p@h?tls=implicit").port == 993  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("imap://h/INBOX", "needs a user"),
        ("imap://u@h/INBOX", "needs a password"),
        ("imap://u:p@h:99999/", "port"),
        ("imap://u:p@h:abc/", "port"),
        ("imap://u:p@h/?tls=ssl", "tls must be"),
        ("imaps://u:p@h/?tls=none", "implicit"),
        ("imap://u:p@h/?processed=", "processed"),
        ("imap://u:p@h/INBOX?processed=INBOX", "cannot be the folder"),
        ("imap://u:p@h/?batch=0", "batch"),
        ("imap://u:p@h/?idle=maybe", "yes or no"),
        ("imap://u:p@h/?max_size=-1", "max_size"),
        ("imap://u:p@h/?poll=abc", "poll"),
        ("imap://u:p@/INBOX", "no host"),
        ("pop3://u:p@h/", "unknown inbound scheme"),
        ("smtp://h", "only sends"),
        ("", "empty"),
        ("/just/a/path", "no scheme"),
    ],
)
def test_bad_inbound_urls_name_the_problem(url: str, message: str) -> None:
    with pytest.raises(TransportConfigError, match=message):
        parse_inbound(url)


def test_lmtp_forms() -> None:
    assert parse_inbound("lmtp://127.0.0.1:8024") == LmtpConfig("127.0.0.1", 8024)
    assert parse_inbound("LMTP://localhost") == LmtpConfig("localhost", 8024)
    assert parse_inbound("lmtp://[::1]:2003/") == LmtpConfig("::1", 2003)
    sock = parse_inbound("lmtp:/run/pbem/lmtp.sock")
    assert sock == LmtpConfig(path=Path("/run/pbem/lmtp.sock"))
    assert parse_inbound("lmtp:///run/pbem/lmtp.sock") == sock
    assert str(sock) == "lmtp:/run/pbem/lmtp.sock"
    assert str(parse_inbound("lmtp://[::1]:2003")) == "lmtp://[::1]:2003"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("lmtp:relative.sock", "lmtp:/abs/path"),
        ("lmtp:/", "lmtp:/abs/path"),
        ("lmtp://h:8024/path", "has no path"),
        ("lmtp://u:p@h:8024", "takes no user"),
        ("lmtp://h:99999", "port"),
        ("lmtp://h:8024?poll=1", "unknown parameter"),
        ("lmtp://h:8024#x", "fragment"),
    ],
)
def test_bad_lmtp_urls(url: str, message: str) -> None:
    with pytest.raises(TransportConfigError, match=message):
        parse_inbound(url)


def test_config_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        open_inbound("nonsense:thing")


def test_smtp_forms() -> None:
    plain = parse_outbound("smtp://127.0.0.1:10025?tls=none")
    assert plain == SmtpConfig("127.0.0.1", 10025, tls="none")
    auth = parse_outbound(f"smtp://bob%40x.test:{ENCODED}@smtp.example?helo=me.example")
    assert isinstance(auth, SmtpConfig)
    assert (auth.username, auth.password, auth.port) == ("bob@x.test", SECRET, 587)
    assert (auth.tls, auth.helo) == ("starttls", "me.example")
    implicit = parse_outbound("smtps://smtp.example")
    assert isinstance(implicit, SmtpConfig)
    assert (implicit.tls, implicit.port) == ("implicit", 465)
    assert parse_outbound("smtp://h?tls=none").port == 25  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("smtp://h/path", "no path"),
        ("smtp://:pw@h", "password without a user"),
        ("smtp://h?helo=bad%20name", "helo"),
        ("smtp://h?tls=maybe", "tls must be"),
        ("imap://u:p@h", "only receives"),
        ("lmtp://h:8024", "LMTP only receives"),
        ("http://h", "unknown outbound scheme"),
    ],
)
def test_bad_outbound_urls(url: str, message: str) -> None:
    with pytest.raises(TransportConfigError, match=message):
        parse_outbound(url)


def test_factories_pick_the_transport(tmp_path: Path) -> None:
    assert isinstance(open_inbound(f"maildir:{tmp_path / 'in'}"), MaildirInbound)
    assert (tmp_path / "in" / "new").is_dir()
    assert isinstance(open_inbound("imap://u:p@127.0.0.1:1/?tls=none"), ImapInbound)
    lmtp = open_inbound("lmtp://127.0.0.1:1")  # opening binds nothing: the listener does
    assert isinstance(lmtp, LmtpInbound) and lmtp.fetch() == []
    lmtp.close()
    assert isinstance(open_outbound(f"maildir:{tmp_path / 'out'}"), MaildirOutbound)
    assert isinstance(open_outbound("smtp://127.0.0.1:1?tls=none"), SmtpOutbound)


def test_passwords_never_show_in_repr_str_or_errors() -> None:
    imap_url = f"imap://bob:{ENCODED}@127.0.0.1:10143/INBOX?tls=none"
    smtp_url = f"smtp://bob:{ENCODED}@127.0.0.1:10025?tls=none"
    shown = [
        repr(parse_inbound(imap_url)),
        str(parse_inbound(imap_url)),
        repr(open_inbound(imap_url)),
        repr(parse_outbound(smtp_url)),
        str(parse_outbound(smtp_url)),
        repr(open_outbound(smtp_url)),
    ]
    for bad in (imap_url + "&tls=x", imap_url.replace("10143", "99999"), smtp_url + "&x=1"):
        with pytest.raises(TransportConfigError) as info:
            parse_inbound(bad) if bad.startswith("imap") else parse_outbound(bad)
        shown.append(str(info.value))
    for text in shown:
        assert "s3cr" not in text, text
        assert ENCODED not in text, text
    assert "***" in shown[0]


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("imap://u:pw@h/INBOX", "imap://u:***@h/INBOX"),
        ("imap://u:p/w@rd@h:1/X?tls=none", "imap://u:***@h:1/X?tls=none"),
        ("smtp://h:25", "smtp://h:25"),
        ("smtp://user@h", "smtp://user@h"),
        ("maildir:/x", "maildir:/x"),
    ],
)
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked
