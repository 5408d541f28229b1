"""The replay page checks the archive against what the player kept, as ``pbem verify
--mail`` and ``--previous`` do (docs/pbem-deal-3.md sections 7 and 11): the player's
saved mails (.eml files or an mbox, dropped onto the page or chosen with its button) and
the previous game's archive. On the shared cases — the fair game, its server seed
swapped after the cuts, a cut replayed from another game, mail of another game, a faked
first dealer, the wrong previous game — the page's verdict is ``pbem verify``'s (and the
standalone verifier's), in Debian's chromium driven by Playwright."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from pbem.render.replay import replay_page
from tests.deal_corpus import fair_game, follows_of
from tests.e2e.helpers import Harness, cli_env, run_cli
from tests.pbem.replay.browser import launch, open_page
from tests.pbem.test_deal_mail import mail_corpus

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[3]
STANDALONE = ROOT / "docs" / "pbem_deal_verify.py"


@dataclass
class Case:
    """An archive, the files the player gives (mails and/or a previous archive), and the
    verdict of pbem verify on them: its exit code and what it said."""

    name: str
    archive: dict[str, Any]
    mail: Path | None = None
    previous: dict[str, Any] | None = None
    code: int = -1
    said: str = ""
    page: Path | None = None
    previous_page: bool = False
    """The previous game given as its replay page (which holds its archive), not JSON."""


def run_verifiers(env: dict[str, str | None], case: Case, folder: Path) -> None:
    """``pbem verify`` with ``--mail`` and/or ``--previous`` as the case gives them; the
    standalone verifier must give the same exit code."""
    path = folder / f"{case.name}.json"
    path.write_text(json.dumps(case.archive), encoding="utf-8")
    extra: list[str] = []
    if case.mail is not None:
        extra += ["--mail", str(case.mail)]
    if case.previous is not None:
        before = folder / f"{case.name}-previous.json"
        before.write_text(json.dumps(case.previous), encoding="utf-8")
        extra += ["--previous", str(before)]
    result = run_cli(env, "verify", str(path), *extra)
    done = subprocess.run(
        [sys.executable, "-I", str(STANDALONE), str(path), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == result.exit_code, (case.name, result.output, done.stderr)
    case.code, case.said = result.exit_code, " ".join(result.output.split())


def files_of(case: Case, folder: Path) -> list[Path]:
    """What the player gives the page: each .eml file of a folder, or the mbox; and the
    previous game's archive."""
    out: list[Path] = []
    if case.mail is not None:
        out += sorted(case.mail.glob("*.eml")) if case.mail.is_dir() else [case.mail]
    if case.previous is not None and case.previous_page:
        page = folder / f"{case.name}-previous.html"
        page.write_text(replay_page(case.previous).html, encoding="utf-8")
        out.append(page)
    elif case.previous is not None:
        out.append(folder / f"{case.name}-previous.json")
    return out


def drop(page: Any, paths: list[Path]) -> None:
    """The files dropped onto the page's check box, as a browser's drag and drop gives
    them (a DataTransfer of File objects)."""
    payload = [{"name": p.name, "b64": base64.b64encode(p.read_bytes()).decode()} for p in paths]
    transfer = page.evaluate_handle(
        """(files) => {
            const dt = new DataTransfer();
            for (const f of files) {
                const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
                dt.items.add(new File([bytes], f.name));
            }
            return dt;
        }""",
        payload,
    )
    page.dispatch_event("#checks", "drop", {"dataTransfer": transfer})


def page_verdict(page: Any) -> tuple[str, list[str]]:
    done = ", ".join(f'#checks[data-state="{s}"]' for s in ("verified", "mismatch", "none"))
    page.wait_for_selector(done)
    lines = page.eval_on_selector_all(
        "#checks-done li", "(items) => items.map((i) => i.textContent)"
    )
    return str(page.get_attribute("#checks", "data-state")), list(lines)


def test_the_page_gives_pbem_verifys_verdict_on_mail_and_previous(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(tmp_path / "service", db_url, db_engine, fair_deals=True)
    try:
        corpus = mail_corpus(h, tmp_path)
        env = cli_env(tmp_path / "cli", h.settings.db_url)
        two = fair_game("two", 2, refused=True)
        follows, first = follows_of(two)
        faked = dict(follows, winner=1 - follows["winner"], scores=follows["scores"][::-1])
        saved = corpus.saved
        cases = [
            Case("fair-eml", corpus.archive, mail=saved["eml"]),
            Case("fair-mbox", corpus.archive, mail=saved["mbox"]),
            Case("seed-swapped", corpus.swapped, mail=saved["mbox"]),
            Case("cut-replayed", corpus.moved, mail=saved["eml"]),
            Case("another-game", two, mail=saved["eml"]),
            Case(
                "follows",
                fair_game("follows2", 2, follows=follows, first_dealer=first),
                previous=two,
            ),
            Case(
                "first-dealer-faked",
                fair_game("follows2", 2, follows=faked, first_dealer=1 - first),
                previous=two,
            ),
            Case(
                "first-dealer-faked-page",
                fair_game("follows2", 2, follows=faked, first_dealer=1 - first),
                previous=two,
                previous_page=True,
            ),
            Case(
                "follows-page",
                fair_game("follows2", 2, follows=follows, first_dealer=first),
                previous=two,
                previous_page=True,
            ),
            Case(
                "wrong-previous",
                fair_game("follows2", 2, follows=follows, first_dealer=first),
                previous=fair_game("three", 3),
            ),
            Case("mail-and-no-follows", corpus.archive, mail=saved["mbox"], previous=two),
        ]
        for case in cases:
            run_verifiers(env, case, tmp_path)
            case.page = tmp_path / f"{case.name}.html"
            case.page.write_text(replay_page(case.archive).html, encoding="utf-8")
    finally:
        h.close()
    # What pbem verify said (the standalone verifier agreed on every exit code).
    codes = {case.name: case.code for case in cases}
    assert codes == {
        "fair-eml": 0,
        "fair-mbox": 0,
        "seed-swapped": 1,
        "cut-replayed": 1,
        "another-game": 1,
        "follows": 0,
        "first-dealer-faked": 1,
        "first-dealer-faked-page": 1,
        "follows-page": 0,
        "wrong-previous": 1,
        "mail-and-no-follows": 1,
    }, {case.name: case.said for case in cases}
    # The browser only now: Playwright's sync API keeps an event loop running on this
    # thread, where the service's own asyncio.run could not run.
    with contextmanager(launch)() as browser:
        for number, case in enumerate(cases):
            assert case.page is not None
            context, page = open_page(browser, case.page)
            try:
                assert page.get_attribute("#verify", "data-state") == "verified"  # alone
                assert page.get_attribute("#checks", "data-state") == "waiting"
                given = files_of(case, tmp_path)
                if number % 2:
                    page.set_input_files("#check-files", [str(p) for p in given])
                else:
                    drop(page, given)
                state, lines = page_verdict(page)
                shown = " ".join(" ".join(lines).split())
                assert page.errors == [], page.errors
                assert state == ("verified" if case.code == 0 else "mismatch"), (case.name, lines)
                for line in lines:  # each check that ran says so, as pbem verify does
                    if line.startswith("checked: "):
                        assert line in case.said, (case.name, line, case.said)
                if case.mail is not None:
                    assert "the player's mail" in shown or "(mail)" in shown, (case.name, lines)
                if case.previous is not None:
                    assert "previous" in shown, (case.name, lines)
                assert_same_reason(case, shown)
                assert all(r.startswith("file:") for r in page.requests)  # nothing sent
            finally:
                context.close()


def assert_same_reason(case: Case, shown: str) -> None:
    """A mismatch names the same check, and the same reason, as pbem verify."""
    reasons = {
        "seed-swapped": "the server seed was changed after it was shown",
        "cut-replayed": "the mail's receipt quotes",
        "another-game": "no saved mail is of game",
        "first-dealer-faked": "scores and winner it records are not the previous game's",
        "first-dealer-faked-page": "scores and winner it records are not the previous game's",
        "wrong-previous": "it follows game",
        "mail-and-no-follows": "follows no other game, yet an archive was given",
    }
    if case.name in reasons:
        assert reasons[case.name] in shown and reasons[case.name] in case.said, (
            case.name,
            shown,
            case.said,
        )


def tricky_mails() -> list[bytes]:
    """Saved mails as mail clients keep them: base64 and quoted-printable bodies,
    encoded and folded subjects, another charset, CRLF line ends, an attachment before
    the text, a mail with no plain text at all."""
    from email.message import EmailMessage
    from email.policy import SMTP

    made: list[bytes] = []
    text = (
        "Deal commitment (pbem-deal/3): " + "ab" * 32 + "\nYour cut is in, recorded as "
        "\u201c<x@y> Gr\u00fc\u00dfe  aus K\u00f6ln\u201d (SHA-256 "
        + "cd" * 32
        + ").\n"
        + "A long line " * 20
    )
    for number, (subject, cte, charset) in enumerate(
        [
            ("[Cribbage 12] Gr\u00fc\u00dfe \u2014 your turn", "base64", "utf-8"),
            ("[Cribbage 12] " + "a long subject that folds " * 4, "quoted-printable", "utf-8"),
            ("[Cribbage 13] caf\u00e9", "8bit", "latin-1"),
            ("[Cribbage 14] plain", "7bit", "us-ascii"),
        ]
    ):
        msg = EmailMessage()
        msg["From"] = "service@example.org"
        msg["Subject"] = subject
        msg["Message-ID"] = f"<mail.{number}@example.org>"
        if number:
            msg["In-Reply-To"] = f"<mail.{number - 1}@example.org>"
        body = text if charset != "us-ascii" else text.encode("ascii", "replace").decode()
        if charset == "latin-1":
            body = body.replace("\u201c", '"').replace("\u201d", '"').replace("\u2014", "-")
        msg.set_content(body, charset=charset, cte=cte)
        if number == 1:
            msg.make_mixed()
            note = EmailMessage()
            note.set_content("not the body", disposition="attachment", filename="a.txt")
            parts = msg.get_payload()
            assert isinstance(parts, list)
            parts.insert(0, note)
        made.append(msg.as_bytes(policy=SMTP) if number == 3 else msg.as_bytes())
    only_html = EmailMessage()
    only_html["Subject"] = "=?utf-8?q?=5BCribbage_15=5D?= =?utf-8?b?w6k=?="
    only_html.set_content("<p>hello</p>", subtype="html")
    made.append(only_html.as_bytes())
    return made


def test_the_page_reads_saved_mail_as_pbem_verify_does(tmp_path: Path) -> None:
    """Each mail's subject, plain text, Message-ID and In-Reply-To as the page reads
    them — one by one (.eml) and from an mbox — against `pbem.cli.fair.read_mails`
    (Python's email package)."""
    import mailbox

    from pbem.cli.fair import read_mails

    folder = tmp_path / "eml"
    folder.mkdir()
    box = mailbox.mbox(str(tmp_path / "saved.mbox"))
    for number, raw in enumerate(tricky_mails()):
        (folder / f"{number}.eml").write_bytes(raw)
        box.add(raw)
    box.flush()
    want = [
        (m.subject, " ".join(m.text.split()), m.message_id, m.in_reply_to)
        for m in read_mails(folder)
    ]
    assert want == [
        (m.subject, " ".join(m.text.split()), m.message_id, m.in_reply_to)
        for m in read_mails(tmp_path / "saved.mbox")
    ]
    assert want[1][2:] == ("<mail.1@example.org>", "<mail.0@example.org>")
    assert "Grüße aus Köln" in want[0][1] and want[4][0] == "[Cribbage 15]é"
    assert want[1][1].startswith("Deal commitment") and want[4][1] == ""
    page = tmp_path / "page.html"
    page.write_text(replay_page(fair_game("two", 2)).html, encoding="utf-8")
    script = """([emls, mbox]) => {
        const read = (m) => [
            m.subject, m.text.split(/\\s+/).filter((w) => w).join(" "), m.messageId, m.inReplyTo
        ];
        const parse = window.cribbageMail.parseMessage, split = window.cribbageMail.splitMbox;
        return [emls.map((b) => read(parse(atob(b)))), split(atob(mbox)).map(parse).map(read)];
    }"""
    emls = [base64.b64encode((folder / f"{n}.eml").read_bytes()).decode() for n in range(5)]
    mbox = base64.b64encode((tmp_path / "saved.mbox").read_bytes()).decode()
    with contextmanager(launch)() as browser:
        context, shown = open_page(browser, page)
        try:
            one_by_one, from_mbox = shown.evaluate(script, [emls, mbox])
        finally:
            context.close()
    assert [tuple(m) for m in one_by_one] == want
    assert [tuple(m) for m in from_mbox] == want


def test_only_a_page_that_shows_its_deal_proof_offers_the_checks() -> None:
    """A running game's page (one seat's view) holds no deal proof, so nothing to check
    the player's mail against: no drop box; a finished game's page has one."""
    running = fair_game("running", 2, stop=6, reveal=False)
    running["status"] = "active"
    assert 'id="checks"' not in replay_page(running, seat=0).html
    assert 'id="checks"' in replay_page(fair_game("two", 2)).html
