"""Serve the real app with `streamlit run` and drive the system Chromium with Playwright.

In CI (CI=true) a missing browser is a failure; on a user's machine the tests skip with a reason.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bench.serving import served
from tests.conftest import ROOT

CHROMIUM = Path(os.environ.get("OPX_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _require_browser():
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} not found (install Debian's chromium package)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests must run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def server_db(seed_db, tmp_path_factory) -> Path:
    """Each test module's server gets its own copy: browser tests write (uploads, saved views)."""
    path = tmp_path_factory.mktemp("e2e") / "opx.duckdb"
    shutil.copy(seed_db, path)
    return path


@pytest.fixture(scope="module")
def server(server_db):
    _require_browser()
    env = {**os.environ, "OPX_DB": str(server_db)}
    env.pop("OPX_READ_ONLY", None)
    env.pop("OPX_ADMIN_TOKEN", None)
    try:
        with served(ROOT / "serve.py", env, timeout=60) as url:    # as `make run` serves it
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    yield pg
    context.close()


def wait_for_app(page, timeout: int = 30_000) -> None:
    """Wait until Streamlit is connected and its script has finished (Streamlit's own e2e helper)."""
    page.wait_for_timeout(250)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout)
    # Before a new session's first run starts the app also reads "notRunning": wait until the
    # page has drawn its title, so a slow first run on a busy machine is waited for.
    page.locator("[data-testid='stMain'] h1").first.wait_for(state="attached", timeout=timeout)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout)
