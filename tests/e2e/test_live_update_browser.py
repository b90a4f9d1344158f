"""Runs imported by the CLI while the dashboard is open show up on the next interaction."""
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.conftest import ROOT
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e
FIX = ROOT / "tests" / "fixtures" / "opx-csv"


def test_cli_import_shows_up_without_a_restart(server, server_db, page):
    # measured runs only: the built-in InferenceX measurements of H200 are `derived`
    page.goto(server + "/?model=deepseek-r1&workload=1k1k&hw=h200&pct=p90&target=60&source=measured")
    wait_for_app(page)
    expect(page.get_by_text(re.compile("No runs of H200"))).to_be_visible(timeout=20_000)
    r = subprocess.run([sys.executable, "-m", "opx", "ingest", str(FIX / "h200-sweep-part1.csv"),
                        str(FIX / "h200-sweep-part2.csv"), "--db", str(server_db)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    box = page.get_by_label("Typed target (tok/s/user)")
    box.fill("61")
    box.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text(re.compile("No runs of H200"))).to_have_count(0, timeout=20_000)
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
