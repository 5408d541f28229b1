"""Names and table talk that anyone may write, made safe to keep, show and mail.

A player's name comes from the display name of their From header, from ``name …`` or
from the admin (``Name=addr``); table talk from ``say …``. Each is cleaned where it is
taken in and again where it is shown, by the one function here, `clean_name`, so that
what the service stores, renders and puts in a header is one line of visible text:

- control characters (Unicode category Cc) go; those that are whitespace (tab, CR, LF,
  form feed, NEL …), line and paragraph separators and every other space fold, with the
  spaces around them, into one space;
- format characters (category Cf: the bidi embeddings, overrides and isolates
  U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C, zero-width
  spaces and joiners, the soft hyphen, tag characters …), lone surrogates and the
  blank "letters" that display as nothing (the Hangul fillers, the braille blank, the
  combining grapheme joiner) go;
- the markers of RFC 2047 encoded words, ``=?`` and ``?=``, go, so that no text written
  as ``=?utf-8?b?…?=`` is decoded by a mail client into something else (a line break in
  a header, another name);
- the text is cut to a limit, ending in "…" when cut.

Nothing here imports from the rest of the package: the mail reader, the store, the
renderers and the service all clean with it.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["NAME_LIMIT", "clean_name", "shown_name"]

NAME_LIMIT = 60
"""The longest player name kept (longer ones are cut, ending in "…")."""

# Characters that display as nothing but are letters, symbols or marks.
_BLANKS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
# ASCII controls that are not whitespace (the whitespace ones fold with str.split).
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")
_CHAR_CACHE: dict[str, str] = {}


def _clean_char(char: str) -> str:
    """What one non-ASCII character becomes: itself, a space or nothing."""
    kept = _CHAR_CACHE.get(char)
    if kept is not None:
        return kept
    category = unicodedata.category(char)
    if char.isspace():
        kept = " "
    elif category in ("Cc", "Cf", "Cs") or char in _BLANKS:
        kept = ""
    else:
        kept = char
    if len(_CHAR_CACHE) < 8192:
        _CHAR_CACHE[char] = kept
    return kept


def clean_name(text: str, limit: int = 40) -> str:
    """``text`` as one line of visible text, at most ``limit`` characters (see the module
    docstring): no control, format or invisible characters, whitespace folded to single
    spaces, no RFC 2047 encoded-word markers. Never raises; may return ""."""
    if not text:
        return ""
    if not text.isascii():
        text = "".join(char if char.isascii() else _clean_char(char) for char in text)
    text = _ASCII_CONTROL.sub("", text)
    while "=?" in text or "?=" in text:
        text = text.replace("=?", "").replace("?=", "")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def shown_name(player_id: int | None, chosen_name: str | None) -> str:
    """A player's name as anyone but the player sees it (``public_name`` in
    ``pbem.service.context``), from their id and chosen name, for lists read without
    loading whole players: the chosen name, cleaned, or a neutral "Player 12" (never a
    part of an address, so a chosen name holding an "@" is not shown either)."""
    chosen = clean_name(chosen_name or "", NAME_LIMIT)
    if chosen and "@" not in chosen:
        return chosen
    return f"Player {player_id}" if player_id is not None else "A player"
