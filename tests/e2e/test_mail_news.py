"""What players are told in whole games to 121 played by mail through the service: fewer
mails (no "waiting for …" after one's own move, never the same question twice), every one
carrying news, a mail asking for every move a player has to make, and every game mail small.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from email.message import EmailMessage

import pytest
from sqlmodel import Session, col, select

from engine import Game, action_to_json, player_view
from engine import Settings as GameSettings
from pbem.demo.bots import view_of
from pbem.mail.tokens import parse_message_id
from pbem.render.news import is_news
from pbem.store import models as m
from tests.e2e.helpers import DOMAIN, PEOPLE, Harness, about, cli_env, run_cli
from tests.e2e.test_whole_games import every_state, play_by_mail

# What the mails say does not depend on the database: these checks of the words run on
# SQLite only. Every database path they take runs on both backends in the other e2e tests
# (commands, refusals, crashes, batches), so a second copy here would only read the same
# mails again, at a cost that mattered to the suite's time limit.
pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)

# A game mail stays under this many bytes, whole (headers, both parts, view.json), its
# HTML part's one-click answers (mailto links, about 250 bytes each) included.
MAX_MAIL_BYTES = 14_000
# The game-over mail with its replay page (base64: a 3-player muggins game to 121 is ~165 KB).
MAX_GAMEOVER_BYTES = 256 * 1024


def _body(msg: EmailMessage, subtype: str = "plain") -> str:
    """The mail's ``text/<subtype>`` body, decoded."""
    part = msg.get_body((subtype,))
    assert part is not None, f"no text/{subtype} body"
    return str(part.get_content())


def _states_after_each_reply(h: Harness, game_id: int) -> tuple[list[Game], list[int]]:
    """Every state of the game, and the numbers of actions after which the service
    mailed (or could have mailed): the game's start and the end of each reply's moves."""
    with Session(h.db) as session:
        logged = list(
            session.exec(
                select(m.ActionLog)
                .where(m.ActionLog.game_id == game_id)
                .order_by(col(m.ActionLog.seq))
            )
        )
    row = h.game_row(game_id)
    assert row.seed is not None
    states = every_state(
        GameSettings.from_json(row.settings), row.seed, [dict(r.action) for r in logged]
    )
    ends: set[int] = set()
    for i, entry in enumerate(logged):
        following = logged[i + 1] if i + 1 < len(logged) else None
        if following is None or following.inbound_id != entry.inbound_id:
            ends.add(entry.seq + 1)
    if logged and logged[0].inbound_id is not None:
        ends.add(0)  # no forced move at the start: the first mail is sent before any
    return states, sorted(ends)


def _asks(game: Game, seat: int) -> tuple[str, ...] | None:
    """What ``seat`` is asked to do in ``game`` (None: nothing)."""
    if game.is_over or seat not in game.to_act():
        return None
    return tuple(sorted(str(action_to_json(a)) for a in game.legal_actions(seat)))


def _turn_mails(h: Harness, game_id: int, address: str) -> list[tuple[int, EmailMessage]]:
    out = []
    for msg in h.received(address):
        ours = parse_message_id(str(msg["Message-ID"]), DOMAIN)
        assert ours is not None and ours.game_id == game_id
        match = re.fullmatch(r"a(\d+)\.(turn|gameover)", ours.seq)
        assert match, f"not a turn mail: {ours.seq}"
        out.append((int(match.group(1)), msg))
    return out


@pytest.mark.parametrize(("players", "muggins"), [(2, False), (3, False), (4, False), (3, True)])
def test_whole_games_to_121_mail_only_news(harness: Harness, players: int, muggins: bool) -> None:
    h = harness
    game_id = h.service.new_game(
        list(PEOPLE[:players]), target=121, seed=f"news-{players}", muggins=muggins
    )
    play_by_mail(h, game_id, "good")
    states, ends = _states_after_each_reply(h, game_id)
    # Every game mail is small, as queued: headers, both parts and view.json. The
    # game-over mail also attaches the replay page (`mail replay`), capped on its own.
    sizes = [len(row.raw) for row in h.outbox() if row.kind == "turn"]
    assert sizes and max(sizes) < MAX_MAIL_BYTES, (max(sizes), statistics.median(sizes))
    endings = [len(row.raw) for row in h.outbox() if row.kind == "gameover"]
    assert endings and max(endings) < MAX_GAMEOVER_BYTES, max(endings)
    counts: dict[int, int] = defaultdict(int)
    for seat, (address, _) in enumerate(PEOPLE[:players]):
        mails = _turn_mails(h, game_id, address)
        counts[seat] = len(mails)
        numbers = [n for n, _ in mails]
        assert numbers == sorted(set(numbers))  # one mail per state at most
        last_asked: tuple[str, ...] | None = None
        for n, msg in mails:
            view = view_of(msg)
            assert view is not None and view.seat == seat
            asked = _asks(states[n], seat)
            # Every mail carries news: the end, a new question, or something to be told.
            assert (
                view.outcome is not None
                or (asked is not None and asked != last_asked)
                or is_news(view)
            ), f"mail a{n} to seat {seat} tells nothing new"
            last_asked = asked
        # Whenever the game waits for this player, their latest mail asks for that move.
        for end in ends:
            asked = _asks(states[end], seat)
            if asked is None:
                continue
            before = [n for n in numbers if n <= end]
            assert before, f"seat {seat} never mailed before state {end}"
            latest = before[-1]
            assert all(_asks(states[k], seat) == asked for k in range(latest, end + 1)), (
                f"seat {seat} must move at state {end}; its latest mail (a{latest}) asked "
                "something else"
            )
        # The last mail is the end of the game.
        last = view_of(mails[-1][1])
        assert last is not None and last.outcome is not None
    # Fewer mails than one per reply per player: nobody is mailed after their own move
    # without news.
    assert sum(counts.values()) < (len(ends) + 1) * players * 0.75, dict(counts)
    print(
        f"{players} players: {len(ends)} replies, mails per player {dict(counts)}, "
        f"size max {max(sizes)} median {statistics.median(sizes):.0f}"
    )


def test_the_discard_of_the_other_player_sends_no_second_mail(harness: Harness) -> None:
    """Two players must both discard; when one does, the other, already asked to discard,
    gets no second mail saying the same — and the one who discarded gets none either."""
    h = harness
    game_id = h.new_game(target=121, seed="discard-once")
    alice, bob = PEOPLE[0][0], PEOPLE[1][0]
    before = h.counts([alice, bob])
    game = h.game(game_id)
    dealer = game.dealer
    pone = 1 - dealer
    view = player_view(game, pone)
    discard = view.legal[0]
    h.move(game_id, discard)
    assert h.counts([alice, bob]) == before  # neither needs a mail
    # The other discard: the starter is cut, and both hear of it.
    game = h.game(game_id)
    h.move(game_id, player_view(game, dealer).legal[0])
    after = h.counts([alice, bob])
    assert after[alice] == before[alice] + 1 and after[bob] == before[bob] + 1
    for address in (alice, bob):
        told = view_of(h.latest(address))
        assert told is not None and told.starter is not None
        assert any(e.kind == "starter" for e in told.events)


def test_mail_all_brings_back_a_mail_after_every_move(harness: Harness) -> None:
    h = harness
    game_id = h.new_game(target=121, seed="discard-once")
    alice, bob = PEOPLE[0][0], PEOPLE[1][0]
    game = h.game(game_id)
    pone = 1 - game.dealer
    pone_address = h.address_of(game_id, pone)
    other = bob if pone_address == alice else alice
    before = h.counts([alice, bob])
    h.answer(pone_address, "mail all")
    player = h.player(pone_address)
    assert player is not None and player.mail_all
    assert h.count(pone_address) == before[pone_address] + 1  # the confirmation
    assert "after every move" in _body(h.latest(pone_address))
    h.move(game_id, player_view(h.game(game_id), pone).legal[0])
    # The mover now hears of their own move; the other player still does not.
    assert h.count(pone_address) == before[pone_address] + 2
    assert h.count(other) == before[other]
    h.answer(pone_address, "mail turns")
    player = h.player(pone_address)
    assert player is not None and not player.mail_all
    bad = h.count(pone_address)
    h.answer(pone_address, "mail")
    text = _body(h.latest(pone_address))
    assert h.count(pone_address) == bad + 1 and "mail all" in text and "refused" in text


def test_the_help_reply_and_the_first_mail_state_the_house_rules(harness: Harness) -> None:
    h = harness
    game_id = h.service.new_game(
        list(PEOPLE[:3]), target=61, muggins=True, skunk="lurch", seed="rules"
    )
    h.step()
    rules = "to 61, muggins on, lurch under 31 (2 games), 3 players"
    first = " ".join(_body(h.latest(PEOPLE[2][0])).split())
    assert f"House rules: {rules}" in first
    h.answer(PEOPLE[0][0], "help")
    helped = h.latest(PEOPLE[0][0])
    assert "How to play by mail" in about(helped)
    text = " ".join(_body(helped).split())
    assert f"House rules of this game: {rules}." in text
    assert h.game_row(game_id).action_count == 0


def _attachment(msg: EmailMessage, suffix: str) -> tuple[str, bytes] | None:
    for part in msg.walk():
        name = part.get_filename()
        if name and name.endswith(suffix):
            data = part.get_payload(decode=True)
            assert isinstance(data, bytes)
            return name, data
    return None


def test_archive_is_refused_before_the_end_of_the_game(harness: Harness) -> None:
    h = harness
    game_id = h.new_game(seed="archive-early")
    alice = PEOPLE[0][0]
    before = h.count(alice)
    h.answer(alice, "archive")
    assert h.count(alice) == before + 1
    reply = h.latest(alice)
    text = " ".join(_body(reply).split())
    assert "[refused] archive" in text and "hidden" in text and "seed" in text
    attached = _attachment(reply, ".json")
    assert attached is not None and attached[0] == "view.json"  # the view, no archive
    assert h.last_inbound().status == "rejected"
    assert h.game_row(game_id).action_count == 0


def test_a_finished_game_sends_its_archive_to_replay_and_verify(
    harness: Harness, db_url: str
) -> None:
    h = harness
    game_id = h.service.new_game(list(PEOPLE[:2]), target=61, seed="archive")
    play_by_mail(h, game_id, "good")
    alice = PEOPLE[0][0]
    over = h.latest(alice)
    text = _body(over)
    assert "GAME OVER" in text and 'Reply "archive"' in text
    assert "pbem " not in text and "pbem " not in _body(over, "html")
    before = h.count(alice)
    h.answer(alice, "archive")
    assert h.count(alice) == before + 1
    mail = h.latest(alice)
    assert "archive" in about(mail)
    found = _attachment(mail, f"cribbage-{game_id}.json")
    assert found is not None
    name, data = found
    body = " ".join(_body(mail).split())
    # What the files are for, in words a player can use: no "pbem" command to run.
    assert f"Attached: {name}, the record of the whole game" in body
    assert "replayed and checked at any time" in body
    assert "pbem " not in body and "pbem " not in _body(mail, "html")
    assert _attachment(mail, f"cribbage-{game_id}.html") is not None  # its replay page
    # The attachment is exactly what `pbem game export` writes.
    env = cli_env(h.tmp_path, db_url)
    exported = h.tmp_path / "exported.json"
    assert run_cli(env, "game", "export", str(game_id), "-o", str(exported)).exit_code == 0
    assert data == exported.read_bytes()
    # And it imports and replays, verified, where the player keeps it: their own database
    # (into the service's own, it is refused as stored already).
    copy = h.tmp_path / name
    copy.write_bytes(data)
    again = run_cli(env, "game", "import", str(copy))
    assert again.exit_code == 1 and "stored already" in again.output
    env = cli_env(h.tmp_path / "player")
    assert run_cli(env, "init").exit_code == 0
    imported = run_cli(env, "game", "import", str(copy))
    assert imported.exit_code == 0, imported.output
    copy_id = re.search(r"imported as game (\d+)", imported.stdout)
    assert copy_id is not None
    verified = run_cli(env, "game", "replay", copy_id.group(1), "--verify")
    assert verified.exit_code == 0 and "verified" in verified.stdout
    assert json.loads(data)["seed"] == "archive"
