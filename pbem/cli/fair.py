"""``pbem verify`` and ``pbem standings``: checking a game's deals, and the ratings table.

``pbem verify`` exits 0 when every deal is verified, 1 at the first mismatch (or an
unreadable archive), and 3 when the game's deals cannot be checked: not verifiable at
all (a game from before the protocol, or one dealt from an admin's ``--seed``) or not
yet (the server seed is not revealed while the game runs). The checks are those of
``docs/pbem-deal-1.md``. When the archive names computer seats it also re-derives each
of their moves from that seat's view alone (`engine.audit`); a move that differs is a
mismatch (exit 1) whatever the deals.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli.base import (
    app_group,
    database,
    err,
    escape,
    examples,
    fail,
    guard,
    out,
    service,
    settings,
)

if TYPE_CHECKING:
    from engine.mailcheck import Mail

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)

NOT_VERIFIABLE_EXIT = 3
"""The exit code of ``pbem verify`` for a game whose deals carry no commitment, or
whose server seed is not revealed yet."""


@commands.command(
    "verify",
    epilog=examples(
        "pbem verify cribbage-12.json",
        "pbem verify --game 12",
        "pbem verify cribbage-12.json --seat 0 --cut '<id@example.com> 17 lucky cats'",
    ),
)
def verify(
    file: Annotated[Path | None, typer.Argument(help="A game's JSON archive.")] = None,
    game_id: Annotated[
        int | None, typer.Option("--game", help="An archived game of this service, by id.")
    ] = None,
    seat: Annotated[
        int | None,
        typer.Option("--seat", min=0, help="With --cut: the seat whose recorded cut to check."),
    ] = None,
    cut: Annotated[
        str | None,
        typer.Option("--cut", help="With --seat: the cut text the player's receipt quotes."),
    ] = None,
    mail: Annotated[
        Path | None,
        typer.Option(
            "--mail",
            help="The player's saved mails of the game (.eml files, an mbox or a Maildir "
            "folder): check the archive against the commitment, receipt, cut hashes, game "
            "number and seats they show.",
        ),
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            help="The public commitment log (pbem site's commitment-log.json): check the "
            "game's entries in it and the whole chain; with --mail, also that it holds the "
            "log's head every mail showed.",
        ),
    ] = None,
    previous: Annotated[
        Path | None,
        typer.Option(
            "--previous",
            help="The archive of the game this one follows: check that its follows record "
            "(game, commitment, state hash, result, last dealer) is that game's.",
        ),
    ] = None,
) -> None:
    """Check every deal of a game against its commitment and the players' cuts
    (pbem-deal/1, /2 and /3: docs/pbem-deal-3.md), and every move of its computer seats
    against that seat's own cards. Exit 0: all verified; 1: a mismatch; 3: not
    verifiable, or the server seed not revealed yet."""
    from engine import EngineError
    from engine.dealcheck import verify_archive
    from engine.fairness import Verdict

    if (file is None) == (game_id is None):
        fail("give an archive FILE or --game ID (one of them)")
    if (seat is None) != (cut is None):
        fail("--seat and --cut go together: the seat, and the cut text of its receipt")
    data = read_json(file) if file is not None else guard(service().export, game_id)
    before = read_json(previous) if previous is not None else None
    if before is not None and not isinstance(before, dict):
        fail(f"{previous} is not a game archive")
    try:
        verdict = verify_archive(data, seat=seat, cut=cut, previous=before)
    except EngineError as exc:
        fail(f"the archive cannot be checked: {exc}")
    mails = read_mails(mail) if mail is not None else None
    if mails is not None and isinstance(data, dict):
        from engine.mailcheck import check_mail

        seen = check_mail(data, mails)
        if seen.problems:
            verdict = Verdict(
                False, check="mail", detail="; ".join(seen.problems), checked=verdict.checked
            )
        else:
            verdict.checked.append("the player's mail: " + ", ".join(seen.checked))
    if log is not None and isinstance(data, dict):
        problems, heads = check_against_log(data, log, mails)
        if problems:
            verdict = Verdict(
                False, check="log", detail="; ".join(problems), checked=verdict.checked
            )
        else:
            verdict.checked.append("the game's entries in the commitment log, and its chain")
            if heads:
                verdict.checked.append(
                    f"the log's heads the player's mail showed ({heads}): the log holds each"
                )
    code = 0
    if seat is not None and f"seat {seat}'s cut against its receipt" in verdict.checked:
        out.print(f"seat {seat}'s cut as recorded is the text of the receipt", highlight=False)
    for what in verdict.checked:
        out.print(f"checked: {what}", highlight=False)
    if not verdict.verifiable or not verdict.revealed:
        err.print(verdict.message, highlight=False)
        code = NOT_VERIFIABLE_EXIT
    elif not verdict.ok:
        err.print(
            f"[bold red]error:[/] {escape(verdict.message)}",
            highlight=False,
            markup=True,
            soft_wrap=True,
        )
        code = 1
    else:
        out.print(verdict.message, highlight=False)
        for note in verdict.notes:
            out.print(f"note: {note}", highlight=False)
    if not check_computer(data):
        code = 1  # a computer move that its own cards do not give outranks the deals
    if not check_seats(data):
        code = 1
    if code:
        raise typer.Exit(code)


def check_against_log(
    data: dict[str, Any], path: Path, mails: list[Mail] | None = None
) -> tuple[list[str], int]:
    """The problems of the game's archive against the commitment log in ``path``, of the
    log's chain, and — with the player's ``mails`` — of the heads those mails showed
    (`engine.commitlog`); empty when they agree. And how many heads were compared."""
    from engine.commitlog import check_game, check_heads, check_log
    from engine.mailcheck import log_heads
    from pbem.cli.commitlog import read_log

    rows = read_log(path)
    chain = check_log(rows)
    heads = log_heads(mails or [])
    return chain.problems + check_game(rows, data) + check_heads(rows, heads), len(heads)


def read_mails(path: Path) -> list[Mail]:
    """Each saved mail's subject, plain text, Message-ID and In-Reply-To: ``path`` a
    Maildir folder, a folder of ``.eml`` files, an mbox file or one ``.eml`` file. A
    clean failure when it is none."""
    import mailbox
    from email import message_from_bytes, policy
    from email.message import EmailMessage

    from engine.mailcheck import Mail

    def text_of(raw: bytes) -> Mail:
        msg = message_from_bytes(raw, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        body = msg.get_body(preferencelist=("plain",))
        try:
            text = body.get_content() if body is not None else ""
        except (LookupError, ValueError):
            text = ""
        return Mail(
            str(msg.get("Subject", "")),
            str(text),
            str(msg.get("Message-ID", "") or ""),
            str(msg.get("In-Reply-To", "") or ""),
        )

    try:
        if path.is_dir() and (path / "cur").is_dir():
            box = mailbox.Maildir(str(path), create=False)
            return [text_of(box.get_bytes(key)) for key in box.iterkeys()]
        if path.is_dir():
            return [text_of(f.read_bytes()) for f in sorted(path.glob("*.eml"))]
        raw = path.read_bytes()
        if raw.startswith(b"From "):
            mbox = mailbox.mbox(str(path), create=False)
            return [text_of(mbox.get_bytes(key)) for key in mbox.iterkeys()]
        return [text_of(raw)]
    except OSError as exc:
        fail(f"cannot read the mail in {path}: {exc.strerror or exc}")


def read_json(path: Path) -> Any:
    """The JSON in ``path``; a clean failure (exit 1) when it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"{path} is not a JSON archive: {exc}")


def check_seats(data: object) -> bool:
    """When the computer played (a seat, or moves at a timeout), print who sat where,
    its seats and the moves it made at a timeout marked (`engine.audit.seat_list`);
    False (printed on standard error) when the players list's marks are not the
    computer list's, or either list is malformed."""
    from engine import EngineError
    from engine.audit import seat_list

    if not isinstance(data, dict) or not isinstance(data.get("settings"), dict):
        return True
    players = data["settings"].get("players")
    if players not in (2, 3, 4) or isinstance(players, bool):
        return True  # the deal check has said what is wrong
    try:
        line, problems = seat_list(data, int(players))
    except EngineError as exc:
        err.print(f"the seats cannot be read: {exc}", highlight=False, soft_wrap=True)
        return False
    if data.get("computer") or data.get("timeouts"):  # a game of people alone: no line
        out.print(line, highlight=False, soft_wrap=True)
    for problem in problems:
        err.print(f"error: {problem}", highlight=False, soft_wrap=True)
    return not problems


def check_computer(data: object) -> bool:
    """When the archive names computer seats, or moves the computer made for players
    whose time ran out (``timeouts``), re-derive each of those moves from that seat's
    view alone (`engine.audit`) and print the verdict: "the computer played only from
    its own cards (N decisions re-derived)", or the first move that differs (on standard
    error). True when there is nothing to check or every move agrees."""
    from engine import EngineError
    from engine.audit import audit_archive, engine_label
    from pbem import engine_version

    if not isinstance(data, dict) or not (data.get("computer") or data.get("timeouts")):
        return True
    try:
        audit = audit_archive(data, engine=engine_label(engine_version()))
    except EngineError as exc:
        err.print(f"the computer's moves cannot be checked: {exc}", highlight=False, soft_wrap=True)
        return False
    if not audit.ok:
        err.print(audit.message, highlight=False, soft_wrap=True)
        return False
    out.print(audit.message, highlight=False, soft_wrap=True)
    out.print(engine_note(data), highlight=False, soft_wrap=True)
    return True


def engine_note(data: dict[str, Any]) -> str:
    """Which engine re-derived the moves, by content, against the one the archive names."""
    from pbem import engine_digest

    mine = engine_digest()
    listed = [*(data.get("computer") or []), *(data.get("timeouts") or [])]
    named = {c.get("engine_sha256") for c in listed if isinstance(c, dict)}
    if named == {mine}:
        return f"the engine that re-derived them is the one the archive names (SHA-256 {mine})"
    if named - {None}:
        return (
            f"note: the archive names the engine {', '.join(sorted(str(n) for n in named))}; "
            f"this one is {mine}: a difference may come from the engines, not the computer"
        )
    return f"note: the archive does not name its engine by content; this one is {mine}"


@commands.command(
    "standings",
    epilog=examples(
        "pbem standings",
        "pbem standings --json",
        "pbem standings --check",
        "pbem standings --rebuild",
    ),
)
def standings(
    as_json: Annotated[bool, typer.Option("--json", help="The table as JSON.")] = False,
    top: Annotated[int | None, typer.Option("--top", min=1, help="Only the first N.")] = None,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="Recompute the stored table from every finished game (replays them all).",
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Recompute from every finished game and compare with the stored table "
            "(exit 1 when they differ).",
        ),
    ] = False,
) -> None:
    """The ratings table from every finished game (OpenSkill), with games, wins, skunks
    and average points: pegging and hand per hand, crib per crib owned. The table is
    stored and updated as each game ends; --rebuild recomputes it from the games."""
    if check or rebuild:
        from pbem.service.game.standings import rebuild_table, stored_differences

        svc = service()
        if check:
            differences = guard(stored_differences, svc._ctx())
            if differences:
                for line in differences[:20]:
                    err.print(line, highlight=False)
                fail(f"the stored standings differ from a recomputation ({len(differences)} lines)")
            out.print("the stored standings equal a recomputation from every finished game")
            return
        rebuilt = guard(rebuild_table, svc._ctx())
        out.print(
            f"standings rebuilt from {rebuilt.games} finished games ({len(rebuilt.rows)} players)",
            highlight=False,
        )
    # Reading the stored table needs the database alone, not the service (its mail,
    # templates and engine) nor the ORM: the table's lines come by index, best first.
    from pbem.ratings import standings_read, text_table
    from pbem.store import lines as stored

    engine = database(settings())
    try:
        with engine.connect() as connection:
            lines = stored.top_lines(connection, top)
            table = standings_read(lines, stored.rated_games(connection))
    finally:
        engine.dispose()
    # Plain text as it is: Rich would lay out every line of a table of 20,000 players.
    if as_json:
        sys.stdout.write(json.dumps(table.to_json(), indent=1, ensure_ascii=False) + "\n")
        return
    if not table.rows:
        sys.stdout.write("no finished game yet\n")
        return
    sys.stdout.write(text_table(table.rows) + "\n")
    sys.stdout.write(f"{table.games} finished games; rating = mu - 3 sigma (OpenSkill)\n")
