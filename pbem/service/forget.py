"""Forgetting a player (``pbem player forget ADDR``): the right to be forgotten.

What names the player — their address (any ``+tag`` of their mailbox), their display
names, the Message-IDs of their mails — is replaced by a pseudonym everywhere the service
keeps it, in one transaction:

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
(``abort_games``): the player leaves them. Afterwards the storage is compacted (SQLite:
``VACUUM``; PostgreSQL: ``VACUUM FULL`` of the rewritten tables) so that the old bytes do
not stay in free pages, and the player's games are replayed and their deals verified.
"""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import getaddresses
from typing import Any

from sqlalchemy import Engine, text
from sqlmodel import Session, col, select

from engine.fairness import text_hash
from pbem.mail.address import is_valid_address, normalize_address
from pbem.mail.scrub import Traces, scrub_message
from pbem.mail.tokens import new_token
from pbem.service.admin import set_status
from pbem.service.audit import Audit, audit_games
from pbem.service.context import Context, ServiceError
from pbem.service.policy import FORGOTTEN_DOMAIN, forgotten_key, mailbox_of
from pbem.store import models as m
from pbem.store.db import session_scope

KEEP_HEADERS = (
    "From",
    "To",
    "Cc",
    "Subject",
    "Date",
    "Message-ID",
    "In-Reply-To",
    "References",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Content-Disposition",
)
"""The headers a forgotten player's own stored mail keeps."""

ABORT_REASON = "a player asked to be forgotten"
UNFINISHED = (m.GameStatus.CUTTING.value, m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value)
BATCH = 200


@dataclass
class Forgotten:
    """What `forget` did: the pseudonym, the games the player sat at (those aborted
    first among them), the rows rewritten per table, whether a suppression was kept, and
    the audit of the player's games afterwards."""

    pseudonym: str
    name: str
    games: list[int] = field(default_factory=list)
    aborted: list[int] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    suppression_kept: bool = False
    audit: Audit = field(default_factory=Audit)

    def count(self, table: str, n: int = 1) -> None:
        if n:
            self.rows[table] = self.rows.get(table, 0) + n


def forget(ctx: Context, address: str, *, abort_games: bool = False) -> Forgotten:
    """Forget the player of ``address`` (see the module's docstring).

    Raises ServiceError when ``address`` is not an address, when the service knows
    nothing of it, or when it plays in games not over yet and ``abort_games`` is not set.
    """
    box = mailbox_of(normalize_address(address) or address)
    if not is_valid_address(box) or box.endswith("@" + FORGOTTEN_DOMAIN):
        raise ServiceError(f"{address!r} is not a player's address")
    with Session(ctx.db) as session:
        players = _players_of(session, box)
        seats = _seats_of(session, players)
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
    with session_scope(ctx.db) as session:
        report = _rewrite(ctx, session, box, ctx.clock())
    report.aborted = aborted
    compact(ctx.db)
    report.audit = audit_games(ctx, report.games)
    return report


def _players_of(session: Session, box: str) -> list[m.Player]:
    domain = box.rpartition("@")[2]
    rows = session.exec(select(m.Player).where(col(m.Player.email).endswith("@" + domain))).all()
    return [p for p in rows if mailbox_of(p.email) == box]


def _seats_of(session: Session, players: list[m.Player]) -> list[m.Seat]:
    ids = [p.id for p in players]
    return list(session.exec(select(m.Seat).where(col(m.Seat.player_id).in_(ids))).all())


def _rewrite(ctx: Context, session: Session, box: str, now: datetime) -> Forgotten:
    players = _players_of(session, box)
    mine = [
        row
        for row in session.exec(
            select(m.Inbound).where(col(m.Inbound.sender).ilike("%@" + box.rpartition("@")[2]))
        ).all()
        if row.sender is not None and mailbox_of(row.sender) == box
    ]
    invitations = [
        row for row in session.exec(select(m.Invitation)).all() if mailbox_of(row.invitee) == box
    ]
    consent = session.exec(select(m.Consent).where(m.Consent.mailbox == box)).first()
    if not (players or mine or invitations or consent):
        raise ServiceError(f"the service knows nothing of {box}")
    tag = str(players[0].id) if players else new_token()[:8]
    report = Forgotten(f"forgotten-{tag}@{FORGOTTEN_DOMAIN}", f"Forgotten player {tag}")

    # What names the player: their addresses, names, and their mails' Message-IDs.
    names = {p.display_name for p in players if p.display_name}
    ids: dict[str, str] = {}
    for row in mine:
        head = email.message_from_bytes(row.raw, policy=email.policy.compat32)
        for name, _ in getaddresses([str(v) for v in head.get_all("From", [])]):
            if name.strip():
                names.add(name.strip())
        for key in (str(head.get("Message-ID", "")), row.message_key):
            bare = key.strip().strip("<>").strip()
            if bare and not bare.startswith("sha256:"):
                ids[bare] = f"forgotten-{tag}-{row.id}@{FORGOTTEN_DOMAIN}"
    addresses = {box, *(p.email for p in players)}
    traces = Traces.build(
        mailboxes=addresses,
        address_to=report.pseudonym,
        names=names,
        name_to=report.name,
        message_ids=ids,
    )

    # The player and their seats.
    for player in players:
        pseudonym = f"forgotten-{player.id}@{FORGOTTEN_DOMAIN}"
        player.email, player.display_name = pseudonym, report.name
        player.last_bounce_reason = None
        player.stopped, player.digest, player.mail_all = True, False, False
        player.away_until = None
        session.add(player)
        report.count("player")
    session.flush()
    seats = _seats_of(session, players)
    for seat in seats:
        seat.token = new_token()
        session.add(seat)
        report.count("seat")
    report.games = sorted({s.game_id for s in seats})
    ids_of_players = [p.id for p in players]
    # Their line of the stored standings: keyed by the address until now.
    for line in session.exec(
        select(m.Rating).where(
            col(m.Rating.player_id).in_(ids_of_players) | col(m.Rating.key).in_(addresses)
        )
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
    for throttle in session.exec(select(m.ErrorThrottle)).all():
        if mailbox_of(throttle.address) == box:
            session.delete(throttle)
            report.count("error_throttle")
    for confirmation in session.exec(select(m.Confirmation)).all():
        if mailbox_of(confirmation.mailbox) == box or traces.found(confirmation.address):
            confirmation.address = confirmation.mailbox = report.pseudonym
            if confirmation.status == m.ConfirmationStatus.PENDING.value:
                confirmation.status = m.ConfirmationStatus.REFUSED.value
                confirmation.answered_at = now
            session.add(confirmation)
            report.count("confirmation")
    for invitation in session.exec(select(m.Invitation)).all():
        changed = False
        if mailbox_of(invitation.invitee) == box:
            invitation.invitee = report.pseudonym
            if invitation.status == m.InvitationStatus.PENDING.value:
                invitation.status = m.InvitationStatus.CANCELLED.value
                invitation.answered_at = now
            changed = True
        settings = traces.json(invitation.settings)
        if settings != invitation.settings:
            invitation.settings = settings  # type: ignore[assignment]
            changed = True
        if changed:
            session.add(invitation)
            report.count("invitation")
    session.flush()

    # The mail, in and out.
    mine_ids = {row.id for row in mine}
    for row in _each(session, m.Inbound):
        before = (row.raw, row.sender, row.subject, row.reason, row.message_key)
        if row.id in mine_ids:
            row.raw = scrub_message(row.raw, traces, keep_headers=KEEP_HEADERS)
            row.sender = report.pseudonym
            row.message_key = f"<forgotten-{tag}-{row.id}@{FORGOTTEN_DOMAIN}>"
        else:
            row.raw = scrub_message(row.raw, traces)
        row.subject = _text(traces, row.subject)
        row.reason = _text(traces, row.reason)
        if (row.raw, row.sender, row.subject, row.reason, row.message_key) != before:
            session.add(row)
            report.count("inbound")
    session.flush()
    for out in _each(session, m.Outbox):
        before_out = (out.raw, out.recipient, out.last_error, out.status)
        if mailbox_of(out.recipient) == box:
            out.recipient = report.pseudonym
            if out.status != m.OutboxStatus.SENT.value:
                out.status = m.OutboxStatus.CANCELLED.value
        out.raw = scrub_message(out.raw, traces)
        out.last_error = _text(traces, out.last_error)
        if (out.raw, out.recipient, out.last_error, out.status) != before_out:
            session.add(out)
            report.count("outbox")
    session.flush()

    # Games, talk, transport errors.
    from engine.forgetting import forget_entry

    seat_at = {(s.game_id, s.seat) for s in seats}
    for game in _each(session, m.Game):
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
    for cut in _each(session, m.CutMail):
        if _forget_cut(cut, seat_at, traces, ids, tag):
            session.add(cut)
            report.count("cut_mail")
    for talk in _each(session, m.Talk):
        if traces.found(talk.text):
            talk.text = traces.text(talk.text)
            session.add(talk)
            report.count("talk")
    for state in session.exec(select(m.TransportState)).all():
        if state.last_error and traces.found(state.last_error):
            state.last_error = traces.text(state.last_error)
            session.add(state)
            report.count("transport_state")
    session.flush()
    return report


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
    cut.reason = _text(traces, cut.reason)
    return (cut.text, cut.sha256, cut.message_id, cut.reason) != before


def _text(traces: Traces, value: str | None) -> str | None:
    return traces.text(value) if value else value


def _each(session: Session, model: Any) -> Iterable[Any]:
    """Every row of a table, in batches by id."""
    last = 0
    while True:
        rows = session.exec(
            select(model).where(model.id > last).order_by(model.id).limit(BATCH)
        ).all()
        if not rows:
            return
        yield from rows
        last = rows[-1].id
        session.flush()  # the batch's changes written, its rows let go
        for row in rows:
            session.expunge(row)


COMPACTED = (
    "player",
    "inbound",
    "outbox",
    "game",
    "cut_mail",
    "rating",
    "talk",
    "consent",
    "invitation",
)
"""The tables `compact` rewrites on PostgreSQL."""


def compact(db: Engine) -> None:
    """Let go of the old versions of the rewritten rows: SQLite's ``VACUUM`` (and the
    write-ahead log emptied), PostgreSQL's ``VACUUM FULL`` of the rewritten tables."""
    with db.connect() as connection:
        if connection.dialect.name == "sqlite":
            raw = connection.connection.driver_connection
            assert raw is not None
            raw.execute("VACUUM")
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return
        auto = connection.execution_options(isolation_level="AUTOCOMMIT")
        for table in COMPACTED:
            auto.execute(text(f'VACUUM FULL "{table}"'))
