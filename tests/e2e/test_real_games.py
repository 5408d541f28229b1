"""Whole games through the real mail servers, as production runs: the service reads its own
Dovecot mailbox over IMAP with IDLE and sends through Postfix over SMTP; every player is a
Dovecot user whose mail client reads its INBOX over IMAP and replies over SMTP to the
service's ``local+TOKEN`` address, quoting the mail it answers.

Afterwards each game is over and replays from its export, and every player's mailbox is
clean: no Message-ID twice, every mail threaded on the game, marked automatic, and carrying
that player's own reply address."""

from __future__ import annotations

import imaplib
from collections import Counter

import pytest

from engine.archive import load
from pbem.demo.bots import ImapFetch, MailboxPlayer, view_of
from pbem.mail.tokens import parse_message_id
from tests.e2e.helpers import cli_env, run_cli
from tests.fixtures.realmail import POSTGRES_ONLY, SQLITE_ONLY, RealMail, RealPlayer, parse


def check_mailboxes(real: RealMail, game_id: int, players: list[RealPlayer]) -> None:
    """Every player's mailbox: the game's mails only, each once, threaded, automatic,
    with the player's own reply token."""
    tokens = real.tokens(game_id)
    thread = f"<{real.game_row(game_id).thread_id}>"
    domain = real.settings.domain
    # Postfix may deliver two mails sent together in either order: read them in the
    # order the service queued them.
    queued = {row.message_id: row.id or 0 for row in real.outbox()}
    for player in players:
        mails = player.mailbox()
        assert all(str(msg["Message-ID"]) in queued for msg in mails)
        mails.sort(key=lambda msg: queued[str(msg["Message-ID"])])
        assert mails, f"{player.address} received nothing"
        ids = Counter(str(msg["Message-ID"]) for msg in mails)
        assert [i for i, n in ids.items() if n > 1] == [], f"duplicates for {player.address}"
        token = tokens[player.address]
        own = f"{real.local_part}+{token}@{domain}"
        previous: str | None = None
        for msg in mails:
            assert msg["Auto-Submitted"] == "auto-generated"
            assert str(msg["Reply-To"]).endswith(own) or own in str(msg["Reply-To"])
            assert str(msg["To"]).endswith(f"<{player.address}>") or player.address in str(
                msg["To"]
            )
            parsed = parse_message_id(str(msg["Message-ID"]), domain)
            assert parsed is not None and parsed.token == token
            references = str(msg["References"]).split()
            assert references[0] == thread
            in_reply_to = str(msg["In-Reply-To"])
            assert in_reply_to in references
            if previous is not None:
                # each mail answers the one before it to the same player
                assert in_reply_to == previous
            previous = str(msg["Message-ID"])
        assert all(row.status == "sent" for row in real.outbox())


def check_replays(real: RealMail, game_id: int) -> None:
    archive = real.service.export(game_id)
    game = load(archive)  # replays every action and checks the state hash
    assert game.is_over
    assert game.state_hash() == real.game(game_id).state_hash()
    row = real.game_row(game_id)
    assert row.status == "finished" and row.outcome is not None


def check_inbound(real: RealMail) -> None:
    rows = real.inbound()
    assert rows and all(r.status in ("applied", "rejected") for r in rows), [
        (r.status, r.reason) for r in rows if r.status not in ("applied", "rejected")
    ]
    assert sum(r.status == "applied" for r in rows) >= len(rows) // 2


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("players", "muggins"),
    [
        pytest.param(2, False, id="2p"),
        pytest.param(3, True, id="3p-muggins"),
        pytest.param(4, False, id="4p"),
    ],
)
def test_whole_game_over_imap_idle_and_smtp(
    realmail: RealMail, players: int, muggins: bool
) -> None:
    names = ["Alice", "Bob", "Carol", "Dave"][:players]
    people = [realmail.player(name.lower(), name) for name in names]
    game_id = realmail.new_game(people, target=61, muggins=muggins, seed=f"real-{players}")
    game = realmail.play(game_id)
    assert game.is_over
    check_replays(realmail, game_id)
    check_mailboxes(realmail, game_id, people)
    check_inbound(realmail)
    env = cli_env(realmail.settings.data_dir, realmail.settings.db_url)
    result = run_cli(env, "game", "replay", str(game_id), "--verify")
    assert result.exit_code == 0, result.output
    assert "verified:" in result.output


@POSTGRES_ONLY
def test_whole_game_on_postgresql(realmail: RealMail) -> None:
    people = [realmail.player("ann", "Ann"), realmail.player("ben", "Ben")]
    game_id = realmail.new_game(people, target=61, seed="real-pg")
    realmail.play(game_id)
    check_replays(realmail, game_id)
    check_mailboxes(realmail, game_id, people)
    check_inbound(realmail)


def test_the_newest_of_mails_read_out_of_order_is_answered(realmail: RealMail) -> None:
    """Postfix may deliver two game mails in the other order. Of ``your turn: discard``,
    ``waiting for …`` and ``your turn: play`` read in one fetch as discard, play, waiting,
    the player answers the play: the last of the thread, though not the last to arrive."""
    real = realmail
    alice, bob = real.player("alice", "Alice"), real.player("bob", "Bob")
    real.new_game([alice, bob], seed="out-of-order")
    real.settle()
    view = view_of(alice.latest_game_mail())
    assert view is not None
    leader, other = (bob, alice) if view.dealer == 0 else (alice, bob)
    # A mail after every move, so that the leader's own discard brings "waiting for …".
    leader.send(leader.reply("mail all"))
    real.until_processed(1)
    real.settle()
    deal = leader.latest_game_mail()  # the answer: the view again, "your turn: discard"
    leader.send(leader.reply(leader.legal_command()))
    real.until_processed(2)
    real.settle()
    waiting = leader.latest_game_mail()
    other.send(other.reply(other.legal_command()))
    real.until_processed(3)
    real.settle()
    play = leader.latest_game_mail()
    states = [view_of(m) for m in (deal, waiting, play)]
    assert [(v.phase, v.my_turn) for v in states if v] == [
        ("discard", True),
        ("discard", False),
        ("pegging", True),
    ]
    assert play["In-Reply-To"] == waiting["Message-ID"]

    # The three, copied into a folder in the order deal, play, waiting (new UIDs).
    with imaplib.IMAP4(real.stack.imap_host, real.stack.imap_port) as client:
        client.login(leader.address, leader.password)
        client.create("Reordered")
        client.select("INBOX")
        for msg in (deal, play, waiting):
            wanted = f'"{msg["Message-ID"]}"'
            _, found = client.uid("SEARCH", "HEADER", "Message-ID", wanted)
            [uid] = found[0].split()
            assert client.uid("COPY", uid, "Reordered")[0] == "OK"
    sent: list[bytes] = []
    reader = ImapFetch(
        real.stack.imap_host, real.stack.imap_port, leader.address, leader.password, "Reordered"
    )
    try:
        bot = MailboxPlayer(leader.address, leader.name, reader, sent.append)
        assert [m["Message-ID"] for m in bot.play()] == [
            m["Message-ID"] for m in (deal, play, waiting)
        ]
    finally:
        reader.close()
    [answer] = sent
    assert parse(answer)["In-Reply-To"] == play["Message-ID"]
