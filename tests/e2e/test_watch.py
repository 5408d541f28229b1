"""Observers by mail, through the daemon, real Maildirs and both databases: ``watch`` /
``unwatch``, ``observers on|off`` (all human players agree to on, any one turns it off),
the limits, ``stop``, and an observer's move refused. Every observer mail is checked for
hidden cards against the engine's state."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import Card, Game, computer, parse_card
from pbem.demo.bots import command_for, text_of, view_of
from pbem.render import Said
from pbem.service import Service
from pbem.service.send.watchers import relay_talk
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.transport.maildir import recipient_folder_name
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    DOMAIN,
    Harness,
    about,
    cli_env,
    hidden_from,
    parse,
    plain_mail,
    reply,
    run_cli,
    view_cards,
)

A, B, C, D = ALICE[0], BOB[0], CAROL[0], DAVE[0]
SERVICE = f"cribbage@{DOMAIN}"
CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


@pytest.fixture
def open_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="open")
    yield harness
    harness.close()


def flat(text: str) -> str:
    return " ".join(text.split())


def ask(h: Harness, sender: str, body: str) -> None:
    """``sender`` writes ``body`` to the plain address; a watch the policy holds for the
    sender's confirmation (`pbem.service.policy`: always for ``watch``) is confirmed by
    replying to the request, as its reader would."""
    before = h.count(sender)
    h.deliver(plain_mail(sender, SERVICE, body))
    new = h.new_mail(sender, before)
    if new and "Please confirm your request" in str(new[-1]["Subject"]):
        h.deliver(reply(new[-1], sender, sender.split("@")[0].title(), "yes"))


def html_of(msg: EmailMessage) -> str:
    """The HTML part, its one-click links' addresses percent-decoded: a card written in
    a link is found as written, and "%5D" (a "]" of the subject) is not taken for 5♦."""
    part = msg.get_body(("html",))
    html = str(part.get_content()) if part is not None else ""
    return re.sub(r'href="(mailto:[^"]*)"', lambda m: f'href="{unquote(m.group(1))}"', html)


def spellings(card: Card) -> list[str]:
    return [str(card), card.ascii]


def observer_hidden(game: Game, since: int) -> set[Card]:
    """Cards nobody watching may know now: the pack, the crib, every hand — less what
    was made public this hand (played, turned, shown) and the public events from
    ``since`` (what the mail tells: a past hand's show names cards dealt again since)."""
    state = game.state_json()
    hidden = {parse_card(c) for c in state["pack"]} | {parse_card(c) for c in state["crib"]}
    for seat in range(game.players):
        hidden |= set(game.holding(seat)) | set(game.kept(seat)) | set(game.laid_away(seat))
    public = {c for _, c, _ in game.plays} | set(game.showing())
    if game.starter is not None:
        public.add(game.starter)
    for e in game.events:
        if e.private_to is None and e.hand == game.hand_no:
            public |= set(e.cards) | {c for i in e.items for c in i.cards}
    starters = {e.hand: e.cards for e in game.events if e.kind == "starter"}
    for e in game.events[since:]:
        if e.private_to is None:
            public |= set(e.cards) | {c for i in e.items for c in i.cards}
            public |= set(starters.get(e.hand, ()))
    return hidden - public


def assert_no_hidden(msg: EmailMessage, game: Game, since: int) -> None:
    """Neither part of an observer mail names a card hidden now, in any spelling; the
    news it tells stays within the current hand."""
    text, html = text_of(msg), html_of(msg)
    for card in observer_hidden(game, since):
        for spelling in spellings(card):
            pattern = rf"(?<![0-9A-Za-z]){re.escape(spelling)}(?![0-9A-Za-z])"
            assert not re.search(pattern, text), f"{card} hidden but in the text:\n{text}"
            assert not re.search(pattern, html), f"{card} hidden but in the HTML"
    assert not [p for p in msg.walk() if p.get_filename()], "an observer mail has no attachment"


def computer_game(h: Harness) -> int:
    game_id = h.service.new_game([ALICE, ("computer@pbem.test", "Computer")], computer=[1])
    h.step()
    return game_id


def watchers(h: Harness, game_id: int) -> list[str]:
    with Session(h.db) as session:
        rows = session.exec(
            select(m.Player.email)
            .join(m.Watcher, m.Watcher.player_id == m.Player.id)  # type: ignore[arg-type]
            .where(m.Watcher.game_id == game_id)
        ).all()
        return list(rows)


def test_watch_a_computer_game_then_unwatch(open_lobby: Harness) -> None:
    h = open_lobby
    game_id = computer_game(h)
    assert h.game_row(game_id).observers is True
    ask(h, C, f"watch {game_id}")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert watchers(h, game_id) == [C]
    first = h.latest(C)
    assert "Watching" in about(first) and SERVICE in str(first["Reply-To"])
    assert "unwatch" in str(first["List-Unsubscribe"])
    assert "You are watching game" in flat(text_of(first))
    assert_no_hidden(first, h.game(game_id), len(h.game(game_id).events))
    rng = random.Random(3)
    for _ in range(12):
        game = h.game(game_id)
        if game.is_over:
            break
        before, since = h.count(C), len(game.events)
        seat = game.to_act()[0]
        h.move(game_id, computer.choose_action(game, seat, rng))
        assert h.last_inbound().status == "applied", h.last_inbound().reason
        assert h.count(C) == before + 1  # the public board after every move
        new = h.latest(C)
        assert str(new["In-Reply-To"]).strip("<>") in {
            str(x["Message-ID"]).strip("<>") for x in h.received(C)
        }
        assert_no_hidden(new, h.game(game_id), since)
    ask(h, C, "play 7c")
    row = h.last_inbound()
    assert row.status == "rejected" and "observer" in (row.reason or "")
    assert "Observers cannot move" in about(h.latest(C))
    ask(h, C, f"unwatch {game_id}")
    assert watchers(h, game_id) == []
    before = h.count(C)
    game = h.game(game_id)
    if not game.is_over:
        h.move(game_id, computer.choose_action(game, game.to_act()[0], rng))
        assert h.count(C) == before


def test_a_human_game_opens_only_when_all_agree_and_any_player_closes_it(
    open_lobby: Harness,
) -> None:
    h = open_lobby
    game_id = h.new_game()
    assert h.game_row(game_id).observers is False
    ask(h, C, f"watch {game_id}")
    assert h.last_inbound().status == "rejected"
    assert "cannot be watched" in flat(text_of(h.latest(C)))
    h.answer(A, "observers on")
    assert h.game_row(game_id).observers is False
    assert "when Bob agrees too" in flat(text_of(h.latest(A)))
    h.answer(B, "observers on")
    assert h.game_row(game_id).observers is True
    ask(h, C, f"watch {game_id}")
    assert watchers(h, game_id) == [C]
    ask(h, A, f"watch {game_id}")  # a player does not watch their own game
    assert "You play in game" in flat(text_of(h.latest(A)))
    before = h.count(C)
    h.answer(B, "observers off")
    assert h.game_row(game_id).observers is False and watchers(h, game_id) == []
    told = h.new_mail(C, before)
    assert len(told) == 1 and "closed game" in flat(text_of(told[0]))
    # Back on needs both again.
    h.answer(A, "observers on")
    assert h.game_row(game_id).observers is False


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_two_workers_keep_the_observers_limit(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """Two watches for one game taken by two workers at once: the game's row is locked
    before the watchers are counted, so the second sees the first. (A watch is done
    when its sender confirms it: the two confirmations are what the workers race on.)"""
    h = Harness.build(tmp_path, db_url, db_engine, lobby="open", max_observers_per_game=1)
    try:
        one = computer_game(h)
        for who in (C, D):
            h.deliver(plain_mail(who, SERVICE, f"watch {one}"))
            assert "Please confirm your request" in about(h.latest(who))
        workers = [Service(h.settings, h.db, clock=h.clock) for _ in range(2)]
        ids = [
            workers[0].receive(reply(h.latest(who), who, who.split("@")[0], "yes"), "test")[0]
            for who in (C, D)
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
        assert len(watchers(h, one)) == 1
    finally:
        h.close()


def test_limits_stop_and_strangers(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(
        tmp_path, db_url, db_engine, lobby="open", max_observers_per_game=1, max_watched_games=1
    )
    try:
        one, two = computer_game(h), computer_game(h)
        ask(h, C, f"watch {one}")
        ask(h, D, f"watch {one}")
        assert "as many observers as it may" in flat(text_of(h.latest(D)))
        ask(h, C, f"watch {two}")
        assert "as many as one may" in flat(text_of(h.latest(C)))
        assert watchers(h, one) == [C] and watchers(h, two) == []
        ask(h, C, "stop")
        before = h.count(C)
        game = h.game(one)
        h.move(one, computer.choose_action(game, game.to_act()[0], random.Random(1)))
        assert h.count(C) == before  # "stop" holds for observer mail too
        ask(h, D, "watch 999")
        assert "cannot be watched" in flat(text_of(h.latest(D)))
    finally:
        h.close()


def test_invite_only_lobby_ignores_a_stranger_who_asks_to_watch(harness: Harness) -> None:
    h = harness
    game_id = computer_game(h)
    before = h.count(C)
    ask(h, C, f"watch {game_id}")
    assert h.last_inbound().status == "ignored"
    assert h.count(C) == before and watchers(h, game_id) == []


def test_game_show_lists_the_observers(open_lobby: Harness) -> None:
    h = open_lobby
    game_id = computer_game(h)
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    shown = run_cli(env, "game", "show", str(game_id))
    assert shown.exit_code == 0, shown.output
    assert "open to observers; 0 watching" in shown.output
    ask(h, C, f"watch {game_id}")
    ask(h, D, f"watch {game_id}")
    shown = run_cli(env, "game", "show", str(game_id))
    assert f"open to observers; 2 watching: {C}, {D}" in flat(shown.output)
    human = h.new_game([ALICE, BOB])
    shown = run_cli(env, "game", "show", str(human))
    assert "closed to observers; 0 watching" in shown.output


def test_unwatch_when_not_watching_a_stopped_watcher_and_a_finished_game(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    # Carol and Dave ask more From-only requests today than the daily cap of answers to
    # them allows (every one asks a confirmation first); the cap is not this test's subject.
    h = Harness.build(tmp_path, db_url, db_engine, lobby="open", max_unproven_answers_per_day=10)
    try:
        check_unwatch_when_not_watching(h)
    finally:
        h.close()


def check_unwatch_when_not_watching(h: Harness) -> None:
    game_id = computer_game(h)
    before = h.count(C)
    ask(h, C, f"unwatch {game_id}")
    # A From alone earns one confirmation request, no more; once confirmed, a stranger's
    # "unwatch" is not answered.
    row = h.last_inbound()
    assert row.status == "ignored" and "unknown sender" in (row.reason or ""), row.reason
    assert [about(msg) for msg in h.new_mail(C, before)] == [CONFIRM_SUBJECT]
    ask(h, C, f"watch {game_id}")
    ask(h, C, f"unwatch {game_id}")
    ask(h, C, f"unwatch {game_id}")
    assert h.last_inbound().status == "rejected"
    assert "You do not watch game" in flat(text_of(h.latest(C)))
    ask(h, D, f"watch {game_id}")
    ask(h, D, "stop")
    ask(h, D, f"unwatch {game_id}")
    ask(h, D, f"watch {game_id}")
    assert h.last_inbound().status == "applied" and watchers(h, game_id) == [D]
    assert "send 'start'" in flat(text_of(h.latest(D)))  # told, but no board
    assert sum("You are watching game" in text_of(msg) for msg in h.received(D)) == 1
    ask(h, C, f"watch {game_id}")
    ask(h, C, f"watch {game_id}")
    assert "You watch game" in flat(text_of(h.latest(C))) and "already" in flat(
        text_of(h.latest(C))
    )
    h.answer(A, "resign confirm")
    assert h.game_row(game_id).status == "finished"
    assert "Game over" in about(h.latest(C))  # the watchers see the end
    ask(h, "erin@example.com", f"watch {game_id}")
    assert "cannot be watched" in flat(text_of(h.latest("erin@example.com")))


def test_a_watcher_blocked_later_gets_nothing(open_lobby: Harness) -> None:
    h = open_lobby
    game_id = computer_game(h)
    ask(h, C, f"watch {game_id}")
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    assert run_cli(env, "player", "block", C).exit_code == 0
    h.clock.catch_up()
    before = h.count(C)
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, game.to_act()[0], random.Random(2)))
    assert h.count(C) == before
    ask(h, C, f"unwatch {game_id}")
    assert h.last_inbound().status == "ignored"  # a blocked address is never answered


def test_table_talk_reaches_the_watchers_escaped(open_lobby: Harness) -> None:
    """The hook for table talk (``say``): relayed to each watcher, escaped in the HTML,
    not to a watcher who said stop, nor once the game is closed to observers."""
    h = open_lobby
    game_id = computer_game(h)
    ask(h, C, f"watch {game_id}")
    ask(h, D, f"watch {game_id}")
    ask(h, D, "stop")
    before = h.count(D)

    def relay(text: str) -> int:
        with session_scope(h.db) as session:
            row = session.get(m.Game, game_id)
            assert row is not None
            return relay_talk(h.service._ctx(), session, row, [Said("Alice", text)], h.clock())

    assert relay("<b>well</b> played\x07 & good luck") == 1
    h.step()
    msg = h.latest(C)
    assert "Table talk" in about(msg)
    text = text_of(msg)
    assert "Alice says: \u201c<b>well</b> played & good luck\u201d" in flat(text)
    # Under its own heading, not as an answer to a mail of the watcher's.
    assert "Table talk\n----------" in text.replace("\r\n", "\n")
    assert "About your reply" not in text and "About your reply" not in html_of(msg)
    assert "unwatch" in text
    assert "&lt;b&gt;well&lt;/b&gt;" in html_of(msg) and "<b>well" not in html_of(msg)
    assert h.count(D) == before
    h.answer(A, "observers off")
    assert relay("anyone there?") == 0


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # what mail says: one database
def test_a_whole_watched_game_by_mail_shows_nobody_a_hidden_card(open_lobby: Harness) -> None:
    """Three players (muggins: hands are claimed, mugged and revealed) and an observer,
    to the end by mail: every mail anyone gets is scanned for the cards its recipient
    may not see then (for a player: another's hand, the crib, the pack; for the
    observer: every hand too), in the text, the HTML and the attached view."""
    h = open_lobby
    people = [ALICE, BOB, CAROL]
    game_id = h.new_game(people, muggins=True, seed="watched-3")
    for address, _ in people:
        h.answer(address, "observers on")
    ask(h, D, f"watch {game_id}")
    assert watchers(h, game_id) == [D]
    everyone = [*(a for a, _ in people), D]
    seen = {address: new_files(h, address, set()) for address in everyone}
    latest = {address: h.latest(address) for address in everyone}
    told = dict.fromkeys(everyone, len(h.game(game_id).events))
    rng = random.Random(11)
    watched = 0
    while not (game := h.game(game_id)).is_over:
        move = computer.choose_action(game, game.to_act()[0], rng, "random")
        mover, name = people[move.seat]
        h.deliver(reply(latest[mover], mover, name, command_for(move)))
        assert h.last_inbound().status == "applied", h.last_inbound().reason
        game = h.game(game_id)
        order = {row.message_id: row.id or 0 for row in h.outbox()}
        for seat, address in enumerate(everyone):
            files = new_files(h, address, seen[address])
            new = sorted(
                (parse((h.outbox_dir / folder(address) / path).read_bytes()) for path in files),
                key=lambda msg: order[str(msg["Message-ID"])],
            )
            for msg in new:
                if address == D:
                    assert_no_hidden(msg, game, told[address])
                    watched += 1
                    continue
                hidden = hidden_from(game, seat, game.events[told[address] :])
                attached = view_of(msg)
                texts = [text_of(msg), html_of(msg)]
                for card in hidden:
                    for text in texts:
                        assert card_pattern(card).search(text) is None, (card, text)
                    if attached is not None:
                        assert card not in view_cards(attached), card
            if new:
                seen[address] |= files
                latest[address] = new[-1]
                told[address] = len(game.events)
    assert watched > 20


def folder(address: str) -> str:
    return recipient_folder_name(address)


def new_files(h: Harness, address: str, seen: set[str]) -> set[str]:
    """The paths (``new/NAME``, ``cur/NAME``) of the messages to ``address`` not in
    ``seen``."""
    root = h.outbox_dir / folder(address)
    found = {
        f"{sub}/{entry.name}"
        for sub in ("new", "cur")
        if (root / sub).is_dir()
        for entry in (root / sub).iterdir()
    }
    return found - seen


def card_pattern(card: Card) -> re.Pattern[str]:
    forms = "|".join(re.escape(s) for s in spellings(card))
    return re.compile(rf"(?<![0-9A-Za-z])(?:{forms})(?![0-9A-Za-z])")


def test_a_closed_lobby_still_lets_a_known_player_watch(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, lobby="closed")
    try:
        game_id = computer_game(h)
        h.new_game([BOB, CAROL])  # Carol is a known player
        ask(h, C, f"watch {game_id}")
        assert h.last_inbound().status == "applied", h.last_inbound().reason
        assert watchers(h, game_id) == [C]
        ask(h, C, "new")  # the lobby is closed for games all the same
        assert "started by the admin" in flat(text_of(h.latest(C)))
        ask(h, D, f"watch {game_id}")  # a stranger gets nothing
        assert h.last_inbound().status == "ignored" and h.count(D) == 0
    finally:
        h.close()


def test_a_move_answering_an_observer_mail_is_never_applied(open_lobby: Harness) -> None:
    """Carol plays one game and watches another: a move in reply to an observer mail is
    refused — not routed to her own game, as a mail to the plain address would be."""
    h = open_lobby
    own = h.new_game([BOB, CAROL])
    watched = computer_game(h)
    ask(h, C, f"watch {watched}")
    observer_mail = h.latest(C)
    assert "You are watching game" in text_of(observer_mail)
    before = len(h.log(own))
    view = h.view(C)  # her own game's latest view: a legal move there
    command = command_for(view.legal[0])
    h.deliver(reply(observer_mail, C, "Carol", command))
    row = h.last_inbound()
    assert row.status == "rejected" and f"observer of game {watched}" in (row.reason or "")
    assert "Observers cannot move" in about(h.latest(C))
    assert len(h.log(own)) == before
    # The same words to the plain address, not answering an observer mail, are hers: a
    # From alone, so held until she confirms (one click), and then made in her game.
    h.deliver(plain_mail(C, SERVICE, command))
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    assert held.game_id == own and len(h.log(own)) == before
    row = h.confirm(C)
    assert row.status == "applied", row.reason
    assert len(h.log(own)) > before
