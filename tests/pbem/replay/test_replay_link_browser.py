"""The replay page links the invitation to the game through the player's own sent answer,
as ``pbem verify --mail`` does (docs/pbem-deal-3.md section 11): Bob's invitation to a
challenge and his ``accept`` (his cut, from his Sent folder) dropped onto the page; the
fair game's archive passes with the check listed, the archive whose server seed was
swapped after the accepts is caught — the page's verdict is pbem verify's, in Debian's
chromium driven by Playwright."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine.mailcheck import LINKED
from pbem.render.replay import replay_page
from tests.e2e.helpers import Harness, cli_env
from tests.pbem.replay.browser import launch, open_page
from tests.pbem.replay.test_replay_checks_browser import Case, drop, page_verdict, run_verifiers
from tests.pbem.test_deal_mail import replayed
from tests.pbem.test_mail_link import challenge, save

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def test_the_page_checks_the_invitation_answered_with_the_cut(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(
        tmp_path / "service", db_url, db_engine, fair_deals=True, max_unproven_answers_per_day=20
    )
    try:
        h.new_game()  # Alice is a player of the service: she may challenge
        archive, invitation, answer = challenge(h, tmp_path)
        swapped = replayed(archive, "5e" * 32, archive["deal_proof"]["entropy"])
        env = cli_env(tmp_path / "cli", h.settings.db_url)
        alone = save(tmp_path / "alone", [invitation, answer])
        everything = save(tmp_path / "all", [*h.received("bob@example.org"), answer])
        cases = [
            Case("linked", archive, mail=alone),
            Case("linked-swapped", swapped, mail=alone),
            Case("all-swapped", swapped, mail=everything),
            Case("unlinked-swapped", swapped, mail=save(tmp_path / "nosent", [invitation])),
        ]
        for case in cases:
            run_verifiers(env, case, tmp_path)
            case.page = tmp_path / f"{case.name}.html"
            case.page.write_text(replay_page(case.archive).html, encoding="utf-8")
    finally:
        h.close()
    assert [case.code for case in cases] == [0, 1, 1, 1], [case.said for case in cases]
    caught = "the invitation you answered with your cut showed commitment"
    assert f"{LINKED} (1 mail)" in cases[0].said
    assert caught in cases[1].said and caught in cases[2].said
    assert caught not in cases[3].said and "no saved mail is of game" in cases[3].said
    with contextmanager(launch)() as browser:
        for case in cases:
            assert case.page is not None and case.mail is not None
            context, page = open_page(browser, case.page)
            try:
                drop(page, [case.mail])
                state, lines = page_verdict(page)
                shown = " ".join(" ".join(lines).split())
                assert page.errors == [], page.errors
                assert state == ("verified" if case.code == 0 else "mismatch"), (case.name, lines)
                for line in lines:  # the same checks and the same reasons as pbem verify
                    if line.startswith("checked: "):
                        assert line in case.said, (case.name, line, case.said)
                    if line.startswith("Check failed (mail): "):
                        for reason in line.removeprefix("Check failed (mail): ").split("; "):
                            assert " ".join(reason.split()) in case.said, (case.name, reason)
                if case.code == 0:
                    assert f"{LINKED} (1 mail)" in shown, lines
                elif case.name != "unlinked-swapped":
                    assert caught in shown, lines
                else:
                    assert caught not in shown and "no saved mail is of game" in shown, lines
            finally:
                context.close()
