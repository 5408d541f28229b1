"""Scores and threats of the play in a cribbage player's words ("fifteen and a pair for
4", "a ten card makes 31 for 2"): what a hint and a game's review say."""

from __future__ import annotations

from collections.abc import Sequence

from engine.analysis import Threat
from engine.scoring import DOUBLE_PAIR_ROYAL, FIFTEEN, PAIR, PAIR_ROYAL, RUN, THIRTY_ONE

_KIND_WORDS = {
    FIFTEEN: "fifteen",
    THIRTY_ONE: "31",
    PAIR: "a pair",
    PAIR_ROYAL: "a pair royal",
    DOUBLE_PAIR_ROYAL: "a double pair royal",
}


def score_words(kinds: Sequence[str], points: int, run: int = 0) -> str:
    """``fifteen and a pair for 4`` (``run``: the length of a run among the kinds)."""
    words = [f"a run of {run or 3}" if k == RUN else _KIND_WORDS.get(k, k) for k in kinds]
    joined = " and ".join(words)
    return f"{joined} for {points}"


def run_length(kinds: Sequence[str], points: int) -> int:
    """The run's length among scores of ``kinds`` worth ``points`` in all."""
    other = {FIFTEEN: 2, THIRTY_ONE: 2, PAIR: 2, PAIR_ROYAL: 6, DOUBLE_PAIR_ROYAL: 12}
    return points - sum(other.get(k, 0) for k in kinds if k != RUN)


_RANK_WORDS = {1: "an ace", 8: "an 8", 11: "a jack", 12: "a queen", 13: "a king"}


def rank_words(ranks: Sequence[int]) -> str:
    """``a ten card``, ``a 7``, ``an ace``, ``an 8``, ``a king``, ``a 10, queen or king``."""
    if len(ranks) == 4:
        return "a ten card"
    names = [_RANK_WORDS.get(r, f"a {r}") for r in ranks]
    if len(names) == 1:
        return names[0]
    article = names[0].split(" ", 1)[0]
    bare = [n.split(" ", 1)[1] for n in names]
    return f"{article} {', '.join(bare[:-1])} or {bare[-1]}"


def threat_words(threat: Threat, who: str) -> str:
    """``a ten card makes 31 for 2 (Bob holds one: about 62%)``."""
    run = run_length(threat.kinds, threat.points) if RUN in threat.kinds else 0
    scores = score_words(threat.kinds, threat.points, run)
    return f"{rank_words(threat.ranks)} makes {scores} ({who} holds one: about {threat.chance:.0%})"
