"""A hand's play: the discard to the crib, the starter (his heels) and the pegging.

The count runs to 31; a seat that cannot play says go; the last card of a count (or
31) pegs; when every card is played the show begins (:mod:`engine.show`).  A base of
:class:`engine.game.Game`.
"""

from __future__ import annotations

from engine.actions import Discard, Go, Play
from engine.cards import JACK
from engine.errors import IllegalActionError
from engine.gametypes import PEGGING, Event
from engine.scoring import GO, HEELS, ScoreItem, score_play
from engine.show import ShowRules


class PeggingRules(ShowRules):
    """The discard, the starter and the play of a hand."""

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
