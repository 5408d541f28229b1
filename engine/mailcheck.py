"""A game's archive checked against the player's own mail (``docs/pbem-deal-3.md``
section 11): the one record the server cannot rewrite.

From the text of each saved mail of the game (its subject names it: ``[Cribbage N]``)
`check_mail` reads what the service told the player and compares it with the archive:

- ``commitment``: every "Deal commitment (P): C" line — in the mail that asked for the
  cut, and every later one — shows the archive's protocol and commitment; a game-over
  mail's "The next game's deal commitment" is the commitment of the game that follows;
- ``receipt``: the text and SHA-256 quoted by "Your cut is in, recorded as “T”" is the
  entropy text the archive records for one seat;
- ``cut hashes``: every "Cuts as recorded" line gives, by seat name, the start of the
  SHA-256 the archive records for that seat;
- ``game`` and ``seats``: the game number is the archive's, and the names in those lines
  are the archive's players at those seats;
- the link through the player's own sent answer: a saved mail whose Message-ID is in a
  cut text the archive records (the answer that was the cut, from the player's Sent
  folder) answers a saved mail without a game number (its In-Reply-To: an invitation,
  a lobby welcome, a challenge's confirmation); every "Deal commitment (P): C" that
  mail showed is the archive's protocol and commitment. Without the sent answer the
  invitation is not linked to the game, and is not checked.

Pure: it takes the mails' subjects, texts and Message-ID / In-Reply-To, not files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

_SUBJECT = re.compile(r"\[Cribbage (\d+)\]")
_HEX = r"([0-9a-f](?: ?[0-9a-f]){63})"
_COMMIT = re.compile(r"Deal commitment \((pbem-deal/\d)\): " + _HEX)
_NEXT = re.compile(r"The next game's deal commitment: " + _HEX)
_RECEIPT = re.compile(r"recorded as “(.*?)” \(SHA-256 " + _HEX + r"\)")
_CUTS = re.compile(r"Cuts as recorded \(SHA-256, first (\d+) hex digits\): (.*?)\.(?: |$)")
_HEAD = re.compile(r"Commitment log: (\d+) entries, head ([0-9a-f]{16})\.")
_UNSAFE = re.compile(r"[^\x21-\x7e]")
LINKED = "commitment in the mail you answered with your cut"


class Mail(NamedTuple):
    """A saved mail: its subject and plain text, and its Message-ID and In-Reply-To
    headers ("" when it has none)."""

    subject: str
    text: str
    message_id: str = ""
    in_reply_to: str = ""


def as_mails(mails: Iterable[Mail | tuple[str, str]]) -> list[Mail]:
    """``mails`` as `Mail` (a (subject, text) pair: a mail without those headers)."""
    return [m if isinstance(m, Mail) else Mail(*m) for m in mails]


def message_id(header: str) -> str:
    """A Message-ID as a cut's entropy text starts with it (``pbem-deal/2`` and later):
    every character outside U+0021–U+007E deleted, its ``<`` ``>`` ends put back; "" for
    none."""
    core = _UNSAFE.sub("", header).strip("<>")
    return f"<{core}>" if core else ""


def replied_to(header: str) -> list[str]:
    """The Message-IDs an In-Reply-To header names."""
    return [m for m in (message_id(x) for x in re.findall(r"<[^<>]*>", header)) if m]


@dataclass
class MailCheck:
    """What the mail showed, checked: ``checked`` names each kind of check made (with
    how many mails), ``problems`` what differs (empty: the archive agrees)."""

    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    mails: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def flat(text: str) -> str:
    """The text with every run of whitespace one space (mail wraps long lines)."""
    return " ".join(text.split())


def _hex(found: str) -> str:
    return found.replace(" ", "")


def game_number(archive: dict[str, Any]) -> Any:
    proof = archive.get("deal_proof")
    if isinstance(proof, dict) and proof.get("protocol") == "pbem-deal/3":
        return proof.get("game")
    return archive.get("game_id")


def check_mail(archive: dict[str, Any], mails: Iterable[Mail | tuple[str, str]]) -> MailCheck:
    """The archive against the player's mails (each a `Mail`, or a (subject, text) pair)."""
    mails = as_mails(mails)
    out = MailCheck()
    proof = archive.get("deal_proof")
    proof = proof if isinstance(proof, dict) else {}
    game = game_number(archive)
    follows = proof.get("follows") if isinstance(proof.get("follows"), dict) else None
    before = follows.get("game") if follows else None
    counts = {"commitment": 0, "receipt": 0, "cut hashes": 0, "game": 0, LINKED: 0}
    _check_answered(out, counts, proof, mails)
    for subject, text, _, _ in mails:
        number = _SUBJECT.search(subject or "")
        if number is None:
            continue
        shown = int(number.group(1))
        body = flat(text)
        if before is not None and shown == before:
            for found in _NEXT.finditer(body):
                counts["commitment"] += 1
                if _hex(found.group(1)) != proof.get("commitment"):
                    out.problems.append(
                        f"game {before}'s game-over mail showed the next game's commitment "
                        f"{_hex(found.group(1))}, the archive's is {proof.get('commitment')}"
                    )
            continue
        if shown != game:
            continue
        out.mails += 1
        counts["game"] += 1
        _check_one(out, counts, archive, proof, body)
    for what, many in counts.items():
        if many:
            out.checked.append(f"{what} ({many} mail{'s' if many != 1 else ''})")
    if counts["game"] and (counts["cut hashes"] or counts["receipt"]):
        out.checked.append("seats")
    if not counts["game"] and not counts["commitment"] and not counts[LINKED]:
        out.problems.append(f"no saved mail is of game {game}")
    out.problems = list(dict.fromkeys(out.problems))  # each once, however many mails show it
    return out


def _check_answered(
    out: MailCheck, counts: dict[str, int], proof: dict[str, Any], mails: list[Mail]
) -> None:
    """The link through the player's own sent answer: the mail without a game number
    that an answer recorded as a cut replied to showed the archive's commitment."""
    listed = proof.get("entropy")
    entries: list[Any] = listed if isinstance(listed, list) else []
    cut_ids = {
        e["text"].split(" ", 1)[0]
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("text"), str)
    }
    by_id = {message_id(m.message_id): m for m in mails if message_id(m.message_id)}
    answered: dict[str, Mail] = {}
    for mail in mails:
        if message_id(mail.message_id) not in cut_ids:
            continue
        for parent in replied_to(mail.in_reply_to):
            if parent in by_id and _SUBJECT.search(by_id[parent].subject or "") is None:
                answered[parent] = by_id[parent]
    for mail in answered.values():
        shown = list(_COMMIT.finditer(flat(mail.text)))
        if shown:
            counts[LINKED] += 1
        for found in shown:
            protocol, commit = found.group(1), _hex(found.group(2))
            if protocol != proof.get("protocol"):
                out.problems.append(
                    f"the invitation you answered with your cut named the protocol "
                    f"{protocol}, the archive {proof.get('protocol')}"
                )
            if commit != proof.get("commitment"):
                out.problems.append(
                    f"the invitation you answered with your cut showed commitment {commit}, "
                    f"the archive's is {proof.get('commitment')}: the server seed was "
                    "changed after it was shown"
                )


def _check_one(
    out: MailCheck,
    counts: dict[str, int],
    archive: dict[str, Any],
    proof: dict[str, Any],
    body: str,
) -> None:
    for found in _COMMIT.finditer(body):
        counts["commitment"] += 1
        if found.group(1) != proof.get("protocol"):
            out.problems.append(
                f"the mail named the protocol {found.group(1)}, the archive {proof.get('protocol')}"
            )
        if _hex(found.group(2)) != proof.get("commitment"):
            out.problems.append(
                f"the mail showed the commitment {_hex(found.group(2))}, the archive's is "
                f"{proof.get('commitment')}: the server seed was changed after it was shown"
            )
    listed = proof.get("entropy")
    entries: list[Any] = listed if isinstance(listed, list) else []
    by_hash = {str(e.get("sha256")): e for e in entries if isinstance(e, dict)}
    for found in _RECEIPT.finditer(body):
        counts["receipt"] += 1
        text, digest = found.group(1), _hex(found.group(2))
        entry = by_hash.get(digest)
        if entry is None or ("text" in entry and entry["text"] != text):
            out.problems.append(f"the cut the mail's receipt quotes (“{text}”) is not recorded")
    names = _names(archive)
    for found in _CUTS.finditer(body):
        counts["cut hashes"] += 1
        digits = int(found.group(1))
        for part in found.group(2).split("; "):
            who, _, start = part.rpartition(" ")
            seat = _seat_of(who, names)
            if seat is None:
                out.problems.append(f"the mail names {who!r}, who is no player of the archive")
                continue
            entry = next(
                (e for e in entries if isinstance(e, dict) and e.get("seat") == seat), None
            )
            if entry is None or not str(entry.get("sha256", "")).startswith(start[:digits]):
                out.problems.append(
                    f"the mail showed {who}'s cut as {start}…, the archive records another"
                )


def _names(archive: dict[str, Any]) -> Sequence[str]:
    players = archive.get("players")
    if not isinstance(players, list):
        return []
    return [str(p.get("name")) if isinstance(p, dict) else "" for p in players]


def _seat_of(who: str, names: Sequence[str]) -> int | None:
    if who.startswith("seat ") and who[5:].isdigit():
        return int(who[5:])
    return names.index(who) if who in names else None


def log_heads(mails: Iterable[Mail | tuple[str, str]]) -> list[tuple[int, str]]:
    """The commitment log's heads the mails showed (``Commitment log: N entries, head
    H.``), each once, in the order found: for `engine.commitlog.check_heads`."""
    found = (m.groups() for mail in as_mails(mails) for m in _HEAD.finditer(flat(mail.text)))
    return list(dict.fromkeys((int(n), h) for n, h in found))
