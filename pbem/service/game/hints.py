"""hints: ``hint`` (advice on one's move, or on one's last discard) and ``hints on|off``.

A game gives hints (``game.hints``) when one player plays the computer; a game between
people gives them once every one of its people sent ``hints on`` (each seat's agreement
is ``seat.hints_agreed``), and the others are told at each step: who asked, who is
still to agree, that hints are now on. ``hints off`` from any of its people turns them
off again (and withdraws that player's agreement); in a game against the computer it
is the player's own choice.

`advice` builds what a hint says from the asking seat's own views alone — now, and at
the moment it laid away its last discard (the game replayed to that action) — so a
hint cannot tell another player's hidden cards: the analyses in `engine.analysis` take
nothing but a ``PlayerView``. Nothing here writes mail (see `pbem.service.send.answers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from engine import (
    DISCARD,
    PEGGING,
    Card,
    Discard,
    Game,
    InvalidSyntaxError,
    PlayerView,
    player_view,
)
from engine.analysis import discard_analysis, discard_review, play_analysis
from pbem.commands import Command, hints_choice
from pbem.render import Notice
from pbem.render.hint import Advice, Review
from pbem.render.prompt import suggested_action
from pbem.service.context import Seated, is_computer
from pbem.store import models as m
from pbem.store._sql import update_row


def people(game_row: m.Game, seats: Sequence[Seated]) -> list[Seated]:
    """The seats played by people (not the computer)."""
    return [s for s in seats if not is_computer(game_row, s.seat.seat)]


def against_computer(game_row: m.Game, seats: Sequence[Seated]) -> bool:
    """One person and the computer: hints are theirs to turn on and off."""
    return len(people(game_row, seats)) == 1


@dataclass(frozen=True)
class HintsChange:
    """What ``hints on|off`` did: the answer to its sender, and what the other people
    of the game are told (None: nothing to tell)."""

    notice: Notice
    tell_others: str | None = None


def set_hints(
    session: Session, game_row: m.Game, seats: Sequence[Seated], seat: int, cmd: Command
) -> HintsChange:
    """Apply ``hints on`` / ``hints off`` from ``seat``."""
    try:
        on = hints_choice(cmd)
    except InvalidSyntaxError as exc:
        return HintsChange(Notice("refused", str(cmd), str(exc), "hints on, hints off"))
    me = seats[seat]
    if against_computer(game_row, seats):
        update_row(session, me.seat, hints_agreed=on)
        update_row(session, game_row, hints=on)
        said = (
            "Hints are on: reply 'hint' for advice on your move."
            if on
            else "Hints are off in this game; 'hints on' turns them on again."
        )
        return HintsChange(Notice("applied", str(cmd), said))
    humans = people(game_row, seats)
    if not on:
        was_on, had_agreed = game_row.hints, me.seat.hints_agreed
        update_row(session, me.seat, hints_agreed=False)
        update_row(session, game_row, hints=False)
        if not was_on and not had_agreed:
            return HintsChange(Notice("applied", str(cmd), "Hints are off in this game."))
        return HintsChange(
            Notice(
                "applied",
                str(cmd),
                "Hints are off in this game; the other players are told.",
            ),
            f"{me.name} turned hints off in this game: 'hint' is not answered any more. "
            "They are on again when every player sends 'hints on'.",
        )
    update_row(session, me.seat, hints_agreed=True)
    waiting = [s for s in humans if s is not me and not s.seat.hints_agreed]
    if game_row.hints:
        return HintsChange(Notice("applied", str(cmd), "Hints are already on in this game."))
    if waiting:
        names = ", ".join(s.name for s in waiting)
        return HintsChange(
            Notice(
                "applied",
                str(cmd),
                f"You agreed to hints in this game. They are on once every player agrees: "
                f"waiting for {names}.",
            ),
            f"{me.name} would like hints in this game: with hints on, any player may reply "
            f"'hint' for advice on their own move (built from their own cards only). Reply "
            f"'hints on' to agree; they are on once every player agrees.",
        )
    update_row(session, game_row, hints=True)
    return HintsChange(
        Notice(
            "applied",
            str(cmd),
            "Every player agreed: hints are on in this game. Reply 'hint' for advice.",
        ),
        f"{me.name} agreed too: every player agreed, so hints are on in this game. "
        "Reply 'hint' for advice on your move.",
    )


def refusal(game_row: m.Game, seats: Sequence[Seated], seat: int, cmd: Command) -> Notice | None:
    """Why ``hint`` is not answered in this game (None: it is)."""
    if game_row.hints:
        return None
    if against_computer(game_row, seats):
        return Notice(
            "refused",
            str(cmd),
            "Hints are off in this game: you turned them off.",
            "hints on (then hint)",
        )
    humans = people(game_row, seats)
    agreed = [s.name for s in humans if s.seat.hints_agreed and s.seat.seat != seat]
    said = (
        "Hints are off in this game: it is played between people, so hints are on only "
        "when every player agrees. Reply 'hints on' to ask the others; they are told, and "
        "hints are on once each of them replies 'hints on' too."
    )
    if seats[seat].seat.hints_agreed:
        waiting = [s.name for s in humans if not s.seat.hints_agreed]
        said = (
            "Hints are off in this game: you agreed to them, but not every player has "
            f"yet (waiting for {', '.join(waiting)})."
        )
    elif agreed:
        said += f" Agreed so far: {', '.join(agreed)}."
    return Notice("refused", str(cmd), said, "hints on")


# -- what a hint says -------------------------------------------------------------------


def advice(game: Game, seat: int) -> Advice:
    """The hint for ``seat`` now: the discards or the plays open to it (when it is its
    turn), and how its last discard compared with the best one; from its own views."""
    view = player_view(game, seat, len(game.events))
    discard = play = None
    suggested = suggested_action(view)
    if view.phase == DISCARD and view.must_discard:
        discard = discard_analysis(view)
    elif view.phase == PEGGING and view.my_turn and view.playable:
        card = getattr(suggested, "card", None)
        play = play_analysis(view, card)
    return Advice(
        discard=discard,
        play=play,
        suggested=suggested,
        must_go=view.phase == PEGGING and view.my_turn and view.must_go,
        review=last_review(game, seat),
    )


def last_review(game: Game, seat: int) -> Review | None:
    """``seat``'s latest discard beside the best one, from the view it had then (the
    game replayed to the moment it laid away)."""
    found = discard_moment(game, seat)
    if found is None:
        return None
    then, laid = found
    return Review(hand_no=then.hand_no, holding=then.holding, review=discard_review(then, laid))


def discard_moment(game: Game, seat: int) -> tuple[PlayerView, tuple[Card, ...]] | None:
    """``seat``'s view just before its latest discard, and that discard's cards."""
    last = None
    for i, action in enumerate(game.actions):
        if isinstance(action, Discard) and action.seat == seat:
            last = i
    if last is None:
        return None
    replayed = Game(game.settings, game.seed)
    for action in game.actions[:last]:
        replayed.apply(action)
    discard = game.actions[last]
    assert isinstance(discard, Discard)
    return player_view(replayed, seat, len(replayed.events)), discard.cards
