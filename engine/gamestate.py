"""The state of a game and what it shows: the base of :class:`engine.game.Game`.

``GameState`` holds a game's fields (its settings, seed, actions, events, the draw for
the first deal and the mutable ``_State``), answers every question about the game
(whose turn, what is legal, which card a text names), deals the hands from the seed
and pegs points, ending the game when a side reaches the target.  The rules of each
phase build on it: :mod:`engine.show` (the show and muggins), :mod:`engine.pegging`
(the discard, the starter and the play) and :mod:`engine.game` (applying an action,
resigning, copying and hashing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

from engine.actions import Accept, Action, Claim, Discard, Go, Muggins, Play
from engine.cards import Card, full_deck, parse_card, parse_rank
from engine.errors import AmbiguousActionError, IllegalActionError
from engine.gametypes import (
    DISCARD,
    GAME_OVER,
    MAX_CLAIM,
    PEGGING,
    SHOW,
    Event,
    Outcome,
    Settings,
    game_value,
)
from engine.rng import shuffled
from engine.scoring import ScoreItem


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


class GameState:
    """A game's fields and everything that reads them; :class:`engine.game.Game` adds
    the rules that change them."""

    settings: Settings
    seed: str
    actions: list[Action]
    events: list[Event]
    draws: list[dict[int, Card]]
    _s: _State

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

    def _show_cards(self, seat: int, what: str) -> tuple[Card, ...]:
        s = self._s
        return tuple(sorted(s.crib)) if what == "crib" else s.kept[seat]

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
