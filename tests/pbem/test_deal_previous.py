"""``--previous``: a game that follows another is checked against that game's archive
(``docs/pbem-deal-3.md`` section 7) by ``pbem verify`` and the standalone verifier. A
first dealer chosen by faking the previous game's result passes every check of the
archive alone; the previous archive catches it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from pbem.cli import app
from tests.deal_corpus import fair_game, follows_of

ROOT = Path(__file__).resolve().parents[2]
STANDALONE = ROOT / "docs" / "pbem_deal_verify.py"


def _both(archive: Path, previous: Path) -> tuple[int, str, int, str]:
    result = CliRunner().invoke(app, ["verify", str(archive), "--previous", str(previous)])
    done = subprocess.run(
        [sys.executable, "-I", str(STANDALONE), str(archive), "--previous", str(previous)],
        capture_output=True,
        text=True,
        check=False,
    )
    return (
        result.exit_code,
        result.stdout + result.stderr,
        done.returncode,
        done.stdout + done.stderr,
    )


def _write(folder: Path, name: str, data: dict[str, object]) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_rematch_checks_against_the_game_it_follows(tmp_path: Path) -> None:
    two = fair_game("two", 2, refused=True)
    follows, first = follows_of(two)
    after = fair_game("follows2", 2, follows=follows, first_dealer=first)
    prev, this = _write(tmp_path, "two", two), _write(tmp_path, "after", after)
    code, said, scode, ssaid = _both(this, prev)
    assert code == 0 and "checked: the follows record against the previous game's" in said, said
    assert scode == 0 and "checked: the follows record against the previous game's" in ssaid
    # Another game given as the previous one: its number and hash are not the record's.
    other = _write(tmp_path, "three", fair_game("three", 3))
    code, said, scode, ssaid = _both(this, other)
    assert code == scode == 1 and "check previous" in said and "check previous" in ssaid


def test_a_faked_first_dealer_is_caught_by_the_previous_archive(tmp_path: Path) -> None:
    """The server fakes the previous game's result (winner swapped) so that the other
    seat deals first, and plays the rematch again from that dealer: the archive alone
    verifies; against the previous game's archive it does not."""
    two = fair_game("two", 2, refused=True)
    follows, first = follows_of(two)
    faked = dict(follows, winner=1 - follows["winner"], scores=follows["scores"][::-1])
    forged = fair_game("follows2", 2, follows=faked, first_dealer=1 - first)
    path = _write(tmp_path, "forged", forged)
    alone = CliRunner().invoke(app, ["verify", str(path)])
    assert alone.exit_code == 0, alone.output
    code, said, scode, ssaid = _both(path, _write(tmp_path, "two", two))
    assert code == scode == 1, (said, ssaid)
    assert "scores and winner it records are not the previous game's" in said
    assert "scores and winner it records are not the previous game's" in ssaid
    # The follows record dropped altogether (the first dealer drawn instead, replayed).
    drawn = fair_game("follows2", 2, follows=None)
    code, said, scode, ssaid = _both(_write(tmp_path, "drawn", drawn), tmp_path / "two.json")
    assert code == scode == 1 and "follows no other game" in said and "follows no other" in ssaid
    # A previous archive that is not JSON is a clean error.
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    code, said, scode, ssaid = _both(path, bad)
    assert code == scode == 1 and "Traceback" not in said + ssaid
