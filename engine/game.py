"""The Cribbage state machine.

A game is its ``Settings``, its ``seed`` and the list of actions applied to it.
Everything random (the draw for the first deal, each hand's pack) comes from the
seed through :mod:`engine.rng`, so replaying the actions rebuilds every state
exactly.  ``Game.apply`` validates an action completely before changing
anything: a rejected action leaves the game as it was.

Seats are numbered 0..n-1 clockwise; the player on the dealer's left is
``(dealer + 1) % n``.  With four players seats 0 and 2 are partners against 1
and 3, and a *side* (the thing that scores) is ``seat % 2``; otherwise each seat
is its own side.

Phases: ``discard`` → (starter) → ``pegging`` → ``show`` → next hand, until
``game_over``.  The draw, the deal, the starter and (when muggins is off) the
show happen inside ``apply`` as soon as they are due, so the phases that wait
for a player are ``discard``, ``pegging``, ``show`` (muggins only) and none
after ``game_over``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from engine.actions import Accept, Action, Claim, Discard, Go, Muggins, Play, Resign
from engine.cards import JACK, Card, full_deck, parse_card, parse_rank
from engine.errors import AmbiguousActionError, IllegalActionError, InvalidSyntaxError
from engine.rng import shuffled
from engine.scoring import (
    CORRECTION,
    GO,
    HEELS,
    MUGGINS,
    ScoreItem,
    score_play,
    score_show,
)

DISCARD = "discard"
PEGGING = "pegging"
SHOW = "show"
GAME_OVER = "game_over"

SKUNK_MODES = ("none", "lurch", "skunk")
MAX_CLAIM = 29


@dataclass(frozen=True, slots=True)
class Settings:
    """What is fixed when a game is created.

    ``first_dealer`` skips the draw (a match's later games: the loser deals).
    """

    players: int = 2
    target: int = 121
    skunk: str = "skunk"
    muggins: bool = False
    first_dealer: int | None = None

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise IllegalActionError(f"cribbage is for 2, 3 or 4 players, not {self.players}")
        if self.target not in (61, 121):
            raise IllegalActionError(f"a game is to 61 or 121, not {self.target}")
        if self.skunk not in SKUNK_MODES:
            raise IllegalActionError(f"skunk must be one of {', '.join(SKUNK_MODES)}")
        if self.first_dealer is not None and not 0 <= self.first_dealer < self.players:
            raise IllegalActionError(f"no seat {self.first_dealer} to deal first")

    @property
    def sides(self) -> int:
        return 2 if self.players == 4 else self.players

    @property
    def hand_size(self) -> int:
        return 6 if self.players == 2 else 5

    @property
    def discard_count(self) -> int:
        return 2 if self.players == 2 else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "target": self.target,
            "skunk": self.skunk,
            "muggins": self.muggins,
            "first_dealer": self.first_dealer,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        return cls(
            players=int(data.get("players", 2)),
            target=int(data.get("target", 121)),
            skunk=str(data.get("skunk", "skunk")),
            muggins=bool(data.get("muggins", False)),
            first_dealer=None if data.get("first_dealer") is None else int(data["first_dealer"]),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for the record and for the players' mail.

    ``private_to`` is the one seat allowed to see it (a deal, a discard);
    None means public.  ``points`` is what the event pegged and equals the sum
    of ``items`` — except for ``reveal`` (muggins games: the true breakdown of a
    hand whose count was claimed), which pegs nothing.
    """

    kind: str
    hand: int
    seat: int | None = None
    side: int | None = None
    cards: tuple[Card, ...] = ()
    count: int | None = None
    points: int = 0
    items: tuple[ScoreItem, ...] = ()
    detail: str = ""
    private_to: int | None = None

    def __reduce__(self) -> tuple[type[Event], tuple[Any, ...]]:
        """Pickled as its fields, made again by its constructor (cheaper both ways than a
        frozen slotted dataclass's state, for the views sent to the rendering helper)."""
        return Event, (
            self.kind,
            self.hand,
            self.seat,
            self.side,
            self.cards,
            self.count,
            self.points,
            self.items,
            self.detail,
            self.private_to,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "hand": self.hand,
            "seat": self.seat,
            "side": self.side,
            "cards": [c.ascii for c in self.cards],
            "count": self.count,
            "points": self.points,
            "items": [i.to_json() for i in self.items],
            "detail": self.detail,
            "private_to": self.private_to,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended.  ``game_values[side]`` is the number of games each loser loses."""

    winner: int
    winner_seats: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str
    game_values: dict[int, int]

    @property
    def value(self) -> int:
        """The winner's game value: the most any loser loses (1, 2 for a lurch/skunk, 4)."""
        return max(self.game_values.values(), default=1)

    @property
    def label(self) -> str:
        return {1: "a single game", 2: "a double game", 4: "a quadruple game"}.get(
            self.value, f"{self.value} games"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "winner_seats": list(self.winner_seats),
            "scores": list(self.scores),
            "reason": self.reason,
            "game_values": {str(k): v for k, v in self.game_values.items()},
            "value": self.value,
        }


def game_value(loser_score: int, target: int, mode: str) -> int:
    """Games lost by a loser with ``loser_score`` under the skunk setting.

    lurch: under half the target (61 of 121, 31 of 61) loses 2.
    skunk: under 91 of 121 (46 of 61) loses 2, under 61 (31) loses 4.
    """
    half = (target + 1) // 2
    if mode == "lurch":
        return 2 if loser_score < half else 1
    if mode == "skunk":
        three_quarters = 91 if target == 121 else 46
        if loser_score < half:
            return 4
        if loser_score < three_quarters:
            return 2
    return 1


@dataclass
class _ShowWindow:
    """Muggins games: a claim was made; opponents may call muggins."""

    claimant: int
    missed: int
    responders: list[int]


@dataclass
class _State:
    hand_no: int = 0
    dealer: int = 0
    phase: str = DISCARD
    pack: list[Card] = field(default_factory=list)
    holding: list[list[Card]] = field(default_factory=list)
    kept: list[tuple[Card, ...]] = field(default_factory=list)
    laid_away: list[tuple[Card, ...]] = field(default_factory=list)
    crib: list[Card] = field(default_factory=list)
    starter: Card | None = None
    count: int = 0
    count_cards: list[tuple[int, Card]] = field(default_factory=list)
    plays: list[tuple[int, Card, int]] = field(default_factory=list)
    gone: set[int] = field(default_factory=set)
    last_player: int | None = None
    turn: int | None = None
    show_order: list[tuple[int, str]] = field(default_factory=list)
    show_index: int = 0
    window: _ShowWindow | None = None
    scores: list[int] = field(default_factory=list)
    back_pegs: list[int] = field(default_factory=list)
    outcome: Outcome | None = None

    def clone(self) -> _State:
        return _State(
            hand_no=self.hand_no,
            dealer=self.dealer,
            phase=self.phase,
            pack=list(self.pack),
            holding=[list(h) for h in self.holding],
            kept=list(self.kept),
            laid_away=list(self.laid_away),
            crib=list(self.crib),
            starter=self.starter,
            count=self.count,
            count_cards=list(self.count_cards),
            plays=list(self.plays),
            gone=set(self.gone),
            last_player=self.last_player,
            turn=self.turn,
            show_order=list(self.show_order),
            show_index=self.show_index,
            window=None
            if self.window is None
            else _ShowWindow(
                self.window.claimant, self.window.missed, list(self.window.responders)
            ),
            scores=list(self.scores),
            back_pegs=list(self.back_pegs),
            outcome=self.outcome,
        )


class Game:
    """One game of Cribbage.  Create with ``Game(settings, seed)``; drive with ``apply``."""

    def __init__(self, settings: Settings, seed: str) -> None:
        if not isinstance(seed, str) or not seed:
            raise InvalidSyntaxError("a game needs a non-empty string seed")
        self.settings = settings
        self.seed = seed
        self.actions: list[Action] = []
        self.events: list[Event] = []
        self.draws: list[dict[int, Card]] = []
        self._s = _State(scores=[0] * settings.sides, back_pegs=[0] * settings.sides)
        first = settings.first_dealer
        if first is None:
            first = self._draw_for_deal()
        self._deal(first, 1)

    # -- introspection -------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.settings.players

    @property
    def phase(self) -> str:
        return self._s.phase

    @property
    def dealer(self) -> int:
        return self._s.dealer

    @property
    def hand_no(self) -> int:
        return self._s.hand_no

    @property
    def starter(self) -> Card | None:
        return self._s.starter

    @property
    def count(self) -> int:
        return self._s.count

    @property
    def count_cards(self) -> tuple[tuple[int, Card], ...]:
        return tuple(self._s.count_cards)

    @property
    def plays(self) -> tuple[tuple[int, Card, int], ...]:
        """Every card played this hand: (seat, card, count after it)."""
        return tuple(self._s.plays)

    @property
    def scores(self) -> tuple[int, ...]:
        """Front pegs, one per side."""
        return tuple(self._s.scores)

    @property
    def back_pegs(self) -> tuple[int, ...]:
        return tuple(self._s.back_pegs)

    @property
    def outcome(self) -> Outcome | None:
        return self._s.outcome

    @property
    def is_over(self) -> bool:
        return self._s.phase == GAME_OVER

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.players == 4 else seat

    def seats_of(self, side: int) -> tuple[int, ...]:
        return tuple(s for s in range(self.players) if self.side_of(s) == side)

    def holding(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds now (private to that seat)."""
        return tuple(self._s.holding[seat])

    def kept(self, seat: int) -> tuple[Card, ...]:
        """The hand ``seat`` kept after discarding (private until the show)."""
        return self._s.kept[seat] if self._s.kept[seat] else ()

    def laid_away(self, seat: int) -> tuple[Card, ...]:
        return self._s.laid_away[seat]

    def crib(self) -> tuple[Card, ...]:
        """The cards in the crib now (hidden from every player until the crib is shown)."""
        return tuple(self._s.crib)

    @property
    def crib_size(self) -> int:
        return len(self._s.crib)

    @property
    def pack_size(self) -> int:
        return len(self._s.pack)

    def show_entry(self) -> tuple[int, str] | None:
        """Muggins games in the show: (seat, 'hand'|'crib') being counted now."""
        if self._s.phase != SHOW or self._s.show_index >= len(self._s.show_order):
            return None
        return self._s.show_order[self._s.show_index]

    def showing(self) -> tuple[Card, ...]:
        """Muggins games in the show: the cards of the hand (or crib) being counted now.

        A hand is laid face up when it is counted, so these cards are public.
        """
        entry = self.show_entry()
        return () if entry is None else self._show_cards(*entry)

    @property
    def awaiting_muggins(self) -> bool:
        return self._s.window is not None

    def to_act(self) -> tuple[int, ...]:
        """The seats that may act now (all who still have to discard, in discard)."""
        s = self._s
        if s.phase == DISCARD:
            need = self.settings.discard_count
            return tuple(
                seat
                for seat in range(self.players)
                if len(s.holding[seat]) > self.settings.hand_size - need
            )
        if s.phase == PEGGING and s.turn is not None:
            return (s.turn,)
        if s.phase == SHOW:
            if s.window is not None:
                return tuple(s.window.responders)
            entry = self.show_entry()
            return (entry[0],) if entry else ()
        return ()

    def legal_actions(self, seat: int | None = None) -> list[Action]:
        """Every legal action (for one seat, or all seats), resignation not included."""
        seats = self.to_act() if seat is None else tuple(x for x in self.to_act() if x == seat)
        s = self._s
        out: list[Action] = []
        for who in seats:
            if s.phase == DISCARD:
                for combo in combinations(sorted(s.holding[who]), self.settings.discard_count):
                    out.append(Discard(who, combo))
            elif s.phase == PEGGING:
                playable = [c for c in sorted(s.holding[who]) if s.count + c.value <= 31]
                out.extend(Play(who, c) for c in playable)
                if not playable:
                    out.append(Go(who))
            elif s.phase == SHOW:
                if s.window is not None:
                    out.extend([Muggins(who), Accept(who)])
                else:
                    out.extend(Claim(who, n) for n in range(MAX_CLAIM + 1))
        return out

    def forced_action(self) -> Action | None:
        """The next action when it has only one possible answer (a go, a single legal card)."""
        if self._s.phase != PEGGING:
            return None
        legal = self.legal_actions()
        return legal[0] if len(legal) == 1 else None

    def resolve_card(self, seat: int, text: str) -> Card:
        """The card in ``seat``'s hand that ``text`` names: a card, or a bare rank.

        Raises ``InvalidSyntaxError``, ``IllegalActionError`` (not held) or
        ``AmbiguousActionError`` (``7`` with two sevens held).
        """
        rank = parse_rank(text)
        held = self._s.holding[seat]
        if rank is not None:
            matches = [c for c in held if c.rank == rank]
            if not matches:
                raise IllegalActionError(f"you hold no {text.strip()}")
            if len(matches) > 1:
                names = tuple(str(c) for c in sorted(matches))
                raise AmbiguousActionError(
                    f"{text.strip()!r} is ambiguous: you hold {' and '.join(names)}", names
                )
            return matches[0]
        card = parse_card(text)
        if card not in held:
            raise IllegalActionError(f"you do not hold {card}")
        return card

    # -- applying ------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply one action; return the events it caused.

        Raises ``IllegalActionError`` (leaving the game unchanged) when the
        action is not allowed now; the message names the action and why.
        """
        if not 0 <= action.seat < self.players:
            raise IllegalActionError(f"there is no seat {action.seat} in this game")
        if self._s.phase == GAME_OVER:
            raise IllegalActionError("the game is over")
        start = len(self.events)
        if isinstance(action, Resign):
            self._resign(action)
        else:
            self._check_turn(action)
            if isinstance(action, Discard):
                self._discard(action)
            elif isinstance(action, Play):
                self._play(action)
            elif isinstance(action, Go):
                self._go(action)
            elif isinstance(action, Claim):
                self._claim(action)
            elif isinstance(action, Muggins | Accept):
                self._respond(action)
            else:  # pragma: no cover - exhaustive
                raise IllegalActionError(f"unknown action {action!r}")
        self.actions.append(action)
        return self.events[start:]

    def _check_turn(self, action: Action) -> None:
        s = self._s
        allowed = {
            DISCARD: (Discard,),
            PEGGING: (Play, Go),
            SHOW: (Muggins, Accept) if s.window is not None else (Claim,),
        }[s.phase]
        if not isinstance(action, allowed):
            names = " or ".join(cls.__name__.lower() for cls in allowed)
            raise IllegalActionError(
                f"cannot {action}: the game is waiting for {names} ({self._phase_words()})"
            )
        if action.seat not in self.to_act():
            if s.phase == DISCARD:
                raise IllegalActionError(f"cannot {action}: you have already laid away")
            waiting = ", ".join(f"seat {x}" for x in self.to_act())
            raise IllegalActionError(
                f"cannot {action}: it is not your turn (waiting for {waiting})"
            )

    def _phase_words(self) -> str:
        s = self._s
        if s.phase == DISCARD:
            return "discards to the crib"
        if s.phase == PEGGING:
            return f"the play, count {s.count}"
        if s.window is not None:
            return "muggins or accept"
        return "the count of the hand being shown"

    # -- setting up ----------------------------------------------------------------

    def _draw_for_deal(self) -> int:
        contenders = list(range(self.players))
        round_no = 0
        while True:
            round_no += 1
            pack = shuffled(full_deck(), self.seed, f"draw/{round_no}")
            drawn = {seat: pack[i] for i, seat in enumerate(contenders)}
            self.draws.append(drawn)
            low = min(c.rank for c in drawn.values())
            lowest = [seat for seat, c in drawn.items() if c.rank == low]
            detail = ", ".join(f"seat {seat} cut {card}" for seat, card in drawn.items())
            self.events.append(Event("draw", 0, cards=tuple(drawn.values()), detail=detail))
            if len(lowest) == 1:
                return lowest[0]
            contenders = lowest

    def _deal(self, dealer: int, hand_no: int) -> None:
        s = self._s
        n = self.players
        s.hand_no, s.dealer, s.phase = hand_no, dealer, DISCARD
        pack = shuffled(full_deck(), self.seed, f"hand/{hand_no}")
        s.holding = [[] for _ in range(n)]
        order = [(dealer + 1 + i) % n for i in range(n)]
        pos = 0
        for _ in range(self.settings.hand_size):
            for seat in order:
                s.holding[seat].append(pack[pos])
                pos += 1
        s.crib = []
        if n == 3:
            s.crib.append(pack[pos])
            pos += 1
        s.pack = pack[pos:]
        s.kept = [() for _ in range(n)]
        s.laid_away = [() for _ in range(n)]
        s.starter = None
        s.count, s.count_cards, s.plays, s.gone = 0, [], [], set()
        s.last_player, s.turn = None, None
        s.show_order, s.show_index, s.window = [], 0, None
        self.events.append(Event("deal", hand_no, seat=dealer, detail=f"hand {hand_no}"))
        for seat in range(n):
            self.events.append(
                Event(
                    "hand",
                    hand_no,
                    seat=seat,
                    cards=tuple(sorted(s.holding[seat])),
                    private_to=seat,
                )
            )

    # -- discarding ----------------------------------------------------------------

    def _discard(self, action: Discard) -> None:
        s = self._s
        need = self.settings.discard_count
        cards = action.cards
        if len(cards) != need:
            raise IllegalActionError(
                f"cannot {action}: lay away exactly {need} card{'s' if need > 1 else ''}"
            )
        if len(set(cards)) != len(cards):
            raise IllegalActionError(f"cannot {action}: the same card twice")
        for card in cards:
            if card not in s.holding[action.seat]:
                raise IllegalActionError(f"cannot {action}: you do not hold {card}")
        for card in cards:
            s.holding[action.seat].remove(card)
        s.crib.extend(cards)
        s.laid_away[action.seat] = tuple(sorted(cards))
        s.kept[action.seat] = tuple(sorted(s.holding[action.seat]))
        self.events.append(
            Event(
                "discard",
                s.hand_no,
                seat=action.seat,
                cards=tuple(sorted(cards)),
                private_to=action.seat,
            )
        )
        if not self.to_act():
            self._turn_starter()

    def _turn_starter(self) -> None:
        s = self._s
        # The pone cuts; the dealer turns up the top card of the lower packet.  The
        # undealt pack is already in random order, so its top card is the starter.
        s.starter = s.pack.pop(0)
        self.events.append(Event("starter", s.hand_no, seat=s.dealer, cards=(s.starter,)))
        if s.starter.rank == JACK:
            item = ScoreItem(HEELS, (s.starter,), 2)
            if self._score(s.dealer, "heels", (item,), cards=(s.starter,)):
                return
        s.phase = PEGGING
        s.turn = (s.dealer + 1) % self.players

    # -- pegging -------------------------------------------------------------------

    def _play(self, action: Play) -> None:
        s = self._s
        card = action.card
        if card not in s.holding[action.seat]:
            raise IllegalActionError(f"cannot play {card}: you do not hold it")
        if s.count + card.value > 31:
            playable = [str(c) for c in sorted(s.holding[action.seat]) if s.count + c.value <= 31]
            legal = "play " + " or ".join(playable) if playable else "go"
            raise IllegalActionError(
                f"cannot play {card}: the count would be {s.count + card.value}", legal
            )
        s.holding[action.seat].remove(card)
        s.count += card.value
        s.count_cards.append((action.seat, card))
        s.plays.append((action.seat, card, s.count))
        s.last_player = action.seat
        items = score_play([c for _, c in s.count_cards])
        event = Event(
            "play",
            s.hand_no,
            seat=action.seat,
            side=self.side_of(action.seat),
            cards=(card,),
            count=s.count,
            points=sum(i.points for i in items),
            items=items,
        )
        if self._record_score(event):
            return
        self._advance(action.seat)

    def _go(self, action: Go) -> None:
        s = self._s
        if any(s.count + c.value <= 31 for c in s.holding[action.seat]):
            playable = " or ".join(
                str(c) for c in sorted(s.holding[action.seat]) if s.count + c.value <= 31
            )
            raise IllegalActionError(
                f"cannot say go: you can play {playable} (count {s.count})", f"play {playable}"
            )
        s.gone.add(action.seat)
        self.events.append(Event("go", s.hand_no, seat=action.seat, count=s.count))
        self._advance(action.seat)

    def _can_play(self, seat: int) -> bool:
        s = self._s
        return any(s.count + c.value <= 31 for c in s.holding[seat])

    def _advance(self, after: int) -> None:
        """After ``after`` played or said go: next turn, or end the count."""
        s = self._s
        n = self.players
        if not any(self._can_play(seat) for seat in range(n)):
            self._end_count()
            return
        for step in range(1, n + 1):
            seat = (after + step) % n
            if s.holding[seat] and seat not in s.gone:
                s.turn = seat
                return
        self._end_count()  # pragma: no cover - someone can play, so someone is found

    def _end_count(self) -> None:
        s = self._s
        last = s.last_player
        assert last is not None
        if s.count != 31:
            last_card = s.count_cards[-1][1]
            item = ScoreItem(GO, (last_card,), 1)
            event = Event(
                "count_end",
                s.hand_no,
                seat=last,
                side=self.side_of(last),
                cards=(last_card,),
                count=s.count,
                points=1,
                items=(item,),
                detail="last card" if not any(s.holding) else "go",
            )
            if self._record_score(event):
                return
        else:
            self.events.append(Event("count_end", s.hand_no, seat=last, count=31))
        s.count, s.count_cards, s.gone = 0, [], set()
        if not any(s.holding):
            self._start_show()
            return
        n = self.players
        for step in range(1, n + 1):
            seat = (last + step) % n
            if s.holding[seat]:
                s.turn = seat
                return

    # -- the show ------------------------------------------------------------------

    def _start_show(self) -> None:
        s = self._s
        n = self.players
        s.phase = SHOW
        s.turn = None
        s.show_order = [((s.dealer + i) % n, "hand") for i in range(1, n + 1)]
        s.show_order.append((s.dealer, "crib"))
        s.show_index = 0
        if not self.settings.muggins:
            for seat, what in s.show_order:
                cards = self._show_cards(seat, what)
                items = score_show(cards, s.starter, crib=what == "crib")
                event = Event(
                    "show",
                    s.hand_no,
                    seat=seat,
                    side=self.side_of(seat),
                    cards=cards,
                    points=sum(i.points for i in items),
                    items=items,
                    detail=what,
                )
                if self._record_score(event):
                    return
            self._next_hand()

    def _show_cards(self, seat: int, what: str) -> tuple[Card, ...]:
        s = self._s
        return tuple(sorted(s.crib)) if what == "crib" else s.kept[seat]

    def _opponents(self, seat: int) -> list[int]:
        """Seats that may call muggins on ``seat``, nearest on the left first."""
        n = self.players
        side = self.side_of(seat)
        return [(seat + i) % n for i in range(1, n) if self.side_of((seat + i) % n) != side]

    def _claim(self, action: Claim) -> None:
        s = self._s
        if not 0 <= action.points <= MAX_CLAIM:
            raise IllegalActionError(f"cannot count {action.points}: a count is 0 to {MAX_CLAIM}")
        seat, what = s.show_order[s.show_index]
        cards = self._show_cards(seat, what)
        items = score_show(cards, s.starter, crib=what == "crib")
        actual = sum(i.points for i in items)
        claimed = action.points
        scored = min(claimed, actual)
        event = Event(
            "claim",
            s.hand_no,
            seat=seat,
            side=self.side_of(seat),
            cards=cards,
            points=scored,
            items=(ScoreItem("claim", cards, scored),) if scored else (),
            detail=f"{what}: claimed {claimed}",
        )
        if self._record_score(event):
            return
        opponents = self._opponents(seat)
        if claimed > actual:
            excess = claimed - actual
            self._reveal(seat, what, cards)
            taker = opponents[0]
            fix = Event(
                "correction",
                s.hand_no,
                seat=taker,
                side=self.side_of(taker),
                points=excess,
                items=(ScoreItem(CORRECTION, cards, excess),),
                detail=f"seat {seat} claimed {claimed} for a hand worth {actual}",
            )
            if self._record_score(fix):
                return
            self._next_show_entry()
            return
        s.window = _ShowWindow(seat, actual - claimed, opponents)

    def _respond(self, action: Muggins | Accept) -> None:
        s = self._s
        window = s.window
        assert window is not None
        claimant = window.claimant
        _, what = s.show_order[s.show_index]
        cards = self._show_cards(claimant, what)
        if isinstance(action, Muggins):
            s.window = None
            self._reveal(claimant, what, cards)
            missed = window.missed
            event = Event(
                "muggins",
                s.hand_no,
                seat=action.seat,
                side=self.side_of(action.seat),
                points=missed,
                items=(ScoreItem(MUGGINS, cards, missed),) if missed else (),
                detail=f"seat {claimant} missed {missed}",
            )
            if self._record_score(event):
                return
            self._next_show_entry()
            return
        # Accept: partners answer as one side; with three players each opponent in turn.
        side = self.side_of(action.seat)
        window.responders = [r for r in window.responders if self.side_of(r) != side]
        if window.responders:
            return
        s.window = None
        self._reveal(claimant, what, cards)
        self._next_show_entry()

    def _reveal(self, seat: int, what: str, cards: tuple[Card, ...]) -> None:
        s = self._s
        items = score_show(cards, s.starter, crib=what == "crib")
        self.events.append(
            Event(
                "reveal",
                s.hand_no,
                seat=seat,
                side=self.side_of(seat),
                cards=cards,
                points=0,
                items=items,
                detail=what,
            )
        )

    def _next_show_entry(self) -> None:
        s = self._s
        s.show_index += 1
        if s.show_index >= len(s.show_order):
            self._next_hand()

    def _next_hand(self) -> None:
        s = self._s
        self._deal((s.dealer + 1) % self.players, s.hand_no + 1)

    # -- scoring and the end -------------------------------------------------------

    def _score(
        self, seat: int, kind: str, items: tuple[ScoreItem, ...], cards: tuple[Card, ...] = ()
    ) -> bool:
        event = Event(
            kind,
            self._s.hand_no,
            seat=seat,
            side=self.side_of(seat),
            cards=cards,
            points=sum(i.points for i in items),
            items=items,
        )
        return self._record_score(event)

    def _record_score(self, event: Event) -> bool:
        """Record ``event`` and peg its points; True if that ended the game."""
        self.events.append(event)
        if event.points <= 0 or event.side is None:
            return False
        s = self._s
        side = event.side
        s.back_pegs[side] = s.scores[side]
        s.scores[side] += event.points
        if s.scores[side] >= self.settings.target:
            self._finish(side, "target")
            return True
        return False

    def _finish(self, winner: int, reason: str) -> None:
        s = self._s
        target = self.settings.target
        values = {
            side: game_value(score, target, self.settings.skunk)
            for side, score in enumerate(s.scores)
            if side != winner
        }
        s.outcome = Outcome(winner, self.seats_of(winner), tuple(s.scores), reason, values)
        s.phase = GAME_OVER
        s.turn = None
        s.window = None
        self.events.append(Event("game_over", s.hand_no, side=winner, detail=reason))

    def _resign(self, action: Resign) -> None:
        s = self._s
        loser = self.side_of(action.seat)
        others = [side for side in range(self.settings.sides) if side != loser]
        winner = max(others, key=lambda side: (s.scores[side], -side))
        self.events.append(
            Event("resign", s.hand_no, seat=action.seat, side=loser, detail=action.reason)
        )
        self._finish(winner, action.reason)

    # -- copying, hashing, archive ---------------------------------------------------

    def copy(self) -> Game:
        other = Game.__new__(Game)
        other.settings = self.settings
        other.seed = self.seed
        other.actions = list(self.actions)
        other.events = list(self.events)
        other.draws = list(self.draws)
        other._s = self._s.clone()
        return other

    def state_json(self) -> dict[str, Any]:
        """The whole state, hidden cards included (for hashing and debugging, never for mail)."""
        s = self._s
        return {
            "hand_no": s.hand_no,
            "dealer": s.dealer,
            "phase": s.phase,
            "pack": [c.ascii for c in s.pack],
            "holding": [[c.ascii for c in h] for h in s.holding],
            "kept": [[c.ascii for c in k] for k in s.kept],
            "crib": [c.ascii for c in s.crib],
            "starter": s.starter.ascii if s.starter else None,
            "count": s.count,
            "count_cards": [[seat, c.ascii] for seat, c in s.count_cards],
            "plays": [[seat, c.ascii, n] for seat, c, n in s.plays],
            "gone": sorted(s.gone),
            "turn": s.turn,
            "show_index": s.show_index,
            "window": None
            if s.window is None
            else [s.window.claimant, s.window.missed, s.window.responders],
            "scores": s.scores,
            "back_pegs": s.back_pegs,
            "outcome": s.outcome.to_json() if s.outcome else None,
            "actions": len(self.actions),
        }

    def state_hash(self) -> str:
        blob = json.dumps(self.state_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


def new_game(
    players: int = 2,
    *,
    seed: str,
    target: int = 121,
    skunk: str = "skunk",
    muggins: bool = False,
    first_dealer: int | None = None,
) -> Game:
    """Create a game: ``new_game(2, seed="abc", target=61)``."""
    return Game(Settings(players, target, skunk, muggins, first_dealer), seed)


def replay(settings: Settings, seed: str, actions: Sequence[Action]) -> Iterator[Game]:
    """Yield a copy of the game before any action and after each action."""
    game = Game(settings, seed)
    yield game.copy()
    for action in actions:
        game.apply(action)
        yield game.copy()


def with_settings(settings: Settings, **changes: Any) -> Settings:
    return replace(settings, **changes)
