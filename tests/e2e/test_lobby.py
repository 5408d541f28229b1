"""Games started by mail to the plain service address (the lobby): ``new`` against the
computer, ``games``, and who may do what (the ``lobby`` setting, blocked addresses, the
daily limit), through the daemon and real Maildirs on both databases."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from pbem.demo.bots import text_of
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.service import InjectedFault, Service
from pbem.store import models as m
from tests.e2e.helpers import (
    ALICE,
    BOB,
    SERVICE_ADDRESS,
    STRANGER,
    Harness,
    about,
    cli_env,
    plain_mail,
    reply,
    run_cli,
)

A, B = ALICE[0], BOB[0]


@pytest.fixture
def open_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """The service with ``lobby = open``: anyone may start a game."""
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="open")
    yield harness
    harness.close()


@pytest.fixture
def busy(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """The service, where a mailbox may get more than a few answers a day to mail that
    proves only its From (each challenge or cancel by plain mail earns a confirmation
    request): the daily cap is not these tests' subject (tests/abuse/test_from_alone.py)."""
    harness = Harness.build(tmp_path, db_url, db_engine, max_unproven_answers_per_day=20)
    yield harness
    harness.close()


@pytest.fixture
def closed_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="closed")
    yield harness
    harness.close()


def ask(h: Harness, sender: str, body: str, **options: str) -> bytes:
    raw = plain_mail(sender, SERVICE_ADDRESS, body, **options)  # type: ignore[arg-type]
    h.deliver(raw)
    return raw


CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


def ask_sure(h: Harness, sender: str, body: str, **options: str) -> bytes:
    """``sender`` asks by plain mail (its From alone proves nothing), and confirms it.

    A challenge or a cancel changes a game: the mail is held, and ``sender`` gets one
    confirmation request and nothing else; its one click does what the mail asked, as
    if it had come with a token (what follows answers the mail itself). The mail."""
    before = h.count(sender)
    invited = len(invitations(h))
    raw = ask(h, sender, body, **options)
    held = h.last_inbound()
    assert held.status == "applied", held.reason
    assert "held until" in (held.reason or ""), held.reason
    (asking,) = h.new_mail(sender, before)
    assert str(asking["Subject"]) == CONFIRM_SUBJECT
    assert len(invitations(h)) == invited  # nothing done yet
    h.confirm(sender)
    return raw


def games_of(h: Harness, address: str) -> list[m.Game]:
    with Session(h.db) as session:
        rows = session.exec(
            select(m.Game)
            .join(m.Seat, m.Seat.game_id == m.Game.id)  # type: ignore[arg-type]
            .join(m.Player, m.Player.id == m.Seat.player_id)  # type: ignore[arg-type]
            .where(m.Player.email == address)
        ).all()
        for row in rows:
            session.expunge(row)
        return list(rows)


def test_a_known_player_starts_a_game_against_the_computer_and_moves(harness: Harness) -> None:
    h = harness
    h.new_game()  # Alice is a player already (the default lobby is invite-only)
    before = h.count(A)
    raw = ask(h, A, "play computer to 61 muggins")
    row = h.last_inbound()
    assert row.status == "applied" and row.reason is not None
    assert row.reason.startswith("lobby: started game")
    game_id = row.game_id
    assert game_id is not None
    settings = h.game_row(game_id).settings
    assert settings["target"] == 61 and settings["muggins"] is True
    assert settings["computer"] == [1]
    first = h.received(A)[before:]
    assert len(first) == 1  # the new game's first mail is the answer
    request_id = str(parse_id(raw))
    assert str(first[0]["In-Reply-To"]) == request_id
    assert h.count(f"computer@{h.settings.domain}") == 0
    # Alice discards by replying to that mail: the move is applied.
    game = h.game(game_id)
    cards = sorted(game.holding(0))[:2]
    h.deliver(reply(first[0], A, "Alice", "discard " + " ".join(c.ascii for c in cards)))
    assert h.last_inbound().status == "applied"
    assert h.last_inbound().game_id == game_id
    assert any(seat == 0 for _, seat, _, _ in h.log(game_id))


def parse_id(raw: bytes) -> str:
    from tests.e2e.helpers import parse

    return str(parse(raw)["Message-ID"])


def test_new_with_three_players_fills_two_computer_seats(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask(h, A, "new\n3 players\nno skunk")  # options on the line of the command only
    row = h.last_inbound()
    assert row.game_id is not None
    assert h.game_row(row.game_id).settings["players"] == 2
    ask(h, A, "new 3 players no skunk")
    row = h.last_inbound()
    assert row.game_id is not None
    settings = h.game_row(row.game_id).settings
    assert settings["players"] == 3 and settings["skunk"] == "none"
    assert settings["computer"] == [1, 2]


def test_a_bad_option_is_answered_and_starts_nothing(harness: Harness) -> None:
    h = harness
    h.new_game()
    games = len(games_of(h, A))
    before = h.count(A)
    raw = ask(h, A, "new to 100")
    assert h.last_inbound().status == "rejected"
    assert len(games_of(h, A)) == games
    answer = h.received(A)[before:]
    assert len(answer) == 1
    assert "61 or 121, not 100" in text_of(answer[0])
    assert str(answer[0]["In-Reply-To"]) == parse_id(raw)


def test_invite_only_ignores_a_stranger(harness: Harness) -> None:
    h = harness
    ask(h, STRANGER, "new")
    row = h.last_inbound()
    assert row.status == "ignored" and "invite-only" in (row.reason or "")
    assert h.count(STRANGER) == 0
    assert h.player(STRANGER) is None


def test_open_lobby_lets_a_stranger_play_the_computer(open_lobby: Harness) -> None:
    h = open_lobby
    ask(h, STRANGER, "play against the computer")
    row = h.last_inbound()
    assert row.status == "applied" and row.game_id is not None
    assert h.count(STRANGER) == 1
    assert h.player(STRANGER) is not None


def test_closed_lobby_tells_players_and_nobody_else(closed_lobby: Harness) -> None:
    h = closed_lobby
    h.new_game()
    before = h.count(A)
    ask(h, A, "new")
    assert h.last_inbound().status == "rejected"
    assert len(games_of(h, A)) == 1
    told = h.received(A)[before:]
    assert len(told) == 1 and "the admin starts games" in text_of(told[0])
    ask(h, STRANGER, "new")
    assert h.last_inbound().status == "ignored"
    assert h.count(STRANGER) == 0


def test_the_daily_limit_of_new_games(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, max_new_games_per_day=2)
    try:
        h.new_game()
        ask(h, A, "new")
        ask(h, A, "new")
        assert len(games_of(h, A)) == 3
        before = h.count(A)
        ask(h, A, "new")
        row = h.last_inbound()
        assert row.status == "rejected" and "daily limit" in (row.reason or "")
        assert len(games_of(h, A)) == 3
        assert "No more games today" in about(h.received(A)[before])
        h.clock.advance(timedelta(days=1, minutes=1))
        ask(h, A, "new")
        assert h.last_inbound().status == "applied"
        assert len(games_of(h, A)) == 4
    finally:
        h.close()


def test_games_lists_my_games_with_my_reply_addresses(harness: Harness) -> None:
    h = harness
    game_id = h.new_game()
    before = h.count(A)
    raw = ask(h, A, "games")
    assert h.last_inbound().status == "applied"
    answer = h.received(A)[before:]
    assert len(answer) == 1
    text = text_of(answer[0])
    assert f"Game {game_id}" in text and h.token(game_id, 0) in text
    assert h.token(game_id, 1) not in text  # never another seat's address
    assert str(answer[0]["In-Reply-To"]) == parse_id(raw)


def test_a_blocked_address_is_ignored(harness: Harness, tmp_path: Path, db_url: str) -> None:
    h = harness
    h.new_game()
    env = cli_env(tmp_path, db_url)
    result = run_cli(env, "player", "block", A)
    assert result.exit_code == 0, result.output
    assert "blocked" in result.stdout
    h.clock.catch_up()
    before = h.count(A)
    ask(h, A, "new")
    row = h.last_inbound()
    assert row.status == "ignored" and "blocked" in (row.reason or "")
    ask(h, A, "games")
    assert h.last_inbound().status == "ignored"
    assert h.count(A) == before
    # Replies to a game mail are ignored too.
    h.deliver(reply(h.received(A)[0], A, "Alice", "hand"))
    row = h.last_inbound()
    assert row.status == "ignored" and "blocked" in (row.reason or "")
    assert h.count(A) == before
    assert run_cli(env, "player", "unblock", A).exit_code == 0
    ask(h, A, "new")
    assert h.last_inbound().status == "applied"


def test_block_an_unknown_address_blocks_it_before_it_writes(
    open_lobby: Harness, tmp_path: Path, db_url: str
) -> None:
    h = open_lobby
    env = cli_env(tmp_path, db_url)
    assert run_cli(env, "player", "block", STRANGER).exit_code == 0
    h.clock.catch_up()
    ask(h, STRANGER, "new")
    assert h.last_inbound().status == "ignored"
    assert h.count(STRANGER) == 0
    bad = run_cli(env, "player", "block", "not an address")
    assert bad.exit_code == 1 and "not an email address" in bad.output


@pytest.mark.parametrize("step", ["before-mark", "before-commit"])
def test_a_crash_while_starting_a_game_starts_it_once(harness: Harness, step: str) -> None:
    h = harness
    h.new_game()
    games = len(games_of(h, A))
    before = h.count(A)
    outbox = len(h.outbox())
    h.send(plain_mail(A, SERVICE_ADDRESS, "new"))
    fired: list[str] = []

    def fault(at: str) -> None:
        if at == step and not fired:
            fired.append(at)
            raise InjectedFault(at)

    h.daemon.service.fault = fault
    with pytest.raises(InjectedFault):
        h.step()
    assert h.last_inbound().status == "pending"
    assert len(games_of(h, A)) == games and len(h.outbox()) == outbox
    h.restart()
    h.step()
    assert h.last_inbound().status == "applied"
    assert len(games_of(h, A)) == games + 1
    assert h.count(A) == before + 1


# -- challenges and invitations -----------------------------------------------------------

C, D = "carol@example.net", "dave@example.com"


def invitations(h: Harness) -> list[m.Invitation]:
    with Session(h.db) as session:
        rows = list(session.exec(select(m.Invitation).order_by(m.Invitation.id)).all())  # type: ignore[arg-type]
        for row in rows:
            session.expunge(row)
        return rows


def invite_to(h: Harness, address: str) -> list[EmailMessage]:
    return [msg for msg in h.received(address) if about(msg) == INVITE_SUBJECT]


def answer_invite(h: Harness, address: str, body: str, name: str = "") -> None:
    (invite,) = invite_to(h, address)
    h.deliver(reply(invite, address, name or address.split("@")[0].title(), body))


def test_challenge_accepted_by_everyone_starts_the_game(harness: Harness) -> None:
    h = harness
    h.new_game()
    raw = ask_sure(h, A, "challenge bob@example.org carol@example.net to 61", subject="a game?")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    rows = invitations(h)
    assert [r.invitee for r in rows] == [B, C] and all(r.status == "pending" for r in rows)
    assert len({r.token for r in rows}) == 2
    for address, row in ((B, rows[0]), (C, rows[1])):
        (invite,) = invite_to(h, address)  # exactly one invitation mail each
        text = text_of(invite)
        assert A in text and "accept" in text and "decline" in text and "61" in text
        assert row.token in str(invite["Reply-To"])
    told = h.latest(A)
    assert str(told["In-Reply-To"]) == parse_id(raw) and "Invitations sent" in about(told)
    before = h.counts((A, B, C))
    answer_invite(h, B, "accept")
    assert h.last_inbound().status == "applied"
    assert [r.status for r in invitations(h)] == ["accepted", "pending"]
    assert "Accepted" in about(h.latest(B))
    assert len(games_of(h, C)) == 0
    answer_invite(h, C, "Accept!")
    inbound = h.last_inbound()
    assert inbound.status == "applied" and inbound.game_id is not None
    game_id = inbound.game_id
    assert h.game_row(game_id).settings["players"] == 3
    assert [h.address_of(game_id, s) for s in range(3)] == [A, B, C]
    after = h.counts((A, B, C))
    assert all(after[a] > before[a] for a in (A, B, C))  # everyone has their first hand
    assert h.token(game_id, 2) in str(h.latest(C)["Reply-To"])
    # The game is played by replying to those mails.
    game = h.game(game_id)
    card = sorted(game.holding(0))[0]
    h.deliver(reply(h.latest(A), A, "Alice", "discard " + card.ascii))
    assert h.last_inbound().status == "applied"


def test_the_invitation_names_only_the_inviter(harness: Harness) -> None:
    h = harness
    h.new_game()
    h.deliver(
        plain_mail(
            f'"<script>x</script>{"Z" * 80}" <{A}>',
            SERVICE_ADDRESS,
            "challenge bob@example.org carol@example.net\nBuy cheap pills at http://spam.example",
        )
    )
    assert "held until" in (h.last_inbound().reason or "")
    h.confirm(A)  # her click: the invitations go, from the mail she confirmed
    (invite,) = invite_to(h, B)
    text = text_of(invite)
    assert "spam.example" not in text and "pills" not in text
    assert "Z" * 80 not in text
    # No other invitee is named, and the subject names no one.
    assert C not in text and "carol" not in text.lower() and "Also invited" not in text
    assert about(invite) == INVITE_SUBJECT
    # What may follow, said truthfully: the lapse, the quiet days, and 'never'.
    flat_text = " ".join(text.split())
    assert "lapses on" in flat_text and "not be invited again for 30 days" in flat_text
    assert "reply 'never'" in flat_text and "nothing more will be sent" not in flat_text
    html_part = invite.get_body(("html",))
    assert html_part is not None and "<script>" not in html_part.get_content()


def test_a_decline_cancels_the_others_and_tells_the_challenger(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask_sure(h, A, "challenge bob@example.org carol@example.net")
    answer_invite(h, C, "accept")
    answer_invite(h, B, "decline, thanks")
    assert [r.status for r in invitations(h)] == ["declined", "cancelled"]
    assert any("declined" in text_of(msg) for msg in h.received(A))
    assert "The game is off" in about(h.latest(C))
    assert len(games_of(h, B)) == 1 and len(games_of(h, C)) == 0
    answer_invite(h, C, "accept")  # too late
    assert h.last_inbound().status == "rejected"
    assert "closed" in about(h.latest(C))


def test_cancel_withdraws_open_invitations(busy: Harness) -> None:
    h = busy
    h.new_game()
    ask_sure(h, A, "challenge carol@example.net")
    ask_sure(h, A, "cancel")
    assert h.last_inbound().status == "applied"
    assert [r.status for r in invitations(h)] == ["cancelled"]
    # Carol never answered: the invitation was her one mail, no "withdrawn" note follows.
    assert h.count(C) == 1
    # Bob plays here (he answered the service's mail): he is told.
    ask_sure(h, A, "challenge bob@example.org")
    ask_sure(h, A, "cancel")
    assert "withdrawn" in about(h.latest(B)).lower()
    ask_sure(h, A, "cancel")
    assert h.last_inbound().status == "rejected"
    assert "Nothing to cancel" in about(h.latest(A))


def test_a_stranger_cannot_answer_someone_elses_invitation(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask_sure(h, A, "challenge carol@example.net")
    (invite,) = invite_to(h, C)
    h.deliver(reply(invite, STRANGER, "Mallory", "accept"))
    assert h.last_inbound().status == "ignored"
    assert h.count(STRANGER) == 0
    assert invitations(h)[0].status == "pending"


def test_an_unanswered_invitation_expires_and_the_address_rests(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask_sure(h, A, "challenge carol@example.net")
    h.clock.advance(timedelta(days=7, minutes=1))
    h.step()
    assert [r.status for r in invitations(h)] == ["expired"]
    assert "Invitation expired" in about(h.latest(A))
    # Within the quiet period nobody may invite Carol; the challenger is not told why.
    h.new_game((BOB, (D, "Dave")), seed="other")
    ask_sure(h, B, "challenge carol@example.net")
    assert h.last_inbound().status == "rejected"
    text = text_of(h.latest(B))
    assert "cannot be invited now" in text and "expire" not in text
    assert len(invite_to(h, C)) == 1
    h.clock.advance(timedelta(days=31))
    ask_sure(h, B, "challenge carol@example.net")
    assert h.last_inbound().status == "applied"
    assert len(invite_to(h, C)) == 2


def test_over_the_open_invitations_limit(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, max_open_invitations=2)
    try:
        h.new_game()
        ask_sure(h, A, "challenge carol@example.net dave@example.com")
        assert h.last_inbound().status == "applied"
        ask_sure(h, A, "challenge erin@example.net")
        assert h.last_inbound().status == "rejected"
        assert "at most 2 open invitations" in text_of(h.latest(A))
        assert len(invitations(h)) == 2 and h.count("erin@example.net") == 0
    finally:
        h.close()


def test_a_second_invitation_to_the_same_address_is_refused(busy: Harness) -> None:
    h = busy
    h.new_game()
    ask_sure(h, A, "challenge carol@example.net")
    assert h.last_inbound().status == "applied"
    ask_sure(h, A, "challenge carol@example.net to 61")
    assert h.last_inbound().status == "rejected"
    assert "still waits for an answer" in text_of(h.latest(A))
    assert len(invitations(h)) == 1 and h.count("carol@example.net") == 1
    # Withdrawn, the address is not invited again while its one unasked mail is recent
    # (it never answered), by anyone; after the quiet period it may be.
    ask_sure(h, A, "cancel")
    ask_sure(h, A, "challenge carol@example.net")
    assert h.last_inbound().status == "rejected"
    assert "cannot be invited now" in text_of(h.latest(A))
    h.clock.advance(timedelta(days=h.settings.invitation_quiet_days + 1))
    ask_sure(h, A, "challenge carol@example.net")
    assert h.last_inbound().status == "applied"
    assert h.count(C) == 2


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_two_workers_keep_the_open_invitations_limit(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """Two challenges of one player taken by two workers at once: the second counts the
    first's invitations (the challenger's row is locked), so the limit holds."""
    h = Harness.build(tmp_path, db_url, db_engine, max_open_invitations=2)
    try:
        h.new_game()
        workers = [Service(h.settings, h.db, clock=h.clock) for _ in range(2)]
        ids = [
            workers[0].receive(plain_mail(A, SERVICE_ADDRESS, f"challenge {who}"), "test")[0]
            for who in ("carol@example.net dave@example.com", "erin@example.net")
        ]
        start = threading.Barrier(2)
        errors: list[BaseException] = []

        def run(service: Service, inbound_id: int) -> None:
            try:
                start.wait()
                service.process(inbound_id)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [
            threading.Thread(target=run, args=(w, i)) for w, i in zip(workers, ids, strict=True)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert len(invitations(h)) <= 2
    finally:
        h.close()


def test_who_cannot_be_invited(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(
        tmp_path,
        db_url,
        db_engine,
        lobby_domains=["example.org", "example.net", "pbem.test"],
        max_unproven_answers_per_day=20,  # a confirmation request a challenge
    )
    try:
        h.new_game()
        env = cli_env(tmp_path, db_url)
        assert run_cli(env, "player", "block", C).exit_code == 0
        h.clock.catch_up()
        own = ("cribbage+x2y3z4a5b6@pbem.test", "computer@pbem.test", "computer3@pbem.test")
        for target in (C, D, A, SERVICE_ADDRESS, "bob@example..org", *own):
            # blocked; a domain not allowed; oneself; the service; not an address; the
            # service's reply addresses and its computer seats
            ask_sure(h, A, f"challenge {target}")
            assert h.last_inbound().status == "rejected"
            assert "cannot be invited now" in text_of(h.latest(A))
        assert h.count(C) == 0 and h.count(D) == 0 and h.count(SERVICE_ADDRESS) == 0
        assert invitations(h) == []
        # An address that bounced gets nothing unsolicited.
        with Session(h.db) as session:
            bob = session.exec(select(m.Player).where(m.Player.email == B)).one()
            bob.bounce_count = 1
            session.add(bob)
            session.commit()
        ask_sure(h, A, "challenge bob@example.org")
        assert h.last_inbound().status == "rejected" and invitations(h) == []
        # Nor does an address that said "stop".
        with Session(h.db) as session:
            bob = session.exec(select(m.Player).where(m.Player.email == B)).one()
            bob.bounce_count = 0
            bob.stopped = True
            session.add(bob)
            session.commit()
        # (The same refusal to Alice within the hour would not be sent again.)
        h.clock.advance(timedelta(hours=1, minutes=1))
        before = h.count(B)
        ask_sure(h, A, "challenge bob@example.org")
        assert h.last_inbound().status == "rejected" and invitations(h) == []
        assert "cannot be invited now" in text_of(h.latest(A))
        assert h.count(B) == before
        # Another person at the service's own domain may be invited.
        ask_sure(h, A, "challenge frank@pbem.test")
        assert h.last_inbound().status == "applied", h.last_inbound().reason
        assert h.count("frank@pbem.test") == 1
    finally:
        h.close()


def test_a_stranger_cannot_challenge_in_invite_only_mode(harness: Harness) -> None:
    h = harness
    ask(h, STRANGER, "challenge bob@example.org")
    assert h.last_inbound().status == "ignored"
    assert h.count(STRANGER) == 0 and h.count(B) == 0 and invitations(h) == []


def test_four_players_with_partners_by_invitation(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask_sure(h, A, "challenge bob@example.org carol@example.net dave@example.com partners")
    assert len(invitations(h)) == 3
    for address in (B, C, D):
        answer_invite(h, address, "accept")
    game_id = h.last_inbound().game_id
    assert game_id is not None
    assert h.game_row(game_id).settings["players"] == 4
    assert [h.address_of(game_id, s) for s in range(4)] == [A, B, C, D]
    ask(h, A, "challenge bob@example.org partners")  # unreadable: refused, nothing held
    assert h.last_inbound().status == "rejected"
    assert "partners play four" in text_of(h.latest(A))


@pytest.mark.parametrize("step", ["before-mark", "before-commit"])
def test_a_crash_while_inviting_invites_once(harness: Harness, step: str) -> None:
    h = harness
    h.new_game()
    ask(h, A, "challenge carol@example.net dave@example.com")
    assert "held until" in (h.last_inbound().reason or "")
    fired: list[str] = []

    def fault(at: str) -> None:
        if at == step and not fired:
            fired.append(at)
            raise InjectedFault(at)

    h.daemon.service.fault = fault
    with pytest.raises(InjectedFault):
        h.confirm(A)  # her click invites: it crashes
    assert invitations(h) == [] and h.count(C) == 0
    assert h.last_inbound().status == "pending"
    h.restart()
    h.step()
    assert h.last_inbound().status == "applied"
    assert len(invitations(h)) == 2
    assert len(invite_to(h, C)) == 1 and len(invite_to(h, D)) == 1


def test_games_shows_invitations_both_ways_and_results(harness: Harness) -> None:
    h = harness
    lost = h.new_game(seed="lost")
    h.answer(A, "resign confirm")
    assert h.game_row(lost).status == "finished"
    h.new_game((BOB, (D, "Dave")), seed="bob")
    ask_sure(h, A, "challenge carol@example.net")
    ask_sure(h, B, "challenge alice@example.com")
    ask(h, A, "games")
    text = text_of(h.latest(A))
    assert "You invited carol@example.net" in text
    (invitation,) = [i for i in invitations(h) if i.invitee == A]
    assert "bob@example.org invited you" in text and invitation.token in text
    assert f"Game {lost} v Bob: you lost" in text
    assert "You have no game in progress" in text


def test_help_names_the_lobby_commands(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask(h, A, "help")
    msg = h.latest(A)
    text = text_of(msg)
    assert "challenge ADDR" in text and "withdraw your open invitations" in text
    html_part = msg.get_body(("html",))
    assert html_part is not None and "challenge ADDR" in html_part.get_content()


def test_the_lobby_setting_is_checked(tmp_path: Path) -> None:
    from pbem.config import Settings

    assert Settings(data_dir=tmp_path).lobby == "invite-only"
    with pytest.raises(ValueError, match="open, invite-only or closed"):
        Settings(data_dir=tmp_path, lobby="anyone")


@pytest.mark.parametrize("step", ["before-mark", "before-commit"])
def test_a_crash_on_the_last_accept_starts_the_game_once(harness: Harness, step: str) -> None:
    h = harness
    h.new_game()
    ask_sure(h, A, "challenge carol@example.net")
    (invite,) = invite_to(h, C)
    h.send(reply(invite, C, "Carol", "accept"))
    fired: list[str] = []

    def fault(at: str) -> None:
        if at == step and not fired:
            fired.append(at)
            raise InjectedFault(at)

    h.daemon.service.fault = fault
    with pytest.raises(InjectedFault):
        h.step()
    assert invitations(h)[0].status == "pending" and games_of(h, C) == []
    h.restart()
    h.step()
    assert h.last_inbound().status == "applied"
    assert len(games_of(h, C)) == 1 and invitations(h)[0].status == "accepted"
    assert h.count(C) == 2  # the invitation, then the game's first mail


def test_prose_that_starts_like_a_lobby_command_goes_to_the_game(harness: Harness) -> None:
    h = harness
    game_id = h.new_game()
    ask(h, A, "New to this, how do I play?")
    row = h.last_inbound()
    assert row.game_id == game_id  # routed to Alice's only game, as before the lobby
    assert "lobby" not in (row.reason or "")
    assert len(games_of(h, A)) == 1


def test_open_lobby_lets_a_stranger_challenge(open_lobby: Harness) -> None:
    h = open_lobby
    ask(h, STRANGER, "games")  # nothing to tell a stranger
    assert h.last_inbound().status == "ignored" and h.count(STRANGER) == 0
    ask(h, STRANGER, "challenge bob@example.org")
    # A stranger's From proves nothing: the invitation goes once they confirm it.
    assert h.last_inbound().status == "applied" and len(invite_to(h, B)) == 0
    (asking,) = h.received(STRANGER)
    assert "confirm" in about(asking).lower()
    h.deliver(reply(asking, STRANGER, "Mallory", "yes, that was me"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(invite_to(h, B)) == 1
    assert STRANGER in text_of(invite_to(h, B)[0])
    answer_invite(h, B, "yes")
    game_id = h.last_inbound().game_id
    assert game_id is not None
    assert [h.address_of(game_id, s) for s in range(2)] == [STRANGER, B]


def test_a_plus_tag_starts_the_game_for_the_player(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, match_plus_tags=True)
    try:
        h.new_game()
        ask(h, "alice+cards@example.com", "new")
        row = h.last_inbound()
        assert row.status == "applied" and row.game_id is not None
        assert h.address_of(row.game_id, 0) == A
        assert h.player("alice+cards@example.com") is None
    finally:
        h.close()
