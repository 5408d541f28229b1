"""Forged cuts: a stranger who learned a seat's reply address, a mail whose From the
trusted provider did not vouch for, or a From alone for a seat not joined, cannot cut
for the seat. Nobody is mailed and the seat still waits for its cut; each forged cut
that reached its game is on the game's record (the archive's ``deal_proof.cuts``),
refused with its reason (a mail the provider did not vouch for is not even read)."""

from __future__ import annotations

from tests.abuse.conftest import Build
from tests.abuse.helpers import TRUSTED, forged, games_of_mailbox, mails_to, passing, with_auth
from tests.e2e.helpers import ALICE, BOB, reply


def test_forged_cuts_are_refused_on_the_record_and_mail_nobody(build: Build) -> None:
    h = build(trusted_authserv_id=TRUSTED, fair_deals=True)
    game_id = h.service.new_game([ALICE, BOB], target=61)
    h.step()
    alice_mail = h.latest(ALICE[0])
    before = {a: mails_to(h, a) for a in (ALICE[0], BOB[0], "mallory@attacker.test")}
    # A stranger answers Alice's mail: its reply address is her seat's.
    h.deliver(
        with_auth(
            reply(alice_mail, "mallory@attacker.test", "Mallory", "cut 1", message_id="<m@x>"),
            passing("attacker.test"),
        )
    )
    assert h.last_inbound().status == "ignored"
    # A mail claiming to be Alice's, which the trusted provider did not vouch for.
    h.deliver(with_auth(reply(alice_mail, ALICE[0], "Alice", "cut 2", message_id="<f@x>")))
    assert h.last_inbound().status == "rejected"  # not answered: its From may be forged
    # A forged cut without the token is no cut of any game.
    h.deliver(forged(ALICE[0], "cut 3"))
    assert {a: mails_to(h, a) for a in before} == before
    row = h.game_row(game_id)
    assert row.status == "cutting" and not row.entropy
    cuts = h.service.export(game_id)["deal_proof"]["cuts"]
    # The stranger's cut is on the record; the unvouched mail was never read (no game
    # was looked up for it), so it is no cut the game received.
    assert [(c["seat"], c["message_id"], c["accepted"], c["reason"]) for c in cuts] == [
        (0, "<m@x>", False, "not from the seat's player"),
    ]
    # Alice's own cut, vouched for, is taken and answered.
    h.deliver(
        with_auth(
            reply(alice_mail, ALICE[0], "Alice", "cut 4", message_id="<a@x>"),
            passing("example.com"),
        )
    )
    assert h.last_inbound().status == "applied"
    assert h.game_row(game_id).entropy == [{"seat": 0, "text": "<a@x> 4"}]
    assert mails_to(h, ALICE[0]) == before[ALICE[0]] + 1


def test_a_forged_cut_for_a_seat_not_joined_is_refused_on_the_record(build: Build) -> None:
    # The open lobby starts a game in anyone's name; its seat joins only by its token.
    h = build(lobby="open", fair_deals=True)
    victim = "victim@example.com"
    h.deliver(forged(victim, "play computer"))
    (game,) = games_of_mailbox(h, victim)
    assert game.id is not None and game.status == "cutting"
    sent = mails_to(h, victim)
    h.deliver(forged(victim, "cut 5"))  # no token: a From alone
    assert h.last_inbound().status == "ignored"
    assert mails_to(h, victim) == sent
    assert not h.game_row(game.id).entropy
    (cut,) = h.service.export(game.id)["deal_proof"]["cuts"]
    assert (cut["seat"], cut["accepted"]) == (0, False)
    assert cut["reason"].startswith("move refused: the seat's player has not yet answered")
