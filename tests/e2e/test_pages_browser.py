"""Every page loads in a real browser with its charts and no exception."""
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e

PAGES = [
    ("/overview?pct=mean", "Overview", 0),
    ("/compare?y=usd_per_mtok", "Compare", 2),
    ("/latency?pct=p50&conc=4800", "Latency", 1),
    ("/planner?model=deepseek-r1&workload=1k1k&hw=gb200-nvl72&hw=gb300-nvl72&pct=p50&target=40"
     "&sessions=10000", "Planner", 1),
    ("/simulate?hw=b200&model=deepseek-r1&workload=1k1k", "Simulate", 1),
    ("/data", "Data", 0),
]


@pytest.mark.parametrize("path, heading, charts", PAGES, ids=[p[1] for p in PAGES])
def test_page_loads_without_an_exception(server, page, path, heading, charts):
    page.goto(server + path)
    wait_for_app(page, timeout=60_000)
    expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible(timeout=30_000)
    if charts:
        # Charts mount one after another: wait for the last one expected, not just the first.
        expect(page.get_by_test_id("stVegaLiteChart").nth(charts - 1)).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert not page.js_errors, page.js_errors


@pytest.mark.parametrize("path", ["/", "/compare", "/planner", "/latency", "/simulate", "/data",
                                  "/embed"])
def test_a_link_too_long_to_read_is_said(server, page, path):
    """Streamlit drops a query string of more than 1,000 values whole; the page says so instead
    of showing the default view without a word."""
    page.goto(server + path + "?" + "&".join(f"hw=bogus{i}" for i in range(5000)))
    page.wait_for_url("**too_long=5000x*", timeout=30_000)
    expect(page.get_by_text("This link was too long to read (5,000 values")).to_be_visible(
        timeout=60_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_an_overview_cell_opens_its_explorer_view(server, page):
    """Select a cell of the Overview: a button opens the Explorer at that slice and target."""
    page.goto(server + "/overview?pct=mean")
    wait_for_app(page, timeout=60_000)
    grid = page.get_by_test_id("stDataFrame")
    expect(grid).to_be_visible(timeout=30_000)
    box = grid.bounding_box()
    # the first data row, in the column after the pinned one (its first interactivity)
    page.mouse.click(box["x"] + 330, box["y"] + 35 * 2 + 17)
    wait_for_app(page, timeout=60_000)
    button = page.get_by_role("link", name="in the Explorer")
    expect(button).to_be_visible(timeout=30_000)
    href = button.get_attribute("href")
    assert "pct=mean" in href and "target=" in href and "model=" in href, href
    page.goto(href if href.startswith("http") else server + href)
    wait_for_app(page, timeout=60_000)
    expect(page.get_by_role("heading", name="Explorer", level=1)).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)
