"""Finding what a player wrote in a reply: quoted history, attributions and signatures go.

The text is read line by line, top to bottom:

- ``>``-quoted lines are dropped wherever they are, so an interleaved reply keeps
  the player's lines written between and below the quotes;
- an attribution line ("On Mon, Jan 1, 2024 at 10:00 AM Bob <b@x> wrote:", also
  wrapped over two or three lines, and its equivalents in other languages) is
  dropped when quoted lines follow it; when unquoted text follows (Yahoo, some
  mobile clients quote without ``>``), everything from it on is history;
- Outlook-style history ("-----Original Message-----", a "From: / Sent: / To: /
  Subject:" block, with or without a "____" separator) and forwarded-message
  markers end the reply: below them is history that carries no quote marks;
- the signature separator "-- " ends the reply;
- mobile footers ("Sent from my iPhone", "Get Outlook for iOS", …) are dropped;
- a closing such as "Thanks," followed only by a name, at the end, is dropped.

Attribution patterns for other languages come from the maintained
``mail-parser-reply`` library (German, French, Italian, Swedish, Danish, Polish,
Czech, Japanese, Chinese, Korean, …); our own rules cover what it misses
(Spanish and Dutch Gmail attributions, wrapped attributions, "Bob wrote:",
interleaved replies, mobile footers and ``>``-quoting below a reply).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mailparser_reply.constants import MAIL_LANGUAGES

from pbem.mail.decoding import normalize_newlines

__all__ = ["DEFAULT_LANGUAGES", "strip_quoted"]

#: Languages whose attribution lines the library recognises for us.
DEFAULT_LANGUAGES: tuple[str, ...] = tuple(
    lang
    for lang in ("en", "de", "fr", "es", "it", "nl", "sv", "da", "cs", "pl", "ja", "zh", "ko")
    if lang in MAIL_LANGUAGES
)

#: Beyond this the text is history anyway; it also bounds the regex work.
MAX_LINES = 2000
_MAX_ATTRIBUTION = 300

_QUOTED = re.compile(r"^[ \t]{0,3}>")

# "… wrote:" in the languages players write in; the verb may be followed by the
# name (German "schrieb Bob <b@x>:", Dutch "schreef Bob <b@x>:").
_WROTE_VERBS = (
    r"wrote|writes|schrieb|a\s+écrit|escribió|escreveu|ha\s+scritto|scrive|schreef|skrev"
    r"|kirjoitti|napisał(?:\(a\))?|napsal(?:\(a\))?|написал(?:\(а\))?|пишет|yazdı|írta"
)
_WROTE = re.compile(rf"^.{{0,300}}?(?<!\w)(?:{_WROTE_VERBS})(?!\w).{{0,200}}?\s*:$", re.I)

# How attributions that clients wrap over several lines begin.
_WRAPPED_OPENER = re.compile(r"^(?:on|am|le|el|il|op|den|dne|dnia|w\s+dniu|em|no|в|\d)(?!\w)", re.I)

# A date or an address is what tells an attribution from a sentence.
_ATTRIBUTION_EVIDENCE = re.compile(r"\d|@")

# English is left to _WROTE, which covers it. Some library patterns backtrack
# heavily on long lines, so each runs only on text holding its own keyword, on
# short text, and a bounded number of times per message.
_LIBRARY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "de": ("schrieb",),
    "fr": ("écrit",),
    "es": ("escribió",),
    "it": ("scritto",),
    "nl": ("schreef",),
    "sv": ("skrev",),
    "da": ("skrev",),
    "cs": ("napsal",),
    "pl": ("napisał", "nadesłał"),
    "ja": ("年",),
    "zh": ("写道",),
    "ko": ("작성하였습니다",),
}
_LIBRARY_WROTE = [
    (_LIBRARY_KEYWORDS[lang], re.compile(MAIL_LANGUAGES[lang]["wrote_header"], re.I | re.M))
    for lang in DEFAULT_LANGUAGES
    if lang in _LIBRARY_KEYWORDS and MAIL_LANGUAGES[lang].get("wrote_header")
]
_MAX_LIBRARY_ATTRIBUTION = 200
_LIBRARY_BUDGET = 40


class _Budget:
    """How many more library pattern runs one message may cost."""

    def __init__(self, runs: int) -> None:
        self.runs = runs

    def spend(self) -> bool:
        self.runs -= 1
        return self.runs >= 0


_HISTORY_MARKER = re.compile(
    r"^\s*(?:[-_=*]{2,}\s*)?(?:"
    r"original\s+message|forwarded\s+message|ursprüngliche\s+nachricht|weitergeleitete\s+nachricht"
    r"|message\s+d'origine|message\s+transféré|mensaje\s+original|mensaje\s+reenviado"
    r"|messaggio\s+originale|messaggio\s+inoltrato|oorspronkelijk\s+bericht|doorgestuurd\s+bericht"
    r"|originalmeddelande|vidarebefordrat\s+meddelande|oprindelig\s+meddelelse|opprinnelig\s+melding"
    r"|alkuperäinen\s+viesti|oryginalna\s+wiadomość|wiadomość\s+oryginalna|původní\s+zpráva"
    r"|исходное\s+сообщение|пересылаемое\s+сообщение|mensagem\s+original|mensagem\s+encaminhada"
    r")\s*(?:[-_=*]{2,})\s*$"
    r"|^\s*(?:begin\s+forwarded\s+message|anfang\s+der\s+weitergeleiteten\s+nachricht"
    r"|début\s+du\s+message\s+réexpédié|inicio\s+del\s+mensaje\s+reenviado)\s*:\s*$",
    re.I,
)

_SEPARATOR = re.compile(r"^\s*(?:_{8,}|-{8,}|={8,}|\*\s\*\s\*(?:\s\*)*)\s*$")

_FROM_WORDS = (
    r"from|von|de|da|van|från|fra|od|от|lähettäjä|kimden|feladó|发件人|寄件者|差出人|보낸\s?사람"
)
_OTHER_HEADER_WORDS = (
    r"sent|date|to|subject|cc|gesendet|datum|an|betreff|envoyé|à|objet|enviado|fecha|para"
    r"|asunto|inviato|data|a|oggetto|verzonden|aan|onderwerp|skickat|till|ämne|sendt|til|emne"
    r"|wysłano|do|temat|odesláno|komu|předmět|отправлено|кому|тема|дата|lähetetty|vastaanottaja"
    r"|aihe|gönderildi|kime|konu|发送时间|收件人|主题|日時|宛先|件名|보낸\s?날짜|받는\s?사람|제목"
)
_HEADER_LINE_START = r"^\s*[*_]*\s*(?:{})\s*[*_]*\s*[:：]"
_FROM_LINE = re.compile(_HEADER_LINE_START.format(_FROM_WORDS), re.I)
_OTHER_HEADER_LINE = re.compile(_HEADER_LINE_START.format(_OTHER_HEADER_WORDS), re.I)

_FOOTER = re.compile(
    r"^\s*(?:"
    r"sent\s+(?:from|via|with|using)\s+\S.{0,100}"
    r"|get\s+outlook\s+for\s+\S.{0,100}"
    r"|envoyé\s+(?:de|depuis|à\s+partir\s+de)\s+\S.{0,100}"
    r"|von\s+meinem\s+\S.{0,60}\s+gesendet\.?"
    r"|gesendet\s+(?:von|mit|vom)\s+\S.{0,100}"
    r"|enviado\s+(?:desde|do|de)\s+(?:mi|meu|o|a)\s+\S.{0,100}"
    r"|inviato\s+da\s+\S.{0,100}"
    r"|verzonden\s+(?:met|vanaf|van(?:af)?\s+mijn)\s+\S.{0,100}"
    r"|skickat\s+från\s+\S.{0,100}"
    r"|sendt\s+fra\s+\S.{0,100}"
    r"|wysłane\s+z\s+\S.{0,100}|wysłano\s+z\s+\S.{0,100}"
    r"|odesláno\s+z\s+\S.{0,100}"
    r"|отправлено\s+(?:с|из)\s+\S.{0,100}"
    r")\s*$",
    re.I,
)

_VALEDICTION = re.compile(
    r"^\s*(?i:thanks(?:\s+again)?|thank\s+you|thx|ta|cheers|regards|best|best\s+regards"
    r"|kind\s+regards|warm\s+regards|best\s+wishes|all\s+the\s+best|yours|love|later|gg"
    r"|gruß|grüße|viele\s+grüße|liebe\s+grüße|beste\s+grüße|mit\s+freundlichen\s+grüßen|lg|vg|mfg"
    r"|cordialement|salutations|amitiés|bises|merci|saludos|un\s+saludo|atentamente|gracias"
    r"|saluti|cordiali\s+saluti|grazie|groeten|met\s+vriendelijke\s+groet|hälsningar|mvh"
    r"|hilsen|pozdrawiam|s\s+pozdravem)"
    r"[\s,.!]*(?:[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2})?[\s,.!]*$"
)
_NAME_LINE = re.compile(r"^\s*[^\W\d_][\w.'-]*(?:\s+[^\W\d_][\w.'-]*){0,3}\s*$")


def _is_quoted(line: str) -> bool:
    return bool(_QUOTED.match(line))


def _is_signature_separator(line: str) -> bool:
    return line.rstrip() == "--" or line == "-- "


def _looks_like_attribution(text: str, budget: _Budget) -> bool:
    # Every attribution ends in a colon; checking that first keeps the regexes
    # off ordinary text.
    if len(text) > _MAX_ATTRIBUTION or not text.endswith((":", "：")):
        return False
    if _WROTE.match(text):
        return True
    if len(text) > _MAX_LIBRARY_ATTRIBUTION:
        return False
    lowered = text.lower()
    for keywords, pattern in _LIBRARY_WROTE:
        if any(k in lowered for k in keywords) and budget.spend() and pattern.match(text):
            return True
    return False


def _attribution_end(lines: Sequence[str], start: int, budget: _Budget) -> int | None:
    """If an attribution begins at ``start`` (on up to three lines), its last line.

    A wrapped attribution must open like one ("On …", "Am …", a date), so that a
    command on the line above an attribution is never taken for part of it.
    """
    parts: list[str] = []
    for end in range(start, min(start + 3, len(lines))):
        line = lines[end]
        if not line.strip() or _is_quoted(line):
            return None
        if end == start + 1 and not _WRAPPED_OPENER.match(parts[0]):
            return None
        parts.append(line.strip())
        if _looks_like_attribution(" ".join(parts), budget):
            return end
        if len(" ".join(parts)) > _MAX_ATTRIBUTION:
            return None
    return None


def _next_content(lines: Sequence[str], start: int) -> int | None:
    for index in range(start, len(lines)):
        if lines[index].strip():
            return index
    return None


def _header_block_at(lines: Sequence[str], start: int) -> bool:
    """An Outlook-style "From: … / Sent: … / To: …" block starts at ``start``: a
    From line whose next non-blank line (within three) is another header line."""
    if not _FROM_LINE.match(lines[start]):
        return False
    following = next((line for line in lines[start + 1 : start + 4] if line.strip()), "")
    return bool(_OTHER_HEADER_LINE.match(following))


def _history_starts_at(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if _HISTORY_MARKER.match(line) or _header_block_at(lines, index):
        return True
    if _SEPARATOR.match(line):
        following = [i for i in range(index + 1, min(index + 5, len(lines))) if lines[i].strip()]
        return bool(following) and (
            _header_block_at(lines, following[0])
            or _HISTORY_MARKER.match(lines[following[0]]) is not None
        )
    return False


def _drop_closing(kept: list[str]) -> list[str]:
    """Drop a trailing "Thanks,\\nBob" (a closing followed only by a name or two)."""
    content = [i for i, line in enumerate(kept) if line.strip()]
    for position, index in enumerate(content):
        if position == 0 or not _VALEDICTION.match(kept[index]):
            continue
        after = content[position + 1 :]
        if len(after) <= 2 and all(_NAME_LINE.match(kept[i]) for i in after):
            return kept[:index]
    return kept


def _tidy(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def strip_quoted(text: str) -> str:
    """The part of a reply body its sender wrote: no quoted history, attribution,
    signature or mobile footer. Runs of blank lines collapse to one; the result
    has no leading or trailing blank lines. Never raises."""
    lines = normalize_newlines(text).split("\n")[:MAX_LINES]
    kept: list[str] = []
    budget = _Budget(_LIBRARY_BUDGET)
    index = 0
    while index < len(lines):
        line = lines[index]
        if _is_quoted(line):
            index += 1
            continue
        if _is_signature_separator(line) or _history_starts_at(lines, index):
            break
        end = _attribution_end(lines, index, budget)
        if end is not None:
            following = _next_content(lines, end + 1)
            if following is None or _is_quoted(lines[following]):
                index = end + 1
                continue
            attribution = " ".join(part.strip() for part in lines[index : end + 1])
            if _ATTRIBUTION_EVIDENCE.search(attribution):
                break
        if _FOOTER.match(line):
            index += 1
            continue
        kept.append(line)
        index += 1
    return _tidy(_drop_closing(kept))
