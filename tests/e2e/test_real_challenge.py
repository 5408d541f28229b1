"""A game started by mail and played by mail through the real servers: Alice's mail
client sends ``challenge bob@…`` over SMTP (Postfix) to the service's plain address; the
service reads it over IMAP (Dovecot), invites Bob, Bob's client answers the invitation
with ``accept``, the game starts, both players agree to ``observers on``, Carol asks to
``watch`` it, and the whole game (to 61) is played over IMAP and SMTP, Carol getting the
public board after the moves and never a hidden card's mail part (no ``view.json``)."""

from __future__ import annotations

from email.message import EmailMessage

from pbem.demo.bots import quoted_reply, text_of, view_of
from pbem.service import utcnow
from tests.e2e.helpers import about, plain_mail
from tests.e2e.test_real_games import check_inbound, check_replays
from tests.fixtures.realmail import SQLITE_ONLY, RealMail, RealMailFactory, RealPlayer


def newest(player: RealPlayer, words: str) -> EmailMessage:
    found = [msg for msg in player.mailbox() if words in about(msg)]
    assert found, f"{player.address}: no mail about {words!r}"
    return found[-1]


def wait_for_mail(real: RealMail, player: RealPlayer, words: str) -> EmailMessage:
    real.run_until(
        lambda: any(words in about(msg) for msg in player.mailbox()),
        players=[],
        timeout=30,
    )
    return newest(player, words)


@SQLITE_ONLY
def test_a_challenge_accepted_and_played_over_imap_and_smtp(
    realmail_factory: RealMailFactory,
) -> None:
    real = realmail_factory(lobby="open")
    alice, bob = real.player("alice", "Alice"), real.player("bob", "Bob")
    carol = real.player("carol", "Carol")
    alice.send(plain_mail(alice.address, real.address, f"challenge {bob.address} to 61"))
    # Alice never wrote before: she confirms her address, then the invitation goes.
    asking = wait_for_mail(real, alice, "Please confirm")
    alice.send(quoted_reply(asking, alice.address, alice.name, "yes", utcnow()))
    invitation = wait_for_mail(real, bob, "An invitation to a game")
    assert "Alice" not in about(invitation)  # a subject names no one
    assert f"{real.local_part}+" in str(invitation["Reply-To"])
    assert view_of(invitation) is None  # an invitation shows no game yet
    bob.send(quoted_reply(invitation, bob.address, bob.name, "accept", utcnow()))
    real.until_processed(3)
    [row] = [r for r in real.inbound() if r.game_id is not None]
    game_id = row.game_id
    assert game_id is not None and real.game_row(game_id).observers is False
    real.settle()
    # Both players open the game to observers (a challenge starts closed).
    for player in (alice, bob):
        player.send(player.reply("observers on"))
    real.until_processed(5)
    assert real.game_row(game_id).observers is True
    carol.send(plain_mail(carol.address, real.address, f"watch {game_id}"))
    # Anyone can write any From: Carol confirms she asked to watch.
    asked = wait_for_mail(real, carol, "Please confirm")
    carol.send(quoted_reply(asked, carol.address, carol.name, "yes", utcnow()))
    first = wait_for_mail(real, carol, "Watching")
    assert f"unwatch {game_id}" in text_of(first)
    real.play(game_id, timeout=120)
    check_replays(real, game_id)
    check_inbound(real)
    watched = [msg for msg in carol.mailbox() if "Watching" in about(msg)]
    assert len(watched) > 5
    assert all(view_of(msg) is None for msg in watched)
    assert "Game over" in about(watched[-1])
    tokens = real.tokens(game_id)
    for msg in watched:
        # The plain address to reply to: an observer has no seat and no token.
        assert not any(token in str(msg["Reply-To"]) for token in tokens.values())
