"""What one player may see: their own cards and the public board, nothing else.

``player_view(game, seat)`` is the only thing the service's templates get, so a
template cannot leak another player's hidden cards or the undealt pack.  Cards
become public when they are played, turned (the starter) or shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.actions import (
    Accept,
    Action,
    Claim,
    Discard,
    Go,
    Muggins,
    Play,
    action_from_json,
    action_to_json,
)
from engine.cards import Card, parse_card
from engine.game import DISCARD, GAME_OVER, PEGGING, SHOW, Event, Game, Outcome
from engine.scoring import ScoreItem


@dataclass(frozen=True, slots=True)
class SideScore:
    side: int
    seats: tuple[int, ...]
    front: int
    back: int


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One seat's view of the game at one moment."""

    seat: int
    players: int
    target: int
    muggins: bool
    skunk: str
    phase: str
    hand_no: int
    dealer: int
    my_side: int
    partner: int | None
    scores: tuple[SideScore, ...]
    holding: tuple[Card, ...]
    kept: tuple[Card, ...]
    laid_away: tuple[Card, ...]
    starter: Card | None
    count: int
    count_cards: tuple[tuple[int, Card], ...]
    plays: tuple[tuple[int, Card, int], ...]
    cards_left: tuple[int, ...]
    crib_size: int
    to_act: tuple[int, ...]
    my_turn: bool
    legal: tuple[Action, ...]
    show_entry: tuple[int, str] | None
    showing: tuple[Card, ...]
    awaiting_muggins: bool
    events: tuple[Event, ...]
    outcome: Outcome | None

    @property
    def playable(self) -> tuple[Card, ...]:
        return tuple(a.card for a in self.legal if isinstance(a, Play))

    @property
    def must_go(self) -> bool:
        return any(isinstance(a, Go) for a in self.legal)

    @property
    def must_discard(self) -> int:
        """How many cards this seat still has to lay away (0 if none)."""
        if self.phase != DISCARD or not any(isinstance(a, Discard) for a in self.legal):
            return 0
        return 2 if self.players == 2 else 1

    @property
    def may_claim(self) -> bool:
        return any(isinstance(a, Claim) for a in self.legal)

    @property
    def may_call_muggins(self) -> bool:
        return any(isinstance(a, Muggins | Accept) for a in self.legal)

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "players": self.players,
            "target": self.target,
            "phase": self.phase,
            "hand_no": self.hand_no,
            "dealer": self.dealer,
            "scores": [[s.side, list(s.seats), s.front, s.back] for s in self.scores],
            "holding": [c.ascii for c in self.holding],
            "kept": [c.ascii for c in self.kept],
            "laid_away": [c.ascii for c in self.laid_away],
            "starter": self.starter.ascii if self.starter else None,
            "count": self.count,
            "count_cards": [[seat, c.ascii] for seat, c in self.count_cards],
            "plays": [[seat, c.ascii, n] for seat, c, n in self.plays],
            "cards_left": list(self.cards_left),
            "crib_size": self.crib_size,
            "to_act": list(self.to_act),
            "legal": [action_to_json(a) for a in self.legal],
            "muggins": self.muggins,
            "skunk": self.skunk,
            "my_side": self.my_side,
            "partner": self.partner,
            "my_turn": self.my_turn,
            "show_entry": list(self.show_entry) if self.show_entry else None,
            "showing": [c.ascii for c in self.showing],
            "awaiting_muggins": self.awaiting_muggins,
            "events": [e.to_json() for e in self.events],
            "outcome": self.outcome.to_json() if self.outcome else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayerView:
        """Rebuild a view from ``to_json`` (what a mail's machine-readable part carries)."""

        def cards(items: list[str]) -> tuple[Card, ...]:
            return tuple(parse_card(c) for c in items)

        outcome = data.get("outcome")
        return cls(
            seat=int(data["seat"]),
            players=int(data["players"]),
            target=int(data["target"]),
            muggins=bool(data.get("muggins", False)),
            skunk=str(data.get("skunk", "skunk")),
            phase=str(data["phase"]),
            hand_no=int(data["hand_no"]),
            dealer=int(data["dealer"]),
            my_side=int(data.get("my_side", data["seat"])),
            partner=data.get("partner"),
            scores=tuple(
                SideScore(int(side), tuple(seats), int(front), int(back))
                for side, seats, front, back in data["scores"]
            ),
            holding=cards(data["holding"]),
            kept=cards(data["kept"]),
            laid_away=cards(data["laid_away"]),
            starter=parse_card(data["starter"]) if data.get("starter") else None,
            count=int(data["count"]),
            count_cards=tuple((int(seat), parse_card(c)) for seat, c in data["count_cards"]),
            plays=tuple((int(seat), parse_card(c), int(n)) for seat, c, n in data["plays"]),
            cards_left=tuple(int(n) for n in data["cards_left"]),
            crib_size=int(data["crib_size"]),
            to_act=tuple(int(s) for s in data["to_act"]),
            my_turn=bool(data.get("my_turn", False)),
            legal=tuple(action_from_json(a) for a in data["legal"]),
            show_entry=tuple(data["show_entry"]) if data.get("show_entry") else None,
            showing=cards(data.get("showing", [])),
            awaiting_muggins=bool(data.get("awaiting_muggins", False)),
            events=tuple(event_from_json(e) for e in data.get("events", ())),
            outcome=outcome_from_json(outcome) if outcome else None,
        )


def event_from_json(data: dict[str, Any]) -> Event:
    return Event(
        kind=str(data["kind"]),
        hand=int(data["hand"]),
        seat=data.get("seat"),
        side=data.get("side"),
        cards=tuple(parse_card(c) for c in data.get("cards", ())),
        count=data.get("count"),
        points=int(data.get("points", 0)),
        items=tuple(
            ScoreItem(i["kind"], tuple(parse_card(c) for c in i["cards"]), int(i["points"]))
            for i in data.get("items", ())
        ),
        detail=str(data.get("detail", "")),
        private_to=data.get("private_to"),
    )


def outcome_from_json(data: dict[str, Any]) -> Outcome:
    return Outcome(
        winner=int(data["winner"]),
        winner_seats=tuple(int(s) for s in data["winner_seats"]),
        scores=tuple(int(s) for s in data["scores"]),
        reason=str(data["reason"]),
        game_values={int(k): int(v) for k, v in data["game_values"].items()},
    )


def visible_events(game: Game, seat: int, since: int = 0) -> tuple[Event, ...]:
    """Events from index ``since`` on that ``seat`` may see."""
    return tuple(e for e in game.events[since:] if e.private_to is None or e.private_to == seat)


def player_view(game: Game, seat: int, since: int = 0) -> PlayerView:
    """The view of ``seat``; ``events`` holds the visible events from index ``since``."""
    if not 0 <= seat < game.players:
        raise ValueError(f"no seat {seat} in a {game.players}-player game")
    n = game.players
    scores = tuple(
        SideScore(side, game.seats_of(side), game.scores[side], game.back_pegs[side])
        for side in range(game.settings.sides)
    )
    to_act = game.to_act()
    legal = tuple(game.legal_actions(seat)) if game.phase != GAME_OVER else ()
    if game.phase == SHOW and not game.awaiting_muggins:
        # The claim menu is 0..29; one entry is enough to say "count N".
        legal = legal[:1]
    return PlayerView(
        seat=seat,
        players=n,
        target=game.settings.target,
        muggins=game.settings.muggins,
        skunk=game.settings.skunk,
        phase=game.phase,
        hand_no=game.hand_no,
        dealer=game.dealer,
        my_side=game.side_of(seat),
        partner=(seat + 2) % 4 if n == 4 else None,
        scores=scores,
        holding=tuple(sorted(game.holding(seat))),
        kept=game.kept(seat),
        laid_away=game.laid_away(seat),
        starter=game.starter,
        count=game.count if game.phase == PEGGING else 0,
        count_cards=game.count_cards,
        plays=game.plays,
        cards_left=tuple(len(game.holding(s)) for s in range(n)),
        crib_size=game.crib_size,
        to_act=to_act,
        my_turn=seat in to_act,
        legal=legal,
        show_entry=game.show_entry(),
        showing=game.showing(),
        awaiting_muggins=game.awaiting_muggins,
        events=visible_events(game, seat, since),
        outcome=game.outcome,
    )


OBSERVER = -1
"""The seat number of an observer's view: nobody's seat."""


def observer_view(game: Game, since: int = 0) -> PlayerView:
    """What someone watching the game may see: the public board only.

    The scores, the starter, the count and the cards played, the shows once they are
    revealed and the public events from index ``since`` — never a hand, the crib before
    its show, or the cards anyone laid away. ``seat`` is `OBSERVER`; nothing is legal.
    """
    n = game.players
    scores = tuple(
        SideScore(side, game.seats_of(side), game.scores[side], game.back_pegs[side])
        for side in range(game.settings.sides)
    )
    return PlayerView(
        seat=OBSERVER,
        players=n,
        target=game.settings.target,
        muggins=game.settings.muggins,
        skunk=game.settings.skunk,
        phase=game.phase,
        hand_no=game.hand_no,
        dealer=game.dealer,
        my_side=OBSERVER,
        partner=None,
        scores=scores,
        holding=(),
        kept=(),
        laid_away=(),
        starter=game.starter,
        count=game.count if game.phase == PEGGING else 0,
        count_cards=game.count_cards,
        plays=game.plays,
        cards_left=tuple(len(game.holding(s)) for s in range(n)),
        crib_size=game.crib_size,
        to_act=game.to_act(),
        my_turn=False,
        legal=(),
        show_entry=game.show_entry(),
        showing=game.showing(),
        awaiting_muggins=game.awaiting_muggins,
        events=tuple(e for e in game.events[since:] if e.private_to is None),
        outcome=game.outcome,
    )
