"""deals: what a fair game keeps of its deal (``docs/pbem-deal-1.md``).

The records of the verifiable-deal protocol, with no mail in them: the server seed and
its commitment (`new_server_seed`), each seat's cut text (`cut_text`, `record_cut`,
`refuse_cut`: every cut mail is logged, accepted or not), who has not cut yet
(`waiting`), the receipts, the lines every later mail shows (`deal_lines`,
`cut_hash_line`) and the archive's ``deal_proof`` (`deal_proof`, `unplayed_archive`).
The cut phase itself (asking, dealing, the clocks) is `pbem.service.ops.cutting`.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import Game
from engine.commitlog import NO_GAME
from engine.dealkey import PROTOCOL_3, key_v3
from engine.fairness import (
    PROTOCOL,
    PROTOCOL_1,
    DealProof,
    commitment,
    derive_seed,
    entropy_text,
    records_of,
    text_hash,
)
from pbem.commands import Command, words_after
from pbem.mail.reading import IncomingMail
from pbem.render import Notice
from pbem.service.context import (
    Seated,
    is_computer,
    seat_level,
)
from pbem.service.moves import read_commands
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.commitlog import append as append_log
from pbem.store.commitlog import head_of
from pbem.store.games import log_cut

NOT_NEEDED = (
    "No cut is needed now: the cards of this game are already dealt (everyone's cut is "
    "taken once, before the first deal)."
)


def new_server_seed() -> str:
    """``S``: 64 lowercase hex characters from the operating system's secure generator."""
    return secrets.token_hex(32)


def deal_lines(
    game_row: m.Game,
    *,
    over: bool,
    following: str = "",
    names: Sequence[str] = (),
    head: tuple[int, str] | None = None,
) -> tuple[str, ...]:
    """The lines every mail of a fair game carries: the commitment; the SHA-256 of each
    seat's cut as recorded (``names``: the seats' names), for the player to compare
    with the receipt of their cut; and once the game is ``over`` (or aborted: a game
    that ends without being played out reveals its seed all the same) the server seed
    and the next game's commitment — with the answer that is the player's cut for that
    game when the mail asks for one (``following``: "rematch", or "next" in a match
    that goes on; never an answer the mail does not offer). Empty for a game whose
    deals are not verifiable."""
    if not game_row.commitment:
        return ()
    lines = [f"Deal commitment ({protocol_of(game_row)}): {game_row.commitment}"]
    if head is None:
        head = log_head(game_row)
    if head is not None and head[0]:
        lines.append(log_line(head))
    cut = cut_hash_line(game_row, names)
    if cut:
        lines.append(cut)
    aborted = game_row.status == m.GameStatus.ABORTED.value
    if over and game_row.next_seed and not aborted:
        lines.append(
            f"The next game's deal commitment: {commitment(game_row.next_seed)}"
            + (
                f" — your answer to this mail (“{following}”) is your cut for it."
                if following
                else "."
            )
        )
    if aborted and game_row.server_seed:
        lines.append(
            f"Server seed, revealed now the game is aborted: {game_row.server_seed} — "
            "with it the game's archive shows that its deals were the ones committed to."
        )
    elif over and game_row.server_seed:
        lines.append(
            f"Server seed, revealed now the game is over: {game_row.server_seed} — with "
            "it the game's replay page (attached to the game-over mail, and to the "
            "archive) checks every deal in your web browser."
        )
    else:
        lines.append("The server seed behind it is revealed when the game is over.")
    return tuple(lines)


def log_line(head: tuple[int, str]) -> str:
    """The public commitment log's head, as every mail of a fair game shows it: a
    player who keeps the mail pins the log (`engine.commitlog`)."""
    return f"Commitment log: {head[0]} entries, head {head[1][:CUT_HASH_DIGITS]}."


def log_head(game_row: m.Game) -> tuple[int, str] | None:
    """The public commitment log's head now (entries, last hash), read in the session
    that holds ``game_row`` (one row by its key); None for a row no session holds."""
    from sqlalchemy.orm import object_session

    session = object_session(game_row)
    return head_of(session) if session is not None else None


CUT_HASH_DIGITS = 16
"""How many hex digits of each cut's SHA-256 a game mail shows: 64 bits, more than any
server could match by grinding other texts, in a line short enough for every mail."""


def cut_hash_line(game_row: m.Game, names: Sequence[str] = ()) -> str:
    """ "Cuts as recorded (SHA-256, first 16 hex digits): Ann 1f…; Bob 9c…" — the start
    of every recorded cut's hash, by seat name (``names``; "seat N" without them);
    empty before any cut. The receipt and the archive hold the whole hash."""
    entries = sorted(game_row.entropy or (), key=lambda e: int(e["seat"]))
    if not entries:
        return ""
    parts = []
    for entry in entries:
        seat = int(entry["seat"])
        who = names[seat] if seat < len(names) else f"seat {seat}"
        digest = str(entry["sha256"]) if "text" not in entry else text_hash(str(entry["text"]))
        parts.append(f"{who} {digest[:CUT_HASH_DIGITS]}")
    return (
        f"Cuts as recorded (SHA-256, first {CUT_HASH_DIGITS} hex digits): " + "; ".join(parts) + "."
    )


def revealed(game_row: m.Game) -> bool:
    """Whether a fair game's server seed may be shown: it is finished, or it ended
    without being played out (aborted, the cut deadline passed)."""
    return game_row.status in (m.GameStatus.FINISHED.value, m.GameStatus.ABORTED.value)


def deal_proof(
    game_row: m.Game, cuts: Sequence[m.CutMail] = (), game: Game | None = None
) -> dict[str, Any] | None:
    """The archive's ``deal_proof`` of a fair game, or None: the commitment, the server
    seed once the game is finished or aborted (with the deal records of ``game``, the
    game as played, then), each recorded cut with its SHA-256, every cut mail received
    (``cuts``, accepted and refused), the re-cuts (none: the service never restarts a
    cut phase — a game whose players did not all cut is aborted, its seed revealed), the
    game it follows, and how it ended.

    ``cuts`` is left out for a game whose cuts were taken before cut mails were logged
    (a recorded cut with no accepted mail behind it): its record would be incomplete."""
    if not game_row.commitment:
        return None
    from engine.forgetting import is_forgotten

    entries = game_row.entropy or ()
    aborted = game_row.status == m.GameStatus.ABORTED.value
    finished = game_row.status == m.GameStatus.FINISHED.value
    proof = DealProof(
        game_row.commitment,
        game_row.server_seed,
        tuple((int(e["seat"]), str(e["text"])) for e in entries if not is_forgotten(e)),
        protocol=protocol_of(game_row),
        follows=dict(game_row.follows) if game_row.follows else None,
        outcome="aborted" if aborted else "finished" if finished else None,
        abort_reason=game_row.status_reason if aborted else None,
        # A forgotten player's cut: its hash only (`engine.forgetting`).
        forgotten=tuple((int(e["seat"]), str(e["sha256"])) for e in entries if is_forgotten(e)),
        game=dealt_as(game_row),
        players=int(game_row.settings.get("players", 2)),
    )
    records = records_of(game) if game is not None and revealed(game_row) else None
    data = proof.to_json(reveal=revealed(game_row), records=records)
    logged = [cut_record(cut) for cut in cuts]
    taken = {(c["seat"], c["sha256"]) for c in logged if c["accepted"]}
    if all((e["seat"], e["sha256"]) in taken for e in proof.entries()):
        data["cuts"] = logged
    else:
        data.pop("cuts", None)
    data["recuts"] = []
    data["follows"] = proof.follows
    data["outcome"] = proof.outcome
    data["abort_reason"] = proof.abort_reason
    if proof.protocol == PROTOCOL_3:
        _v3_fields(data, game_row, game)
    return data


def _v3_fields(data: dict[str, Any], game_row: m.Game, game: Game | None) -> None:
    """What ``pbem-deal/3`` adds: the human seats whose cut was missing when a game
    ended before its deal, and the result of a finished game (what the game that
    follows it records, and a verifier checks with ``--previous``)."""
    if game_row.seed is None and game_row.status == m.GameStatus.ABORTED.value:
        data["missing"] = waiting(game_row)
    if game is not None and game.is_over and game.outcome is not None and revealed(game_row):
        data["result"] = {"scores": list(game.outcome.scores), "winner": game.outcome.winner}


def dealt_as(game_row: m.Game) -> int | None:
    """The game number a ``pbem-deal/3`` key binds: the game's id, or for a game
    imported from another service's archive the number it was dealt under there."""
    bound = game_row.settings.get("deal_game")
    return int(bound) if bound is not None else game_row.id


def derive_key(game_row: m.Game) -> str:
    """``K`` of a fair game whose human seats have all cut, by its protocol (``/3``
    binds the game's number and player count and each cut's seat)."""
    assert game_row.server_seed is not None and game_row.id is not None
    entries = sorted(game_row.entropy or (), key=lambda e: int(e["seat"]))
    protocol = protocol_of(game_row)
    if protocol == PROTOCOL_3:
        pairs = [
            (int(e["seat"]), text_hash(str(e["text"])) if "text" in e else str(e["sha256"]))
            for e in entries
        ]
        players = int(game_row.settings.get("players", 2))
        return key_v3(game_row.server_seed, int(dealt_as(game_row) or 0), players, pairs)
    return derive_seed(game_row.server_seed, [str(e["text"]) for e in entries], protocol)


def cut_record(cut: m.CutMail) -> dict[str, Any]:
    """A cut mail as the archive's ``deal_proof.cuts`` lists it: without its text once
    its player was forgotten (the text's SHA-256, kept in the row, stands for it)."""
    record: dict[str, Any] = {
        "seat": cut.seat,
        "message_id": cut.message_id,
        "received": cut.received_at.isoformat(),
    }
    if cut.text is not None:
        record["text"] = cut.text
    record["sha256"] = text_hash(cut.text) if cut.text is not None else cut.sha256
    record["accepted"] = cut.accepted
    record["reason"] = cut.reason
    return record


def unplayed_archive(
    game_row: m.Game, seats: Sequence[Seated], cuts: Sequence[m.CutMail]
) -> dict[str, Any]:
    """The archive of a fair game not dealt (waiting for its cuts, or aborted before
    every player cut): no engine seed, no action, and its ``deal_proof`` (revealing the
    server seed once the game is aborted)."""
    from engine.archive import FORMAT

    return {
        "format": FORMAT,
        "settings": dict(game_row.settings),
        "seed": None,
        "actions": [],
        "state_hash": None,
        "deal_proof": deal_proof(game_row, cuts),
        "game_id": game_row.id,
        "computer": computer_seats(game_row),
        "players": archive_players(game_row, seats),
        "status": game_row.status,
        "created_at": game_row.created_at.isoformat(),
    }


def computer_seats(game_row: m.Game) -> list[dict[str, Any]]:
    """The archive's ``computer``: each computer seat with its level and the engine
    that plays it (`engine.audit`; [] when every seat is a person)."""
    from engine.audit import computer_entries
    from pbem import engine_digest, engine_version

    robots = sorted(int(s) for s in game_row.settings.get("computer", ()))
    levels = {seat: seat_level(game_row, seat) for seat in robots}
    return computer_entries(levels, engine_version(), engine_digest() if robots else "")


def timeout_list(game_row: m.Game) -> list[dict[str, Any]]:
    """The archive's ``timeouts``: each move the computer made for a player whose time
    ran out (stored as [its number in the archive, the seat] — and the level, when it
    is not `engine.audit.TIMEOUT_LEVEL`), with its level and engine (`engine.audit`; []
    when there was none)."""
    from engine.audit import TIMEOUT_LEVEL, timeout_entries
    from pbem import engine_digest, engine_version

    made = [
        (int(entry[0]), int(entry[1]), str(entry[2]) if len(entry) > 2 else TIMEOUT_LEVEL)
        for entry in game_row.settings.get("timeouts", ())
    ]
    return timeout_entries(made, engine_version(), engine_digest() if made else "")


def archive_players(game_row: m.Game, seats: Sequence[Seated]) -> list[dict[str, Any]]:
    """The archive's ``players``, seat by seat: address and name, and ``"computer":
    true`` on a seat the computer plays (the seats of its ``computer`` list)."""
    robots = {int(s) for s in game_row.settings.get("computer", ())}
    out: list[dict[str, Any]] = []
    for seated in seats:
        entry: dict[str, Any] = {"email": seated.player.email, "name": seated.name}
        if seated.seat.seat in robots:
            entry["computer"] = True
        out.append(entry)
    return out


def prepare_next(session: Session, game_row: m.Game, now: datetime) -> None:
    """A fair game is over: make the server seed of the game that may follow it (a
    rematch, or its match's next game) before its game-over mail shows its commitment,
    so that each player's answer to that mail can be their cut for it; that commitment
    enters the public log (event ``next``) before anyone can answer."""
    if game_row.commitment and not game_row.next_seed:
        assert game_row.id is not None
        update_row(session, game_row, next_seed=new_server_seed())
        append_log(session, game_row.id, "next", commitment(str(game_row.next_seed)), now)


@dataclass(frozen=True)
class Offer:
    """A server seed whose commitment a mail showed before its game existed (the
    confirmation of a challenge, the welcome: `new_offer`), and the cut that mail's
    answer made (its entropy text): a new game starts from them with that cut in."""

    server_seed: str
    cut: str


def new_offer(session: Session, now: datetime) -> str:
    """The server seed of a game not made yet, whose commitment a mail is about to show
    so that its answer is a cut: the commitment enters the public log first (event
    ``offer``), before anyone can answer."""
    seed = new_server_seed()
    log_offer(session, seed, now)
    return seed


def log_offer(session: Session, seed: str, now: datetime) -> None:
    """The commitment of ``seed``, a game not made yet, enters the public log as an
    ``offer`` (game `NO_GAME`), in the transaction that queues the mail showing it."""
    append_log(session, NO_GAME, "offer", commitment(seed), now)


def offer_lines(session: Session, seed: str) -> tuple[str, ...]:
    """What a mail that shows an offer's commitment says of it: the commitment (as
    every mail of a fair game shows it), that the answer is the cut for its deal, and
    the public log's head."""
    return (
        f"Deal commitment ({PROTOCOL}): {commitment(seed)} — your answer to this mail is "
        "your cut for the new game's deal: its cards come from the secret behind this "
        "commitment mixed with every player's cut, and the secret is revealed when the "
        "game ends.",
        log_line(head_of(session)),
    )


def answer_words(reply_text: str) -> str:
    """The words of an answer that counts as a cut: those after the first word of its
    first line that holds a word (``yes please`` → "please")."""
    line = next((ln for ln in reply_text.splitlines() if ln.strip()), "")
    return words_after(line, line.split()[0]) if line.strip() else ""


def answer_cut(message_id: str | None, reply_text: str, placeholder: str) -> str:
    """The entropy text of an answer that counts as a cut: its Message-ID and its words
    (`answer_words`)."""
    return cut_text(message_id, answer_words(reply_text), placeholder)


def cut_text(message_id: str | None, words: str, placeholder: str, protocol: str = PROTOCOL) -> str:
    """A cut's entropy text by ``protocol`` (that of the game it is for; a new game's
    by default): the Message-ID of the mail that made it (``placeholder`` for a mail
    without one) and its words."""
    return entropy_text(message_id or placeholder, words, protocol, placeholder=placeholder)


def protocol_of(game_row: m.Game) -> str:
    """The deal protocol of a fair game (`pbem-deal/1` when none is recorded)."""
    return game_row.deal_protocol or PROTOCOL_1


def humans(game_row: m.Game) -> list[int]:
    """The human seats, in seat order: the seats that cut."""
    players = int(game_row.settings.get("players", 2))
    return [seat for seat in range(players) if not is_computer(game_row, seat)]


def waiting(game_row: m.Game) -> list[int]:
    """The human seats that have not cut yet."""
    done = {int(e["seat"]) for e in game_row.entropy or ()}
    return [seat for seat in humans(game_row) if seat not in done]


def receipts(game_row: m.Game) -> dict[int, list[Notice]]:
    """The receipt of each cut recorded so far, by seat: what the first mail of a game
    tells the players who cut by another word (an invitation's ``accept``, ``rematch``)."""
    return {
        int(e["seat"]): [Notice("info", "", receipt(str(e["text"])))]
        for e in game_row.entropy or ()
    }


def record_cut(
    session: Session,
    game_row: m.Game,
    seat: int,
    cmd: Command,
    message_id: str | None,
    now: datetime,
) -> Notice:
    """Store ``seat``'s entropy text, once, and log the cut mail (accepted, or refused
    as a second cut). The notice is the cut's receipt: the exact text recorded and its
    SHA-256, which every later mail of the game and the archive must show."""
    assert game_row.id is not None
    text = cut_text(
        message_id,
        cmd.args[0] if cmd.args else "",
        f"<no-message-id.{game_row.id}.{seat}>",
        protocol_of(game_row),
    )
    if seat not in waiting(game_row):
        log_cut(session, game_row.id, seat, message_id, text, now, reason=SECOND_CUT)
        return Notice("refused", str(cmd), "You have cut already; your first cut counts.")
    entries = [*(game_row.entropy or ()), {"seat": seat, "text": text}]
    entries.sort(key=lambda e: int(e["seat"]))
    update_row(session, game_row, entropy=entries)
    log_cut(session, game_row.id, seat, message_id, text, now)
    return Notice("applied", str(cmd), receipt(text))


SECOND_CUT = "a second cut: the first one counts"


def receipt(text: str) -> str:
    """What the player keeps of their cut: the entropy text recorded and its hash."""
    return (
        f"Your cut is in, recorded as “{text}” (SHA-256 {text_hash(text)}). Keep this "
        "mail: every later mail of the game shows the start of that hash beside your "
        "name, and the game's archive this text; if they differ, the deals were not cut "
        "by you."
    )


def refuse_cut(
    session: Session,
    game_row: m.Game,
    seat: int | None,
    cmd: Command,
    message_id: str | None,
    now: datetime,
    reason: str,
) -> None:
    """Log a cut mail that is not taken (a cut after the deal, to a closed game, or not
    from the seat's player) for the archive's ``deal_proof.cuts``; only fair games keep
    the record."""
    if game_row.id is None or not game_row.commitment:
        return
    words = cmd.args[0] if cmd.args else ""
    text = cut_text(message_id, words, "<no-message-id>", protocol_of(game_row))
    log_cut(session, game_row.id, seat, message_id, text, now, reason=reason)


def log_stray_cut(
    session: Session,
    mail: IncomingMail,
    game_row: m.Game,
    seat: int,
    now: datetime,
    reason: str,
) -> None:
    """A mail to ``seat``'s reply address that is not taken as the seat's: its cuts, if
    any, go on the game's record of cut mails, refused for ``reason``."""

    for cmd in read_commands(mail).commands:
        if cmd.verb == "cut":
            refuse_cut(session, game_row, seat, cmd, mail.message_id, now, reason)
