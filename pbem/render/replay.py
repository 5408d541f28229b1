"""A game's replay as one self-contained HTML page (``pbem game replay ID --html FILE``).

`replay_page` turns a ``pbem-cribbage/1`` archive into one HTML file that needs nothing
else: the states of the game, replayed here with the engine, are embedded as JSON; the
page draws them with inline CSS, an inline SVG peg board and a small hand-written script
(``templates/replay.js``; the deal checks are ``replay_verify.js``, and the checks
against the player's own mail and the previous game's archive, on a page that carries
the deal proof, ``replay_mail.js``), and fetches nothing.

What the file holds depends on who may see what:

- a finished game hides nothing: every state holds every seat's cards, the crib and
  each event, and the page can show everything or any one player's view (the script
  hides the other seats' cards then); its ``deal_proof`` and seed are embedded so the
  page can verify every deal and the board it shows (``docs/pbem-deal-1.md``); so does
  an aborted game whose ``deal_proof`` reveals its server seed;
- a game still running is embedded only as one seat sees it (``seat``): each state is
  built from that seat's `player_view`, so another seat's hidden cards, the crib, the
  seed and the server seed are not in the file at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import (
    PEGGING,
    SHOW,
    Accept,
    Action,
    Card,
    Claim,
    Discard,
    EngineError,
    Event,
    Game,
    Go,
    Muggins,
    Outcome,
    Play,
    ReplayError,
    Resign,
    count_words,
    player_view,
    replay_archive,
)
from pbem.render.mail import TEMPLATES, _environment
from pbem.render.narrate import peg_words
from pbem.render.review import review_text
from pbem.render.words import clean_name

if TYPE_CHECKING:
    from engine.review import GameReview

# The colours of the sides (a partnership shares one).
SIDE_COLOURS = ("#c0392b", "#1f5fbf", "#23824a")


class ReplayPageError(ValueError):
    """The archive cannot be made into a page (it does not replay, or a hidden view
    was asked of a game still running)."""


@dataclass(frozen=True)
class ReplayPage:
    """The page's HTML and what it holds."""

    html: str
    states: int
    over: bool
    seat: int | None


def seat_names(archive: dict[str, Any], players: int) -> list[str]:
    """The players' names from the archive's ``players`` list (``Seat N`` when missing)."""
    people = archive.get("players")
    names: list[str] = []
    for seat in range(players):
        person = people[seat] if isinstance(people, list) and seat < len(people) else None
        name = person.get("name") if isinstance(person, dict) else None
        if not isinstance(name, str) or not name.strip():
            email = person.get("email") if isinstance(person, dict) else None
            name = email.split("@")[0] if isinstance(email, str) and email else f"Seat {seat}"
        names.append(clean_name(name))
    return names


def result_words(outcome: Outcome, names: Sequence[str], skunk: str, target: int) -> str:
    """``Alice wins, 121 to 84: a double game (Bob is skunked)`` (the winner's score
    stops at the ``target``, where the board does)."""
    sides = len(outcome.scores)
    winners = " and ".join(names[s] for s in outcome.winner_seats)
    verb = "win" if len(outcome.winner_seats) > 1 else "wins"
    others = sorted(outcome.scores[s] for s in range(sides) if s != outcome.winner)
    top = min(outcome.scores[outcome.winner], target)
    text = f"{winners} {verb}, {top} to {others[-1] if others else 0}"
    if outcome.reason != "target":
        text += f" ({outcome.reason})"
    text += f": {outcome.label}"
    losers = []
    for side, value in sorted(outcome.game_values.items()):
        if value < 2:
            continue
        who = " and ".join(names[s] for s in range(len(names)) if _side(s, len(names)) == side)
        many = sum(1 for s in range(len(names)) if _side(s, len(names)) == side) > 1
        word = "lurched" if skunk == "lurch" else "double skunked" if value >= 4 else "skunked"
        losers.append(f"{who} {'are' if many else 'is'} {word}")
    if losers:
        text += f" ({'; '.join(losers)})"
    return text


def _side(seat: int, players: int) -> int:
    return seat % 2 if players == 4 else seat


def _cards(cards: Sequence[Card]) -> list[str]:
    return [c.ascii for c in cards]


def _shown(cards: Sequence[Card]) -> str:
    return " ".join(str(c) for c in cards)


def _move(action: Action, names: Sequence[str]) -> dict[str, Any]:
    """The move of a step: its words, and the words others see (``m``) when they differ."""
    who = names[action.seat]
    masked: str | None = None
    if isinstance(action, Discard):
        text = f"{who} lays away {_shown(action.cards)}"
        n = len(action.cards)
        masked = f"{who} lays away {n} card{'s' if n > 1 else ''}"
    elif isinstance(action, Play):
        text = f"{who} plays {action.card}"
    elif isinstance(action, Go):
        text = f"{who} says go"
    elif isinstance(action, Claim):
        text = f"{who} counts {action.points}"
    elif isinstance(action, Muggins):
        text = f"{who} calls muggins"
    elif isinstance(action, Accept):
        text = f"{who} accepts the count"
    elif isinstance(action, Resign):
        text = f"{who} resigns"
    else:  # pragma: no cover - exhaustive
        text = f"{who}: {action}"
    out: dict[str, Any] = {"s": action.seat, "t": text}
    if masked is not None:
        out["m"] = masked
    return out


def _event(game: Game, event: Event, names: Sequence[str], starter: Card | None) -> dict[str, Any]:
    """One event in words (``t``), with what the page needs to check and draw it: its kind,
    seat, cards (ASCII) and points; ``p`` is the one seat that may see it (None: public),
    ``m`` the words the other seats see, when they see anything."""
    who = names[event.seat] if event.seat is not None else ""
    kind = event.kind
    masked: str | None = None
    text = kind
    if kind == "draw":
        parts = ", ".join(f"{names[seat]} cuts {card}" for seat, card in _draw_round(game, event))
        text = f"Cutting for the deal: {parts}"
    elif kind == "deal":
        text = f"Hand {event.hand}: {who} deals"
    elif kind == "hand":
        text = f"{who} is dealt {_shown(event.cards)}"
    elif kind == "discard":
        text = f"{who} lays away {_shown(event.cards)}"
        masked = f"{who} lays away {len(event.cards)} card{'s' if len(event.cards) > 1 else ''}"
    elif kind == "starter":
        text = f"{who} turns the starter: {_shown(event.cards)}"
    elif kind == "heels":
        text = f"{who}: his heels for 2"
    elif kind == "play":
        text = f"{who} plays {_shown(event.cards)} — {event.count}"
        if event.points:
            text += f": {peg_words(event.items)}"
    elif kind == "go":
        text = f"{who} says go ({event.count})"
    elif kind == "count_end":
        if event.points:
            what = "last card" if event.detail == "last card" else "the go"
            text = f"{who}: one for {what}"
        else:
            text = "Thirty-one: a new count"
    elif kind == "show":
        what = "crib" if event.detail == "crib" else "hand"
        with_starter = f" and the starter {starter}" if starter else ""
        text = f"{who}'s {what} {_shown(event.cards)}{with_starter}: {count_words(event.items)}"
    elif kind == "claim":
        text = f"{who} shows {_shown(event.cards)}, {event.detail}; scores {event.points}"
    elif kind == "reveal":
        text = f"{who}'s {event.detail} {_shown(event.cards)}: {count_words(event.items)}"
    elif kind == "correction":
        text = f"{who} takes {event.points} over-claimed"
    elif kind == "muggins":
        text = f"{who} calls muggins: {event.points} missed"
    elif kind == "resign":
        text = f"{who} resigns"
    elif kind == "game_over":
        outcome = game.outcome
        text = (
            "Game over: " + result_words(outcome, names, game.settings.skunk, game.settings.target)
            if outcome
            else "Game over"
        )
    out: dict[str, Any] = {"k": kind, "t": text}
    if event.seat is not None:
        out["s"] = event.seat
    if event.side is not None:
        out["side"] = event.side
    if event.cards:
        out["c"] = _cards(event.cards)
    if event.points:
        out["pts"] = event.points
    if event.private_to is not None:
        out["p"] = event.private_to
    if masked is not None:
        out["m"] = masked
    if kind in ("show", "reveal", "claim"):
        out["w"] = "crib" if event.detail.startswith("crib") else "hand"
    return out


def _draw_round(game: Game, event: Event) -> list[tuple[int, Card]]:
    """The (seat, card) pairs of one round of the draw for the first deal."""
    rounds = [e for e in game.events if e.kind == "draw"]
    number = next(i for i, e in enumerate(rounds) if e is event)
    return sorted(game.draws[number].items())


def _state(
    game: Game, names: Sequence[str], since: int, action: Action | None, seat: int | None
) -> dict[str, Any]:
    """One step: the board after ``action`` (None: before the first), the events it caused.

    ``seat`` None: everything (a finished game); else only what that seat sees."""
    n = game.players
    start_starters = {e.hand: e.cards[0] for e in game.events if e.kind == "starter" and e.cards}
    if seat is None:
        events = game.events[since:]
        holding: list[Any] = [_cards(sorted(game.holding(s))) for s in range(n)]
        crib: Any = _cards(sorted(game.crib()))
    else:
        view = player_view(game, seat, since)
        events = list(view.events)
        holding = [_cards(view.holding) if s == seat else view.cards_left[s] for s in range(n)]
        crib = view.crib_size
        kept_count = game.settings.hand_size - game.settings.discard_count
    state: dict[str, Any] = {
        "h": game.hand_no,
        "d": game.dealer,
        "ph": game.phase,
        "f": [min(score, game.settings.target) for score in game.scores],  # pegged out
        "b": list(game.back_pegs),
        "hold": holding,
        "crib": crib,
        "st": game.starter.ascii if game.starter else None,
        "cnt": game.count if game.phase == PEGGING else 0,
        "cc": [[s, c.ascii] for s, c in game.count_cards] if game.phase == PEGGING else [],
        "turn": list(game.to_act()),
        "ev": [_event(game, e, names, start_starters.get(e.hand)) for e in events],
    }
    if game.phase == SHOW:
        # Muggins games wait in the show: the hands kept, and the one being counted (public).
        if seat is None:
            state["kept"] = [_cards(game.kept(s)) for s in range(n)]
        else:
            state["kept"] = [_cards(game.kept(s)) if s == seat else kept_count for s in range(n)]
        entry = game.show_entry()
        if entry is not None:
            state["sh"] = [entry[0], entry[1], _cards(game.showing())]
    if action is not None:
        move = _move(action, names)
        if seat is not None and action.seat != seat and "m" in move:
            move = {"s": move["s"], "t": move["m"]}
        state["mv"] = move
    return state


def computer_check(archive: dict[str, Any]) -> dict[str, Any] | None:
    """The server's audit of the computer's moves for the page (`engine.audit`), made
    when the page is made: ``{"ok", "decisions", "message", "engine"}``, or None when the
    archive names no computer seat and no move made for a player at a timeout. The page
    cannot run the engine, so it shows this result labelled as the server's; ``pbem
    verify`` on the archive is the check a player runs. Only a finished game's page
    carries it (a difference names cards)."""
    from engine.audit import audit_archive, engine_label
    from pbem import engine_version

    if not archive.get("computer") and not archive.get("timeouts"):
        return None
    engine = engine_label(engine_version())
    try:
        audit = audit_archive(archive, engine=engine)
    except (EngineError, ReplayError) as exc:
        return {
            "ok": False,
            "decisions": 0,
            "message": f"the computer's moves could not be checked: {exc}",
            "engine": engine,
        }
    return {
        "ok": audit.ok,
        "decisions": audit.decisions,
        "message": audit.message,
        "engine": engine,
    }


def replay_data(
    archive: dict[str, Any], *, seat: int | None = None, title: str | None = None
) -> dict[str, Any]:
    """The page's data: settings, players, every state, and the deal proof.

    ``seat``: whose view the page opens in; for a game still running it is required and
    the states are built from that seat's view alone.

    Raises:
        ReplayPageError: the archive does not replay, ``seat`` is no seat of the game, or
            a running game was asked for without a seat, or the game was never dealt.
    """
    if isinstance(archive, dict) and "seed" in archive and archive["seed"] is None:
        raise ReplayPageError(
            "the game is not dealt yet: it waits for the players' cuts"
            if archive.get("status") == "cutting"
            else "the game ended before its deal: there is nothing to replay"
        )
    try:
        games = list(replay_archive(archive))
    except (EngineError, ReplayError) as exc:
        raise ReplayPageError(f"the archive does not replay: {exc}") from exc
    final = games[-1]
    n = final.players
    if seat is not None and not 0 <= seat < n:
        raise ReplayPageError(f"no seat {seat} in a {n}-player game")
    over = final.is_over
    raw_proof = archive.get("deal_proof")
    # A game ended without being played out reveals its server seed: with it anyone can
    # deal every hand, so its page, like a finished game's, hides nothing.
    revealed = over or (
        isinstance(raw_proof, dict)
        and raw_proof.get("outcome") == "aborted"
        and isinstance(raw_proof.get("server_seed"), str)
    )
    if not revealed and seat is None:
        raise ReplayPageError(
            "the game is still running: its replay shows one player's view (give --as PLAYER)"
        )
    names = seat_names(archive, n)
    only = None if revealed else seat
    states = []
    since = 0
    for index, game in enumerate(games):
        action = game.actions[index - 1] if index else None
        states.append(_state(game, names, since, action, only))
        since = len(game.events)
    settings = final.settings
    sides = [
        {
            "side": side,
            "seats": list(final.seats_of(side)),
            "name": " & ".join(names[s] for s in final.seats_of(side)),
            "colour": SIDE_COLOURS[side],
        }
        for side in range(settings.sides)
    ]
    game_id = archive.get("game_id")
    proof = raw_proof if revealed else None
    computer = archive.get("computer")
    data: dict[str, Any] = {
        "title": title or (f"Cribbage game {game_id}" if game_id is not None else "Cribbage"),
        "game_id": game_id,
        "names": names,
        "players": n,
        "target": settings.target,
        "skunk": settings.skunk,
        "muggins": settings.muggins,
        "sides": sides,
        "over": over,
        "status": archive.get("status") or ("finished" if over else "active"),
        "created_at": archive.get("created_at"),
        "finished_at": archive.get("finished_at"),
        "result": result_words(final.outcome, names, settings.skunk, settings.target)
        if final.outcome
        else None,
        "seat": seat,
        "hidden": not revealed,
        "revealed": revealed,
        "first_dealer": settings.first_dealer,
        "computer": computer if isinstance(computer, list) else None,
        "computer_check": computer_check(archive) if over else None,
        "states": states,
        # Only a finished (or aborted, its seed revealed) game's page may carry the seed
        # and the server seed.
        "seed": final.seed if revealed else None,
        "deal_proof": proof if isinstance(proof, dict) else None,
        # Each seat's cut as recorded (text and SHA-256; never secret): a seat's own
        # page shows its player theirs, to compare with the receipt of their cut.
        "cuts": recorded_cuts(raw_proof),
    }
    if isinstance(proof, dict):
        data.update(schema_check(archive, proof))
    return data


def schema_check(archive: dict[str, Any], proof: dict[str, Any]) -> dict[str, Any]:
    """What the page needs to check the archive against its protocol's JSON Schema
    (`engine.dealschema`, the file `pbem verify` uses): the schema, and the archive as
    JSON text (`render_page` writes it, with the page's deal proof) — parsed by the page
    itself, so that ``2.0`` stays a non-integer. Its actions are left out (the replay
    that made the page checked them)."""
    from engine.dealschema import SCHEMA_FILES, schema

    if proof.get("protocol") not in SCHEMA_FILES:
        return {}
    rules = {k: v for k, v in schema(str(proof["protocol"])).items() if k[0] not in "$td"}
    rules["$defs"] = schema(str(proof["protocol"]))["$defs"]
    rest = {k: v for k, v in archive.items() if k not in ("actions", "deal_proof")}
    return {"schema": rules, "archive_rest": {**rest, "actions": []}}


def recorded_cuts(proof: Any) -> dict[str, dict[str, str]]:
    """Seat (as a string) → {"text", "sha256"} of each cut in a ``deal_proof``."""
    from engine.fairness import text_hash

    if not isinstance(proof, dict) or not isinstance(proof.get("entropy"), list):
        return {}
    out: dict[str, dict[str, str]] = {}
    for entry in proof["entropy"]:
        if isinstance(entry, dict) and isinstance(entry.get("text"), str):
            text = entry["text"]
            out[str(entry.get("seat"))] = {"text": text, "sha256": text_hash(text)}
    return out


def _json_for_script(data: dict[str, Any]) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>`` or ``<!--`` can appear."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_page(
    archive: dict[str, Any],
    *,
    seat: int | None = None,
    title: str | None = None,
    templates: Path | None = None,
) -> ReplayPage:
    """The replay page of ``archive`` (see the module's docstring).

    Raises:
        ReplayPageError: as `replay_data`.
    """
    data = replay_data(archive, seat=seat, title=title)
    html = render_page(data, templates)
    return ReplayPage(html=html, states=len(data["states"]), over=data["over"], seat=seat)


def _compact(script: str) -> str:
    """The script without its indentation and whole-line comments (a few KB less in
    every page; the script has no multi-line strings, so lines can be trimmed)."""
    lines = (line.strip() for line in script.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


def render_page(
    data: dict[str, Any], templates: Path | None = None, review: GameReview | None = None
) -> str:
    """The HTML of a page holding ``data`` (`replay_data`'s); with ``review`` (one
    seat's, `engine.review`: that seat's page, in a game that gives reviews) the page
    shows it in words under the result (the script does not need it: it is not in the
    embedded data, which keeps the page small)."""
    folder = templates or TEMPLATES
    env = _environment(str(folder))
    words = review_text(review, data["names"]) if review is not None else None
    # The deal proof travels once: inside the archive's text when the page checks its
    # format (the script takes it from there).
    embedded = dict(data)
    rest = embedded.pop("archive_rest", None)
    if rest is not None:
        whole = {**rest, "deal_proof": data["deal_proof"]}
        embedded.update(deal_proof=None, archive_json=json.dumps(whole, ensure_ascii=False))
    # The checks against the player's own mail and the previous game's archive need the
    # archive's deal proof: a page without one (a game running, or not dealt verifiably)
    # carries neither their box nor their script.
    checks = rest is not None and isinstance(data.get("deal_proof"), dict)
    names = ["replay_verify.js", *(["replay_mail.js"] if checks else []), "replay.js"]
    script = _compact("\n".join((Path(folder) / n).read_text(encoding="utf-8") for n in names))
    return env.get_template("replay.html").render(
        data=data, data_json=_json_for_script(embedded), script=script, review=words, checks=checks
    )
