"""Reading ``mailto:`` links as a mail client does (RFC 6068), and clicking them.

`parse_mailto` splits a URI into its addresses and header fields: the query's fields are
split on ``&`` and ``=`` and each part percent-decoded as UTF-8 (`urllib.parse.unquote`,
strictly: a bad byte sequence is an error), never reading "+" as a space — and, since a
form parser does read it so, it also checks that `urllib.parse.parse_qs` finds the same
fields (a link with a raw "+" in a field would read differently in such a client).
`links_in` finds every link of a mail's HTML part; `click` writes the mail a client
sends for one: a new mail (no In-Reply-To) From the player, To the link's address, with
the link's Subject and body.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from html.parser import HTMLParser
from urllib.parse import parse_qs, unquote, urlsplit

from tests.e2e.helpers import plain_mail


@dataclass(frozen=True)
class Mailto:
    """A parsed ``mailto:`` URI: its addresses (path and any ``to`` field) and its other
    header fields by lower-case name (``subject``, ``body``, …)."""

    to: tuple[str, ...]
    fields: dict[str, str]

    @property
    def subject(self) -> str:
        return self.fields.get("subject", "")

    @property
    def body(self) -> str:
        return self.fields.get("body", "")


def _decode(text: str) -> str:
    return unquote(text, encoding="utf-8", errors="strict")


def parse_mailto(uri: str) -> Mailto:
    """``uri`` read by RFC 6068; raises ValueError for anything else (another scheme, a
    fragment, a field without "=", a field named twice, bad percent-encoding)."""
    parts = urlsplit(uri)
    if parts.scheme != "mailto" or parts.netloc or parts.fragment:
        raise ValueError(f"not a mailto URI: {uri!r}")
    to = [_decode(a) for a in parts.path.split(",") if a]
    fields: dict[str, str] = {}
    for hfield in parts.query.split("&") if parts.query else ():
        name, eq, value = hfield.partition("=")
        if not eq or not name:
            raise ValueError(f"not a header field: {hfield!r} in {uri!r}")
        key = _decode(name).lower()
        if key in fields:
            raise ValueError(f"{key} twice in {uri!r}")
        if key == "to":
            to.extend(_decode(a) for a in value.split(","))
            continue
        fields[key] = _decode(value)
    if parts.query:
        # A form parser (plus for space) must read the same fields.
        form = parse_qs(parts.query, keep_blank_values=True, strict_parsing=True, errors="strict")
        assert {k.lower(): v for k, v in form.items() if k.lower() != "to"} == {
            k: [v] for k, v in fields.items()
        }, uri
    if not to:
        raise ValueError(f"no address in {uri!r}")
    return Mailto(tuple(to), fields)


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def hrefs_in(markup: str) -> list[str]:
    """Every ``href`` of every ``<a>`` in ``markup``, entities decoded, in order."""
    parser = _Anchors()
    parser.feed(markup)
    parser.close()
    return parser.hrefs


def html_of(msg: EmailMessage) -> str:
    """The mail's HTML part, decoded."""
    part = msg.get_body(preferencelist=("html",))
    assert part is not None, f"no HTML part in {msg['Subject']}"
    return str(part.get_content())


def links_in(msg: EmailMessage) -> list[Mailto]:
    """Every ``mailto:`` link of the mail's HTML part, parsed (any other link fails)."""
    hrefs = hrefs_in(html_of(msg))
    assert all(h.startswith("mailto:") for h in hrefs), hrefs
    return [parse_mailto(h) for h in hrefs]


def click(link: Mailto, sender: str) -> bytes:
    """The mail a client sends when ``sender`` clicks ``link`` and presses Send."""
    (to,) = link.to
    return plain_mail(sender, to, link.body, subject=link.subject)
