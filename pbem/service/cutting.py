"""cutting: the verifiable-deal protocol's service side (``docs/pbem-deal-1.md``; see
`engine.fairness` and the README's "Verifiable deals").

A fair game is created with a secret server seed ``S`` and its commitment ``C`` and
waits, in status ``cutting``, for every human seat's ``cut``: no engine ``Game`` and no
engine seed exist meanwhile, so no deal can be computed by anyone. Each cut stores the
seat's entropy text (its mail's Message-ID and words); the last one derives the engine
seed ``K``, deals, and the game goes on as any other. ``S`` is written in the game's
mails and archive only once the game is over — finished, or aborted (by the admin, or
because not every player cut by its deadline): a game that ends without being played
out reveals its seed all the same, so no abort can hide a deal. Reminders and the
timeout apply as to any other wait.

Cuts are bound to their players: the receipt of a cut quotes the entropy text recorded
and its SHA-256, every later mail shows each seat's hash (`deal_lines`), and every cut
mail the game receives, accepted or refused, is logged (``cut_mail``) and archived as
``deal_proof.cuts``. There are no re-cuts: a cut phase is never restarted with a new
seed, so ``deal_proof.recuts`` is always empty.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import Game
from engine import Settings as GameSettings
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
from pbem.commands import SETTING_VERBS, Command
from pbem.render import MailContext, Notice
from pbem.render.cut import render_cut
from pbem.service import notify, play
from pbem.service.context import Context, Seated, is_computer, stage
from pbem.service.play import Known, Move
from pbem.service.settings import apply_setting
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.games import append_actions, log_cut, mark_aborted

NOT_NEEDED = (
    "No cut is needed now: the cards of this game are already dealt (everyone's cut is "
    "taken once, before the first deal)."
)


def new_server_seed() -> str:
    """``S``: 64 lowercase hex characters from the operating system's secure generator."""
    return secrets.token_hex(32)


def deal_lines(
    game_row: m.Game, *, over: bool, following: str = "", names: Sequence[str] = ()
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
    return data


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
        "players": [{"email": s.player.email, "name": s.name} for s in seats],
        "status": game_row.status,
        "created_at": game_row.created_at.isoformat(),
    }


def prepare_next(session: Session, game_row: m.Game) -> None:
    """A fair game is over: make the server seed of the game that may follow it (a
    rematch, or its match's next game) before its game-over mail shows its commitment,
    so that each player's answer to that mail can be their cut for it."""
    if game_row.commitment and not game_row.next_seed:
        update_row(session, game_row, next_seed=new_server_seed())


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


def cut_context(
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    notices: Sequence[Notice] = (),
    reply_to: str = "",
) -> MailContext:
    """The cut request's context (``reply_to``: the seat's reply address, for the
    mail's one-click ``cut``)."""
    assert game_row.id is not None
    return MailContext(
        game_id=game_row.id,
        names=tuple(s.name for s in seats),
        recipient_seat=seat,
        reply_hint='Reply "cut" and any number or words.',
        notices=tuple(notices),
        deal_lines=deal_lines(game_row, over=False, names=[s.name for s in seats]),
        reply_to=reply_to,
        opening=notify.opening_line(game_row, seats, seat),
    )


def cut_attachment(game_row: m.Game) -> dict[str, Any]:
    """The machine-readable part of a cut request (``view.json`` of a game not dealt
    yet): what a program playing by mail needs to answer it."""
    return {"cut": True, "game": game_row.id, "commitment": game_row.commitment}


def send_cut_mail(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    kind: str,
    tag: str,
    now: datetime,
    *,
    notices: Sequence[Notice] = (),
    reminder: str | None = None,
    unsolicited: bool = False,
    closing: bool = False,
) -> None:
    """The cut request (or "your cut is in") to one human seat; ``closing``: the game
    will not be dealt (the notices say why), nothing is asked."""
    pending = [] if closing else waiting(game_row)
    mail = render_cut(
        cut_context(game_row, seats, seat, notices, notify.seat_reply_to(ctx, seats[seat])),
        [seats[s].name for s in pending if s != seat],
        have_cut=seat not in pending,
        reminder=reminder,
        closing=closing,
    )
    notify.enqueue(
        ctx,
        session,
        game_row,
        seats[seat],
        mail,
        kind,
        tag,
        now,
        view_json=cut_attachment(game_row) if seat in pending else None,
        unsolicited=unsolicited,
    )


def begin(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    now: datetime,
    *,
    ask: bool = True,
) -> Game | None:
    """A new fair game: ask every human seat that has not cut yet to cut, and tell those
    who have that their cut is in (its first mail; ``ask`` False: the mail that showed
    the commitment asked for the cuts already), and start the clocks. A game whose
    humans have all cut (or that has none) is dealt at once."""
    if not waiting(game_row):
        return deal(ctx, session, game_row, now)[0]
    update_row(session, game_row, **play.clock_values(ctx, None, now))
    if ask:
        made = receipts(game_row)
        for seat in humans(game_row):
            notices = made.get(seat, [])
            send_cut_mail(ctx, session, game_row, seats, seat, "cut", "c0", now, notices=notices)
    return None


def receipts(game_row: m.Game) -> dict[int, list[Notice]]:
    """The receipt of each cut recorded so far, by seat: what the first mail of a game
    tells the players who cut by another word (an invitation's ``accept``, ``rematch``)."""
    return {
        int(e["seat"]): [Notice("info", "", receipt(str(e["text"])))]
        for e in game_row.entropy or ()
    }


def deal(
    ctx: Context, session: Session, game_row: m.Game, now: datetime
) -> tuple[Game, list[play.Logged]]:
    """Every human has cut: derive ``K``, deal (the game's first `Game`), make the
    forced and computer moves, log them, and make the game active."""
    assert game_row.id is not None and game_row.server_seed is not None
    texts = [str(e["text"]) for e in sorted(game_row.entropy or (), key=lambda e: e["seat"])]
    seed = derive_seed(game_row.server_seed, texts, protocol_of(game_row))
    update_row(session, game_row, seed=seed, status=m.GameStatus.ACTIVE.value, updated_at=now)
    game = Game(GameSettings.from_json(game_row.settings), seed)
    auto = play.auto_moves(game, game_row)
    values = play.clock_values(ctx, game, now)
    if auto:
        append_actions(
            session,
            game_row.id,
            game_row.action_count,
            auto,
            None,
            now=now,
            state_hash=game.state_hash(),
            also=values,
        )
    else:
        update_row(session, game_row, state_hash=game.state_hash(), **values)
    if game.is_over:  # the computer played the whole game out (no human seat)
        play.rate(ctx, session, game_row, game)
    stage(ctx, game_row.id, game)
    return game, auto


def play_cut(ctx: Context, session: Session, known: Known, message_id: str | None) -> Move:
    """A mail from a seat of a game that waits for its cuts: ``cut`` records the seat's
    entropy (the last cut deals); the settings apply; anything else is answered with
    the cut request again, saying the cards are not dealt yet."""
    game_row, seats, seat = known.game_row, known.seats, known.seat
    move = Move(known)
    closed = game_row.status != m.GameStatus.CUTTING.value
    now = ctx.clock()
    for cmd in known.commands:
        if closed and cmd.verb not in (*SETTING_VERBS, "help", "standings"):
            word = "aborted" if game_row.status == m.GameStatus.ABORTED.value else game_row.status
            if game_row.status == m.GameStatus.PAUSED.value:
                word = "paused by the admin"
            move.notices.append(
                Notice("refused", str(cmd), f"This game is {word}; no cards were dealt.")
            )
            move.refusal = f"game is {game_row.status}"
            if cmd.verb == "cut":
                refuse_cut(session, game_row, seat, cmd, message_id, now, f"game is {word}")
        elif cmd.verb == "cut":
            move.notices.append(record_cut(session, game_row, seat, cmd, message_id, now))
        elif cmd.verb in SETTING_VERBS:
            notice = apply_setting(ctx, session, seats[seat].player, cmd, ctx.clock())
            move.notices.append(notice)
        elif cmd.verb in ("help", "standings"):
            move.wants.append(cmd.verb)
        else:
            move.notices.append(
                Notice(
                    "refused",
                    str(cmd),
                    "The cards are not dealt yet: the game waits for everyone to cut for the deal.",
                    "cut, then any number or words",
                )
            )
    if not known.commands:
        move.notices.append(
            Notice("refused", "", "I found no command in your mail.", "cut 17 purple elephants")
        )
    cut = any(n.status == "applied" and n.command.startswith("cut") for n in move.notices)
    if cut and not waiting(game_row):
        move.game, move.actions = deal(ctx, session, game_row, ctx.clock())
        move.dealt = True
    return move


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


def answer_cut(ctx: Context, session: Session, move: Move, inbound_id: int, now: datetime) -> None:
    """The mails after a mail to a game that waited for its cuts: the first turn mail
    to everyone when it was dealt, else the cut request (or "your cut is in") to the
    sender; help when asked."""
    known = move.known
    game_row, seats, seat = known.game_row, known.seats, known.seat
    if move.dealt:
        assert move.game is not None
        notify.turn_mails(
            ctx,
            session,
            game_row,
            move.game,
            seats,
            0,
            {seat: move.notices},
            inbound_id,
            now,
            replying=seat,
        )
    else:
        closing = game_row.status != m.GameStatus.CUTTING.value
        send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            seat,
            "error" if closing else "cut",
            f"i{inbound_id}",
            now,
            notices=move.notices,
            closing=closing,
        )
    if "help" in move.wants:
        notify.send_help(ctx, session, game_row, seats, seat, inbound_id, now)
    if "standings" in move.wants:
        from pbem.service.standings import send_standings

        send_standings(ctx, session, seats[seat].player, inbound_id, now, known.message_id)


def verdict(move: Move) -> tuple[str, str, tuple[str, ...]]:
    """The message's final state, for a mail to a game waiting for its cuts."""
    applied = tuple(n.command for n in move.notices if n.status == "applied")
    if move.refusal is not None and not applied:
        return "rejected", move.refusal, ()
    if move.dealt:
        return "applied", "cut; every player has cut: dealt", applied
    if applied:
        return "applied", "applied: " + "; ".join(applied), applied
    if move.wants:
        return "applied", "sent: " + ", ".join(move.wants), ()
    reason = "; ".join(f"{n.command}: {n.message}" for n in move.notices)
    return "rejected", reason[:2000] or "nothing to do while the players cut", ()


def remind(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    waited: str,
    now: datetime,
) -> None:
    """Remind the humans who have not cut."""
    for seat in waiting(game_row):
        send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            seat,
            "reminder",
            f"m{game_row.reminders_sent}-cut",
            now,
            reminder=waited,
            unsolicited=True,
        )


def time_out(
    ctx: Context, session: Session, game_row: m.Game, seats: list[Seated], now: datetime
) -> None:
    """The deadline passed before everyone cut: the game is aborted (it was never
    dealt), and the humans are told."""
    assert game_row.id is not None
    names = ", ".join(seats[s].name for s in waiting(game_row))
    reason = f"not everyone cut for the deal in time ({names})"
    mark_aborted(session, game_row, reason, now)
    for seat in humans(game_row):
        send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            seat,
            "aborted",
            "t-cut",
            now,
            notices=[Notice("info", "", f"This game was aborted: {reason}. No cards were dealt.")],
            unsolicited=True,
            closing=True,
        )


def commit_new(
    game_row: m.Game, server_seed: str | None = None, cuts: Mapping[int, str] | None = None
) -> None:
    """Give a new game its server seed and commitment (before any deal), and the cuts
    made already (seat → entropy text)."""
    seed = server_seed or new_server_seed()
    game_row.server_seed = seed
    game_row.commitment = commitment(seed)
    game_row.deal_protocol = PROTOCOL
    game_row.entropy = [{"seat": int(s), "text": t} for s, t in sorted((cuts or {}).items())]
