"""What every command shares: the consoles, the global options' state, the help's
plain words, one way to fail, and the settings, database and service a command opens.

Every user mistake (a bad config, an unknown game, a malformed file) goes through
:func:`fail`: one clear line on stderr and exit code 1, no traceback.

Building the command line imports only typer, rich and these light modules: the settings
(pydantic), the database (SQLAlchemy, Alembic), the service and the engine are imported by
the functions below when a command first asks for them, so ``pbem --help`` and every
command start without paying for what they do not use.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import typer
from typer.core import TyperArgument, TyperOption

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from sqlalchemy import Engine

    from pbem.config import Settings
    from pbem.service import Service


def _plain_metavar(param: Any, ctx: Any) -> str | None:
    """What the help shows after an option: its metavar, or a plain word for its value
    (``N``, ``TEXT``, ``PATH``, the choices), and nothing for a flag (not ``<bool>``)."""
    if param.metavar is not None:
        return str(param.metavar) or None
    if isinstance(param, TyperArgument):
        return None  # the argument's name says it already
    label = param.display_type(ctx).strip("<>")  # typer's own: int, bool, a|b, list[str]
    many = label.startswith("list[") or param.nargs != 1
    label = label.removeprefix("list[").removesuffix("]")
    if label == "bool" or getattr(param, "is_flag", False):
        return None
    word = {"int": "N", "float": "NUMBER", "str": "TEXT"}.get(label, label)
    if "|" not in word:
        word = word.upper()
    return word + ("..." if many else "")


def _usage_name(param: TyperArgument) -> str:
    """An argument as usage and help name it: ``PLAYERS...``, ``[SEED]`` (not
    ``{players}...``)."""
    name = param.display_name_raw.upper()
    name = name if param.required else f"[{name}]"
    return name + ("..." if param.nargs != 1 else "")


# Typer prints each parameter's Python type (<int>, <bool>, <list[str]>) and required
# arguments in braces; an operator wants the plain words above instead.
TyperOption.display_type_rich = _plain_metavar  # type: ignore[method-assign,assignment]
TyperArgument.display_type_rich = _plain_metavar  # type: ignore[method-assign,assignment]
TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign,assignment]
TyperArgument._rich_display_name = _usage_name  # type: ignore[method-assign,assignment]


def app_group(**options: Any) -> typer.Typer:
    """A ``Typer`` for a group of commands, with the plain help every group shares.

    The help is the plain one (as git's or pip's): typer's panels would import
    ``typer.rich_utils`` and with it Markdown and Pygments, half of ``pbem --help``'s
    time. Rich still draws the commands' own tables and colours.
    """
    return typer.Typer(rich_markup_mode=None, **options)


def examples(*lines: str) -> str:
    """A command's Examples section (the help's epilog), one command line per line."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


def escape(text: str) -> str:
    """Rich's :func:`rich.markup.escape`, imported on first use."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def new_table(*columns: str, **options: Any) -> Table:
    """A Rich ``Table`` with these column headers, imported on first use."""
    from rich.table import Table

    return Table(*columns, **options)


class _LazyConsole:
    """A Rich ``Console`` made on first use: a command that prints nothing (or only
    its help) never imports Rich. Every attribute, read or set, is the console's."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _made(self) -> Console:
        console: Console | None = object.__getattribute__(self, "_console")
        if console is None:
            from rich.console import Console

            console = Console(**object.__getattribute__(self, "_options"))
            object.__setattr__(self, "_console", console)
        return console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._made(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._made(), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._made(), name)


# No markup by default: names, addresses, subjects and reasons come from mail, and text
# like "[/b]" in them must be printed as it is (or Rich would garble it, or raise).
# No hard wrapping either: a printed command must stay one line to be copied.
out = cast("Console", _LazyConsole(markup=False, soft_wrap=True))
err = cast("Console", _LazyConsole(stderr=True, markup=False))


class _State:
    config_file: Path | None = None
    data_dir: Path | None = None
    verbose: bool = False


state = _State()


def fail(message: str, code: int = 1) -> NoReturn:
    # soft_wrap: one line whatever the terminal width, so logs and scripts see one line
    err.print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True
    )
    raise typer.Exit(code)


def settings() -> Settings:
    from pbem.config import ConfigError, load_settings

    overrides: dict[str, Any] = {}
    if state.data_dir is not None:
        overrides["data_dir"] = state.data_dir
    try:
        cfg = load_settings(state.config_file, **overrides)
    except ConfigError as exc:
        fail(str(exc))
    if not state.verbose and "log_level" in cfg.model_fields_set:
        logging.getLogger("pbem").setLevel(cfg.log_level)
    return cfg


def make_engine(url: str, application_name: str | None = None) -> Engine:
    """:func:`pbem.store.db.make_engine`, imported when a command first opens a database."""
    from pbem.store.db import make_engine as make

    return make(url, application_name=application_name)


def database(cfg: Settings, *, check: bool = True, name: str | None = None) -> Engine:
    """The database of ``cfg`` (its connections named ``name`` on PostgreSQL, unless its
    URL names them); a clear error and exit code 1 when it cannot be opened."""
    from sqlalchemy.exc import OperationalError

    from pbem.config import mask_url
    from pbem.store.db import check_schema
    from pbem.store.errors import StoreError

    try:
        if cfg.db_url.startswith("sqlite"):
            cfg.data_dir.mkdir(parents=True, exist_ok=True)
        engine = make_engine(cfg.db_url, application_name=name)
        if check:
            check_schema(engine)
        return engine
    except StoreError as exc:
        fail(str(exc) if "pbem init" in str(exc) else f"{exc} (run 'pbem init')")
    except OperationalError as exc:
        fail(f"cannot open the database {mask_url(cfg.db_url)}: {exc.orig}")
    except Exception as exc:
        fail(f"cannot open the database {mask_url(cfg.db_url)}: {exc}")


def service() -> Service:
    from pbem.service import Service

    cfg = settings()
    return Service(cfg, database(cfg))


def guard(func: Any, *args: Any, **kwargs: Any) -> Any:
    from engine import EngineError
    from pbem.config import ConfigError
    from pbem.service import ServiceError
    from pbem.store.errors import StoreError

    try:
        return func(*args, **kwargs)
    except (ServiceError, EngineError, ConfigError, StoreError) as exc:
        fail(str(exc))
