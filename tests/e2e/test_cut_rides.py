"""The challenger's cut rides with the challenge, and a welcomed player's first game is
dealt from its first mail — the deal as verifiable as ever. A mail that shows a new
game's commitment before the game exists (the confirmation of a challenge, the answer to
a proven one, the welcome) logs it first (event ``offer``), and its answer is its
writer's cut: so the game is dealt the moment its last player has answered, and its
first mail holds everyone's cards. Through the daemon and real Maildirs, on both
databases."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from engine.commitlog import NO_GAME, check_game, check_log
from engine.dealkey import key_v3
from engine.fairness import PROTOCOL, commitment, text_hash
from pbem.demo.bots import text_of
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.store import models as m
from pbem.store.commitlog import entries
from tests.abuse.helpers import TRUSTED, passing, with_auth
from tests.e2e.helpers import (
    ALICE,
    BOB,
    SERVICE_ADDRESS,
    STRANGER,
    Harness,
    about,
    plain_mail,
    reply,
)

A, B = ALICE[0], BOB[0]


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


@pytest.fixture
def trusted(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """Every mail's From vouched for by the trusted server: a challenge needs no
    confirmation."""
    harness = Harness.build(
        tmp_path, db_url, db_engine, fair_deals=True, trusted_authserv_id=TRUSTED
    )
    yield harness
    harness.close()


def shown_commitment(msg: EmailMessage) -> str:
    """The deal commitment a mail shows (its hex may be wrapped)."""
    squeezed = re.sub(r"\s+", "", text_of(msg))
    found = re.search(r"Dealcommitment\(" + re.escape(PROTOCOL) + r"\):([0-9a-f]{64})", squeezed)
    assert found is not None, text_of(msg)
    return found.group(1)


def log_of(h: Harness) -> list[dict[str, object]]:
    with Session(h.db) as session:
        return entries(session)


def outbox_kinds(h: Harness, address: str) -> list[str]:
    with Session(h.db) as session:
        rows = session.exec(
            select(m.Outbox.kind).where(m.Outbox.recipient == address).order_by(col(m.Outbox.id))
        ).all()
    return list(rows)


def holds_cards(msg: EmailMessage) -> bool:
    """A game mail whose turn is the discard: the player's six cards are in it."""
    return "discard" in about(msg) and "Please cut" not in about(msg)


def dealt_from_cuts(h: Harness, game_id: int) -> list[str]:
    """The game's entropy texts by seat, after checking its seed is the key of its server
    seed and those cuts (`pbem-deal/3`)."""
    row = h.game_row(game_id)
    assert row.status == "active" and row.server_seed is not None
    texts = [str(e["text"]) for e in sorted(row.entropy or (), key=lambda e: int(e["seat"]))]
    pairs = [(seat, text_hash(t)) for seat, t in enumerate(texts)]
    players = int(row.settings.get("players", 2))
    assert row.seed == key_v3(row.server_seed, game_id, players, pairs)
    return texts


def offered_before_any_cut(h: Harness, game_id: int, shown: str) -> None:
    """The commitment ``shown`` entered the log as an offer before the game existed, the
    game's own entry follows, the chain holds and the game's archive agrees with it."""
    log = log_of(h)
    offers = [e for e in log if e["event"] == "offer" and e["commitment"] == shown]
    commits = [e for e in log if e["event"] == "commit" and e["game"] == game_id]
    assert len(offers) == 1 and offers[0]["game"] == NO_GAME
    assert len(commits) == 1 and commits[0]["commitment"] == shown
    assert int(str(offers[0]["seq"])) < int(str(commits[0]["seq"]))
    assert check_log(log).ok
    assert check_game(log, h.service.export(game_id)) == []


def test_a_confirmed_challenge_is_dealt_when_the_last_accepts(fair: Harness) -> None:
    """A From alone: the challenge's confirmation shows the game's commitment and its
    answer is Alice's cut; Bob's accept (his cut) deals — no "Please cut" to anyone."""
    h = fair
    h.new_game(seed="known")  # Alice plays already (the lobby is invite-only)
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "challenge bob@example.org to 61"))
    assert "held until" in (h.last_inbound().reason or "")
    request = h.latest(A)
    shown = shown_commitment(request)
    flat = " ".join(text_of(request).split())
    assert "your answer to this mail is your cut" in flat
    # Logged before anyone could answer it, and nothing of the seed anywhere yet.
    assert [e["event"] for e in log_of(h)][-1] == "offer"
    h.confirm(A, "yes 7 fish")
    sent = h.latest(A)
    assert "Invitations sent" in about(sent)
    (invite,) = [mail for mail in h.received(B) if about(mail) == INVITE_SUBJECT]
    assert shown_commitment(invite) == shown
    h.deliver(reply(invite, B, "Bob", "accept"))
    game_id = h.last_inbound().game_id
    assert game_id is not None, h.last_inbound().reason
    assert (
        h.game_row(game_id).commitment == shown == commitment(str(h.game_row(game_id).server_seed))
    )
    texts = dealt_from_cuts(h, game_id)
    assert texts[0].startswith("<") and texts[0].endswith(" 7 fish")
    # Her receipt came with "Invitations sent"; the game's first mails hold the cards.
    assert f"recorded as “{texts[0]}” (SHA-256 {text_hash(texts[0])})" in " ".join(
        text_of(sent).split()
    )
    for address in (A, B):
        first = h.latest(address)
        assert holds_cards(first), about(first)
        assert "Your cut is in" in text_of(first)
    assert "cut" not in outbox_kinds(h, A) and "cut" not in outbox_kinds(h, B)
    offered_before_any_cut(h, game_id, shown)


def proven(raw: bytes, address: str) -> bytes:
    return with_auth(raw, passing(address.split("@", 1)[1]))


def test_a_proven_challenge_asks_for_the_cut_in_its_answer(trusted: Harness) -> None:
    """No confirmation: "Invitations sent" shows the commitment with a one-click cut;
    Alice cuts while Bob has not answered, and his accept deals at once."""
    h = trusted
    h.new_game(seed="known")
    h.deliver(proven(plain_mail(A, SERVICE_ADDRESS, "challenge bob@example.org to 61"), A))
    assert "invited" in (h.last_inbound().reason or ""), h.last_inbound().reason
    sent = h.latest(A)
    shown = shown_commitment(sent)
    assert "mailto:" in str(sent.get_body(("html",)).get_content())  # type: ignore[union-attr]
    h.deliver(proven(reply(sent, A, "Alice", "cut 3 herons"), A))
    assert "kept with the invitations" in (h.last_inbound().reason or "")
    assert "Your cut is in" in text_of(h.latest(A))
    # A second answer: the first cut counts.
    h.deliver(proven(reply(sent, A, "Alice", "cut again"), A))
    assert h.last_inbound().status == "rejected"
    assert "your first cut counts" in text_of(h.latest(A))
    (invite,) = [mail for mail in h.received(B) if about(mail) == INVITE_SUBJECT]
    assert shown_commitment(invite) == shown
    h.deliver(proven(reply(invite, B, "Bob", "accept"), B))
    game_id = h.last_inbound().game_id
    assert game_id is not None, h.last_inbound().reason
    texts = dealt_from_cuts(h, game_id)
    assert texts[0].endswith(" 3 herons")
    assert holds_cards(h.latest(A)) and holds_cards(h.latest(B))
    offered_before_any_cut(h, game_id, shown)


def test_a_proven_challenger_may_cut_after_the_accept(trusted: Harness) -> None:
    """Bob accepts first: the game waits for Alice's cut, and her answer to the older
    "Invitations sent" mail is that cut — it deals."""
    h = trusted
    h.new_game(seed="known")
    h.deliver(proven(plain_mail(A, SERVICE_ADDRESS, "challenge bob@example.org to 61"), A))
    sent = h.latest(A)
    (invite,) = [mail for mail in h.received(B) if about(mail) == INVITE_SUBJECT]
    h.deliver(proven(reply(invite, B, "Bob", "accept"), B))
    game_id = h.last_inbound().game_id
    assert game_id is not None and h.game_row(game_id).status == "cutting"
    assert "Please cut" in about(h.latest(A))
    h.deliver(proven(reply(sent, A, "Alice", "cut 9 crows"), A))
    assert h.last_inbound().game_id == game_id, h.last_inbound().reason
    texts = dealt_from_cuts(h, game_id)
    assert texts[0].endswith(" 9 crows")
    assert holds_cards(h.latest(A)) and holds_cards(h.latest(B))
    offered_before_any_cut(h, game_id, shown_commitment(sent))


def test_a_cut_for_a_declined_challenge_is_answered(trusted: Harness) -> None:
    h = trusted
    h.new_game(seed="known")
    h.deliver(proven(plain_mail(A, SERVICE_ADDRESS, "challenge bob@example.org"), A))
    sent = h.latest(A)
    (invite,) = [mail for mail in h.received(B) if about(mail) == INVITE_SUBJECT]
    h.deliver(proven(reply(invite, B, "Bob", "decline"), B))
    h.deliver(proven(reply(sent, A, "Alice", "cut"), A))
    assert h.last_inbound().status == "rejected"
    assert "no game to cut for" in " ".join(text_of(h.latest(A)).split())


def test_a_welcomed_player_gets_cards_in_the_first_mail(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """The welcome shows a commitment; the reply "play computer" is the cut, so the
    game's first mail holds the cards (as a rematch's does)."""
    h = Harness.build(tmp_path, db_url, db_engine, fair_deals=True, lobby="open")
    try:
        h.deliver(plain_mail(STRANGER, SERVICE_ADDRESS, "Hello! How do I play?"))
        (welcome,) = h.received(STRANGER)
        shown = shown_commitment(welcome)
        h.deliver(reply(welcome, STRANGER, "Mallory", "play computer to 61"))
        game_id = h.last_inbound().game_id
        assert game_id is not None, h.last_inbound().reason
        texts = dealt_from_cuts(h, game_id)
        assert texts[0].endswith(" computer to 61")
        first = h.latest(STRANGER)
        assert holds_cards(first), about(first)
        assert f"recorded as “{texts[0]}”" in " ".join(text_of(first).split())
        assert h.game_row(game_id).commitment == shown
        offered_before_any_cut(h, game_id, shown)
        # Without the welcome (a mail that showed no commitment), the game asks first.
        h.deliver(plain_mail(STRANGER, SERVICE_ADDRESS, "play computer to 61"))
        cold = h.last_inbound().game_id
        assert cold is not None and h.game_row(cold).status == "cutting"
        assert "Please cut" in about(h.latest(STRANGER))
    finally:
        h.close()
