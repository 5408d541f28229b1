"""Maildir in and out, on real folders under tmp_path."""

from __future__ import annotations

import asyncio
import mailbox
import os
import threading
import time
from pathlib import Path

import pytest

from pbem.transport.base import InboundSource, OutboundSink, OutgoingMail, TransportError
from pbem.transport.maildir import (
    MaildirInbound,
    MaildirOutbound,
    message_file_name,
    recipient_folder_name,
)
from pbem.transport.opening import open_inbound, open_outbound


def _message(n: int, body: str = "play 5h") -> bytes:
    return (
        f"From: alice@example.com\nTo: game@pbem.test\nSubject: move {n}\n"
        f"Message-ID: <{n}@example.com>\n\n{body}\n"
    ).encode()


def _drop(path: Path, raw: bytes) -> str:
    """Deliver ``raw`` as a mail delivery agent would; returns its key."""
    for subdir in ("tmp", "new", "cur"):
        (path / subdir).mkdir(parents=True, exist_ok=True)
    return mailbox.Maildir(path, create=False).add(raw)


def test_inbound_is_an_inbound_source(tmp_path: Path) -> None:
    source = open_inbound(f"maildir:{tmp_path / 'in'}")
    assert isinstance(source, InboundSource)
    assert isinstance(open_outbound(f"maildir:{tmp_path / 'out'}"), OutboundSink)


@pytest.mark.parametrize("where", ["deep/inbox", "."])
def test_creates_the_folder_and_fetches_nothing(tmp_path: Path, where: str) -> None:
    source = MaildirInbound(tmp_path / where)
    assert all((tmp_path / where / d).is_dir() for d in ("new", "cur", "tmp"))
    assert source.fetch() == []


def test_fetch_returns_bytes_until_acked(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path)
    key = _drop(tmp_path, _message(1))
    first = source.fetch()
    assert [(m.key, m.raw, m.oversize) for m in first] == [(key, _message(1), False)]
    assert first[0].size == len(_message(1))
    assert [m.key for m in source.fetch()] == [key]  # not acked: fetched again
    source.ack(key)
    assert source.fetch() == []
    files = os.listdir(tmp_path / "cur")
    assert files == [f"{key}:2,S"]
    assert os.listdir(tmp_path / "new") == []


def test_ack_keeps_other_flags_and_is_idempotent(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path)
    key = _drop(tmp_path, _message(1))
    os.rename(tmp_path / "new" / key, tmp_path / "cur" / f"{key}:2,F")
    assert [m.key for m in source.fetch()] == [key]  # flagged, but not seen
    source.ack(key)
    source.ack(key)
    assert os.listdir(tmp_path / "cur") == [f"{key}:2,FS"]
    source.ack("1234.gone.host")  # a message that vanished is no error


def test_seen_messages_in_cur_are_skipped(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path)
    key = _drop(tmp_path, _message(1))
    os.rename(tmp_path / "new" / key, tmp_path / "cur" / f"{key}:2,RS")
    assert source.fetch() == []


def test_oldest_first_and_batch_cap(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path, batch=2)
    keys = []
    for n in range(3):
        keys.append(_drop(tmp_path, _message(n)))
        os.utime(tmp_path / "new" / keys[-1], (1000 + n, 1000 + n))
    assert [m.key for m in source.fetch()] == keys[:2]
    source.ack(keys[0])
    assert [m.key for m in source.fetch()] == keys[1:]


def test_crash_before_ack_means_redelivery(tmp_path: Path) -> None:
    key = _drop(tmp_path, _message(1))
    assert [m.key for m in MaildirInbound(tmp_path).fetch()] == [key]
    # A new process (after a crash) sees the message again.
    assert [m.key for m in MaildirInbound(tmp_path).fetch()] == [key]


def test_oversize_message_comes_as_header_only(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path, max_size=500)
    big = _message(1, body="x" * 2000)
    key = _drop(tmp_path, big)
    [message] = source.fetch()
    assert message.oversize
    assert message.size == len(big)
    assert message.raw.startswith(b"From: alice@example.com")
    assert message.raw.endswith(b"\n\n")
    assert b"xxx" not in message.raw
    source.ack(key)
    assert source.fetch() == []


def test_max_size_from_url(tmp_path: Path) -> None:
    source = open_inbound(f"maildir:{tmp_path}?max_size=100&poll=0.05")
    assert isinstance(source, MaildirInbound)
    assert (source.max_size, source.poll) == (100, 0.05)


def test_wait_times_out_then_sees_new_mail(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path, poll=0.02)
    started = time.monotonic()
    assert source.wait(0.1) is False
    assert time.monotonic() - started >= 0.1
    timer = threading.Timer(0.1, _drop, (tmp_path, _message(1)))
    timer.start()
    try:
        started = time.monotonic()
        assert source.wait(5) is True
        assert time.monotonic() - started < 2
    finally:
        timer.join()


def test_wait_ignores_messages_already_fetched(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path, poll=0.02)
    _drop(tmp_path, _message(1))
    assert source.wait(0) is True
    source.fetch()
    assert source.wait(0.05) is False


def test_closed_source_refuses_work(tmp_path: Path) -> None:
    source = MaildirInbound(tmp_path)
    source.close()
    with pytest.raises(TransportError):
        source.fetch()


def test_bad_ack_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        MaildirInbound(tmp_path).ack("../etc/passwd")


# ---------------------------------------------------------------- outbound


def _mail(id_: str, *recipients: str, raw: bytes | None = None) -> OutgoingMail:
    return OutgoingMail(
        id=id_,
        sender="game@pbem.test",
        recipients=list(recipients),
        raw=raw if raw is not None else _message(int(id_)),
    )


def test_delivers_one_maildir_per_recipient(tmp_path: Path) -> None:
    sink = MaildirOutbound(tmp_path)
    results = asyncio.run(sink.send_batch([_mail("1", "Alice@Example.com", "bob@example.com")]))
    assert [(r.id, r.recipient, r.ok, r.error) for r in results] == [
        ("1", "Alice@Example.com", True, None),
        ("1", "bob@example.com", True, None),
    ]
    for address in ("alice@example.com", "bob@example.com"):
        box = mailbox.Maildir(tmp_path / address, create=False)
        assert [box.get_bytes(k) for k in box.iterkeys()] == [_message(1)]
    assert os.listdir(tmp_path / "alice@example.com" / "tmp") == []


def test_bytes_are_stored_untouched(tmp_path: Path) -> None:
    raw = b"Subject: x\r\n\r\n.dot line\r\nutf-8 \xc3\xa9\r\n"
    asyncio.run(MaildirOutbound(tmp_path).send_batch([_mail("9", "a@b.c", raw=raw)]))
    [name] = os.listdir(tmp_path / "a@b.c" / "new")
    assert (tmp_path / "a@b.c" / "new" / name).read_bytes() == raw


def test_same_id_twice_gives_one_copy(tmp_path: Path) -> None:
    sink = MaildirOutbound(tmp_path)
    asyncio.run(sink.send_batch([_mail("1", "a@b.c")]))
    results = asyncio.run(sink.send_batch([_mail("1", "a@b.c"), _mail("2", "a@b.c")]))
    assert all(r.ok for r in results)
    assert len(os.listdir(tmp_path / "a@b.c" / "new")) == 2


def test_no_second_copy_after_the_reader_moved_it_to_cur(tmp_path: Path) -> None:
    sink = MaildirOutbound(tmp_path)
    asyncio.run(sink.send_batch([_mail("1", "a@b.c")]))
    folder = tmp_path / "a@b.c"
    name = message_file_name("1")
    os.rename(folder / "new" / name, folder / "cur" / f"{name}:2,S")
    assert asyncio.run(sink.send_batch([_mail("1", "a@b.c")]))[0].ok
    assert os.listdir(folder / "new") == []


def test_delivered_mail_reads_back_through_the_inbound_side(tmp_path: Path) -> None:
    asyncio.run(MaildirOutbound(tmp_path).send_batch([_mail("3", "p@x.y")]))
    [message] = MaildirInbound(tmp_path / "p@x.y").fetch()
    assert message.raw == _message(3)


def test_unwritable_root_is_a_temporary_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    results = asyncio.run(MaildirOutbound(blocker).send_batch([_mail("1", "a@b.c")]))
    assert [(r.ok, r.temporary) for r in results] == [(False, True)]
    assert results[0].error


def test_empty_recipient_is_permanent(tmp_path: Path) -> None:
    results = asyncio.run(MaildirOutbound(tmp_path).send_batch([_mail("1", " ")]))
    assert [(r.ok, r.temporary) for r in results] == [(False, False)]


@pytest.mark.parametrize(
    ("address", "folder"),
    [
        ("Alice@Example.COM", "alice@example.com"),
        ("a/b@x", "a%2Fb@x"),
        (".hidden@x", "%2Ehidden@x"),
        ("..", "%2E."),
        ("é@x", "%C3%A9@x"),
    ],
)
def test_recipient_folder_names_are_safe(address: str, folder: str) -> None:
    assert recipient_folder_name(address) == folder
    assert "/" not in folder
