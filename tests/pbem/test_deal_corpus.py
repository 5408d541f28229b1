"""One verdict everywhere: every archive of the shared corpus (`tests.deal_corpus`), real
and tampered, through ``pbem verify``, the standalone ``docs/pbem_deal_verify.py`` and
the replay page's check in a real browser; each must give the corpus's verdict (ok,
mismatch, not verifiable, not revealed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pbem.cli import app
from pbem.render.replay import ReplayPageError, replay_page
from tests.deal_corpus import (
    MISMATCH,
    NOT_REVEALED,
    NOT_VERIFIABLE,
    OK,
    VERDICTS,
    Case,
    corpus,
)
from tests.pbem.replay.browser import launch

ROOT = Path(__file__).resolve().parents[2]
STANDALONE = ROOT / "docs" / "pbem_deal_verify.py"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Case, Path]]:
    folder = tmp_path_factory.mktemp("corpus")
    out = []
    for case in corpus():
        path = folder / f"{case.name}.json"
        path.write_text(json.dumps(case.archive, ensure_ascii=False), encoding="utf-8")
        out.append((case, path))
    return out


def test_the_corpus_is_the_same_every_time(cases: list[tuple[Case, Path]], tmp_path: Path) -> None:
    from tests.deal_corpus import write

    written = list(write(tmp_path))
    assert len(written) == len(cases)
    for (case, _), path in zip(cases, written, strict=True):
        assert json.loads(path.read_text(encoding="utf-8")) == case.archive
    verdicts = json.loads((tmp_path / "verdicts.json").read_text(encoding="utf-8"))
    assert verdicts == {case.name: case.verdict for case, _ in cases}


def exit_verdict(code: int, stderr: str) -> str:
    """A verifier's verdict from its exit status (and, for 3, which of the two)."""
    if code == 3:
        return NOT_REVEALED if "not revealed" in stderr else NOT_VERIFIABLE
    return {0: OK, 1: MISMATCH}.get(code, f"exit {code}: {stderr}")


def test_the_corpus_covers_every_verdict_and_the_contract(
    cases: list[tuple[Case, Path]],
) -> None:
    verdicts = {case.verdict for case, _ in cases}
    assert verdicts == set(VERDICTS)
    names = {case.name for case, _ in cases}
    for base in ("two", "three", "four", "computer", "aborted", "follows2", "follows4"):
        assert base in names
    # A forgotten player's cut, under each protocol: hash only, in the entropy and cuts.
    for base, protocol, seat in (("forgotten", "pbem-deal/2", 0), ("forgotten1", "pbem-deal/1", 1)):
        proof = next(case.archive for case, _ in cases if case.name == base)["deal_proof"]
        assert proof["protocol"] == protocol
        assert set(proof["entropy"][seat]) == {"seat", "sha256"}
        assert all("text" not in c for c in proof["cuts"] if c["seat"] == seat)
    tampered = [case for case, _ in cases if "--" in case.name]
    assert len(tampered) >= 30
    two = next(case.archive for case, _ in cases if case.name == "two")
    proof = two["deal_proof"]
    assert {"cuts", "recuts", "follows", "draws", "deals", "outcome"} <= set(proof)
    assert [c["accepted"] for c in proof["cuts"]] == [False, True, True]
    assert next(c.archive for c, _ in cases if c.name == "computer")["computer"][0]["seat"] == 1


def test_pbem_verify_gives_each_verdict(cases: list[tuple[Case, Path]]) -> None:
    runner = CliRunner()
    wrong = []
    for case, path in cases:
        result = runner.invoke(app, ["verify", str(path)])
        got = exit_verdict(result.exit_code, result.stderr + result.stdout)
        if got != case.verdict:
            wrong.append((case.name, case.verdict, got, result.output))
        assert "Traceback" not in result.output
    assert not wrong


def test_the_real_pbem_verify_command_gives_each_kind_of_verdict(
    cases: list[tuple[Case, Path]],
) -> None:
    """An archive of each exit status through the real ``pbem`` process (the in-process
    runs above give every verdict)."""
    picked: dict[str, tuple[Case, Path]] = {}
    for case, path in cases:
        if case.verdict != NOT_VERIFIABLE:
            picked.setdefault(case.verdict, (case, path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for verdict, (case, path) in picked.items():
        done = subprocess.run(
            [sys.executable, "-m", "pbem.cli", "verify", str(path)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
        )
        assert exit_verdict(done.returncode, done.stderr) == verdict, (case.name, done)


def test_the_standalone_verifier_gives_each_verdict(cases: list[tuple[Case, Path]]) -> None:
    wrong = []
    for case, path in cases:
        done = subprocess.run(
            [sys.executable, "-I", str(STANDALONE), str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        got = exit_verdict(done.returncode, done.stderr)
        if got != case.verdict:
            wrong.append((case.name, case.verdict, got, done.stdout + done.stderr))
    assert not wrong


def test_a_substituted_cut_is_caught_by_the_players_receipt(
    cases: list[tuple[Case, Path]], tmp_path: Path
) -> None:
    """The server swaps seat 0's cut everywhere and regrinds the key: only the player's
    receipt tells. Both command-line verifiers compare it (--seat/--cut)."""
    by_name = {case.name: (case, path) for case, path in cases}
    real, real_path = by_name["two"]
    receipt = real.archive["deal_proof"]["entropy"][0]["text"]
    _, forged_path = by_name["two--cut-substituted-everywhere"]
    # The forgery made consistent: the key rederived from the swapped text.
    forged = json.loads(forged_path.read_text(encoding="utf-8"))
    from engine.fairness import derive_seed

    proof = forged["deal_proof"]
    forged["seed"] = derive_seed(proof["server_seed"], [e["text"] for e in proof["entropy"]])
    ground = tmp_path / "ground.json"
    ground.write_text(json.dumps(forged), encoding="utf-8")
    runner = CliRunner()
    for path, verdict in ((real_path, OK), (ground, MISMATCH)):
        args = [str(path), "--seat", "0", "--cut", receipt]
        result = runner.invoke(app, ["verify", *args])
        assert exit_verdict(result.exit_code, result.stderr) == verdict, result.output
        done = subprocess.run(
            [sys.executable, "-I", str(STANDALONE), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert exit_verdict(done.returncode, done.stderr) == verdict, done.stderr
        if verdict == OK:
            said = "seat 0's cut as recorded is the text of the receipt"
            assert said in result.stdout and said in done.stdout
        if verdict == MISMATCH:
            assert "check cut" in result.stderr and "check cut" in done.stderr
            assert receipt in done.stderr
    # While the game runs the receipt can be checked already (then exit 3: not revealed).
    running, running_path = by_name["running"]
    mine = running.archive["deal_proof"]["entropy"][1]["text"]
    result = runner.invoke(app, ["verify", str(running_path), "--seat", "1", "--cut", mine])
    assert result.exit_code == 3 and "seat 1's cut as recorded is the text" in result.stdout
    done = subprocess.run(
        [sys.executable, "-I", str(STANDALONE), str(running_path), "--seat", "1", "--cut", mine],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 3 and "seat 1's cut as recorded is the text" in done.stdout
    # A seat that never cut, and --seat without --cut.
    result = runner.invoke(app, ["verify", str(real_path), "--seat", "3", "--cut", "x"])
    assert result.exit_code == 1 and "no cut is recorded for seat 3" in result.stderr
    result = runner.invoke(app, ["verify", str(real_path), "--seat", "0"])
    assert result.exit_code == 1 and "go together" in result.stderr
    done = subprocess.run(
        [sys.executable, "-I", str(STANDALONE), str(real_path), "--cut", "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "go together" in done.stderr


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def test_the_replay_page_gives_each_verdict(
    cases: list[tuple[Case, Path]], browser: Any, tmp_path: Path
) -> None:
    """One tab for the whole corpus: each page opened from disk, its check awaited."""
    states = {"verified": OK, "mismatch": MISMATCH, "none": NOT_VERIFIABLE, "hidden": NOT_REVEALED}
    wrong = []
    unbuilt = []
    context = browser.new_context()
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    try:
        for case, _ in cases:
            try:
                try:
                    page = replay_page(case.archive)
                except ReplayPageError as exc:
                    if "--as" not in str(exc):
                        raise
                    page = replay_page(case.archive, seat=0)
            except ReplayPageError:
                # An archive that does not replay makes no page (``pbem replay`` refuses
                # it).
                unbuilt.append(case.name)
                continue
            path = tmp_path / f"{case.name}.html"
            path.write_text(page.html, encoding="utf-8")
            tab.goto(path.as_uri())
            tab.wait_for_function("document.getElementById('verify').dataset.state !== 'pending'")
            got = states.get(tab.get_attribute("#verify", "data-state") or "", "?")
            if got != case.verdict:
                wrong.append((case.name, case.verdict, got, tab.text_content("#verify")))
    finally:
        context.close()
    assert not errors
    assert not wrong
    # The pages that cannot be made: a game never dealt has nothing to replay, and an
    # archive whose key was changed does not replay (a mismatch for the others too).
    never = [case.name for case, _ in cases if case.archive["seed"] is None]
    assert len(never) == 7
    assert sorted(unbuilt) == sorted(["two--key", "two--cut-omitted-reground", *never])


def test_a_forgotten_cut_is_checked_fully_under_2_and_3_and_not_verifiable_under_1(
    cases: list[tuple[Case, Path]], browser: Any, tmp_path: Path
) -> None:
    """The three verifiers say the same of a forgotten cut: nothing left unchecked under
    pbem-deal/2 and /3; under /1 the seed cannot be derived again, so the verdict is
    "not verifiable" (exit 3) and says why — never "ok"."""
    by_name = {case.name: (case, path) for case, path in cases}
    note = "cut was forgotten at its player's request"
    context = browser.new_context()
    tab = context.new_page()
    try:
        for name, noted in (("forgotten", False), ("forgotten3", False), ("forgotten1", True)):
            case, path = by_name[name]
            code = 3 if noted else 0
            result = CliRunner().invoke(app, ["verify", str(path)])
            said = result.stdout + result.stderr
            assert result.exit_code == code and (note in said) == noted, result.output
            done = subprocess.run(
                [sys.executable, "-I", str(STANDALONE), str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            said = done.stdout + done.stderr
            assert done.returncode == code and (note in said) == noted, said
            page = tmp_path / f"{name}.html"
            page.write_text(replay_page(case.archive).html, encoding="utf-8")
            tab.goto(page.as_uri())
            tab.wait_for_function("document.getElementById('verify').dataset.state !== 'pending'")
            text = tab.text_content("#verify") or ""
            state = "none" if noted else "verified"
            assert tab.get_attribute("#verify", "data-state") == state, text
            assert ("kept only as its SHA-256" in text) == noted, text
    finally:
        context.close()
    # The forgotten player's own receipt checks against the hash, in both verifiers.
    from engine.fairness import entropy_text

    _, path = by_name["forgotten"]
    mine = entropy_text("<forgotten-0@mail.example>", "17 lucky cats")
    for cut, code in ((mine, 0), (mine + " x", 1)):
        args = [str(path), "--seat", "0", "--cut", cut]
        result = CliRunner().invoke(app, ["verify", *args])
        done = subprocess.run(
            [sys.executable, "-I", str(STANDALONE), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.exit_code == done.returncode == code, (result.output, done.stderr)
        if code:
            assert "forgotten, its SHA-256" in result.stderr and "forgotten" in done.stderr


def test_the_standalone_verifier_names_the_same_failures(tmp_path: Path) -> None:
    """In-process, every failure of `tests.engine.test_dealcheck` that needs no replay:
    the standalone verifier names the same check."""
    import importlib.util

    from tests.engine.test_dealcheck import CASES, base

    spec = importlib.util.spec_from_file_location("pbem_deal_verify", STANDALONE)
    assert spec is not None and spec.loader is not None
    standalone = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(standalone)
    replay_only = {"state hash", "outcome finished", "outcome aborted"}
    for name, what, edit, check, _words in CASES:
        if what in replay_only:
            continue
        archive = base(name)
        edit(archive)
        with pytest.raises(standalone.Failed) as failed:
            standalone.verify(archive)
        assert failed.value.code == 1 and f"check {check}" in str(failed.value), what
    # What it cannot read, and an archive from before the records: no traceback.
    legacy = base("older2")  # a pbem-deal/2 archive (a /3 one must record its deals)
    for key in ("cuts", "recuts", "follows", "outcome", "abort_reason", "draws", "deals"):
        legacy["deal_proof"].pop(key)
    files = {
        "missing.json": None,
        "bad.json": "{not json",
        "list.json": "[]",
        "other.json": json.dumps({**base("two"), "deal_proof": {"protocol": "x"}}),
        "legacy.json": json.dumps(legacy),
    }
    codes = {}
    for file, text in files.items():
        path = tmp_path / file
        if text is not None:
            path.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-I", str(STANDALONE), str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert "Traceback" not in done.stderr
        codes[file] = (done.returncode, done.stderr)
    assert codes["missing.json"][0] == 1 and "cannot read" in codes["missing.json"][1]
    assert codes["bad.json"][0] == 1 and "cannot read" in codes["bad.json"][1]
    assert codes["list.json"][0] == 1 and "game archive" in codes["list.json"][1]
    assert codes["other.json"][0] == 1 and "pbem-deal/1" in codes["other.json"][1]
    assert codes["legacy.json"][0] == 3 and "records no deals" in codes["legacy.json"][1]
    # pbem verify checks the same legacy archive through the replay.
    result = CliRunner().invoke(app, ["verify", str(tmp_path / "legacy.json")])
    assert result.exit_code == 0 and "deals verified" in result.stdout


def test_the_page_checks_the_board_it_shows(
    cases: list[tuple[Case, Path]], browser: Any, tmp_path: Path
) -> None:
    """A page whose embedded board was edited (a starter, a dealt hand, the last deal
    record dropped) fails its check, though its proof is intact."""
    from pbem.render.replay import render_page, replay_data

    archive = next(case.archive for case, _ in cases if case.name == "three")

    def starter(data: dict[str, Any]) -> None:
        ev = next(e for st in data["states"] for e in st["ev"] if e["k"] == "starter")
        ev["c"] = ["AS" if ev["c"][0] != "AS" else "KH"]

    def dealt(data: dict[str, Any]) -> None:
        ev = next(e for st in data["states"] for e in st["ev"] if e["k"] == "hand")
        ev["c"] = ["AS" if c != "AS" else "KH" for c in ev["c"]]

    def shown_starter(data: dict[str, Any]) -> None:
        state = next(st for st in data["states"] if st["st"])
        state["st"] = "AS" if state["st"] != "AS" else "KH"

    def shown_card(data: dict[str, Any]) -> None:
        held = next(h for st in data["states"][1:] for h in st["hold"] if len(h) > 1)
        held[0] = next(c for c in ("AS", "KH", "QD") if c not in held)

    def record_dropped(data: dict[str, Any]) -> None:
        data["deal_proof"]["deals"] = data["deal_proof"]["deals"][:-1]

    context = browser.new_context()
    tab = context.new_page()
    try:
        for edit, words in (
            (starter, "starter"),
            (dealt, "dealt cards"),
            (shown_starter, "starter shown"),
            (shown_card, "is shown a card"),
            (record_dropped, "recorded"),
        ):
            data = replay_data(archive)
            edit(data)
            path = tmp_path / f"{edit.__name__}.html"
            path.write_text(render_page(data), encoding="utf-8")
            tab.goto(path.as_uri())
            tab.wait_for_function("document.getElementById('verify').dataset.state !== 'pending'")
            assert tab.get_attribute("#verify", "data-state") == "mismatch", edit.__name__
            assert words in (tab.text_content("#verify") or ""), edit.__name__
    finally:
        context.close()


def test_the_pages_key_and_shuffle_are_the_specifications(
    cases: list[tuple[Case, Path]], browser: Any, tmp_path: Path
) -> None:
    """The page's own implementation against the test vectors of docs/pbem-deal-1.md."""
    vectors = json.loads(
        (ROOT / "tests" / "engine" / "data" / "deal_vectors.json").read_text(encoding="utf-8")
    )
    path = tmp_path / "page.html"
    path.write_text(replay_page(cases[0][0].archive).html, encoding="utf-8")
    context = browser.new_context()
    tab = context.new_page()
    try:
        tab.goto(path.as_uri())
        for v in vectors["shuffles"]:
            got = tab.evaluate(
                "([k, l]) => window.cribbageReplay.shuffled(k, l)", [v["key"], v["label"]]
            )
            assert got == v["pack"]
        for v in vectors["keys"]:
            got = tab.evaluate(
                "([s, e, p]) => window.cribbageReplay.derive(s, e.map((t) => ({ text: t })), p)",
                [v["server_seed"], v["entropy"], v["protocol"]],
            )
            assert got == v["key"]
            if v["protocol"] == "pbem-deal/2":  # from the hashes alone: forgotten cuts
                got = tab.evaluate(
                    "([s, h, p]) => "
                    "window.cribbageReplay.derive(s, h.map((d) => ({ sha256: d })), p)",
                    [v["server_seed"], v["sha256"], v["protocol"]],
                )
                assert got == v["key"]
    finally:
        context.close()
