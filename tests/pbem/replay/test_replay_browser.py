"""The replay page in a real browser: stepping through every state of a 2-, 3- and
4-player game with the controls and checking the scores, pegs, starter and count against
the engine's states; the keyboard, the slider and the hand jump; nothing fetched from the
network; the layout at phone width; and the deal check, verified and tampered."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import PEGGING, Game, replay_archive
from pbem.render.replay import render_page, replay_data, replay_page, result_words
from tests.pbem.replay.browser import launch, open_page
from tests.pbem.replay.proofs import NAMES, proof_archive

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.fixture(scope="module")
def archives() -> dict[int, dict[str, Any]]:
    # The three-player game plays muggins: its show waits for each count.
    return {n: proof_archive(n, target=61, muggins=n == 3) for n in (2, 3, 4)}


def _write(tmp_path: Path, name: str, html: str) -> Path:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


def _page_state(page: Any) -> dict[str, Any]:
    """What the page shows now: step, scores, pegs (and whether each sits in its hole),
    starter, count and the count's cards."""
    return page.evaluate(
        """() => {
      const out = {step: Number(document.body.dataset.step), sides: []};
      document.querySelectorAll('#scores .side').forEach(d => {
        out.sides.push(Number(d.querySelector('b.front').textContent));
      });
      out.pegs = [];
      document.querySelectorAll('#board .peg').forEach(p => {
        out.pegs.push([Number(p.dataset.side), p.dataset.peg, Number(p.dataset.pos)]);
      });
      const st = document.querySelector('#starter .card');
      out.starter = st ? st.dataset.card : null;
      out.count = Number(document.querySelector('#count .count').textContent);
      out.countCards = [...document.querySelectorAll('#count .card')].map(c => c.dataset.card);
      out.slider = Number(document.getElementById('slider').value);
      return out;
    }"""
    )


def _pegs_in_holes(page: Any, target: int) -> bool:
    """Every peg's centre is the centre of the hole its position names."""
    return page.evaluate(
        """(target) => [...document.querySelectorAll('#board .peg')].every(p => {
        const pos = Number(p.dataset.pos), side = p.dataset.side;
        const id = pos > 0 ? `h${side}-${Math.min(pos, target)}`
                           : `h${side}-s${p.dataset.peg === 'front' ? 0 : 1}`;
        const hole = document.getElementById(id);
        return hole && hole.getAttribute('cx') === p.getAttribute('cx')
                    && hole.getAttribute('cy') === p.getAttribute('cy');
      })""",
        target,
    )


def _expected(game: Game, step: int) -> dict[str, Any]:
    target = game.settings.target
    pegs = []
    for side in range(game.settings.sides):
        pegs.append([side, "back", min(game.back_pegs[side], target)])
        pegs.append([side, "front", min(game.scores[side], target)])
    pegging = game.phase == PEGGING
    return {
        "step": step,
        "sides": [min(score, target) for score in game.scores],  # pegged out at the target
        "pegs": pegs,
        "starter": game.starter.ascii if game.starter else None,
        "count": game.count if pegging else 0,
        "countCards": [c.ascii for _, c in game.count_cards] if pegging else [],
        "slider": step,
    }


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_state_step_by_step_matches_the_engine(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path, players: int
) -> None:
    archive = archives[players]
    states = list(replay_archive(archive))
    assert states[-1].is_over
    path = _write(tmp_path, "game.html", replay_page(archive).html)
    context, page = open_page(browser, path)
    try:
        # It opens at the end, with the result and the deals verified.
        assert _page_state(page)["step"] == len(states) - 1
        outcome = states[-1].outcome
        assert outcome is not None
        assert page.inner_text("#result") == result_words(outcome, NAMES[:players], "skunk", 61)
        deals = sum(1 for e in states[-1].events if e.kind == "deal")
        assert page.get_attribute("#verify", "data-state") == "verified"
        assert page.inner_text("#verify").startswith(f"All {deals} deals verified")
        page.click("#first")
        for step, game in enumerate(states):
            shown = _page_state(page)
            assert shown == _expected(game, step), f"step {step}"
            assert _pegs_in_holes(page, game.settings.target), f"step {step}"
            if step + 1 < len(states):
                page.click("#next")
        page.click("#next")  # past the end: stays at the end
        assert _page_state(page)["step"] == len(states) - 1
        for step in range(len(states) - 1, len(states) - 6, -1):
            assert _page_state(page)["step"] == step
            page.click("#prev")
        assert page.errors == []
    finally:
        context.close()


def test_keyboard_slider_and_hand_jumps(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    archive = archives[3]
    states = list(replay_archive(archive))
    starts: dict[int, int] = {}
    for i, game in enumerate(states):
        starts.setdefault(game.hand_no, i)
    last = len(states) - 1
    path = _write(tmp_path, "game.html", replay_page(archive).html)
    context, page = open_page(browser, path)
    step = lambda: _page_state(page)["step"]  # noqa: E731
    try:
        page.locator("h1").click()  # focus on the page, not a control
        page.keyboard.press("Home")
        assert step() == 0
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert step() == 2
        page.keyboard.press("ArrowLeft")
        assert step() == 1
        page.keyboard.press("PageDown")
        assert step() == starts[2]
        page.keyboard.press("PageDown")
        assert step() == starts[3]
        page.keyboard.press("ArrowRight")
        page.keyboard.press("PageUp")  # back to the start of this hand
        assert step() == starts[3]
        page.keyboard.press("PageUp")  # and to the hand before
        assert step() == starts[2]
        page.keyboard.press("End")
        assert step() == last
        assert _page_state(page) == _expected(states[last], last)
        # The slider and the hand list.
        page.locator("#slider").fill(str(starts[2] + 3))
        assert _page_state(page) == _expected(states[starts[2] + 3], starts[2] + 3)
        hand = max(starts)
        page.select_option("#hand", str(hand))
        assert step() == starts[hand]
        page.click("#prevhand")
        assert step() == starts[hand - 1]
        page.click("#nexthand")
        assert step() == starts[hand]
        page.click("#last")
        assert step() == last
        # A move in the list jumps to its step.
        page.click("#moves li[data-step='5']")
        assert _page_state(page) == _expected(states[5], 5)
        assert page.errors == []
    finally:
        context.close()


def test_views_hide_the_other_seats_cards_until_shown(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    archive = archives[2]
    states = list(replay_archive(archive))
    path = _write(tmp_path, "game.html", replay_page(archive).html)
    context, page = open_page(browser, path)
    try:
        page.click("#first")
        dealt = {seat: sorted(c.ascii for c in states[0].holding(seat)) for seat in range(2)}
        shown = lambda seat: sorted(  # noqa: E731
            page.eval_on_selector_all(
                f"#seat-{seat} .card:not(.back)", "cs => cs.map(c => c.dataset.card)"
            )
        )
        backs = lambda sel: page.locator(f"{sel} .card.back").count()  # noqa: E731
        assert shown(0) == dealt[0] and shown(1) == dealt[1]
        page.select_option("#view", "0")
        assert shown(0) == dealt[0] and shown(1) == [] and backs("#seat-1") == 6
        steps = page.inner_text("#step")
        assert all(str_card not in steps for str_card in _symbols(dealt[1]))
        page.select_option("#view", "1")
        assert shown(1) == dealt[1] and shown(0) == []
        # After both discards: the crib is face down in a player's view.
        page.click("#next")
        page.click("#next")
        assert backs("#crib") == 4
        page.select_option("#view", "all")
        assert backs("#crib") == 0
        assert len(page.eval_on_selector_all("#crib .card", "cs => cs")) == 4
    finally:
        context.close()


def _symbols(cards: list[str]) -> list[str]:
    suits = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
    return [c[:-1] + suits[c[-1]] for c in cards]


def test_nothing_is_fetched_from_the_network(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    path = _write(tmp_path, "game.html", replay_page(archives[4]).html)
    context, page = open_page(browser, path)
    try:
        page.click("#first")
        for _ in range(10):
            page.click("#next")
        page.keyboard.press("End")
        page.select_option("#view", "1")
        url = path.resolve().as_uri()
        requests = page.requests
        assert requests and set(requests) == {url}
    finally:
        context.close()
    html = path.read_text(encoding="utf-8")
    for marker in ("http://", "https://", "//fonts.", "<link", "src="):
        assert marker not in html.replace("http://www.w3.org/2000/svg", ""), marker


def test_phone_width_has_no_horizontal_overflow(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    path = _write(tmp_path, "game.html", replay_page(archives[4]).html)
    context, page = open_page(browser, path, width=390, height=844)
    try:
        for step in ("#last", "#first"):
            page.click(step)
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0
            box = page.locator("#board").bounding_box()
            assert box is not None and box["width"] >= 300 and box["x"] >= 0
            assert box["x"] + box["width"] <= 390
            assert page.locator("#board").is_visible()
            shot = page.screenshot(path=str(tmp_path / f"phone{step[1:]}.png"))
            assert len(shot) > 1000
    finally:
        context.close()


def test_your_cut_as_recorded_wraps_on_a_phone(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    """A seat's own page shows its cut as recorded (its text and a 64-digit SHA-256): on
    a 390-pixel screen the line wraps, nothing runs off the side."""
    path = _write(tmp_path, "mine.html", replay_page(archives[2], seat=0).html)
    context, page = open_page(browser, path, width=390, height=844)
    try:
        assert page.locator("#my-cut").is_visible()
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        box = page.locator("#my-cut-hash").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390
        assert len(page.screenshot(path=str(tmp_path / "my-cut-390.png"))) > 1000
    finally:
        context.close()


def _verdict(browser: Any, tmp_path: Path, name: str, html: str) -> tuple[str, str]:
    context, page = open_page(browser, _write(tmp_path, name, html))
    try:
        assert page.errors == []
        return page.get_attribute("#verify", "data-state"), page.inner_text("#verify")
    finally:
        context.close()


def test_tampered_proofs_are_reported(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    good = archives[2]

    def tampered(change: Any) -> str:
        archive = copy.deepcopy(good)
        change(archive)
        return replay_page(archive).html

    def other_server_seed(a: dict[str, Any]) -> None:
        a["deal_proof"]["server_seed"] = "0" * 64

    def other_commitment(a: dict[str, Any]) -> None:
        a["deal_proof"]["commitment"] = "f" * 64

    def other_cut(a: dict[str, Any]) -> None:
        a["deal_proof"]["entropy"][0]["text"] += " changed"

    state, text = _verdict(browser, tmp_path, "s.html", tampered(other_server_seed))
    assert state == "mismatch" and "commitment" in text
    state, text = _verdict(browser, tmp_path, "c.html", tampered(other_commitment))
    assert state == "mismatch" and "commitment" in text
    state, text = _verdict(browser, tmp_path, "e.html", tampered(other_cut))
    assert state == "mismatch" and "not derived" in text

    # An archive whose seed is not the proof's (its game replays, from another seed).
    other = proof_archive(2, target=61, server_seed="1" * 64)
    mixed = copy.deepcopy(other)
    mixed["deal_proof"] = good["deal_proof"]
    state, text = _verdict(browser, tmp_path, "k.html", replay_page(mixed).html)
    assert state == "mismatch" and "not derived" in text

    # No proof at all.
    bare = copy.deepcopy(good)
    del bare["deal_proof"]
    state, text = _verdict(browser, tmp_path, "n.html", replay_page(bare).html)
    assert state == "none" and text == "This game's deals are not verifiable (no commitment)."


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_changed_card_in_the_embedded_states_is_reported(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path, players: int
) -> None:
    """The page's own states, edited after the fact (a dealt card, a starter, the
    three-player crib card, a draw), fail the check, naming the hand."""
    data = replay_data(archives[players])

    def edit(kind: str, hand_index: int) -> dict[str, Any]:
        out = copy.deepcopy(data)
        seen = 0
        for st in out["states"]:
            for ev in st["ev"]:
                if ev["k"] == kind:
                    seen += 1
                    if seen == hand_index:
                        ev["c"][0] = "KS" if ev["c"][0] != "KS" else "KH"
                        return out
        raise AssertionError(f"no {kind} {hand_index}")

    hand_event = edit("hand", players + 1)  # the first seat's cards of hand 2
    state, text = _verdict(browser, tmp_path, "h.html", render_page(hand_event))
    assert state == "mismatch" and "hand 2:" in text and "dealt cards" in text
    starter = edit("starter", 1)
    state, text = _verdict(browser, tmp_path, "st.html", render_page(starter))
    assert state == "mismatch" and "hand 1: the starter" in text
    draw = edit("draw", 1)
    state, text = _verdict(browser, tmp_path, "d.html", render_page(draw))
    assert state == "mismatch" and "draw for the first deal" in text
    if players == 3:
        crib = copy.deepcopy(data)
        first = next(st for st in crib["states"] if any(e["k"] == "deal" for e in st["ev"]))
        first["crib"] = ["KS"] if first["crib"] != ["KS"] else ["KH"]
        state, text = _verdict(browser, tmp_path, "cr.html", render_page(crib))
        assert state == "mismatch" and "crib" in text


def test_a_running_game_page_is_one_players_and_waits_for_the_reveal(
    browser: Any, tmp_path: Path
) -> None:
    running = proof_archive(4, target=61, stop_after=30)
    page_html = replay_page(running, seat=1).html
    state, text = _verdict(browser, tmp_path, "run.html", page_html)
    assert state == "hidden" and "when the game is over" in text
    context, page = open_page(browser, _write(tmp_path, "run2.html", page_html))
    try:
        assert page.locator("#view option").count() == 1
        assert page.is_disabled("#view")
        assert page.locator("#hidden-note").is_visible()
        assert json.loads(page.inner_text("#replay-data"))["seed"] is None
    finally:
        context.close()


def test_partners_share_a_colour_and_names_stay_text(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    archive = copy.deepcopy(archives[4])
    evil = "<img src=x onerror=alert(1)></script>Eve"
    archive["players"][1]["name"] = evil
    path = _write(tmp_path, "game.html", replay_page(archive).html)
    context, page = open_page(browser, path)
    dialogs: list[str] = []

    def on_dialog(d: Any) -> None:
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    try:
        colour = lambda sel: page.eval_on_selector(sel, "e => getComputedStyle(e).color")  # noqa: E731
        assert colour("#seat-0 h3") == colour("#seat-2 h3") != colour("#seat-1 h3")
        assert colour("#seat-1 h3") == colour("#seat-3 h3")
        fills = page.eval_on_selector_all(
            "#board .peg.front", "ps => ps.map(p => p.getAttribute('fill'))"
        )
        assert len(fills) == 2 and fills[0] != fills[1]
        assert evil in page.inner_text("#seat-1 h3")
        assert page.locator("img").count() == 0 and dialogs == []
        assert page.errors == []
    finally:
        context.close()


def test_a_browser_without_crypto_subtle_verifies_with_the_pages_own_sha256(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    path = _write(tmp_path, "game.html", replay_page(archives[3]).html)
    context = browser.new_context()
    context.add_init_script("Object.defineProperty(window.crypto, 'subtle', {value: undefined});")
    page = context.new_page()
    try:
        page.goto(path.resolve().as_uri())
        page.wait_for_function("document.getElementById('verify').dataset.state !== 'pending'")
        assert page.evaluate("typeof crypto.subtle") == "undefined"
        assert page.get_attribute("#verify", "data-state") == "verified"
        # Its SHA-256 against Python's, across the padding boundaries.
        for size in (0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000):
            data = bytes((i * 7 + size) % 256 for i in range(size))
            got = page.evaluate(
                """(xs) => Array.from(window.cribbageReplay.sha256js(new Uint8Array(xs)))
                    .map(b => b.toString(16).padStart(2, '0')).join('')""",
                list(data),
            )
            assert got == hashlib.sha256(data).hexdigest(), size
    finally:
        context.close()


def test_a_hand_counted_in_a_muggins_show_stays_face_up(
    browser: Any, archives: dict[int, dict[str, Any]], tmp_path: Path
) -> None:
    archive = archives[3]  # muggins
    states = list(replay_archive(archive))
    # A state in the show after one seat's hand was counted, while another is counted.
    step, counted = next(
        (i, e.seat)
        for i, game in enumerate(states)
        if game.phase == "show" and (entry := game.show_entry()) is not None
        for e in game.events
        if e.kind == "claim" and e.hand == game.hand_no and e.seat != entry[0]
    )
    assert counted is not None
    game = states[step]
    showing = game.show_entry()
    assert showing is not None
    viewer = next(s for s in range(3) if s != counted and s != showing[0])
    path = _write(tmp_path, "game.html", replay_page(archive).html)
    context, page = open_page(browser, path)
    try:
        page.select_option("#view", str(viewer))
        page.locator("#slider").fill(str(step))
        face_up = page.eval_on_selector_all(
            f"#seat-{counted} .card:not(.back)", "cs => cs.map(c => c.dataset.card)"
        )
        assert sorted(face_up) == sorted(c.ascii for c in game.kept(counted))
        waiting = [s for s in range(3) if s not in (counted, showing[0])]
        for seat in waiting:
            if seat != viewer:
                assert page.locator(f"#seat-{seat} .card.back").count() == 4
    finally:
        context.close()
