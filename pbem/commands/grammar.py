"""The grammar every family of commands shares: a mail's text as lines, a line as words.

One command per line (``;`` and ``then`` also separate commands). Case does not matter,
punctuation around words is ignored. A ``say`` line is table talk: kept whole, as
written, and never read as commands::

    say Nice crib!     (table talk: the rest of the line goes to the other players as
                        written; never read as commands — "say play 5h" plays nothing)

Here are the types of a command as read (`Command`, `Parsed`), the splitting of a text
into command lines (`split_lines`, `body_lines`), the words of a line (`TOKEN_RE`,
`LEADING`, `arguments`), and what is a card word (`is_card_word`). The family modules
build on it; it imports none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine import InvalidSyntaxError, parse_card


@dataclass(frozen=True, slots=True)
class Command:
    """One command as read: the verb and its words, with the line it came from."""

    verb: str
    args: tuple[str, ...]
    line: str

    def __str__(self) -> str:
        return " ".join((self.verb, *self.args)) if self.verb != "cards" else " ".join(self.args)


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a reply said: commands in order, and the lines that were not commands."""

    commands: tuple[Command, ...]
    ignored: tuple[str, ...]


# Words dropped after a verb ("lay away 5h and jd", "play the king", "play my card").
FILLER = {"away", "the", "and", "&", "to", "my", "please", "card", "cards", "i", "will", "an"}
# "a" is both the ace and an article: it is dropped before "card" ("play a card"), kept as
# an ace when it is the only card word ("play a"), and read by `to_action` as an article
# when there are more card words than the move takes ("I play a 5", "throw a 5 and a k").
ARTICLE = "a"
# Words before the verb, dropped: "I resign", "I'll play 7c", "let's go".
LEADING = {"i", "ll", "i’ll", "ill", "will", "let", "s", "let’s", "lets", "then"}
# The words of a line (lowercased first): runs of anything but spaces and punctuation.
TOKEN_RE = re.compile(r"[^\s,;:.!()\[\]\"']+")
# Table talk: a whole line, kept as written, never read as commands.
TALK_VERBS = ("say",)
# A line of table talk: "say" and the rest of the line, as written ("Say: well played!").
_SAY_RE = re.compile(r"^\s*say(?:\s+|\s*[:,-]\s*|$)(.*)$", re.IGNORECASE | re.DOTALL)
_SPLIT_RE = re.compile(r"[;\n]|\bthen\b", re.IGNORECASE)
_MAX_LINES = 40


def words_after(line: str, word: str) -> str:
    """The words after the first ``word`` of ``line``, as written (case kept): what a cut
    adds to its mail's Message-ID (``cut 17 purple`` → "17 purple"; ``rematch best of
    3`` → "best of 3")."""
    found = re.search(rf"\b{re.escape(word)}\b(.*)$", line, re.IGNORECASE | re.DOTALL)
    return found.group(1).strip() if found else ""


def is_card_word(word: str) -> bool:
    """Whether ``word`` names a card (``7c``, ``♥5``, ``10h``)."""
    try:
        parse_card(word)
    except InvalidSyntaxError:
        return False
    return True


def arguments(words: list[str]) -> list[str]:
    """The words after a verb without the fillers; "a" goes only before "card(s)"."""
    out: list[str] = []
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in FILLER or (word == ARTICLE and following in ("card", "cards")):
            continue
        out.append(word)
    return out


def say_text(line: str) -> str | None:
    """The words of a ``say`` line as written (spaces collapsed), or None when the line
    is not table talk."""
    found = _SAY_RE.match(line)
    if found is None:
        return None
    return " ".join(found.group(1).split())


def split_lines(text: str) -> list[str]:
    """A reply's text as command lines: lines, each split at ``;`` and ``then`` — but a
    ``say`` line whole (table talk is never read as commands)."""
    out: list[str] = []
    for line in (text or "").split("\n"):
        if say_text(line) is not None:
            out.append(line.strip())
        else:
            out.extend(part.strip() for part in _SPLIT_RE.split(line))
    return out


def body_lines(text: str) -> list[str]:
    """The command lines of a mail's text (`split_lines`), blank ones dropped, at most
    the first 40."""
    return [line for line in split_lines(text) if line][:_MAX_LINES]
