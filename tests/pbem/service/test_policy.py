"""The policy alone (`pbem.service.policy`): how mailboxes fold, what each proof may do,
and what may be mailed to whom — on a real database, both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import Session, select

from pbem.mail.reading import read_message
from pbem.service import policy
from pbem.service.context import Context, Proof, Sender
from pbem.service.policy import Verdict, Why
from pbem.store import models as m
from pbem.store.consent import find_consent
from pbem.store.db import session_scope
from tests.pbem.service.desk import NOW, Desk


def sender(address: str, proof: Proof) -> Sender:
    return Sender(address, policy.mailbox_of(address), proof, proof.name)


def with_settings(desk: Desk, **changes: object) -> Context:
    ctx = desk.ctx
    ctx.settings = ctx.settings.model_copy(update=changes)
    return ctx


@pytest.mark.parametrize(
    ("address", "mailbox"),
    [
        ("v@victim.test", "v@victim.test"),
        ("V+1@VICTIM.test", "v@victim.test"),
        ("v+a+b@victim.test", "v@victim.test"),
        ("+only@victim.test", "+only@victim.test"),
        (" v@victim.test ", "v@victim.test"),
    ],
)
def test_mailboxes_fold_case_and_tags(address: str, mailbox: str) -> None:
    assert policy.mailbox_of(address) == mailbox


def test_the_service_s_own_addresses_are_never_mailed(desk: Desk) -> None:
    ctx = desk.ctx
    own = ctx.settings.address
    local, _, domain = own.partition("@")
    for address in (own, f"{local}+x@{domain}", own.upper(), f"computer2@{domain}"):
        assert policy.is_service_mailbox(ctx, address)
        with session_scope(ctx.db) as session:
            assert not policy.may_mail(ctx, session, address, Why.NOTE, NOW)
    assert not policy.is_service_mailbox(ctx, f"someone@{domain}")


def test_what_each_proof_may_do(desk: Desk) -> None:
    ctx = desk.ctx
    stranger = sender("s@stranger.test", Proof.FROM)
    with session_scope(ctx.db) as session:
        for action in policy.RULES:
            # Unproven: nothing at all.
            assert (
                policy.decide(ctx, session, sender("x@y.test", Proof.NONE), action).verdict
                == Verdict.REFUSE
            )
            # A token: everything.
            assert policy.decide(ctx, session, sender("x@y.test", Proof.TOKEN), action).allowed
        assert not policy.decide(ctx, session, stranger, "resign").allowed
        assert policy.decide(ctx, session, stranger, "new").allowed
        assert policy.decide(ctx, session, stranger, "query").allowed
        # Every change to a game or to anyone's settings: one confirmation request.
        changes = ("move", "settings", "challenge", "rematch", "cancel", "watch", "unwatch")
        for action in (*changes, "quieten", "unquieten"):
            assert policy.decide(ctx, session, stranger, action).verdict == Verdict.CONFIRM
        # Even from a mailbox that confirmed: its From alone may be anyone's.
        policy.confirm(ctx, session, sender("s+x@Stranger.test", Proof.TOKEN), NOW)
        for action in (*changes, "quieten"):
            assert policy.decide(ctx, session, stranger, action).verdict == Verdict.CONFIRM


def test_a_seat_not_joined_moves_only_with_its_token(desk: Desk) -> None:
    ctx = desk.ctx
    seat = m.Seat(game_id=1, seat=0, player_id=1, token="t", joined=False)
    with session_scope(ctx.db) as session:
        who = "ann@play.example"
        assert not policy.decide(ctx, session, sender(who, Proof.FROM), "move", seat=seat).allowed
        assert policy.decide(ctx, session, sender(who, Proof.TOKEN), "move", seat=seat).allowed
        seat.joined = True
        joined = policy.decide(ctx, session, sender(who, Proof.FROM), "move", seat=seat)
        assert joined.verdict == Verdict.CONFIRM  # a joined seat's From: asked to confirm


def test_a_mailbox_that_never_confirmed_gets_one_unasked_mail_per_quiet_period(
    desk: Desk,
) -> None:
    ctx = with_settings(desk, invitation_quiet_days=30.0)
    victim = "v@victim.test"
    sent = 0
    for day in range(90):
        now = NOW + timedelta(days=day)
        with session_scope(ctx.db) as session:
            for address, why in ((victim, Why.INVITE), ("V+2@victim.test", Why.NOTE)):
                sent += policy.may_mail(ctx, session, address, why, now)
    assert sent == 3  # days 0, 30 and 60


def test_answers_follow_the_proof_of_the_mail_they_answer(desk: Desk) -> None:
    ctx = desk.ctx
    victim = "v@victim.test"
    with session_scope(ctx.db) as session:
        ctx.senders[1] = sender(victim, Proof.FROM)
        ctx.senders[2] = sender(victim, Proof.TOKEN)
        ctx.senders[3] = sender(victim, Proof.NONE)
        # By its From alone: the one unasked mail, then nothing for the quiet period.
        assert policy.may_mail(ctx, session, victim, Why.ANSWER, NOW, inbound_id=1)
        assert not policy.may_mail(ctx, session, victim, Why.ANSWER, NOW, inbound_id=1)
        # Proven: always answered; unproven: never.
        assert policy.may_mail(ctx, session, victim, Why.ANSWER, NOW, inbound_id=2)
        assert not policy.may_mail(ctx, session, victim, Why.ANSWER, NOW, inbound_id=3)
        # An answer that goes to someone else is a note: that mailbox's own rules.
        assert policy.may_mail(ctx, session, "w@victim.test", Why.ANSWER, NOW, inbound_id=2)
        assert not policy.may_mail(ctx, session, "w@victim.test", Why.ANSWER, NOW, inbound_id=2)


def test_never_silences_all_but_proven_answers_and_start_lifts_it(desk: Desk) -> None:
    ctx = desk.ctx
    victim = "v+news@victim.test"
    with session_scope(ctx.db) as session:
        policy.confirm(ctx, session, sender(victim, Proof.TOKEN), NOW)
        policy.suppress(ctx, session, "V@victim.test", "never", NOW, days=None)
        assert policy.is_suppressed(session, victim, NOW + timedelta(days=400))
        for why in (Why.INVITE, Why.NOTE):
            assert not policy.may_mail(ctx, session, victim, why, NOW)
        ctx.senders[7] = sender(victim, Proof.TOKEN)
        assert policy.may_mail(ctx, session, victim, Why.ANSWER, NOW, inbound_id=7)
        # A decline later does not shorten it.
        policy.suppress(ctx, session, victim, "declined", NOW, days=30)
        box = find_consent(session, "v@victim.test")
        assert box is not None and box.suppressed == "never" and box.suppressed_until is None
        assert policy.lift(ctx, session, victim)
        assert policy.may_mail(ctx, session, victim, Why.NOTE, NOW)


def test_a_decline_keeps_invitations_away_for_the_quiet_period_only(desk: Desk) -> None:
    ctx = with_settings(desk, invitation_quiet_days=30.0)
    victim = "v@victim.test"
    with session_scope(ctx.db) as session:
        policy.confirm(ctx, session, sender(victim, Proof.TOKEN), NOW)
        policy.suppress(ctx, session, victim, "declined", NOW, days=30)
        assert not policy.may_mail(ctx, session, victim, Why.INVITE, NOW + timedelta(days=29))
        # Notes about a game it took part in still go; invitations again after 30 days.
        assert policy.may_mail(ctx, session, victim, Why.NOTE, NOW + timedelta(days=29))
        assert policy.may_mail(ctx, session, victim, Why.INVITE, NOW + timedelta(days=31))


def test_invitations_to_one_mailbox_are_capped_per_day(desk: Desk) -> None:
    ctx = with_settings(desk, max_invitations_per_address_per_day=2)
    victim = "friend@victim.test"
    with session_scope(ctx.db) as session:
        policy.confirm(ctx, session, sender(victim, Proof.TOKEN), NOW)
    got = []
    for hour in range(48):
        now = NOW + timedelta(hours=hour)
        with session_scope(ctx.db) as session:
            got.append(policy.may_mail(ctx, session, f"friend+{hour}@victim.test", Why.INVITE, now))
    assert sum(got) in (4, 6)  # two a UTC day: the 48 hours touch two or three days
    assert sum(got[:12]) <= 2


def test_new_games_are_counted_per_mailbox(desk: Desk) -> None:
    ctx = with_settings(desk, max_new_games_per_day=3)
    taken = []
    with session_scope(ctx.db) as session:
        for n in range(6):
            who = sender(f"A+{n}@play.example", Proof.TOKEN)
            taken.append(policy.take_new_game(ctx, session, who, NOW) is None)
    assert taken == [True, True, True, False, False, False]
    with session_scope(ctx.db) as session:
        who = sender("a@play.example", Proof.TOKEN)
        assert policy.take_new_game(ctx, session, who, NOW + timedelta(days=1)) is None


def test_a_from_alone_starts_a_few_games_until_they_are_answered(desk: Desk) -> None:
    """A From can be forged: by it alone, `UNJOINED_AT_ONCE` games wait for their player
    at once, until they answer one of their mails or ``invitation_days`` pass."""
    ctx = with_settings(desk, max_new_games_per_day=10, invitation_days=7.0)
    who = sender("a@play.example", Proof.FROM)
    with session_scope(ctx.db) as session:
        for _ in range(policy.UNJOINED_AT_ONCE):
            assert policy.take_new_game(ctx, session, who, NOW) is None
        over = policy.take_new_game(ctx, session, who, NOW + timedelta(days=1))
        assert over is not None and "first answer" in over
        assert policy.take_new_game(ctx, session, who, NOW + timedelta(days=8)) is None
        # The player answers a game's mail: the games waiting are theirs.
        policy.confirm(ctx, session, sender("a+x@play.example", Proof.TOKEN), NOW)
        later = NOW + timedelta(days=8, hours=1)
        for _ in range(policy.UNJOINED_AT_ONCE):
            assert policy.take_new_game(ctx, session, who, later) is None


def test_a_seat_not_joined_gets_its_first_game_mail_only(desk: Desk) -> None:
    ctx = desk.ctx
    game_id = desk.new_game()
    with session_scope(ctx.db) as session:
        row = session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).first()
        assert row is not None
        row.joined = False
        session.add(row)
        session.flush()
        player = session.get(m.Player, row.player_id)
        assert player is not None
        # Confirmed by the admin's game, yet a seat it did not join: one mail.
        assert policy.may_mail(ctx, session, player.email, Why.GAME, NOW, seat=row)
        assert not policy.may_mail(ctx, session, player.email, Why.GAME, NOW, seat=row)
        row.joined = True
        assert policy.may_mail(ctx, session, player.email, Why.GAME, NOW, seat=row)


def test_the_trusted_server_decides_for_every_mail(desk: Desk) -> None:
    ctx = with_settings(desk, trusted_authserv_id="mx.stage.example")
    raw = b"From: ann@play.example\nTo: x@stage.example\nSubject: hi\n\nnew\n"
    forged = read_message(
        b"Authentication-Results: mx.stage.example; dmarc=pass header.from=play.example\n" + raw
    )
    assert policy.prove(ctx, forged, None).proof == Proof.TOKEN
    unread = read_message(
        b"Authentication-Results: mx.stage.example; (unclosed\n"
        b"Authentication-Results: mx.stage.example; dmarc=pass\n" + raw
    )
    assert policy.prove(ctx, unread, None).proof == Proof.NONE
    assert policy.prove(ctx, read_message(raw), "ann@play.example").proof == Proof.NONE
    ctx.settings = ctx.settings.model_copy(update={"trusted_authserv_id": ""})
    assert policy.prove(ctx, read_message(raw), "ANN+x@play.example").proof == Proof.TOKEN
    assert policy.prove(ctx, read_message(raw), None).proof == Proof.FROM
    assert policy.prove(ctx, read_message(raw), "bob@play.example").proof == Proof.FROM


def test_invitations_honour_every_rule(desk: Desk) -> None:
    ctx = with_settings(desk, lobby_domains=["ok.test"])
    desk.new_game()
    with session_scope(ctx.db) as session:
        challenger = session.get(m.Player, 1)
        assert challenger is not None
        ok, _ = policy.may_invite(ctx, session, challenger, "x@ok.test", NOW)
        assert ok
        for address in (challenger.email, "x@elsewhere.test", ctx.settings.address, "bad"):
            ok, why = policy.may_invite(ctx, session, challenger, address, NOW)
            assert not ok and why
        policy.suppress(ctx, session, "y@ok.test", "never", NOW, days=None)
        assert not policy.may_invite(ctx, session, challenger, "Y+1@ok.test", NOW)[0]
        assert policy.may_mail(ctx, session, "z@ok.test", Why.INVITE, NOW)
        ok, why = policy.may_invite(ctx, session, challenger, "z+2@ok.test", NOW)
        assert not ok and "quiet period" in why


def test_reachable_counts_nothing(desk: Desk) -> None:
    ctx = desk.ctx
    with Session(ctx.db) as session:
        assert policy.reachable(ctx, session, "new@victim.test", NOW)
    with session_scope(ctx.db) as session:
        assert policy.may_mail(ctx, session, "new@victim.test", Why.NOTE, NOW)
        assert not policy.reachable(ctx, session, "new@victim.test", NOW)
        assert policy.reachable(ctx, session, "new@victim.test", NOW + timedelta(days=31))


# -- who gets a finished game's review -------------------------------------------------


@pytest.mark.parametrize("hints", [True, False])
def test_a_review_follows_the_games_hint_setting(hints: bool) -> None:
    """The game-over mail reviews the players' decisions exactly when the game gives
    hints (against the computer unless turned off; between people once all agreed)."""
    row = m.Game(
        settings={}, seed="s", hints=hints, created_at=NOW, updated_at=NOW, last_move_at=NOW
    )
    assert policy.may_review(row) is hints


def test_unproven_mail_earns_a_few_answers_a_day(desk: Desk) -> None:
    """Answers to mail proven by its From alone — confirmation requests included — are
    capped per mailbox and day, for a confirmed mailbox too; proven mail is not."""
    ctx = with_settings(desk, max_unproven_answers_per_day=3)
    box = "p@player.test"
    with session_scope(ctx.db) as session:
        policy.confirm(ctx, session, sender(box, Proof.TOKEN), NOW)
    for day in range(3):
        now = NOW + timedelta(days=day)
        sent = 0
        for k in range(10):
            ctx.senders = {k: sender(f"P+{k}@Player.test", Proof.FROM)}
            why = Why.CONFIRM if k % 2 else Why.ANSWER
            with session_scope(ctx.db) as session:
                sent += policy.may_mail(ctx, session, box, why, now, inbound_id=k)
        assert sent == 3, day
        ctx.senders = {99: sender(box, Proof.TOKEN)}
        with session_scope(ctx.db) as session:
            assert policy.may_mail(ctx, session, box, Why.ANSWER, now, inbound_id=99)


def test_proven_mail_is_delayed_never_refused_for_volume(desk: Desk) -> None:
    ctx = with_settings(desk, max_per_sender_per_hour=5, max_proven_per_hour=50)
    proven, alone = sender("p@player.test", Proof.TOKEN), sender("p@player.test", Proof.FROM)
    assert policy.volume(ctx, alone, 4) == Verdict.ALLOW
    assert policy.volume(ctx, alone, 5) == Verdict.REFUSE
    assert policy.volume(ctx, proven, 49) == Verdict.ALLOW
    assert policy.volume(ctx, proven, 50) == Verdict.DELAY
    assert policy.volume(ctx, proven, 10_000) == Verdict.DELAY
