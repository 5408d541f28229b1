"""The show: each hand and the crib counted in turn, and muggins.

Without muggins every hand and then the crib is scored as soon as the play ends.  With
muggins the owner claims a count; an over-claim is corrected for the next opponent, and
an under-claim opens a window in which the opponents may call muggins (take the missed
points) or accept.  A base of :class:`engine.game.Game`.
"""

from __future__ import annotations

from engine.actions import Accept, Claim, Muggins
from engine.cards import Card
from engine.errors import IllegalActionError
from engine.gamestate import GameState, _ShowWindow
from engine.gametypes import MAX_CLAIM, SHOW, Event
from engine.scoring import CORRECTION, MUGGINS, ScoreItem, score_show


class ShowRules(GameState):
    """The show and muggins, then the next deal."""

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
