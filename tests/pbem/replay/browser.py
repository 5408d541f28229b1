"""A headless Chromium for the replay page's tests (Debian's ``chromium``, driven by
Playwright): one browser per test module, a fresh page per test."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("PBEM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def launch() -> Iterator[Any]:
    """A browser for a module's tests; skipped where there is none, but never in CI
    (deploy/test.sh installs Debian's chromium, so a missing one there is a failure)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed (pip install -e '.[test]')")
        pytest.skip("playwright is not installed")
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"no chromium at {CHROMIUM} (deploy/test.sh installs it)")
        pytest.skip(f"no chromium at {CHROMIUM}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Any, path: Path, width: int = 1000, height: int = 900) -> tuple[Any, Any]:
    """A new context and page showing ``path`` (from disk), every request it makes recorded
    and refused unless it is the file itself; page errors fail the test when read."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.requests = []
    page.errors = []
    url = path.resolve().as_uri()

    def route(r: Any) -> None:
        page.requests.append(r.request.url)
        if r.request.url == url:
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda req: page.requests.append(req.url))
    page.goto(url)
    page.wait_for_function("document.getElementById('verify').dataset.state !== 'pending'")
    return context, page
