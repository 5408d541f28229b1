"""An operator's everyday tools: ``backup``, ``restore``, ``db copy``, ``player forget``.

- ``pbem backup FILE``: a consistent copy of a SQLite database, taken while the daemon
  runs (SQLite's online backup API); on PostgreSQL it says how to use ``pg_dump``.
- ``pbem restore FILE``: the database replaced by a backup (checked first), with
  ``pbem serve`` stopped.
- ``pbem db copy --to URL``: the whole installation moved to another database (SQLite to
  PostgreSQL), every game then replayed and its deals verified on the target.
- ``pbem db prune [--vacuum]``: the raw bytes of stored mail that is done with emptied
  (`pbem.store.retention`), as ``pbem serve`` does a few batches at a time;
  ``pbem db stats``: what is stored, rows and bytes per kind (`pbem.store.storage`).
- ``pbem player forget ADDR`` (registered on the ``player`` group): the address, names
  and cut Message-IDs replaced by a pseudonym everywhere (`pbem.service.forget`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pbem.cli.base import app_group, database, examples, fail, out, settings

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)
db_app = app_group(
    help="The database: copy it whole to another one, prune its stored mail, count what it stores."
)


@commands.command("backup", epilog=examples("pbem backup /var/backups/pbem-$(date +%F).db"))
def backup(file: Annotated[Path, typer.Argument(help="The backup file to write.")]) -> None:
    """Copy the SQLite database to FILE, consistent even while pbem serve runs.

    The copy is checked (integrity and schema) before it replaces FILE. On PostgreSQL it
    says how to back up with pg_dump instead.
    """
    from pbem.store.backup import BackupError, backup_sqlite

    cfg = settings()
    try:
        info = backup_sqlite(cfg.db_url, file)
    except BackupError as exc:
        fail(str(exc))
    out.print(
        f"backed up {info.games} games to {info.path} ({info.size} bytes, schema {info.revision})"
    )


@commands.command("restore", epilog=examples("pbem restore /var/backups/pbem-2026-11-27.db --yes"))
def restore(
    file: Annotated[Path, typer.Argument(help="A file written by pbem backup.")],
    yes: Annotated[
        bool, typer.Option("--yes", help="Replace the database's content without asking.")
    ] = False,
) -> None:
    """Replace the SQLite database by a backup FILE (pbem serve must be stopped).

    FILE is checked first (integrity, a pbem schema); then run pbem init if it is from an
    older version.
    """
    from pbem.run.lock import DaemonError, lock_for
    from pbem.store.backup import PG_BACKUP_HINT, BackupError, inspect_backup, restore_sqlite

    cfg = settings()
    lock = lock_for(cfg.db_url)
    if lock is None:
        fail("pbem restore restores SQLite databases; " + PG_BACKUP_HINT)
    try:
        info = inspect_backup(file)
    except BackupError as exc:
        fail(str(exc))
    if not yes and not typer.confirm(
        f"Replace the database {cfg.db_url} by {file} ({info.games} games)?"
    ):
        fail("nothing restored")
    try:
        lock.acquire(doing="restore")  # no daemon may run on it meanwhile
    except DaemonError as exc:
        fail(str(exc))
    try:
        restore_sqlite(file, cfg.db_url)
    except BackupError as exc:
        fail(str(exc))
    finally:
        lock.release()
    out.print(f"restored {info.games} games from {file} (schema {info.revision})")


@db_app.command(
    "copy",
    epilog=examples(
        "pbem db copy --to postgresql://pbem@db/pbem",
        "pbem db copy --to postgresql://pbem@db/pbem --replace",
    ),
)
def db_copy(
    to: Annotated[str, typer.Option("--to", help="The target database URL.", metavar="URL")],
    replace: Annotated[
        bool, typer.Option("--replace", help="Delete the target's rows first, if it has any.")
    ] = False,
) -> None:
    """Copy every table of the configured database to another one (stop pbem serve first),
    then replay every game and verify its deals there. Prints the rows copied per table.
    Exit 1 when the target holds rows (without --replace) or a game does not check out.
    """
    from pbem.config import mask_url
    from pbem.service import Service
    from pbem.store.copy import CopyError, copy_database
    from pbem.store.db import make_engine

    cfg = settings()
    source = database(cfg)
    try:
        target = make_engine(to)
    except Exception as exc:
        fail(f"cannot open the target database {mask_url(to)}: {exc}")
    try:
        try:
            report = copy_database(
                source,
                target,
                replace=replace,
                progress=lambda name, n: out.print(f"{name:<16} {n:>8} rows"),
            )
        except CopyError as exc:
            fail(str(exc))
        except Exception as exc:
            detail = " ".join(str(getattr(exc, "orig", None) or exc).split())
            fail(f"the copy to {mask_url(to)} failed, the target is unchanged: {detail}")
        out.print(f"copied {report.total} rows to {mask_url(to)}")
        audit = Service(cfg, target).audit()
        for note in audit.notes:
            out.print(note)
        for problem in audit.problems:
            out.print(f"problem: {problem}")
        out.print(
            f"{audit.games} games on the target: {audit.replayed} replayed, "
            f"{audit.verified_games} with {audit.deals} deals verified"
        )
        if not audit.ok:
            fail(f"{len(audit.problems)} games do not check out on the target")
    finally:
        target.dispose()
        source.dispose()


@db_app.command(
    "prune",
    epilog=examples("pbem db prune", "pbem db prune --vacuum"),
)
def db_prune(
    vacuum: Annotated[
        bool,
        typer.Option(
            "--vacuum",
            help="Then give the freed space back to the file system (SQLite: the free pages, "
            "a few thousand at a time; a file made before version 0021 of the schema is "
            "compacted whole once, holding the database while it runs; PostgreSQL: VACUUM "
            "of the mail tables).",
        ),
    ] = False,
    batch: Annotated[
        int, typer.Option("--batch", min=1, max=10000, help="Rows emptied per transaction.")
    ] = 200,
) -> None:
    """Empty the raw bytes of stored mail that is done with, now (pbem serve does it a
    few batches at a time): received mail processed and outgoing mail delivered or
    cancelled, older than mail_retention_days or of a game over for
    game_mail_retention_days. Each batch is a short transaction of its own, so it may run
    beside pbem serve. Mail not processed, not delivered, to be retried, or that a
    confirmation request waits on keeps its bytes; every row, and its Message-ID, stays.
    """
    from datetime import UTC, datetime, timedelta

    from pbem.store.retention import prune

    cfg = settings()
    db = database(cfg)
    done = prune(
        db,
        now=datetime.now(UTC),
        keep=timedelta(days=cfg.mail_retention_days),
        keep_after_game=timedelta(days=cfg.game_mail_retention_days),
        limit=batch,
    )
    out.print(
        f"pruned the raw bytes of {done.inbound} received mails ({done.inbound_bytes} bytes) "
        f"and {done.outbox} outgoing mails ({done.outbox_bytes} bytes) "
        f"in {done.batches} transactions"
    )
    if vacuum:
        from pbem.store.retention import vacuum as vacuum_db

        before, after = vacuum_db(db)
        out.print(f"vacuumed: {before} bytes before, {after} after")
    db.dispose()


@db_app.command("stats", epilog=examples("pbem db stats"))
def db_stats() -> None:
    """What the database stores: the mail by kind (raw bytes kept or pruned), then each
    table's rows and size, and the database's size."""
    from pbem.store.storage import storage_stats

    db = database(settings())
    found = storage_stats(db)
    db.dispose()
    out.print(f"{'stored mail':<44} {'rows':>10} {'raw bytes':>14}")
    for kind in found.mail:
        out.print(f"{kind.name:<44} {kind.rows:>10} {kind.bytes or 0:>14}")
    out.print(f"\n{'table':<44} {'rows':>10} {'bytes':>14}")
    for kind in found.tables:
        size = "?" if kind.bytes is None else str(kind.bytes)
        out.print(f"{kind.name:<44} {kind.rows:>10} {size:>14}")
    free = "" if found.free_bytes is None else f" ({found.free_bytes} free, reused first)"
    out.print(f"\ndatabase: {found.database_bytes} bytes{free}")


def player_forget(
    address: Annotated[str, typer.Argument(help="The player's address.", metavar="ADDR")],
    abort_games: Annotated[
        bool,
        typer.Option("--abort-games", help="Abort the player's games not over yet first."),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Forget without asking.")] = False,
    compact: Annotated[
        bool,
        typer.Option(
            "--compact",
            help="Then write the rewritten tables again whole (SQLite: VACUUM; PostgreSQL: "
            "VACUUM FULL, which overwrites the old versions there); each holds the database "
            "or the table while it runs.",
        ),
    ] = False,
) -> None:
    """Forget a player: their address, names and cut Message-IDs replaced by a pseudonym
    everywhere (games, archives, standings, outbox history, the stored mail).

    Their games still replay and their deals still verify (a forgotten cut keeps only its
    SHA-256); a suppression ("never") is kept under a one-way hash of the mailbox; their
    later mail is a stranger's. On SQLite the old bytes are overwritten as they are
    rewritten, and the write-ahead log is emptied; on PostgreSQL VACUUM frees the old
    versions' space without overwriting it (--compact does). Backups made before keep
    the address: rotate them.
    """
    from pbem.cli.base import guard, service
    from pbem.service.forget import ABORT_REASON
    from pbem.store.erasure import LOG_NOT_EMPTIED

    if not yes and not typer.confirm(f"Forget {address} for good?"):
        fail("nothing forgotten")
    svc = service()
    report = guard(svc.forget, address, abort_games=abort_games, compact=compact)
    for game_id in report.aborted:
        out.print(f"game {game_id} aborted: {ABORT_REASON}")
    for table, n in report.rows.items():
        out.print(f"{table:<16} {n:>8} rows rewritten")
    if report.suppression_kept:
        out.print("its suppression is kept, under a one-way hash of the mailbox")
    audit = report.audit
    for note in audit.notes:
        out.print(f"note: {note}")
    for problem in audit.problems:
        out.print(f"problem: {problem}")
    out.print(
        f"{address} is now {report.pseudonym} ({report.name}); {audit.games} of its games: "
        f"{audit.replayed} replayed, {audit.verified_games} with {audit.deals} deals verified"
    )
    out.print(f"old versions: {report.storage}")
    if not audit.ok:
        fail(f"{len(audit.problems)} games do not check out after forgetting")
    if report.storage.startswith(LOG_NOT_EMPTIED):
        fail(report.storage)
