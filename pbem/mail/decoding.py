"""Turning the bytes of a message into text: charsets, RFC 2047 headers, HTML, format=flowed.

Everything here is lenient by design. Mail arrives with wrong or missing charset
declarations, broken encoded words and HTML from every client ever written; a
function in this module never raises on bad input, it falls back to the most
plausible reading instead.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import quopri
import re
from email.header import Header
from email.message import Message
from email.policy import Compat32

import html2text

__all__ = [
    "RAW_POLICY",
    "RawHeaderPolicy",
    "decode_bytes",
    "decode_rfc2047",
    "header_text",
    "header_texts",
    "html_to_text",
    "normalize_newlines",
    "part_text",
    "printable",
    "raw_header",
    "raw_headers",
    "unflow",
]

# Charsets whose every byte sequence decodes: a declaration of one of these says
# little, because a mislabelled UTF-8 body decodes "successfully" into mojibake
# ("5â\x99¥" for "5♥"). For these, valid multi-byte UTF-8 wins over the label.
_SINGLE_BYTE_PREFIXES = ("ascii", "latin", "iso8859", "cp125", "cp437", "cp850", "koi8", "mac")

_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=")
_HTML_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]+)""", re.I)
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>|])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Invisible characters that go (a regular expression: str.translate is slow on long text).
_INVISIBLE = re.compile("[\u200b\ufeff\u00ad]")


def _codec_name(charset: str | None) -> str | None:
    """The Python codec name for a MIME charset label, or None when unknown."""
    if not charset:
        return None
    label = charset.strip().strip("\"'").lower()
    if "*" in label:  # RFC 2231 language suffix: utf-8*en
        label = label.split("*", 1)[0]
    aliases = {"utf8": "utf-8", "unicode-1-1-utf-8": "utf-8", "x-unknown": "", "unknown-8bit": ""}
    label = aliases.get(label, label)
    if not label:
        return None
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _single_byte(codec: str | None) -> bool:
    return codec is None or codec.replace("_", "").replace("-", "").startswith(
        tuple(p.replace("-", "") for p in _SINGLE_BYTE_PREFIXES)
    )


def _decode_western(data: bytes) -> str:
    """Windows-1252 (what "ISO-8859-1" means in practice), Latin-1 for its five holes."""
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode ``data`` declared as ``charset`` (possibly wrong, unknown or missing).

    Order of trust: pure ASCII is ASCII; for a single-byte or missing declaration,
    valid UTF-8 is taken as UTF-8 (a real Latin-1 text is almost never valid
    multi-byte UTF-8); otherwise the declared charset; then UTF-8; then
    Windows-1252/Latin-1, which always succeeds. Never raises.
    """
    codec = _codec_name(charset)
    if data.isascii() and not (codec or "").startswith(("utf-16", "utf-32", "utf-7")):
        return data.decode("ascii")
    if _single_byte(codec):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        if codec is not None and codec not in ("ascii", "latin-1", "iso8859-1", "cp1252"):
            try:
                return data.decode(codec)
            except (UnicodeDecodeError, LookupError):
                pass
        return _decode_western(data)
    try:
        return data.decode(codec or "utf-8")
    except (UnicodeDecodeError, LookupError):
        pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _decode_western(data)


def _fix_surrogates(value: str) -> str:
    """Headers parsed from bytes keep raw 8-bit as surrogate escapes; decode them."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return decode_bytes(value.encode("utf-8", "surrogateescape"), None)
    return value


def _decode_word(encoding: str, payload: str) -> bytes:
    if encoding.lower() == "b":
        cleaned = re.sub(r"[^A-Za-z0-9+/]", "", payload)
        cleaned += "=" * (-len(cleaned) % 4)
        try:
            return base64.b64decode(cleaned)
        except (binascii.Error, ValueError):
            return payload.encode("ascii", "replace")
    return quopri.decodestring(payload.replace("_", " ").encode("ascii", "replace"), header=True)


def decode_rfc2047(value: str) -> str:
    """Decode RFC 2047 encoded words in a header value; unfold; never raises.

    Whitespace between two encoded words is dropped, as the RFC says, and
    adjacent words in the same charset are joined before decoding, so a
    multi-byte character split across two words (some clients do that) survives.
    """
    value = _fix_surrogates(value)
    value = re.sub(r"\r?\n[ \t]", " ", value).replace("\r", "").replace("\n", "")
    tokens: list[tuple[str | None, bytes | str]] = []  # (charset, bytes) or (None, text)
    position = 0
    for match in _ENCODED_WORD.finditer(value):
        if match.start() > position:
            tokens.append((None, value[position : match.start()]))
        charset, encoding, payload = match.groups()
        tokens.append((charset.lower(), _decode_word(encoding, payload)))
        position = match.end()
    if position < len(value):
        tokens.append((None, value[position:]))

    out: list[str] = []
    pending: bytes = b""
    pending_charset: str | None = None
    for index, (charset, chunk) in enumerate(tokens):
        if charset is None:
            assert isinstance(chunk, str)
            between_words = (
                chunk.isspace()
                and 0 < index < len(tokens) - 1
                and tokens[index - 1][0] is not None
                and tokens[index + 1][0] is not None
            )
            if between_words:
                continue
            if pending:
                out.append(decode_bytes(pending, pending_charset))
                pending = b""
            out.append(chunk)
            continue
        assert isinstance(chunk, bytes)
        if pending and charset != pending_charset:
            out.append(decode_bytes(pending, pending_charset))
            pending = b""
        pending_charset = charset
        pending += chunk
    if pending:
        out.append(decode_bytes(pending, pending_charset))
    return "".join(out)


def header_texts(msg: Message, name: str) -> list[str]:
    """All values of header ``name``, RFC 2047-decoded and unfolded (may be empty)."""
    values = msg.get_all(name) or []
    return [decode_rfc2047(_raw(v)) for v in values]


def header_text(msg: Message, name: str) -> str | None:
    """The first value of header ``name``, decoded; None when absent."""
    values = header_texts(msg, name)
    return values[0] if values else None


def raw_header(msg: Message, name: str) -> str | None:
    """The first value of header ``name`` unfolded but with encoded words kept.

    Address headers must be split into addresses before their display names are
    decoded, or a decoded comma in a name would split an address in two.
    """
    value = msg.get(name)
    if value is None:
        return None
    return re.sub(r"\r?\n[ \t]", " ", _fix_surrogates(_raw(value))).strip()


def raw_headers(msg: Message, name: str) -> list[str]:
    """Like :func:`raw_header` for every occurrence of ``name``."""
    return [
        re.sub(r"\r?\n[ \t]", " ", _fix_surrogates(_raw(v))).strip()
        for v in (msg.get_all(name) or [])
    ]


def _raw(value: object) -> str:
    chunks = getattr(value, "_chunks", None) if isinstance(value, Header) else None
    if chunks is not None:
        # compat32 wraps a header holding raw 8-bit bytes in a Header whose str()
        # loses them; its chunks still hold the bytes as surrogate escapes.
        parts: list[str] = []
        for chunk, charset in chunks:
            if str(charset) == "unknown-8bit" and isinstance(chunk, str):
                parts.append(_fix_surrogates(chunk))
            else:
                parts.append(str(chunk))
        return "".join(parts)
    return str(value)


class RawHeaderPolicy(Compat32):
    """compat32, except that header values come back as the raw strings they are.

    Plain compat32 wraps a header with 8-bit bytes in a Header object whose
    str() replaces them with U+FFFD; this module decodes them itself.
    """

    def header_fetch_parse(self, name: str, value: str) -> str:
        return value


#: The policy to parse inbound mail with (see :class:`RawHeaderPolicy`).
RAW_POLICY = RawHeaderPolicy()


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF; control characters (but tab and newline) and
    invisible characters (ZWSP, BOM, soft hyphen) go; no-break spaces become
    spaces. Variation selectors and joiners stay: they are part of how a suit
    symbol such as ♥️ is written."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    return _CONTROL.sub("", _INVISIBLE.sub("", text))


_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` without control characters (but tab and newline) and with any lone
    surrogate (left by ``surrogateescape`` decoding) replaced by U+FFFD: what may be
    stored, echoed in a reply or encoded as UTF-8."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))


def unflow(text: str, delsp: bool = False) -> str:
    """Undo RFC 3676 format=flowed: join soft-broken lines, remove space-stuffing.

    A line ending in a space continues on the next line of the same quote depth;
    the signature separator "-- " is never joined.
    """
    out: list[str] = []
    carry: str | None = None
    carry_depth = 0
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing (or the space after quote marks)
        if carry is not None and depth == carry_depth:
            content = carry + content
        elif carry is not None:
            out.append(">" * carry_depth + (" " if carry_depth else "") + carry)
        carry = None
        if content.endswith(" ") and content != "-- ":
            carry = content[:-1] if delsp else content
            carry_depth = depth
            continue
        out.append(">" * depth + (" " if depth and content else "") + content)
    if carry is not None:
        out.append(">" * carry_depth + (" " if carry_depth else "") + carry)
    return "\n".join(out)


def _html_converter() -> html2text.HTML2Text:
    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.ignore_links = True
    converter.ignore_images = True
    converter.ignore_tables = True
    converter.unicode_snob = True
    converter.ignore_emphasis = True  # no ** or _ markers, and no spaces added around them
    converter.single_line_break = True  # Gmail writes each line as a <div>: one line each
    converter.ul_item_mark = "-"
    return converter


def html_to_text(html: str) -> str:
    """Plain text of an HTML body: blockquotes become "> " lines, links and images
    drop out, Markdown escapes are undone. Never raises."""
    try:
        text = _html_converter().handle(html)
    except Exception:  # html2text on hostile HTML: fall back to stripping tags
        text = re.sub(r"<[^>]*>", " ", html)
    lines = [_MARKDOWN_ESCAPE.sub(r"\1", line.rstrip()) for line in text.split("\n")]
    return normalize_newlines("\n".join(lines)).strip("\n")


def part_text(part: Message) -> str:
    """The decoded text of a non-multipart part (transfer encoding and charset undone).

    HTML is returned as HTML; the caller converts it. A charset missing from the
    headers of an HTML part is looked for in its <meta> tag.
    """
    try:
        payload = part.get_payload(decode=True)
    except Exception:
        payload = None
    if not isinstance(payload, bytes):
        raw = part.get_payload()
        payload = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else b""
    charset = part.get_content_charset()
    if charset is None and part.get_content_type() == "text/html":
        meta = _HTML_META_CHARSET.search(payload[:4096])
        if meta:
            charset = meta.group(1).decode("ascii", "replace")
    text = normalize_newlines(decode_bytes(payload, charset))
    if part.get_content_type() == "text/plain":
        params = {k.lower(): v.lower() for k, v in part.get_params() or [] if isinstance(v, str)}
        if params.get("format") == "flowed":
            text = unflow(text, delsp=params.get("delsp") == "yes")
    return text
