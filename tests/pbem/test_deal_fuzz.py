"""No verifier crashes on any archive, and ``pbem verify``'s checks and the standalone
verifier give one verdict on archives mangled anywhere outside what only a replay can
check; the standalone verifier's small schema validator and the ``jsonschema`` library
agree on every mangled archive (the same schema file, one verdict)."""

from __future__ import annotations

import copy
import importlib.util
import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.dealcheck import verify
from engine.dealschema import schema, schema_error
from engine.errors import EngineError
from tests.deal_corpus import base_cases

ROOT = Path(__file__).resolve().parents[2]

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=5),
    st.sampled_from([2.0, 1e3, 2**70, "", "x", "AS", "0" * 64, "A" * 64, [], {}, [None]]),
)


@cache
def standalone() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "pbem_deal_verify", ROOT / "docs" / "pbem_deal_verify.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def bases() -> list[dict[str, Any]]:
    return [
        case.archive for case in base_cases() if isinstance(case.archive.get("deal_proof"), dict)
    ]


# A null starter on the last hand is step 8 (a game resigned before its starter is
# finished with none): only the replay tells; the corpus tampers the other starters.
REPLAY_ONLY = {
    "actions",
    "state_hash",
    "outcome",
    "result",
    "target",
    "skunk",
    "muggins",
    "starter",
}


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON tree that a verifier without a rules engine checks alike."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in REPLAY_ONLY:
                out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += paths(value, (*prefix, index))
    return out


@st.composite
def mangled(draw: st.DrawFn) -> dict[str, Any]:
    archive = copy.deepcopy(draw(st.sampled_from(bases())))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        where = draw(st.sampled_from(paths(archive)))
        node: Any = archive
        for part in where[:-1]:
            node = node[part]
        if isinstance(node, dict) and draw(st.booleans()) and draw(st.booleans()):
            node.pop(where[-1])
        else:
            node[where[-1]] = draw(VALUES)
    return json.loads(json.dumps(archive))


def engine_verdict(archive: dict[str, Any]) -> str:
    try:
        verdict = verify(archive)
    except EngineError:
        return "mismatch"  # pbem verify: "the archive cannot be checked", exit 1
    if verdict.ok:
        return "ok"
    if not verdict.verifiable or not verdict.revealed:
        return "exit 3"
    return "mismatch"


def standalone_verdict(archive: dict[str, Any]) -> str:
    module = standalone()
    try:
        module.verify(archive)
    except module.Failed as exc:
        return "exit 3" if exc.code == 3 else "mismatch"
    return "ok"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mangled())
def test_one_verdict_on_mangled_archives(archive: dict[str, Any]) -> None:
    try:
        said = verify(archive).message
    except EngineError as exc:
        said = str(exc)
    proof = archive.get("deal_proof")
    proof = proof if isinstance(proof, dict) else {}
    legacy = proof.get("protocol") in ("pbem-deal/1", "pbem-deal/2")
    if legacy and "deals" not in proof and standalone_verdict(archive) == "exit 3":
        # An archive from before the records: only a rules engine checks its deals.
        return
    assert engine_verdict(archive) == standalone_verdict(archive), said


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mangled())
def test_the_two_schema_validators_agree(archive: dict[str, Any]) -> None:
    protocol = (
        archive["deal_proof"].get("protocol")
        if isinstance(archive.get("deal_proof"), dict)
        else None
    )
    if protocol not in ("pbem-deal/1", "pbem-deal/2", "pbem-deal/3"):
        return
    rules = schema(protocol)
    mine = standalone().schema_error(rules, archive, rules, "archive")
    assert (mine is None) == (schema_error(archive, protocol) is None), mine


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        VALUES,
        lambda kids: (
            st.lists(kids)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "deal_proof",
                        "protocol",
                        "settings",
                        "seed",
                        "actions",
                        "format",
                        "entropy",
                        "computer",
                    ]
                ),
                kids,
            )
        ),
        max_leaves=12,
    )
)
def test_no_verifier_crashes_on_any_json(value: Any) -> None:
    for data in (
        value,
        {
            "format": "pbem-cribbage/1",
            "settings": {},
            "seed": None,
            "actions": [],
            "deal_proof": value,
        },
    ):
        engine_verdict(data) if isinstance(data, dict) else None
        standalone_verdict(data)
