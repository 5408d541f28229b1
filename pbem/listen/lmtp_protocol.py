"""aiosmtpd's LMTP as the service's listener speaks it (`pbem.listen.lmtp`): its refusals
at the end of ``DATA`` said once for each recipient, plain envelope addresses read without
the mail header parser, and the protocol of each connection started from the state the
first one was built with, rather than by aiosmtpd's look over every attribute."""

from __future__ import annotations

import asyncio
import collections
from typing import Any, ClassVar

__all__ = ["LINE_LENGTH_LIMIT", "plain_address", "protocol_class"]

LINE_LENGTH_LIMIT = 64 * 1024
"""The longest line taken in a message (longer ones than RFC 5321's 1,000 happen)."""

_DATA_REFUSALS = ("552 ", "500 ")
# Characters that make an envelope address more than a plain ``local@domain`` (quoting,
# comments, routes, IP literals…): such an address goes to aiosmtpd's full parser.
_NOT_PLAIN = frozenset(' "\\()<>[],;:\t')


def plain_address(arg: str) -> tuple[str, str] | None:
    """``(address, the rest)`` of a ``MAIL FROM``/``RCPT TO`` argument such as
    ``<player@example.org> SIZE=1234`` when the address is a plain ``local@domain``
    (or the null sender, ``<>`` as aiosmtpd gives it), read without the mail header
    parser; None for anything else."""
    text = arg.lstrip()
    if not text.startswith("<"):
        return None
    end = text.find(">")
    if end < 0:
        return None
    address = text[1:end]
    if address and (address.count("@") != 1 or not _NOT_PLAIN.isdisjoint(address)):
        return None
    if address and (address.startswith("@") or address.endswith("@")):
        return None
    return address or "<>", text[end + 1 :].lstrip()


def protocol_class() -> type:
    from aiosmtpd.lmtp import LMTP
    from aiosmtpd.smtp import SMTP

    class ServiceLmtp(LMTP):
        """aiosmtpd's LMTP, with its refusals at the end of ``DATA`` (too much data, a
        line too long) said once for each recipient, as RFC 2033 wants of every
        answer to ``DATA``: a mail server waiting for the others would hang.

        aiosmtpd builds its tables of commands, hooks and AUTH mechanisms by looking
        over every attribute of the protocol and the handler, for each connection. Here
        the first connection's protocol is built that way and the state it starts with
        is kept (`_fresh`); each later one starts from a copy of it, with the commands
        and mechanisms bound to itself (one class per listener: one handler, one set of
        arguments)."""

        _fresh: ClassVar[dict[str, Any] | None] = None
        _commands: ClassVar[tuple[str, ...]] = ()
        _own_mechanisms: ClassVar[dict[str, str]] = {}  # mechanism → method name
        _stream_keys: ClassVar[frozenset[str]] = frozenset()

        def __init__(self, handler: Any, **kwargs: Any) -> None:
            cls = type(self)
            fresh = cls._fresh
            if fresh is None or fresh["event_handler"] is not handler:
                super().__init__(handler, **kwargs)
                cls._keep(self)
                self.command_size_limits = _size_limits(SMTP)
                return
            loop = fresh["loop"]
            reader = asyncio.StreamReader(loop=loop, limit=self.line_length_limit)
            asyncio.StreamReaderProtocol.__init__(
                self, reader, client_connected_cb=self._cb_client_connected, loop=loop
            )
            self.__dict__.update(fresh)
            self._smtp_methods = {name: getattr(self, f"smtp_{name}") for name in cls._commands}
            self._auth_methods = {
                mechanism: type(kept)(getattr(self, cls._own_mechanisms[mechanism]), True)
                if kept.is_builtin
                else kept
                for mechanism, kept in fresh["_auth_methods"].items()
            }
            # (aiosmtpd's own table is one for every connection, cleared by each new one.)
            self.command_size_limits = _size_limits(SMTP)

        @classmethod
        def _keep(cls, first: Any) -> None:
            """Keep the state a protocol built by aiosmtpd starts with."""
            cls._stream_keys = frozenset(vars(_stream_protocol(first.loop)))
            cls._commands = tuple(first._smtp_methods)
            cls._own_mechanisms = {
                getattr(
                    method, "__auth_mechanism_name__", name.replace("auth_", "").replace("__", "-")
                ): name
                for name in dir(first)
                if name.startswith("auth_")
                for method in (getattr(first, name),)
            }
            cls._fresh = {
                key: value
                for key, value in vars(first).items()
                if key not in cls._stream_keys and key != "_smtp_methods"
            }

        line_length_limit = LINE_LENGTH_LIMIT

        def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
            """A plain address (nearly every one a mail server hands over) is read
            without the mail header parser aiosmtpd uses for every address."""
            plain = plain_address(arg) if arg else None
            if plain is None:
                return super()._getaddr(arg)
            address, rest = plain
            local = address.rpartition("@")[0]
            if self.local_part_limit and len(local) > self.local_part_limit:
                return None, None
            return address, rest

        async def push(self, status: Any) -> None:
            envelope = getattr(self, "envelope", None)
            rcpts = list(getattr(envelope, "rcpt_tos", None) or [])
            if (
                isinstance(status, str)
                and status.startswith(_DATA_REFUSALS)
                and getattr(self, "_lmtp_in_data", False)
                and rcpts
            ):
                if status.startswith("552 "):
                    status = "\r\n".join(
                        f"552 5.3.4 <{r}>: message larger than the service takes" for r in rcpts
                    )
                else:
                    status = "\r\n".join(f"500 5.5.2 <{r}>: line too long" for r in rcpts)
            await super().push(status)

        async def smtp_DATA(self, arg: str) -> None:
            self._lmtp_in_data = False
            envelope = getattr(self, "envelope", None)
            if envelope is not None and envelope.rcpt_tos and not arg:
                self._lmtp_in_data = True
            try:
                await super().smtp_DATA(arg)
            finally:
                self._lmtp_in_data = False

    return ServiceLmtp


def _size_limits(smtp: type) -> Any:
    """A table of command size limits of one connection's own."""
    limit = smtp.command_size_limit  # type: ignore[attr-defined]
    return collections.defaultdict(lambda: limit)


def _mechanism(name: str) -> str:
    """The AUTH mechanism an ``auth_`` method stands for, as aiosmtpd names it."""
    return name.replace("auth_", "").replace("__", "-")


def _stream_protocol(loop: asyncio.AbstractEventLoop) -> asyncio.StreamReaderProtocol:
    """A bare stream protocol as aiosmtpd makes its own (its state: what each connection
    has of its own)."""
    return asyncio.StreamReaderProtocol(
        asyncio.StreamReader(loop=loop), client_connected_cb=lambda r, w: None, loop=loop
    )
