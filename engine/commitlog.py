"""The public commitment log: an append-only hash chain of every fair game's commitment
and fate (``docs/pbem-deal-3.md`` section 10). Certificate Transparency is the model: what
a server leaves out or changes later is visible to anyone who kept an earlier head.

Each entry is ``{"seq", "game", "event", "commitment", "fate", "server_seed", "at",
"prev", "hash"}``: ``seq`` counts from 1, ``prev`` is the ``hash`` of the entry before
(64 zeros for the first), and ``hash`` is the SHA-256 of the entry's other fields as
canonical JSON (keys sorted, no spaces, UTF-8). Events:

- ``commit``: game ``game`` was created with ``commitment``, before anyone cut for it;
- ``next``: game ``game`` is over, and ``commitment`` is shown for the game that may
  follow it (a rematch, a match's next game), whose players cut by answering;
- ``end``: game ``game`` ended — ``fate`` "played", "aborted before the deal" or
  "aborted after the deal" — and ``server_seed`` is its revealed seed;
- ``offer``: ``commitment`` is shown before its game exists — in a challenge's
  invitations, the mail that asks the challenger to confirm it (or says their
  invitations went), the welcome to a new player — whose answers are cuts for that
  game's deal. No game has a number yet, so ``game`` is 0 (`NO_GAME`); the game it
  becomes commits the same commitment (``commit``);
- ``lapse``: the offer of ``commitment`` ended without a game — declined, expired or
  withdrawn — with ``fate`` "aborted before the deal" and its revealed ``server_seed``;
  its ``game`` is the offer's.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

GENESIS = "0" * 64
EVENTS = ("commit", "next", "end", "offer", "lapse")
NO_GAME = 0
"""The ``game`` of an ``offer`` (and its ``lapse``): no game exists yet."""
FATES = ("played", "aborted before the deal", "aborted after the deal")
FIELDS = ("seq", "game", "event", "commitment", "fate", "server_seed", "at", "prev")


def entry_hash(entry: dict[str, Any]) -> str:
    """The SHA-256 (hex) of an entry's fields other than ``hash``, as canonical JSON."""
    body = {key: entry.get(key) for key in FIELDS}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_entry(
    seq: int,
    prev: str,
    game: int,
    event: str,
    commitment: str,
    at: str,
    *,
    fate: str | None = None,
    server_seed: str | None = None,
) -> dict[str, Any]:
    """The next entry after the one whose hash is ``prev`` (number ``seq``)."""
    entry: dict[str, Any] = {
        "seq": seq,
        "game": game,
        "event": event,
        "commitment": commitment,
        "fate": fate,
        "server_seed": server_seed,
        "at": at,
        "prev": prev,
    }
    entry["hash"] = entry_hash(entry)
    return entry


def fate_of(seed: str | None, aborted: bool) -> str:
    """How a game ended: never dealt (no key), aborted after its deal, or played out."""
    if seed is None:
        return "aborted before the deal"
    return "aborted after the deal" if aborted else "played"


@dataclass
class LogCheck:
    """What `check_log` found: the problems (empty: the chain holds), and the counts."""

    problems: list[str] = field(default_factory=list)
    entries: int = 0
    games: int = 0
    played: int = 0
    aborted_before: int = 0
    aborted_after: int = 0
    head: str = GENESIS
    offers: int = 0
    taken: int = 0
    """Offers that became a game (a ``commit`` of their commitment)."""
    lapsed: int = 0
    """Offers that ended without a game: aborted before the deal."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def dealt(self) -> int:
        return self.played + self.aborted_after

    def summary(self) -> str:
        return (
            f"{self.entries} entries, head {self.head}: {self.games} games, {self.dealt} dealt "
            f"({self.played} played, {self.aborted_after} aborted after the deal), "
            f"{self.aborted_before} aborted before the deal, "
            f"{self.games - self.dealt - self.aborted_before} not ended; "
            f"{self.offers} offers (commitments shown before their game), {self.taken} became "
            f"games, {self.lapsed} lapsed (declined, expired or withdrawn: aborted before the "
            "deal), "
            f"{self.offers - self.taken - self.lapsed} open"
        )


def check_log(entries: Iterable[Any]) -> LogCheck:
    """Every entry in order: numbered 1, 2, …, chained to the one before, its hash its
    own, its event and fate known; one ``commit`` per game, one ``end`` per committed
    game, whose seed is the commitment's; each commitment offered once, and an offer
    either taken by one game (its ``commit``) or lapsed (once, with the seed of its
    commitment), never both."""
    out = LogCheck()
    committed: dict[Any, str] = {}
    ended: set[Any] = set()
    offers: dict[str, Offer] = {}
    prev = GENESIS
    for number, entry in enumerate(entries, start=1):
        out.entries = number
        if not isinstance(entry, dict):
            out.problems.append(f"entry {number} is not an object")
            break
        where = f"entry {number}"
        if entry.get("seq") != number or entry.get("prev") != prev:
            out.problems.append(f"{where} does not follow entry {number - 1}: the chain is cut")
        if entry.get("hash") != entry_hash(entry):
            out.problems.append(f"{where}'s hash is not its own: it was changed")
        prev = str(entry.get("hash"))
        game, event = entry.get("game"), entry.get("event")
        if event == "commit":
            if game in committed:
                out.problems.append(f"{where}: game {game} is committed twice")
            committed[game] = str(entry.get("commitment"))
            out.games += 1
            _taken(out, where, entry, offers)
        elif event == "end":
            _ended(out, where, entry, committed, ended)
        elif event in ("offer", "lapse"):
            _offered(out, where, entry, offers)
        elif event != "next":
            out.problems.append(f"{where}: unknown event {event!r}")
    out.head = prev
    return out


def _ended(
    out: LogCheck, where: str, entry: dict[str, Any], committed: dict[Any, str], ended: set[Any]
) -> None:
    game, fate, seed = entry.get("game"), entry.get("fate"), entry.get("server_seed")
    if game not in committed:
        out.problems.append(f"{where}: game {game} ends without a commitment")
        return
    if game in ended:
        out.problems.append(f"{where}: game {game} ends twice")
    ended.add(game)
    if not isinstance(seed, str) or hashlib.sha256(seed.encode()).hexdigest() != committed[game]:
        out.problems.append(f"{where}: game {game}'s revealed seed is not its commitment's")
    if fate == "played":
        out.played += 1
    elif fate == "aborted before the deal":
        out.aborted_before += 1
    elif fate == "aborted after the deal":
        out.aborted_after += 1
    else:
        out.problems.append(f"{where}: unknown fate {fate!r}")


@dataclass
class Offer:
    """An invitation's commitment in the log: its number, and what became of it."""

    number: Any
    state: str = "open"  # "open", "taken" (by a game's commit) or "lapsed"


def _offered(out: LogCheck, where: str, entry: dict[str, Any], offers: dict[str, Offer]) -> None:
    number, commit = entry.get("game"), str(entry.get("commitment"))
    name = f"the offer of {commit[:16]}"
    if entry.get("event") == "offer":
        if commit in offers:
            out.problems.append(f"{where}: {name} is offered twice")
            return
        offers[commit] = Offer(number)
        out.offers += 1
        return
    offer = offers.get(commit)
    if offer is None or offer.number != number:
        out.problems.append(f"{where}: {name} lapses, but it was never offered")
        return
    if offer.state != "open":
        out.problems.append(f"{where}: {name} lapses, but it was {offer.state} before")
        return
    offer.state = "lapsed"
    out.lapsed += 1
    seed = entry.get("server_seed")
    if not isinstance(seed, str) or hashlib.sha256(seed.encode()).hexdigest() != commit:
        out.problems.append(f"{where}: {name} lapses with a seed that is not its commitment's")
    if entry.get("fate") != "aborted before the deal":
        out.problems.append(f"{where}: {name} lapses with the fate {entry.get('fate')!r}")


def _taken(out: LogCheck, where: str, entry: dict[str, Any], offers: dict[str, Offer]) -> None:
    """A game's ``commit``: when its commitment was offered, the offer becomes the game."""
    offer = offers.get(str(entry.get("commitment")))
    if offer is None:
        return
    if offer.state != "open":
        out.problems.append(
            f"{where}: game {entry.get('game')} takes the commitment of an offer "
            f"which was {offer.state} before"
        )
        return
    offer.state = "taken"
    out.taken += 1


def check_game(entries: Sequence[Any], archive: dict[str, Any]) -> list[str]:
    """A game's archive against the log: the problems (empty: it agrees). The game has
    exactly one ``commit`` entry, with the archive's commitment; the commitment was in
    the log (``commit``, ``next`` or ``offer``) no later than any cut the archive lists
    as accepted; and once the archive reveals its seed, the game's ``end`` entry has that
    seed and the fate the archive shows."""
    proof = archive.get("deal_proof")
    if not isinstance(proof, dict):
        return ["the archive has no deal proof"]
    game = proof.get("game", archive.get("game_id"))
    commit = proof.get("commitment")
    mine = [e for e in entries if isinstance(e, dict) and e.get("game") == game]
    commits = [e for e in mine if e.get("event") == "commit"]
    problems: list[str] = []
    if len(commits) != 1:
        problems.append(f"the log has {len(commits)} commitments for game {game}, not one")
    elif commits[0].get("commitment") != commit:
        problems.append(f"the log's commitment for game {game} is not the archive's")
    shown = [e for e in entries if isinstance(e, dict) and e.get("commitment") == commit]
    logged = (e for e in shown if e.get("event") not in ("end", "lapse"))
    first = min((str(e.get("at")) for e in logged), default=None)
    listed = proof.get("cuts")
    cuts: list[Any] = listed if isinstance(listed, list) else []
    taken = [str(c.get("received")) for c in cuts if isinstance(c, dict) and c.get("accepted")]
    if first is not None and taken and min(taken) < first:
        problems.append(f"a cut was taken at {min(taken)}, before the commitment was logged")
    seed = proof.get("server_seed")
    if isinstance(seed, str):
        ends = [e for e in mine if e.get("event") == "end"]
        aborted = proof.get("outcome") == "aborted"
        want = fate_of(archive.get("seed"), aborted)
        if len(ends) != 1:
            problems.append(f"the log has {len(ends)} ends for game {game}, not one")
        elif ends[0].get("server_seed") != seed:
            problems.append(f"the seed the log revealed for game {game} is not the archive's")
        elif ends[0].get("fate") != want:
            problems.append(
                f"the log says game {game} was {ends[0].get('fate')}, the archive {want}"
            )
    return problems


def check_heads(entries: Sequence[Any], heads: Iterable[tuple[int, str]]) -> list[str]:
    """The heads a player's mails showed (``Commitment log: N entries, head H.``: the
    number of entries then and the start of the last one's hash) against the log: each
    must be a prefix of it — entry N's hash begins with H. A log rewritten after a mail
    showed its head (even re-chained so that it holds by itself) fails here. The
    problems (empty: every head is in the log)."""
    problems: list[str] = []
    for count, start in dict.fromkeys(heads):
        if count < 1 or count > len(entries):
            problems.append(f"a mail showed the log at {count} entries; the log has {len(entries)}")
            continue
        entry = entries[count - 1]
        digest = entry.get("hash") if isinstance(entry, dict) else None
        if not isinstance(digest, str) or not digest.startswith(start):
            problems.append(
                f"a mail showed entry {count} of the log as {start}…, the log's is another: "
                "the log was rewritten after that mail"
            )
    return problems
