"""Build hook: the top-level ``templates/`` folder ships inside the ``pbem`` package.

``templates/`` at the repository root is the only copy kept in version control; a wheel
(and any non-editable install) carries it as ``pbem/templates/``, copied when the package
is built. An editable install copies nothing and keeps reading the root folder (see
``pbem/render/mail.py``). All other metadata lives in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
TEMPLATES = ROOT / "templates"


class BuildPyWithTemplates(build_py):
    """``build_py`` that also copies ``templates/`` into ``pbem/templates`` in the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not TEMPLATES.is_dir():
            raise FileNotFoundError(f"no templates folder at {TEMPLATES}")
        target = Path(self.build_lib) / "pbem" / "templates"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(TEMPLATES, target, ignore=shutil.ignore_patterns(".*", "__pycache__"))


setup(cmdclass={"build_py": BuildPyWithTemplates})
