"""The Data page in a real browser: upload files, see per-file results, find the run on the Explorer."""
import re

import pytest
from playwright.sync_api import expect

from tests.conftest import ROOT
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e
FIX = ROOT / "tests" / "fixtures" / "opx-csv"


def test_upload_then_explore(server, page, tmp_path):
    page.goto(server + "/data")
    wait_for_app(page)
    bad = tmp_path / "broken.json"
    bad.write_text('{"completed": ')
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        [str(FIX / "unknown-names.csv"), str(bad)])
    wait_for_app(page)
    import_button = page.get_by_role("button", name="Import", exact=True)
    expect(import_button).to_be_enabled(timeout=20_000)
    import_button.click()
    wait_for_app(page)
    expect(page.get_by_text("1 file(s) imported, 1 refused.")).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)

    page.goto(server + "/?model=qwen3-32b&workload=isl1000-osl500&hw=rtx-6000-pro&pct=p50"
                       "&target=42.5&y=output")
    wait_for_app(page)
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=20_000)
    expect(page.get_by_text(re.compile("Unknown"))).to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert not page.js_errors


def test_a_coverage_row_opens_the_explorer_on_its_slice(server, page):
    """The Data page opens with what the database holds; picking a row (its selection box, the
    grid's first column) opens the Explorer on that model and workload, at the statistic its
    data reports, with a chart, no notice, and a multiple at the target: its baseline has data
    at that statistic and its target is one two systems reach."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(server + "/data")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="What the database holds")).to_be_visible()
    grid = page.get_by_test_id("stDataFrame").first
    expect(grid).to_be_visible(timeout=20_000)
    box = grid.bounding_box()
    # the first data row: below the 35 px header, in the row-selection column
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)
    page.wait_for_url(re.compile(r"/\?model=deepseek-r1&workload=1k1k&.*pct=mean"), timeout=30_000)
    wait_for_app(page)
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("stAlert").filter(has_text="in the link")).to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    values = page.get_by_test_id("stMetricValue")
    expect(values.first).to_be_visible(timeout=20_000)
    assert re.fullmatch(r"[\d.,]+×", values.first.inner_text().strip()), values.first.inner_text()
