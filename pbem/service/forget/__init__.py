"""Forgetting a player (``pbem player forget ADDR``): the right to be forgotten.

What names the player — their address (any ``+tag`` of their mailbox), their display
names, the Message-IDs of their mails — is replaced by a pseudonym everywhere the service
keeps it. Only the player's rows are read: the stored mails that the index of stored
mail lists under their mailbox or that belong to their games (`pbem.service.forget.mail`),
rewritten a batch at a time in short transactions, then the player's other rows in one:

- ``player``: the address becomes ``forgotten-ID@forgotten.invalid`` (a domain no mail
  reaches, and that the policy never mails), the name "Forgotten player ID"; the seats'
  reply tokens are drawn again (the player's old reply addresses lead nowhere); what the
  player watched is dropped;
- ``inbound``: the player's own mails keep only their From, To, Subject, Date, ids and
  body, each scrubbed (no Received lines, no signatures); every other stored mail, the
  subjects and reasons, are scrubbed; ``outbox``: every mail scrubbed, the player's mail
  not yet sent cancelled;
- ``game``: the deal proof keeps the SHA-256 of the player's cut in place of its text
  (`engine.forgetting`), and the settings, outcome and reasons are scrubbed; ``cut_mail``:
  the player's cut mails (and any other naming them) keep their text's SHA-256 in place
  of the text, and a pseudonym Message-ID; ``rating``: the player's line of the stored
  standings is keyed and named by the pseudonym (as a recomputation keys it); table talk,
  invitations, confirmation requests, transport errors likewise; error-reply throttles
  of the address are dropped;
- ``consent``: dropped — unless the mailbox is on the suppression list (it said
  ``never``, ``stop``, declined), whose row is kept under a one-way hash of the mailbox
  (`pbem.service.policy.forgotten_key`), so that the player is still never mailed.

The player's later mail is a stranger's. Games not over yet must be aborted first
(``abort_games``): the player leaves them. Afterwards what is left of the old versions of
the rewritten rows goes (`pbem.store.erasure`: on SQLite, deleted bytes are overwritten as
they are deleted, and the write-ahead log is emptied; on PostgreSQL, ``VACUUM`` of the
rewritten tables, which marks the old versions' space free without overwriting it;
``compact``: SQLite's ``VACUUM``, PostgreSQL's ``VACUUM FULL``, which hold the database or
the table while they write it again whole), and the player's games are replayed and
their deals verified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import or_, update
from sqlmodel import Session, col, select

from engine.fairness import text_hash
from pbem.mail.address import is_valid_address, normalize_address
from pbem.mail.named import fold_mailbox
from pbem.mail.scrub import Traces
from pbem.mail.tokens import new_token
from pbem.service.admin import set_status
from pbem.service.audit import Audit, audit_games
from pbem.service.context import Context, ServiceError
from pbem.service.forget.mail import (
    KEEP_HEADERS,
    Found,
    chunks,
    gather,
    players_of,
    scrub_mail,
    seats_of,
    their_words,
)
from pbem.service.handle.invitations import lapse
from pbem.service.policy import FORGOTTEN_DOMAIN, forgotten_key, mailbox_of
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.erasure import COMPACTED, compact, erase
from pbem.store.named import MailName

__all__ = ["ABORT_REASON", "COMPACTED", "KEEP_HEADERS", "Forgotten", "compact", "forget"]

ABORT_REASON = "a player asked to be forgotten"
UNFINISHED = (m.GameStatus.CUTTING.value, m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value)


@dataclass
class Forgotten:
    """What `forget` did: the pseudonym, the games the player sat at (those aborted
    first among them), the rows rewritten per table, the stored mails read per table
    (the player's alone), whether a suppression was kept, and the audit of the player's
    games afterwards."""

    pseudonym: str
    name: str
    games: list[int] = field(default_factory=list)
    aborted: list[int] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    read: dict[str, int] = field(default_factory=dict)
    suppression_kept: bool = False
    audit: Audit = field(default_factory=Audit)
    storage: str = ""  # what became of the old versions (`pbem.store.erasure.erase`)

    def count(self, table: str, n: int = 1) -> None:
        if n:
            self.rows[table] = self.rows.get(table, 0) + n


def forget(
    ctx: Context, address: str, *, abort_games: bool = False, compact: bool = False
) -> Forgotten:
    """Forget the player of ``address`` (see the module's docstring; ``compact``: the
    rewritten tables written again whole afterwards).

    Raises ServiceError when ``address`` is not an address, when the service knows
    nothing of it, or when it plays in games not over yet and ``abort_games`` is not set.
    """
    box = mailbox_of(normalize_address(address) or address)
    if not is_valid_address(box) or box.endswith("@" + FORGOTTEN_DOMAIN):
        raise ServiceError(f"{address!r} is not a player's address")
    with Session(ctx.db) as session:
        players = players_of(session, box)
        seats = seats_of(session, players)
        unfinished = sorted(
            {
                row.id
                for row in session.exec(
                    select(m.Game).where(
                        col(m.Game.id).in_({s.game_id for s in seats}),
                        col(m.Game.status).in_(UNFINISHED),
                    )
                ).all()
                if row.id is not None
            }
        )
    if unfinished and not abort_games:
        listed = ", ".join(str(g) for g in unfinished)
        raise ServiceError(
            f"{box} plays in games not over yet ({listed}); give --abort-games to abort them"
        )
    aborted = []
    for game_id in unfinished:
        set_status(ctx, game_id, m.GameStatus.ABORTED.value, ABORT_REASON)
        aborted.append(game_id)
    with Session(ctx.db) as session:
        found = gather(session, box)
        invitations = _invitations(session, box, found)
        consent = session.exec(select(m.Consent).where(m.Consent.mailbox == box)).first()
        if not (found.players or found.mine or invitations or consent):
            raise ServiceError(f"the service knows nothing of {box}")
        tag = str(found.players[0].id) if found.players else new_token()[:8]
        their_words(session, found, tag)
        session.expunge_all()
    report = Forgotten(f"forgotten-{tag}@{FORGOTTEN_DOMAIN}", f"Forgotten player {tag}")
    traces = Traces.build(
        mailboxes=found.addresses,
        address_to=report.pseudonym,
        names=found.names,
        name_to=report.name,
        message_ids=found.message_ids,
    )
    rewritten, games = scrub_mail(ctx.db, found, traces, report.pseudonym, tag)
    for table, n in rewritten.items():
        report.count(table, n)
    with session_scope(ctx.db) as session:
        _rewrite(session, found, traces, report, games | found.games, tag, ctx.clock())
    report.read = dict(found.read)
    report.aborted = aborted
    report.storage = erase(ctx.db, COMPACTED, compact=compact)
    report.audit = audit_games(ctx, report.games)
    return report


def _invitations(session: Session, box: str, found: Found) -> list[m.Invitation]:
    """The invitations that name the player: to them, from them, or made by a mail of
    theirs."""
    domain = box.rpartition("@")[2]
    players = [p.id for p in found.players]
    rows = session.exec(
        select(m.Invitation).where(
            or_(
                col(m.Invitation.invitee).endswith("@" + domain),
                col(m.Invitation.challenger_id).in_(players),
                col(m.Invitation.inbound_id).in_(sorted(found.inbound) or [0]),
            )
        )
    ).all()
    return [
        row
        for row in rows
        if mailbox_of(row.invitee) == box
        or row.challenger_id in players
        or row.inbound_id in found.inbound
    ]


def _rewrite(
    session: Session,
    found: Found,
    traces: Traces,
    report: Forgotten,
    games: set[int],
    tag: str,
    now: datetime,
) -> None:
    """The player's rows besides the stored mail, in one transaction: player, seats,
    standings, watching, consent, throttles, confirmations, invitations, the index of
    stored mail, and the games that name them (theirs, and those of the mails read)."""
    box = found.box
    players = players_of(session, box)
    addresses = {box, *(p.email for p in players)}
    for player in players:
        pseudonym = f"forgotten-{player.id}@{FORGOTTEN_DOMAIN}"
        player.email, player.display_name = pseudonym, report.name
        player.last_bounce_reason = None
        player.stopped, player.digest, player.mail_all = True, False, False
        player.away_until = None
        session.add(player)
        report.count("player")
    session.flush()
    seats = seats_of(session, players)
    for seat in seats:
        seat.token = new_token()
        session.add(seat)
        report.count("seat")
    report.games = sorted({s.game_id for s in seats})
    ids_of_players = [p.id for p in players]
    # Their line of the stored standings: keyed by the address until now (a person's
    # line is keyed by their address, `pbem.ratings`: found by its key's index).
    for line in session.exec(
        select(m.Rating).where(col(m.Rating.key).in_(sorted(addresses)))
    ).all():
        player_of = next((p for p in players if p.id == line.player_id), None)
        line.key = player_of.email if player_of is not None else report.pseudonym
        line.name = report.name
        session.add(line)
        report.count("rating")
    for watcher in session.exec(
        select(m.Watcher).where(col(m.Watcher.player_id).in_(ids_of_players))
    ).all():
        session.delete(watcher)
        report.count("watcher")

    # Consent: kept under a hash only while the mailbox is suppressed.
    consent = session.exec(select(m.Consent).where(m.Consent.mailbox == box)).first()
    if consent is not None:
        held = consent.suppressed and (
            consent.suppressed_until is None or consent.suppressed_until > now
        )
        if held:
            consent.mailbox = forgotten_key(box)
            consent.confirmed_at = consent.last_unsolicited_at = consent.unjoined_since = None
            consent.day = None
            consent.invitations_today = consent.games_today = consent.confirmations_today = 0
            consent.answers_today = 0
            consent.unjoined_games = 0
            session.add(consent)
            report.suppression_kept = True
        else:
            session.delete(consent)
        report.count("consent")
    domain = "@" + box.rpartition("@")[2]
    for throttle in session.exec(
        select(m.ErrorThrottle).where(col(m.ErrorThrottle.address).endswith(domain))
    ).all():
        if mailbox_of(throttle.address) == box:
            session.delete(throttle)
            report.count("error_throttle")
    for confirmation in session.exec(
        select(m.Confirmation).where(
            or_(
                col(m.Confirmation.mailbox) == box,
                col(m.Confirmation.inbound_id).in_(sorted(found.inbound) or [0]),
            )
        )
    ).all():
        if mailbox_of(confirmation.mailbox) == box or traces.found(confirmation.address):
            confirmation.address = confirmation.mailbox = report.pseudonym
            if confirmation.status == m.ConfirmationStatus.PENDING.value:
                confirmation.status = m.ConfirmationStatus.REFUSED.value
                confirmation.answered_at = now
            session.add(confirmation)
            report.count("confirmation")
    for invitation in _invitations(session, box, found):
        changed = False
        if mailbox_of(invitation.invitee) == box:
            invitation.invitee = report.pseudonym
            if invitation.status == m.InvitationStatus.PENDING.value:
                invitation.status = m.InvitationStatus.CANCELLED.value
                invitation.answered_at = now
                lapse(session, invitation, now)  # its game can never start now
            changed = True
        settings = traces.json(invitation.settings)
        if settings != invitation.settings:
            invitation.settings = settings  # type: ignore[assignment]
            changed = True
        if changed:
            session.add(invitation)
            report.count("invitation")
    # The index of stored mail: the player's mailbox is the pseudonym's now.
    # (Her Message-IDs read as addresses too: they go as well.)
    names = MailName.__table__  # type: ignore[attr-defined]
    named = addresses | {fold_mailbox(i) for i in found.message_ids}
    indexed = session.exec(
        update(names).where(names.c.mailbox.in_(sorted(named))).values(mailbox=report.pseudonym)
    ).rowcount
    report.count("mail_name", indexed)
    session.flush()
    _rewrite_games(session, seats, games, traces, found, tag, report)


def _rewrite_games(
    session: Session,
    seats: list[m.Seat],
    games: set[int],
    traces: Traces,
    found: Found,
    tag: str,
    report: Forgotten,
) -> None:
    """The games that name the player (``games``): deal proofs, settings, outcomes,
    reasons, their cut mails and table talk; and the transport errors."""
    from engine.forgetting import forget_entry

    seat_at = {(s.game_id, s.seat) for s in seats}
    for part in chunks(games):
        for game in session.exec(select(m.Game).where(col(m.Game.id).in_(part))).all():
            changes: dict[str, Any] = {}
            if game.entropy:
                entropy = [
                    forget_entry(e)
                    if (game.id, int(e["seat"])) in seat_at
                    or ("text" in e and traces.found(str(e["text"])))
                    else e
                    for e in game.entropy
                ]
                if entropy != game.entropy:
                    changes["entropy"] = entropy
            for name in ("settings", "outcome", "match_info"):
                value = getattr(game, name)
                if value is not None and traces.json(value) != value:
                    changes[name] = traces.json(value)
            if game.status_reason and traces.found(game.status_reason):
                changes["status_reason"] = traces.text(game.status_reason)
            if changes:
                for name, value in changes.items():
                    setattr(game, name, value)
                session.add(game)
                report.count("game")
        for cut in session.exec(select(m.CutMail).where(col(m.CutMail.game_id).in_(part))).all():
            if _forget_cut(cut, seat_at, traces, found.message_ids, tag):
                session.add(cut)
                report.count("cut_mail")
        for talk in session.exec(select(m.Talk).where(col(m.Talk.game_id).in_(part))).all():
            if traces.found(talk.text):
                talk.text = traces.text(talk.text)
                session.add(talk)
                report.count("talk")
        session.flush()
    for state in session.exec(select(m.TransportState)).all():
        if state.last_error and traces.found(state.last_error):
            state.last_error = traces.text(state.last_error)
            session.add(state)
            report.count("transport_state")
    session.flush()


def _forget_cut(
    cut: m.CutMail, seat_at: set[tuple[int, int]], traces: Traces, ids: dict[str, str], tag: str
) -> bool:
    """Scrub a cut mail row: the forgotten player's own (their seat's, or one whose text
    or Message-ID names them) keeps its text's SHA-256 in place of the text (which quotes
    the Message-ID and their words) and a pseudonym Message-ID; a reason naming them is
    scrubbed. Whether the row changed."""
    before = (cut.text, cut.sha256, cut.message_id, cut.reason)
    theirs = (
        (cut.game_id, cut.seat) in seat_at
        or (cut.text is not None and traces.found(cut.text))
        or (cut.message_id is not None and traces.found(cut.message_id))
    )
    if theirs:
        if cut.text is not None:
            cut.sha256, cut.text = text_hash(cut.text), None
        if cut.message_id is not None:
            bare = cut.message_id.strip().strip("<>").strip()
            fresh = ids.get(bare, f"forgotten-{tag}-cut-{cut.id}@{FORGOTTEN_DOMAIN}")
            cut.message_id = f"<{fresh}>"
    cut.reason = traces.text(cut.reason) if cut.reason else cut.reason
    return (cut.text, cut.sha256, cut.message_id, cut.reason) != before
