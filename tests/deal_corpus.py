"""The shared corpus of deal archives: real games and tampered copies, each with the
verdict every verifier must give (``pbem verify``, ``docs/pbem_deal_verify.py`` and the
replay page's check).

Deterministic: the same archives every run. The games are played by the engine (random
legal moves from a fixed generator, the computer seat by the computer player itself) and
archived with `engine.fairness.DealProof` and `deal_records`, with every field of the
archive contract (``cuts``, ``recuts``, ``follows``, ``outcome``, ``computer``).

    python -m tests.deal_corpus DIR     # writes DIR/NAME.json and DIR/verdicts.json
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import Game, Settings, to_archive
from engine.archive import replay_archive
from engine.computer import choose_action
from engine.dealkey import PROTOCOL_3, key_bytes_v3, key_v3
from engine.fairness import (
    PROTOCOL,
    PROTOCOL_1,
    PROTOCOL_2,
    DealProof,
    commitment,
    deal_records,
    derive_seed,
    entropy_text,
    text_hash,
)
from engine.forgetting import forget_entry
from engine.game import PEGGING
from engine.match import first_dealer_after
from tests.engine.helpers import choose

OK, MISMATCH, NOT_VERIFIABLE, NOT_REVEALED = "ok", "mismatch", "not verifiable", "not revealed"
VERDICTS = (OK, MISMATCH, NOT_VERIFIABLE, NOT_REVEALED)


@dataclass(frozen=True)
class Case:
    """One corpus archive and the verdict every verifier must give it."""

    name: str
    archive: dict[str, Any]
    verdict: str


def server_seed(name: str) -> str:
    return hashlib.sha256(f"corpus server seed {name}".encode()).hexdigest()


def _cut(seat: int, mid: str, words: str, minute: int, protocol: str = PROTOCOL) -> dict[str, Any]:
    text = entropy_text(mid, words, protocol)
    return {
        "seat": seat,
        "message_id": mid,
        "received": f"2026-11-27T10:{minute:02d}:00+00:00",
        "text": text,
        "sha256": text_hash(text),
        "accepted": True,
        "reason": None,
    }


def make_key(
    s: str, entropy: tuple[tuple[int, str], ...], protocol: str, game: int, players: int
) -> str:
    """The key of a game by ``protocol``: ``/3`` binds the game number, the player count
    and each cut's seat (`engine.dealkey`)."""
    if protocol == PROTOCOL_3:
        pairs = [(seat, text_hash(text)) for seat, text in entropy]
        if len(s) != 64:  # a forger's short seed: the same bytes, unchecked
            return hashlib.sha256(bytes.fromhex(key_bytes_v3(s, game, players, pairs))).hexdigest()
        return key_v3(s, game, players, pairs)
    return derive_seed(s, [text for _, text in entropy], protocol)


def _play(game: Game, rng: random.Random, computer: dict[int, str], stop: int | None) -> None:
    """Random legal moves for the humans, the computer player's own for its seats, until
    the game is over or ``stop`` actions are applied."""
    while not game.is_over and (stop is None or len(game.actions) < stop):
        robots = [seat for seat in game.to_act() if seat in computer]
        if robots and game.phase == PEGGING and len(game.legal_actions()) == 1:
            game.apply(game.legal_actions()[0])  # as the service plays a forced move
        elif robots:
            game.apply(choose_action(game, robots[0], level=computer[robots[0]]))
        else:
            game.apply(choose(game, rng))


def fair_game(
    name: str,
    players: int,
    *,
    computer: dict[int, str] | None = None,
    follows: dict[str, Any] | None = None,
    first_dealer: int | None = None,
    stop: int | None = None,
    reveal: bool = True,
    aborted: str | None = None,
    recuts: list[dict[str, Any]] | None = None,
    refused: bool = False,
    protocol: str = PROTOCOL,
    seed: str | None = None,
) -> dict[str, Any]:
    """The archive of a fair game named ``name``: every human seat cuts (``refused``:
    seat 0 first sends a cut that is refused), the game is played to 61 (or ``stop``
    actions), and its proof (by ``protocol``) carries every field of the contract.
    ``seed``: another server seed (a forger's)."""
    computer = computer or {}
    s = seed if seed is not None else server_seed(name)
    humans = [seat for seat in range(players) if seat not in computer]
    cuts: list[dict[str, Any]] = []
    if refused:
        late = _cut(0, f"<early-{name}@example.org>", "too soon", 0, protocol)
        cuts.append({**late, "accepted": False, "reason": "the cut was not asked for yet"})
    words = ["17 lucky cats", "", "Grüße\u200b  aus\tKöln", "\u2665 \U0001f0a1"]
    for seat in humans:
        cuts.append(_cut(seat, f"<{name}-{seat}@mail.example>", words[seat], seat + 1, protocol))
    entropy = tuple((c["seat"], c["text"]) for c in cuts if c["accepted"])
    game_id = int(hashlib.sha256(name.encode()).hexdigest()[:4], 16)
    key = make_key(s, entropy, protocol, game_id, players)
    game = Game(Settings(players=players, target=61, first_dealer=first_dealer), key)
    _play(game, random.Random(name), computer, stop)
    archive = to_archive(game, game_id=game_id, status="finished")
    archive["players"] = [{"email": f"p{i}@example.org", "name": f"P{i}"} for i in range(players)]
    archive["computer"] = [
        {"seat": seat, "level": level, "engine": "pbem-cribbage 0.1.0"}
        for seat, level in sorted(computer.items())
    ]
    proof = DealProof(
        commitment(s),
        s,
        entropy,
        protocol,
        cuts=tuple(cuts),
        recuts=tuple(recuts or ()),
        follows=follows,
        outcome="aborted" if aborted else "finished",
        abort_reason=aborted,
        game=game_id,
        players=players,
    )
    records = deal_records(replay_archive(archive))
    archive["deal_proof"] = proof.to_json(reveal=reveal, records=records)
    if protocol == PROTOCOL_3 and game.is_over and game.outcome is not None:
        result = {"scores": list(game.outcome.scores), "winner": game.outcome.winner}
        archive["deal_proof"]["result"] = result
    if not game.is_over:
        archive["status"] = "aborted" if aborted else "active"
    return archive


def forgotten(archive: dict[str, Any], seat: int = 0) -> dict[str, Any]:
    """``archive`` after ``seat``'s player asked to be forgotten (as ``pbem player
    forget`` exports it): their entropy entry and cut mails keep only their text's
    SHA-256, the cut mails a pseudonym Message-ID."""
    proof = archive["deal_proof"]
    proof["entropy"] = [forget_entry(e) if e["seat"] == seat else e for e in proof["entropy"]]
    for number, cut in enumerate(proof["cuts"]):
        if cut["seat"] == seat:
            cut.pop("text")
            cut["message_id"] = f"<forgotten-1-{number}@forgotten.invalid>"
    archive["players"][seat] = {"email": "forgotten-1@forgotten.invalid", "name": "Forgotten 1"}
    return archive


def follows_of(previous: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The ``follows`` of a game after ``previous`` (an archive), and its first dealer."""
    games = list(replay_archive(previous))
    final = games[-1]
    assert final.outcome is not None
    data = {
        "game": previous["deal_proof"].get("game", previous["game_id"]),
        "commitment": previous["deal_proof"]["commitment"],
        "state_hash": previous["state_hash"],
        "scores": list(final.outcome.scores),
        "winner": final.outcome.winner,
        "dealer": final.dealer,
        "rule": "loser-deals-first",
    }
    return data, first_dealer_after(final)


def base_cases() -> list[Case]:
    """The untampered archives."""
    two = fair_game("two", 2, refused=True)
    three = fair_game("three", 3)
    four = fair_game("four", 4)
    robot = fair_game("computer", 2, computer={1: "hard"})
    robot3 = fair_game("computer3", 3, computer={2: "easy"})
    aborted = fair_game(
        "aborted",
        2,
        stop=9,
        aborted="aborted by the administrator",
        recuts=[recut("aborted", "the cut deadline passed")],
    )
    prev4 = four
    follows4, first4 = follows_of(prev4)
    after4 = fair_game("follows4", 4, follows=follows4, first_dealer=first4)
    follows2, first2 = follows_of(two)
    after2 = fair_game("follows2", 2, follows=follows2, first_dealer=first2)
    follows3, first3 = follows_of(three)
    after3 = fair_game("follows3", 3, follows=follows3, first_dealer=first3)
    running = fair_game("running", 2, stop=6, reveal=False)
    running["status"] = "active"
    legacy = fair_game("legacy", 2)
    legacy["deal_proof"] = {
        "protocol": "pbem-deal/1",
        "commitment": legacy["deal_proof"]["commitment"],
        "server_seed": None,
        "entropy": [
            {"seat": e["seat"], "text": e["text"]} for e in legacy["deal_proof"]["entropy"]
        ],
    }
    legacy["status"] = "finished"
    never = never_dealt()
    # A player forgotten: /2 derives the key from the hashes; /1 checks the deals
    # against the archive's seed, with a note.
    forgot2 = forgotten(fair_game("forgotten", 2, refused=True, protocol=PROTOCOL_2))
    forgot3 = forgotten(fair_game("forgotten3", 2, refused=True))
    older2 = fair_game("older2", 3, computer={1: "easy"}, protocol=PROTOCOL_2)
    older1 = fair_game("older1", 2, protocol=PROTOCOL_1)
    forgot1 = forgotten(fair_game("forgotten1", 3, protocol=PROTOCOL_1), seat=1)
    unfair = to_archive(_played(Game(Settings(players=2, target=61), "admin seed")))
    return [
        Case("two", two, OK),
        Case("three", three, OK),
        Case("four", four, OK),
        Case("computer", robot, OK),
        Case("computer3", robot3, OK),
        Case("aborted", aborted, OK),
        Case("follows2", after2, OK),
        Case("follows3", after3, OK),
        Case("follows4", after4, OK),
        Case("never-dealt", never, OK),
        Case("forgotten", forgot2, OK),
        Case("forgotten3", forgot3, OK),
        Case("older2", older2, OK),
        Case("older1", older1, OK),
        # /1 with a forgotten cut: the key cannot be derived again, so not verifiable.
        Case("forgotten1", forgot1, NOT_VERIFIABLE),
        Case("running", running, NOT_REVEALED),
        Case("legacy-unrevealed", legacy, NOT_REVEALED),
        Case("no-proof", unfair, NOT_VERIFIABLE),
    ]


def never_dealt() -> dict[str, Any]:
    """A 3-player game aborted at its cut deadline: seat 0 cut, seats 1 and 2 did not.
    No key, no deal; the server seed is revealed."""
    s = server_seed("never-dealt")
    cut = _cut(0, "<nd-0@mail.example>", "early bird", 1)
    proof = DealProof(
        commitment(s),
        s,
        ((0, cut["text"]),),
        PROTOCOL,
        cuts=(cut,),
        follows=None,
        outcome="aborted",
        abort_reason="not every player cut by the deadline",
        game=77,
        players=3,
    )
    data = proof.to_json(reveal=True)
    data["missing"] = [1, 2]
    return {
        "format": "pbem-cribbage/1",
        "settings": Settings(players=3, target=61).to_json(),
        "seed": None,
        "actions": [],
        "state_hash": None,
        "deal_proof": data,
        "game_id": 77,
        "status": "aborted",
        "computer": [],
    }


def _played(game: Game) -> Game:
    _play(game, random.Random(1), {}, None)
    return game


def recut(name: str, reason: str) -> dict[str, Any]:
    """An abandoned cut phase of game ``name``: its own seed, revealed."""
    s = server_seed(f"{name} recut")
    return {
        "at": "2026-11-26T09:00:00+00:00",
        "reason": reason,
        "commitment": commitment(s),
        "server_seed": s,
        "entropy": [
            {"seat": 0, "text": "<old@x> 5", "sha256": text_hash("<old@x> 5")},
        ],
    }


Tamper = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Tamper:
    """A tamper that sets the field at ``path`` (dots; numbers index lists)."""

    def apply(archive: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = archive
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return apply


def _other_card(card: str) -> str:
    return "AS" if card != "AS" else "KH"


def _swap_dealt(archive: dict[str, Any]) -> None:
    deal = archive["deal_proof"]["deals"][1]
    deal["hands"][0][0] = _other_card(deal["hands"][0][0])


def _swap_dealt_first(archive: dict[str, Any]) -> None:
    deal = archive["deal_proof"]["deals"][0]
    deal["hands"][1][2] = _other_card(deal["hands"][1][2])


def _swap_starter(archive: dict[str, Any]) -> None:
    deal = archive["deal_proof"]["deals"][0]
    deal["starter"] = _other_card(deal["starter"])


def _drop_starter(archive: dict[str, Any]) -> None:
    archive["deal_proof"]["deals"][0]["starter"] = None


def _swap_crib(archive: dict[str, Any]) -> None:
    deal = archive["deal_proof"]["deals"][0]
    deal["crib"] = [_other_card(deal["crib"][0])]


def _reorder_dealt(archive: dict[str, Any]) -> None:
    archive["deal_proof"]["deals"][0]["hands"][1].reverse()


def _change_dealer(archive: dict[str, Any]) -> None:
    deal = archive["deal_proof"]["deals"][0]
    deal["dealer"] = (deal["dealer"] + 1) % archive["settings"]["players"]


def _swap_draw(archive: dict[str, Any]) -> None:
    cards = archive["deal_proof"]["draws"][0]["cards"]
    cards[0], cards[1] = cards[1], cards[0]


def _drop_deal(archive: dict[str, Any]) -> None:
    archive["deal_proof"]["deals"].pop()


def _omit_cut(archive: dict[str, Any]) -> None:
    """Seat 1's cut dropped from the entropy (and from the cuts received)."""
    proof = archive["deal_proof"]
    proof["entropy"] = [e for e in proof["entropy"] if e["seat"] != 1]
    proof["cuts"] = [c for c in proof["cuts"] if c["seat"] != 1]


def _omit_cut_regrind(archive: dict[str, Any]) -> None:
    """Seat 1's cut dropped and the key recomputed without it: the server's grinding."""
    _omit_cut(archive)
    proof = archive["deal_proof"]
    archive["seed"] = derive_seed(proof["server_seed"], [e["text"] for e in proof["entropy"]])


def _substitute_cut(archive: dict[str, Any]) -> None:
    """Seat 0's entropy text replaced (its hash too), the cuts received left alone."""
    entry = archive["deal_proof"]["entropy"][0]
    entry["text"] = entry["text"] + " x"
    entry["sha256"] = text_hash(entry["text"])


def _substitute_cut_everywhere(archive: dict[str, Any]) -> None:
    """Seat 0's cut replaced in the entropy and among the cuts received: the key no
    longer derives (only the player's receipt shows which text is theirs)."""
    _substitute_cut(archive)
    for cut in archive["deal_proof"]["cuts"]:
        if cut["seat"] == 0 and cut["accepted"]:
            cut["text"] = archive["deal_proof"]["entropy"][0]["text"]
            cut["sha256"] = text_hash(cut["text"])


def _reorder_cuts(archive: dict[str, Any]) -> None:
    archive["deal_proof"]["entropy"].reverse()


def _duplicate_cut(archive: dict[str, Any]) -> None:
    entropy = archive["deal_proof"]["entropy"]
    entropy.append(dict(entropy[-1]))


def _refused_accepted(archive: dict[str, Any]) -> None:
    """The refused cut marked accepted, after the real one: the last accepted differs."""
    cuts = archive["deal_proof"]["cuts"]
    refused = next(c for c in cuts if not c["accepted"])
    cuts.remove(refused)
    cuts.append({**refused, "accepted": True, "reason": None})


def _follows_winner(archive: dict[str, Any]) -> None:
    follows = archive["deal_proof"]["follows"]
    sides = len(follows["scores"])
    follows["winner"] = (follows["winner"] + 1) % sides
    follows["scores"].reverse()


def _follows_dropped(archive: dict[str, Any]) -> None:
    archive["deal_proof"]["follows"] = None


def _hide_seed(archive: dict[str, Any]) -> None:
    archive["deal_proof"]["server_seed"] = None
    for key in ("draws", "deals"):
        archive["deal_proof"].pop(key, None)


def _rehash_forgotten(archive: dict[str, Any]) -> None:
    """Seat 0's forgotten cut given another hash in the entropy and the cuts alike: the
    cuts agree, the key (derived from the hashes) does not."""
    proof = archive["deal_proof"]
    proof["entropy"][0]["sha256"] = "5" * 64
    for cut in proof["cuts"]:
        if cut["seat"] == 0:
            cut["sha256"] = "5" * 64


def _computer_unlisted(archive: dict[str, Any]) -> None:
    archive["computer"] = []


TAMPERS: list[tuple[str, str, Tamper]] = [
    # (base archive, what is changed, how); every one must be a mismatch everywhere.
    ("two", "commitment", _set("deal_proof.commitment", "0" * 64)),
    ("two", "server-seed", _set("deal_proof.server_seed", "1" * 64)),
    ("two", "key", _set("seed", "2" * 64)),
    ("two", "entropy-hash", _set("deal_proof.entropy.0.sha256", "3" * 64)),
    ("two", "cut-hash", _set("deal_proof.cuts.1.sha256", "4" * 64)),
    ("two", "cut-omitted", _omit_cut),
    ("two", "cut-omitted-reground", _omit_cut_regrind),
    ("two", "cut-substituted", _substitute_cut),
    ("two", "cut-substituted-everywhere", _substitute_cut_everywhere),
    ("two", "cuts-reordered", _reorder_cuts),
    ("three", "cuts-reordered", _reorder_cuts),
    ("three", "cut-duplicated", _duplicate_cut),
    ("two", "refused-cut-counted", _refused_accepted),
    ("two", "starter", _swap_starter),
    ("two", "starter-dropped", _drop_starter),
    ("two", "dealt-card", _swap_dealt),
    ("four", "dealt-card", _swap_dealt),
    ("four", "dealt-order", _reorder_dealt),
    ("three", "crib-card", _swap_crib),
    ("three", "starter", _swap_starter),
    ("two", "draw", _swap_draw),
    ("two", "first-dealer", _change_dealer),
    ("two", "deal-dropped", _set("deal_proof.deals", [])),
    ("two", "records-dropped", _set("deal_proof.draws", None)),
    ("follows2", "first-dealer", _follows_winner),
    ("follows4", "first-dealer", _follows_winner),
    ("follows3", "follows-dropped", _follows_dropped),
    ("follows4", "last-dealer", _set("deal_proof.follows.dealer", None)),
    ("never-dealt", "server-seed", _set("deal_proof.server_seed", "7" * 64)),
    ("never-dealt", "actions", _set("actions", [{"type": "go", "seat": 0}])),
    ("never-dealt", "records", _set("deal_proof.deals", [{"hand": 1}])),
    ("never-dealt", "cut-hash", _set("deal_proof.cuts.0.sha256", "8" * 64)),
    ("computer", "computer-cut", _computer_unlisted),
    ("aborted", "server-seed", _set("deal_proof.server_seed", "5" * 64)),
    ("aborted", "recut-seed", _set("deal_proof.recuts.0.server_seed", "6" * 64)),
    ("aborted", "recut-hidden", _set("deal_proof.recuts.0.server_seed", None)),
    ("aborted", "dealt-card", _swap_dealt_first),
    # A forgotten cut's hash changed: the key no longer derives (/2), and the cuts
    # received no longer agree (/1 and /2).
    ("forgotten", "hash", _set("deal_proof.entropy.0.sha256", "3" * 64)),
    ("forgotten", "cut-hash", _set("deal_proof.cuts.1.sha256", "4" * 64)),
    ("forgotten", "hashes", _rehash_forgotten),
    ("forgotten", "dealt-card", _swap_dealt),
    ("forgotten1", "hash", _set("deal_proof.entropy.1.sha256", "3" * 64)),
    ("forgotten1", "cut-hash", _set("deal_proof.cuts.1.sha256", "4" * 64)),
    ("forgotten1", "malformed-hash", _set("deal_proof.entropy.1.sha256", "not a hash")),
    ("forgotten1", "crib-card", _swap_crib),
    ("forgotten1", "server-seed", _set("deal_proof.server_seed", "9" * 64)),
]

NOT_REVEALED_TAMPERS: list[tuple[str, str, Tamper]] = [
    # A seed withheld is never a pass: the verdict is "not revealed".
    ("aborted", "seed-withheld", _hide_seed),
]


def _never_dealt_after_every_cut(missing: list[int]) -> dict[str, Any]:
    """Game "two" fully cut, then relabelled as never dealt (its deal dropped): no seed,
    no action, no records, the cuts all there, ``missing`` as given."""
    archive = fair_game("two", 2, refused=True)
    proof = archive["deal_proof"]
    for key in ("draws", "deals", "result"):
        proof.pop(key, None)
    proof.update(outcome="aborted", abort_reason="not every player cut", missing=missing)
    archive.update(seed=None, actions=[], state_hash=None, status="aborted")
    return archive


def forged_cases() -> list[Case]:
    """Forgeries made as a cheating server would: by playing the game again through the
    engine from a key that fits the forged proof, not only by editing a field. Each is
    caught by the archive alone (the mail and the log catch those that are not: see
    tests/pbem/test_deal_mail.py and tests/pbem/test_commitment_log.py)."""
    short = fair_game("two", 2, refused=True, seed="ab" * 8)
    robot = fair_game("computer", 2, computer={1: "hard"})
    robot.pop("computer")
    return [
        # A short S, consistent with C and the key, the game replayed from it.
        Case("forged--short-server-seed", short, MISMATCH),
        # A played game relabelled "never dealt", naming no missing cut, or a false one.
        Case("forged--dropped-deal", _never_dealt_after_every_cut([]), MISMATCH),
        Case("forged--dropped-deal-missing-named", _never_dealt_after_every_cut([1]), MISMATCH),
        # The computer list deleted: under /3 the list is required.
        Case("forged--computer-list-deleted", robot, MISMATCH),
    ]


def corpus() -> list[Case]:
    """Every corpus archive with its verdict: the real ones, then the tampered, then the
    forged."""
    bases = base_cases()
    by_name = {case.name: case for case in bases}
    out = list(bases)
    for verdict, tampers in ((MISMATCH, TAMPERS), (NOT_REVEALED, NOT_REVEALED_TAMPERS)):
        for base, what, tamper in tampers:
            archive = copy.deepcopy(by_name[base].archive)
            tamper(archive)
            out.append(Case(f"{base}--{what}", archive, verdict))
    out += forged_cases()
    return out


def write(folder: Path) -> Iterator[Path]:
    """Write the corpus to ``folder``: one ``NAME.json`` each and ``verdicts.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    verdicts = {}
    for case in corpus():
        path = folder / f"{case.name}.json"
        path.write_text(json.dumps(case.archive, indent=1, ensure_ascii=False), encoding="utf-8")
        verdicts[case.name] = case.verdict
        yield path
    (folder / "verdicts.json").write_text(json.dumps(verdicts, indent=1), encoding="utf-8")


if __name__ == "__main__":
    for written in write(Path(sys.argv[1])):
        print(written)
