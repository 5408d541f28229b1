"""The shape of `pbem.commands`: its public names, and the order of its modules."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pbem.commands

# The names the rest of the code imports from ``pbem.commands`` (and every other public
# name the single module had): they must stay importable from the package.
PUBLIC = {
    *("AWAY_UNITS", "CUT_VERB", "GAME_SETTING_VERBS", "GAME_VERBS", "HINTS_CHOICES"),
    *("INFO_VERBS", "LOBBY_VERBS", "MAIL_CHOICES", "MAIL_PARTS", "MATCH_LENGTHS"),
    *("NEXT_VERB", "REPLAY_SWITCH", "SETTING_VERBS", "TALK_VERBS"),
    *("Command", "LobbyCommand", "Parsed"),
    *("away_days", "best_of", "body_lines", "card_words", "computer_level"),
    *("computer_levels", "hints_choice", "mail_choice", "mail_frequency", "mail_parts"),
    *("mail_replay", "parse_line", "parse_lobby", "parse_lobby_line", "parse_reply"),
    *("reads_as_command", "reads_subject", "rematch_words", "say_text", "split_lines"),
    *("to_action", "words_after"),
}
# What each module of the package may import from it: the grammar first, the families
# on it, the reader on them all.
ALLOWED = {
    "grammar": set(),
    "moves": {"grammar"},
    "questions": set(),
    "settings": {"grammar"},
    "lobby": set(),
    "reader": {"grammar", "moves", "questions", "settings", "lobby"},
}
PACKAGE = Path(pbem.commands.__file__).parent


def test_every_public_name_is_importable_from_the_package() -> None:
    assert set(pbem.commands.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(pbem.commands, name) is not None, name


def _package_imports(path: Path) -> set[str]:
    """The modules of ``pbem.commands`` that the module at ``path`` imports ("" for the
    package itself)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name == "pbem.commands":
                found.add("")
            elif name.startswith("pbem.commands."):
                found.add(name.removeprefix("pbem.commands."))
    return found


def test_the_modules_import_the_grammar_never_each_other_in_a_circle() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == set(ALLOWED)
    for module in sorted(modules):
        imported = _package_imports(PACKAGE / f"{module}.py")
        assert "" not in imported, f"{module} imports the package's __init__"
        assert imported <= ALLOWED[module], (module, imported - ALLOWED[module])
        importlib.import_module(f"pbem.commands.{module}")


def test_every_module_says_what_it_holds_and_stays_small() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), path.name
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name
