"""Machines are never answered, through the real Postfix and Dovecot: a bounce Postfix
returns for a player address that does not exist, a player's out-of-office replies, and
mail that would start a loop (our own header, our own address)."""

from __future__ import annotations

import secrets

from pbem.demo.bots import view_of
from tests.e2e.helpers import cli_env, run_cli
from tests.fixtures.mailstack import send_raw
from tests.fixtures.realmail import RealMail, RealPlayer


def started(real: RealMail) -> tuple[int, RealPlayer, RealPlayer]:
    """A two-player game whose first mails have reached both players."""
    alice, bob = real.player("alice", "Alice"), real.player("bob", "Bob")
    game_id = real.new_game([alice, bob], seed="machines")
    real.settle()  # the deal reaches both
    return game_id, alice, bob


def test_a_bounce_is_recorded_on_the_player_and_never_answered(realmail: RealMail) -> None:
    real = realmail
    alice = real.player("alice", "Alice")
    ghost = f"ghost-{secrets.token_hex(4)}@{real.bounce_domain}"
    game_id = real.service.new_game([(alice.address, "Alice"), (ghost, "Ghost")], target=61)
    real.step()  # Postfix takes both mails; the ghost's comes back as a DSN to our address

    [row] = real.until_processed(1)
    reason = row.reason or ""
    assert row.status == "ignored", reason
    assert reason.startswith("bounce: delivery status notification"), reason
    assert f"recorded on player {ghost}" in reason
    assert row.sender is not None and row.sender.startswith("mailer-daemon@")
    [dsn] = real.own_mailbox()
    assert dsn["Return-Path"] == "<>" and dsn.get_content_type() == "multipart/report"

    player = real.player_row(ghost)
    assert player is not None and player.bounce_count == 1
    assert player.last_bounce_reason and "delivery status notification" in player.last_bounce_reason
    assert real.player_row(alice.address).bounce_count == 0  # type: ignore[union-attr]

    # Nothing went back to the mailer daemon, nor anywhere else. The bounce fails the
    # ghost's turn mail for good: the game waits for them, and Alice is told so.
    assert {r.recipient for r in real.outbox()} == {alice.address, ghost}
    assert {r.status for r in real.outbox() if r.recipient == ghost} == {"failed"}
    to_alice = [r for r in real.outbox() if r.recipient == alice.address]
    assert len(to_alice) == 2 and {r.status for r in to_alice} == {"sent"}
    real.assert_quiet(1.0)
    assert real.own_flags() == [{"\\Seen"}]
    assert real.game_row(game_id).status == "active"

    result = run_cli(cli_env(real.settings.data_dir, real.settings.db_url), "players")
    assert result.exit_code == 0, result.output
    [line] = [ln for ln in result.stdout.splitlines() if ghost in ln]
    assert " 1 " in line and "delivery status" in line


def test_out_of_office_replies_are_ignored(realmail: RealMail) -> None:
    real = realmail
    game_id, alice, bob = started(real)
    moves = len(real.game(game_id).actions)
    mails = len(alice.mailbox()), len(bob.mailbox())
    # Each carries the reply token and a legal move: a machine's word still is not a move.
    move = alice.legal_command()
    alice.send(
        alice.reply(
            f"{move}\n\nI am away until Monday.", headers=[("Auto-Submitted", "auto-replied")]
        )
    )
    alice.send(
        alice.reply(
            f"{move}\n\nI am out of the office.",
            subject="Out of Office: back on Monday",
            headers=[("X-Autoreply", "yes")],
        )
    )
    rows = real.until_processed(2)
    assert [r.status for r in rows] == ["ignored", "ignored"]
    reasons = sorted(r.reason or "" for r in rows)
    assert reasons[0].startswith("auto_reply: Auto-Submitted: auto-replied"), reasons
    assert reasons[1].startswith("auto_reply: X-Autoreply header"), reasons
    real.assert_quiet(1.0)
    assert len(real.game(game_id).actions) == moves
    assert (len(alice.mailbox()), len(bob.mailbox())) == mails
    assert real.own_flags() == [{"\\Seen"}, {"\\Seen"}]


def test_loops_are_ignored(realmail: RealMail) -> None:
    real = realmail
    game_id, alice, _ = started(real)
    moves = len(real.game(game_id).actions)
    mails = len(alice.mailbox())
    move = alice.legal_command()
    # A player's reply that carries our own loop header (a forwarder copied it back).
    alice.send(alice.reply(move, headers=[("X-PBEM-Loop", real.settings.loop_value)]))
    # Our own mail, from our own address, back to our reply address.
    ours = alice.latest_game_mail()
    reply_to = ours["Reply-To"].addresses[0].addr_spec
    raw = alice.reply(move)
    own = raw.replace(
        f"From: Alice <{alice.address}>".encode(), f"From: <{real.address}>".encode(), 1
    )
    assert own != raw
    send_raw(real.stack, real.address, [reply_to], own)
    rows = real.until_processed(2)
    assert [r.status for r in rows] == ["ignored", "ignored"]
    reasons = sorted(r.reason or "" for r in rows)
    assert reasons[0].startswith("loop: carries our X-PBEM-Loop header"), reasons
    assert reasons[1].startswith(f"loop: sent from our own address {real.address}"), reasons
    real.assert_quiet(1.0)
    assert len(real.game(game_id).actions) == moves
    assert len(alice.mailbox()) == mails
    assert view_of(alice.latest_game_mail()) is not None


def test_an_address_postfix_refuses_is_recorded_as_a_bounce(realmail: RealMail) -> None:
    """A player address that does not exist at the test domain: Postfix refuses it at
    RCPT TO (550 5.1.1), so no DSN will come. The refusal is the bounce: recorded on the
    player, the mail kept as failed, and nothing else sent."""
    real = realmail
    alice = real.player("alice", "Alice")
    ghost = f"ghost-{secrets.token_hex(4)}@{real.settings.domain}"
    real.service.new_game([(alice.address, "Alice"), (ghost, "Ghost")], target=61)
    real.step()
    outbox = {r.recipient: r for r in real.outbox()}
    assert outbox[alice.address].status == "sent"
    refused = outbox[ghost]
    assert refused.status == "failed"
    assert (refused.last_error or "").startswith("recipient refused: 550 5.1.1")

    player = real.player_row(ghost)
    assert player is not None and player.bounce_count == 1
    assert "550 5.1.1" in (player.last_bounce_reason or "")
    assert real.player_row(alice.address).bounce_count == 0  # type: ignore[union-attr]
    real.assert_quiet(1.0)
    assert real.inbound() == []  # no DSN: Postfix never took the mail

    result = run_cli(cli_env(real.settings.data_dir, real.settings.db_url), "players")
    [line] = [ln for ln in result.stdout.splitlines() if ghost in ln]
    assert " 1 " in line and "550" in line
