"""A move sent again after it was made: what to tell the player instead of a refusal.

A reply can name a move the log already holds for the sender's seat: the same mail
delivered twice under two Message-IDs, a player who sends ``discard 5h jd`` again, or a
reply written to an older mail while the service made the move for them (the only card
that fitted, a go). Refusing it with "you do not hold K♠" and the next hand's choices
misleads; ``already_done`` recognises it and says what happened to that move.

Only the seat's recent moves count: back to its discard of the hand before this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine import (
    DISCARD,
    Accept,
    Action,
    Card,
    Claim,
    Discard,
    EngineError,
    Game,
    Go,
    InvalidSyntaxError,
    Muggins,
    Play,
    parse_card,
    parse_rank,
)
from pbem.commands import Command, card_words, to_action

LoggedAuto = Callable[[int], bool | None]
"""The ``auto`` flag of the logged action number ``seq`` (None: not logged yet)."""


def already_done(game: Game, seat: int, command: Command, logged_auto: LoggedAuto) -> str | None:
    """What to tell ``seat`` when ``command`` (refused now) asks for a move it already made
    (or that was made for it) recently; None when it does not.

    ``logged_auto`` tells whether a logged move was made for the player (a forced move, the
    computer after a timeout) rather than by them.
    """
    recent = _recent(game, seat)
    if not recent:
        return None
    if command.verb in ("play", "discard", "cards"):
        return _card_move(game, seat, command, recent, logged_auto)
    if command.verb in ("go", "count", "muggins", "accept"):
        if seat in game.to_act():
            return None  # asked to move again: a refusal says why this one will not do
        try:
            wanted = to_action(game, seat, command)
        except EngineError:
            return None
        index, last = recent[0]
        if last != wanted:
            return None
        return _told(game, index, last, logged_auto)
    return None


def _recent(game: Game, seat: int) -> list[tuple[int, Action]]:
    """The seat's moves, newest first, back to its discard of the hand before this one."""
    out: list[tuple[int, Action]] = []
    discards = 0
    for index in range(len(game.actions) - 1, -1, -1):
        action = game.actions[index]
        if action.seat != seat:
            continue
        out.append((index, action))
        if isinstance(action, Discard):
            discards += 1
            if discards == 2:
                break
    return out


def _matches(word: str, card: Card) -> bool:
    rank = parse_rank(word)
    if rank is not None:
        return card.rank == rank
    try:
        return parse_card(word) == card
    except InvalidSyntaxError:
        return False


def _held(word: str, holding: Sequence[Card]) -> bool:
    return any(_matches(word, card) for card in holding)


def _same_cards(words: Sequence[str], cards: Sequence[Card]) -> bool:
    """Whether the words name exactly these cards, each word a different card."""
    if len(words) != len(cards):
        return False
    left = list(cards)
    for word in words:
        found = next((c for c in left if _matches(word, c)), None)
        if found is None:
            return False
        left.remove(found)
    return True


def _card_move(
    game: Game,
    seat: int,
    command: Command,
    recent: Sequence[tuple[int, Action]],
    logged_auto: LoggedAuto,
) -> str | None:
    holding = game.holding(seat)
    wanted = {command.verb}
    if command.verb == "cards":
        wanted = {"discard"} if game.phase == DISCARD else {"play"}
        wanted.add("play" if len(command.args) == 1 else "discard")
    for verb in sorted(wanted):
        words = card_words(game, Command(verb, command.args, command.line))
        if not words or any(_held(word, holding) for word in words):
            continue  # a card still held: the refusal is about something else
        for index, action in recent:
            if verb == "play" and isinstance(action, Play) and len(words) == 1:
                if _matches(words[0], action.card):
                    return _told(game, index, action, logged_auto)
            elif (
                verb == "discard"
                and isinstance(action, Discard)
                and _same_cards(words, action.cards)
            ):
                return _told(game, index, action, logged_auto)
    return None


def _forced(game: Game, index: int) -> bool:
    """Whether the move ``index`` of ``game`` was its only possible answer (replayed)."""
    before = Game(game.settings, game.seed)
    for action in game.actions[:index]:
        before.apply(action)
    return before.forced_action() == game.actions[index]


def _told(game: Game, index: int, action: Action, logged_auto: LoggedAuto) -> str:
    """The words for a move already made: by the player, or for them."""
    if _forced(game, index):
        if isinstance(action, Play):
            return (
                f"that card was already played for you: {action.card} was the only card "
                "you could play, so it went automatically."
            )
        if isinstance(action, Go):
            return "a go was already said for you: no card of yours fitted under 31."
    if logged_auto(index):
        return f"that move was already made for you when your time ran out: {action}."
    match action:
        case Play(_, card):
            return f"already done: you played {card}."
        case Discard(_, cards):
            return f"already done: you laid away {' '.join(str(c) for c in cards)}."
        case Go():
            return "already done: you said go."
        case Claim(_, points):
            return f"already done: you counted {points}."
        case Muggins():
            return "already done: you called muggins."
        case Accept():
            return "already done: you let the count stand."
    return f"already done: {action}."
