"""The package installs like any Python package: a wheel built from the repository, installed
into a fresh virtual environment outside the checkout, plays a game by email.

The wheel must carry the templates (copied from the top-level ``templates/`` when it is built)
and the Alembic migrations; the checkout itself keeps reading the top-level folder.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

from pbem.render import TEMPLATES

ROOT = Path(__file__).resolve().parents[1]
# What a build needs; copying only these also proves nothing else is needed.
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "engine", "pbem", "templates")


def _run(
    args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH, PBEM_* settings or an active virtualenv."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "COLUMNS"}
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PBEM_")}


def _can_build_without_isolation() -> bool:
    """Whether the build requirements (setuptools>=68, wheel) are already installed here."""
    if importlib.util.find_spec("wheel") is None:
        return False
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    return major >= 68


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "templates")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            # pbem/templates must never exist in a checkout; ignore one if it does.
            shutil.copytree(path, source / name, ignore=None if name == "templates" else junk)
        else:
            shutil.copy2(path, source / name)
    wheels = tmp_path / "wheels"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", ".", "-w", str(wheels)]
    if _can_build_without_isolation():
        command.append("--no-build-isolation")
    built = _run(command, cwd=source, env=_clean_env())
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("pbem_cribbage-*.whl")
    return wheel


def test_the_checkout_reads_the_top_level_templates() -> None:
    assert not (ROOT / "pbem" / "templates").exists(), "pbem/templates is made by builds only"
    assert TEMPLATES == ROOT / "templates"


@pytest.mark.slow
def test_a_wheel_installed_outside_the_checkout_plays_the_demo(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").iterdir():
        assert f"pbem/templates/{template.name}" in names
    for migration in (ROOT / "pbem" / "store" / "migrations" / "versions").glob("r*.py"):
        assert f"pbem/store/migrations/versions/{migration.name}" in names
    assert "pbem/store/migrations/env.py" in names
    assert not any(name.startswith("tests/") for name in names)

    # A fresh environment; the system's packages provide the dependencies only.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True, symlinks=True)
    python = env_dir / "bin" / "python"
    env = _clean_env()
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    installed = _run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)],
        cwd=elsewhere,
        env=env,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    where = _run(
        [
            str(python),
            "-c",
            "import pbem, pbem.render as r, pbem.store.db as d;"
            "print(pbem.__file__); print(r.TEMPLATES); print(d.MIGRATIONS_DIR)",
        ],
        cwd=elsewhere,
        env=env,
    )
    assert where.returncode == 0, where.stderr
    package, templates, migrations = (Path(line) for line in where.stdout.split())
    site = env_dir.resolve()
    for path in (package, templates, migrations):
        assert path.is_relative_to(site), f"{path} is not the venv's own copy"
    assert templates == package.parent / "templates"

    pbem = str(env_dir / "bin" / "pbem")
    demo = _run([pbem, "demo", "--to", "61", "--quiet", "--dir", "demo"], cwd=elsewhere, env=env)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "Traceback" not in demo.stderr
    assert "Final board" in demo.stdout, demo.stdout
    match = re.search(r"replay it:\s+pbem (--data-dir \S+ game replay (\d+) --verify)", demo.stdout)
    assert match, demo.stdout
    replay = _run([pbem, *match.group(1).split()], cwd=elsewhere, env=env)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "verified:" in replay.stdout

    # `pbem --version`, where the command line offers it.
    helped = _run([pbem, "--help"], cwd=elsewhere, env=env)
    assert helped.returncode == 0, helped.stderr
    if "--version" in helped.stdout:
        shown = _run([pbem, "--version"], cwd=elsewhere, env=env)
        assert shown.returncode == 0, shown.stderr
        assert version("pbem-cribbage") in shown.stdout
