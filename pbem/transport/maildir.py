"""Maildir in and out: plain files, no server.

Inbound (:class:`MaildirInbound`) reads one Maildir folder: every message in ``new/`` and
``cur/`` not flagged Seen is fetched; :meth:`~MaildirInbound.ack` flags it Seen (``S``)
and moves it to ``cur/``. The rename is the commit point, so a crash before it means the
message is fetched again.

Outbound (:class:`MaildirOutbound`) keeps one Maildir per recipient under a root folder,
``ROOT/alice@example.com/{tmp,new,cur}``, and delivers atomically (written in ``tmp/``,
then linked into ``new/``). The file is named from the message id, so delivering the
same id twice to the same recipient leaves one copy.

File names follow the Maildir conventions that :mod:`mailbox` and Dovecot use
(``unique:2,FLAGS``), so either can read these folders. Files are listed and renamed here
directly rather than through :class:`mailbox.Maildir`, whose Python 3.11 version reads a
message's flags only by parsing the whole message, and whose creation leaves an existing
empty folder without ``new/`` and ``cur/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pbem.transport.base import (
    DeliveryResult,
    InboundMessage,
    OutgoingMail,
    TransportError,
)
from pbem.transport.readable import readable
from pbem.transport.urls import DEFAULT_MAX_SIZE

log = logging.getLogger(__name__)

_INFO_SEPARATOR = ":2,"
_HEADER_READ_LIMIT = 256 * 1024


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    path: Path
    flags: str
    mtime: float


def _split_name(name: str) -> tuple[str, str]:
    """``'123.abc:2,RS'`` → ``('123.abc', 'RS')``; a name without info has no flags."""
    key, sep, info = name.partition(":")
    if sep and info.startswith("2,"):
        return key, info[2:]
    return key, ""


def _read_header(path: Path) -> bytes:
    """The header section of the message at ``path`` (up to the first blank line)."""
    with path.open("rb") as handle:
        data = handle.read(_HEADER_READ_LIMIT)
    for separator in (b"\r\n\r\n", b"\n\n"):
        end = data.find(separator)
        if end >= 0:
            return data[: end + len(separator)]
    return data


class MaildirInbound:
    """An :class:`~pbem.transport.base.InboundSource` over one Maildir folder.

    The folder (with ``new``, ``cur`` and ``tmp``) is created if missing. ``wait`` polls
    every ``poll`` seconds. ``max_size`` caps the bytes read per message; a larger one is
    returned with its header only and ``oversize=True``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        poll: float = 1.0,
        max_size: int | None = DEFAULT_MAX_SIZE,
        batch: int = 100,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self.poll = poll
        self.max_size = max_size
        self.batch = batch
        self._sleep = sleep
        self._clock = clock
        self._known: set[str] = set()
        self._closed = False
        try:
            _make_maildir(self.path)
        except OSError as exc:
            raise TransportError(
                f"cannot create Maildir {self.path}: {exc}", temporary=False
            ) from exc

    def __repr__(self) -> str:
        return f"MaildirInbound({str(self.path)!r})"

    def __enter__(self) -> MaildirInbound:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------ listing

    def _scan(self) -> list[_Entry]:
        entries: list[_Entry] = []
        for subdir in ("new", "cur"):
            folder = self.path / subdir
            try:
                iterator = os.scandir(folder)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise TransportError(f"cannot list {folder}: {exc}", temporary=True) from exc
            with iterator:
                for item in iterator:
                    if item.name.startswith("."):
                        continue
                    try:
                        if not item.is_file():
                            continue
                        mtime = item.stat().st_mtime
                    except FileNotFoundError:
                        continue
                    key, flags = _split_name(item.name)
                    entries.append(_Entry(key, Path(item.path), flags, mtime))
        return entries

    def _unseen(self) -> list[_Entry]:
        entries = [entry for entry in self._scan() if "S" not in entry.flags]
        entries.sort(key=lambda entry: (entry.mtime, entry.key))
        return entries

    # ------------------------------------------------------------ InboundSource

    def fetch(self) -> list[InboundMessage]:
        """Unseen messages of ``new/`` and ``cur/``, oldest first, at most ``batch``."""
        self._check_open()
        messages: list[InboundMessage] = []
        for entry in self._unseen()[: self.batch]:
            try:
                size = entry.path.stat().st_size
                if self.max_size is not None and size > self.max_size:
                    raw = _read_header(entry.path)
                    messages.append(InboundMessage(entry.key, raw, size=size, oversize=True))
                    log.warning(
                        "%s: message %s is %d bytes, over the cap of %d",
                        self.path,
                        entry.key,
                        size,
                        self.max_size,
                    )
                    continue
                raw = entry.path.read_bytes()
            except FileNotFoundError:
                continue  # acknowledged meanwhile by another reader
            except OSError as exc:
                raise TransportError(f"cannot read {entry.path}: {exc}", temporary=True) from exc
            messages.append(InboundMessage(entry.key, raw, size=len(raw)))
        self._known = {message.key for message in messages}
        return messages

    def ack(self, key: str) -> None:
        """Flag message ``key`` Seen and move it to ``cur/``; harmless if already done."""
        self._check_open()
        if not key or "/" in key or ":" in key or key.startswith("."):
            raise ValueError(f"not a Maildir message key: {key!r}")
        for _attempt in range(3):
            entry = self._find(key)
            if entry is None:
                log.info("%s: message %s is gone; nothing to acknowledge", self.path, key)
                return
            if "S" in entry.flags and entry.path.parent.name == "cur":
                return
            flags = "".join(sorted(set(entry.flags) | {"S"}))
            target = self.path / "cur" / f"{key}{_INFO_SEPARATOR}{flags}"
            try:
                os.rename(entry.path, target)
            except FileNotFoundError:
                continue  # renamed under us: look again
            except OSError as exc:
                raise TransportError(
                    f"cannot acknowledge {entry.path}: {exc}", temporary=True
                ) from exc
            self._known.discard(key)
            return

    def wait(self, timeout: float, wake: Sequence[int] = ()) -> bool:
        """Poll until an unseen message not returned by the last fetch appears (True), or
        ``timeout`` passes or one of the ``wake`` descriptors is readable (False)."""
        self._check_open()
        deadline = self._clock() + max(0.0, timeout)
        while True:
            if any(entry.key not in self._known for entry in self._unseen()):
                return True
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False
            if wake:
                if readable(wake, min(self.poll, remaining)):
                    return False
            else:
                self._sleep(min(self.poll, remaining))

    def close(self) -> None:
        self._closed = True

    # ------------------------------------------------------------ helpers

    def _find(self, key: str) -> _Entry | None:
        new = self.path / "new" / key
        if new.exists():
            return _Entry(key, new, "", 0.0)
        for subdir in ("new", "cur"):
            folder = self.path / subdir
            with contextlib.suppress(FileNotFoundError), os.scandir(folder) as iterator:
                for item in iterator:
                    name_key, flags = _split_name(item.name)
                    if name_key == key:
                        return _Entry(key, Path(item.path), flags, 0.0)
        return None

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError(f"{self!r} is closed", temporary=False)


_UNSAFE_FOLDER_CHARS = re.compile(r"[^A-Za-z0-9@._+=-]")


def recipient_folder_name(recipient: str) -> str:
    """The folder name for ``recipient``: the address lowercased, odd characters as %XX.

    ``Alice@Example.com`` → ``alice@example.com``; ``a/b@x`` → ``a%2Fb@x``.

    Raises:
        ValueError: an empty address.
    """
    address = recipient.strip().lower()
    if not address:
        raise ValueError("empty recipient address")
    name = _UNSAFE_FOLDER_CHARS.sub(
        lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode()), address
    )
    if name.startswith("."):
        name = "%2E" + name[1:]
    return name


def message_file_name(message_id: str) -> str:
    """The Maildir file name of outgoing message ``message_id``: stable, so deduplicable."""
    digest = hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:40]
    return f"pbem-{digest}"


class MaildirOutbound:
    """An :class:`~pbem.transport.base.OutboundSink` writing one Maildir per recipient.

    Messages are stored byte for byte. Failures to write (disk full, permissions) are
    temporary results; an empty recipient address is a permanent one.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"MaildirOutbound({str(self.root)!r})"

    def folder_for(self, recipient: str) -> Path:
        """The Maildir that receives mail for ``recipient`` (may not exist yet)."""
        return self.root / recipient_folder_name(recipient)

    async def send_batch(
        self,
        items: list[OutgoingMail],
        *,
        on_result: Callable[[DeliveryResult], None] | None = None,
    ) -> list[DeliveryResult]:
        """Deliver every (item, recipient); file work runs in a worker thread.

        ``on_result`` is called (in the caller's thread) with each result as soon as it is
        known, before the next delivery.
        """
        if on_result is None:
            return await asyncio.to_thread(self.deliver_batch, items)
        results: list[DeliveryResult] = []
        for item in items:
            for recipient in item.recipients:
                result = await asyncio.to_thread(self.deliver, item, recipient)
                results.append(result)
                on_result(result)
        return results

    def deliver_batch(self, items: list[OutgoingMail]) -> list[DeliveryResult]:
        """The synchronous :meth:`send_batch`."""
        return [self.deliver(item, recipient) for item in items for recipient in item.recipients]

    def deliver(self, item: OutgoingMail, recipient: str) -> DeliveryResult:
        """Deliver ``item`` to ``recipient``'s Maildir, unless this id is already there."""
        try:
            folder = self.folder_for(recipient)
        except ValueError as exc:
            return DeliveryResult(item.id, recipient, ok=False, temporary=False, error=str(exc))
        try:
            created = self._write(folder, message_file_name(item.id), item.raw)
        except OSError as exc:
            log.warning("delivery of %s to %s failed: %s", item.id, folder, exc)
            return DeliveryResult(
                item.id,
                recipient,
                ok=False,
                temporary=True,
                error=f"cannot write to {folder}: {exc.strerror or exc}",
            )
        if not created:
            log.info("message %s was already delivered to %s", item.id, folder)
        return DeliveryResult(item.id, recipient, ok=True)

    @staticmethod
    def _already_there(folder: Path, name: str) -> bool:
        if (folder / "new" / name).exists() or (folder / "cur" / name).exists():
            return True
        prefix = name + ":"
        with contextlib.suppress(FileNotFoundError), os.scandir(folder / "cur") as iterator:
            return any(item.name.startswith(prefix) for item in iterator)
        return False

    def _write(self, folder: Path, name: str, raw: bytes) -> bool:
        """Write ``raw`` as ``folder/new/name``; False if that message was there already."""
        _make_maildir(folder)
        if self._already_there(folder, name):
            return False
        temp = folder / "tmp" / f"{name}.{os.getpid()}.{secrets.token_hex(6)}"
        target = folder / "new" / name
        try:
            with temp.open("xb") as handle:
                handle.write(raw)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temp, target)
            except FileExistsError:
                return False
            _fsync_dir(folder / "new")
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()


def _make_maildir(path: Path) -> None:
    """Create ``path`` with ``tmp``, ``new`` and ``cur`` (also inside an existing folder)."""
    for subdir in ("tmp", "new", "cur"):
        (path / subdir).mkdir(mode=0o700, parents=True, exist_ok=True)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
