"""Whole games played by email: built-in mailbox players read their own Maildirs and reply
into the service's inbox, the daemon steps, until the game is over. Then the game is
exported, imported and verified by replay, and every mailbox is inspected: no duplicate,
every mail threaded and marked automatic, the right reply address, and never a card the
recipient may not see."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from email.message import EmailMessage

import pytest
from sqlmodel import Session, select

from engine import Game, action_from_json
from engine import Settings as GameSettings
from pbem.demo.bots import MailboxPlayer, maildir_delivery, maildir_fetch, text_of, view_of
from pbem.mail.tokens import parse_message_id
from pbem.store import models as m
from pbem.transport.maildir import recipient_folder_name
from tests.e2e.helpers import (
    DOMAIN,
    PEOPLE,
    Harness,
    assert_private_events_are_own,
    cli_env,
    hidden_from,
    run_cli,
    view_cards,
)

_CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9AJQK])([♣♦♥♠])")


def play_by_mail(
    h: Harness, game_id: int, level: str, max_steps: int = 3000
) -> list[MailboxPlayer]:
    deliver = maildir_delivery(h.inbox_dir)
    players = [
        MailboxPlayer(
            address,
            name,
            maildir_fetch(h.outbox_dir / recipient_folder_name(address)),
            deliver,
            random.Random(seat),
            level=level,
        )
        for seat, (address, name) in enumerate(PEOPLE[: h.game(game_id).players])
    ]
    for _ in range(max_steps):
        for player in players:
            player.play()
        h.step()
        if h.game_row(game_id).status == "finished":
            break
    else:
        raise AssertionError("the game did not finish")
    h.step()  # the last mails out
    for player in players:
        player.play()
    return players


def every_state(settings: GameSettings, seed: str, actions: list[dict[str, object]]) -> list[Game]:
    """The game after 0, 1, 2, … logged actions."""
    game = Game(settings, seed)
    states = [game.copy()]
    for data in actions:
        game.apply(action_from_json(data))
        states.append(game.copy())
    return states


def check_mailbox(
    h: Harness, game_id: int, seat: int, address: str, states: list[Game]
) -> list[EmailMessage]:
    """Every mail ``address`` got: unique, threaded, automatic, its own reply token, and
    no card hidden from it. Returns the mails."""
    token = h.token(game_id, seat)
    mails: list[EmailMessage] = h.received(address)
    ids = Counter(str(msg["Message-ID"]) for msg in mails)
    assert all(n == 1 for n in ids.values()), ids.most_common(3)
    with Session(h.db) as session:
        moved_by = list(
            session.exec(select(m.ActionLog.inbound_id).where(m.ActionLog.game_id == game_id))
        )
    for msg in mails:
        assert msg["Auto-Submitted"] == "auto-generated"
        assert msg["In-Reply-To"] and msg["References"]
        assert "<game-" in str(msg["References"])  # the whole game is one thread
        assert f"cribbage+{token}@{DOMAIN}" in str(msg["Reply-To"])
        ours = parse_message_id(str(msg["Message-ID"]), DOMAIN)
        assert ours is not None and ours.token == token and ours.game_id == game_id
        match = re.fullmatch(r"(a|i)(\d+)\.(turn|gameover|error)", ours.seq)
        assert match, f"an unexpected mail: {ours.seq}"
        if match.group(1) == "a":  # a turn mail: the state after that many actions
            n = int(match.group(2))
        else:  # a refusal of inbound mail i: the state when it was processed
            n = sum(1 for i in moved_by if i is None or i < int(match.group(2)))
        state = states[n]
        view = view_of(msg)
        assert view is not None and view.seat == seat
        assert_private_events_are_own(view)
        hidden = hidden_from(state, seat, view.events)
        leaked = view_cards(view) & hidden
        assert not leaked, f"mail {ours.seq} to seat {seat} shows {leaked} in view.json"
        text_cards = {c for c in state_cards(text_of(msg))}
        assert not {str(c) for c in hidden} & text_cards, f"mail {ours.seq} text leaks"
    return mails


def state_cards(text: str) -> set[str]:
    return {rank + suit for rank, suit in _CARD.findall(text)}


GAMES = [
    pytest.param(2, False, "good", id="2p"),
    pytest.param(3, True, "random", id="3p-muggins"),
    pytest.param(4, False, "random", id="4p"),
]


@pytest.mark.parametrize(("players", "muggins", "level"), GAMES)
def test_a_whole_game_by_email(
    harness: Harness, db_url: str, players: int, muggins: bool, level: str
) -> None:
    h = harness
    game_id = h.service.new_game(
        list(PEOPLE[:players]), target=61, muggins=muggins, seed=f"whole-{players}"
    )
    bots = play_by_mail(h, game_id, level)

    row = h.game_row(game_id)
    assert row.status == "finished" and row.outcome is not None
    assert max(row.outcome["scores"]) >= 61
    # Every reply moved, except an answer to a muggins window that another opponent had
    # closed first (both may answer at once; the later one is refused, and told so).
    refused = [r for r in h.inbound() if r.status != "applied"]
    for r in refused:
        assert muggins and r.status == "rejected", (r.status, r.reason)
        assert re.match(r"(muggins|accept): cannot", r.reason or ""), r.reason
    assert len(refused) <= 3
    assert {r.status for r in h.outbox()} == {"sent"}
    assert sum(b.replies for b in bots) == len(h.inbound())
    assert sum(b.replies for b in bots) > 20
    log = h.log(game_id)
    assert [seq for seq, *_ in log] == list(range(len(log)))
    actions = [a for _, _, a, _ in log]
    if muggins:
        kinds = {a["type"] for a in actions}
        assert {"claim", "accept"} <= kinds or {"claim", "muggins"} <= kinds

    assert row.seed is not None
    states = every_state(GameSettings.from_json(row.settings), row.seed, actions)
    total = 0
    for seat, (address, _) in enumerate(PEOPLE[:players]):
        mails = check_mailbox(h, game_id, seat, address, states)
        total += len(mails)
        last = view_of(mails[-1])
        assert last is not None and last.outcome is not None
    assert total == len(h.outbox())

    # Export, import, verify the copy by replay.
    env = cli_env(h.tmp_path, db_url)
    archive = h.tmp_path / "game.json"
    exported = run_cli(env, "game", "export", str(game_id), "--output", str(archive))
    assert exported.exit_code == 0, exported.output
    data = json.loads(archive.read_text(encoding="utf-8"))
    assert len(data["actions"]) == len(log)
    imported = run_cli(env, "game", "import", str(archive), "--again")
    assert imported.exit_code == 0, imported.output
    copy_id = int(re.search(r"imported as game (\d+)", imported.stdout).group(1))  # type: ignore[union-attr]
    assert copy_id != game_id
    for which in (game_id, copy_id):
        verified = run_cli(env, "game", "replay", str(which), "--verify")
        assert verified.exit_code == 0, verified.output
        assert f"verified: {len(log)} steps replay exactly" in verified.stdout
    copy = h.game_row(copy_id)
    assert copy.status == "finished" and copy.state_hash == row.state_hash
    assert copy.outcome == row.outcome
