"""Share links, saved views, exports and hostile labels in a real browser."""
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e

HOSTILE_LABEL = '<img src=x onerror="window.__xss=1">'
HOSTILE_NOTES = "<script>window.__xss=2</script> **not bold** [link](javascript:alert(1))"


def test_a_link_with_parameters_sets_the_widgets(server, page):
    page.goto(server + "/?model=deepseek-r1&workload=1k1k&hw=gb200-nvl72&hw=gb300&pct=p50&target=50")
    wait_for_app(page)
    expect(page.get_by_label("Typed target (tok/s/user)")).to_have_value("50.00")
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_role("radio", name="P50")).to_be_checked()
    expect(sidebar.get_by_text("GB200 NVL72")).to_be_visible()
    expect(sidebar.get_by_text("GB300 NVL72")).to_be_visible()
    expect(page.get_by_test_id("stMetric").first).to_contain_text("no multiple")
    expect(page.get_by_test_id("stCaptionContainer").filter(
        has_text="GB300 NVL72 cannot reach 50").first).to_be_visible()
    assert not page.js_errors


def test_save_a_view_then_open_its_short_link_elsewhere(server, page, browser):
    page.goto(server + "/?target=500")
    wait_for_app(page)
    page.get_by_label("Name this view to get a short link").fill("Rubin at 500 (browser)")
    page.get_by_role("button", name="Save view").click()
    wait_for_app(page)
    link = page.get_by_test_id("stCode").filter(has_text="view=").first
    expect(link).to_contain_text("?view=rubin-at-500-browser")
    url = link.inner_text().strip()
    assert url.startswith(server)

    other = browser.new_context()
    fresh = other.new_page()
    fresh.goto(url)
    wait_for_app(fresh)
    expect(fresh.get_by_label("Typed target (tok/s/user)")).to_have_value("500.00")
    expect(fresh.get_by_text(re.compile("Saved view “Rubin at 500 \\(browser\\)”"))).to_be_visible()
    expect(fresh).to_have_url(re.compile(r"\?view=rubin-at-500-browser$"))
    other.close()


def test_export_downloads_a_real_png_named_for_the_view(server, page, tmp_path):
    page.goto(server + "/?target=500")
    wait_for_app(page)
    with page.expect_download(timeout=60_000) as download:
        page.get_by_test_id("stDownloadButton").filter(has_text="PNG").click()
    d = download.value
    assert d.suggested_filename == \
        "opx-explorer_deepseek-v4.1-flash_agentx_vr-nvl72_gb300-nvl72_p90-at-500.png"
    path = tmp_path / d.suggested_filename
    d.save_as(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with page.expect_download(timeout=60_000) as download:
        page.get_by_test_id("stDownloadButton").filter(has_text=re.compile(r"^HTML$")).click()
    html_path = tmp_path / "chart.html"
    download.value.save_as(html_path)
    html = html_path.read_text()
    assert "cdn.jsdelivr" not in html and "Total throughput per GPU" in html


def test_labels_from_imported_files_are_shown_as_typed_and_never_run(server, page, tmp_path):
    csv = tmp_path / "hostile.csv"
    csv.write_text("hardware,model,workload,gpus_total,label,notes,framework,concurrency,"
                   "interactivity_p90,throughput_total_per_gpu\n"
                   f'h200,deepseek-r1,1k1k,8,"{HOSTILE_LABEL.replace(chr(34), chr(34) * 2)}",'
                   f'"{HOSTILE_NOTES}",<b>vllm</b>,4,80,900\n')
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(server + "/data")
    wait_for_app(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
    wait_for_app(page)
    button = page.get_by_role("button", name="Import", exact=True)
    expect(button).to_be_enabled(timeout=20_000)
    button.click()
    wait_for_app(page)
    expect(page.get_by_text("1 file(s) imported, 0 refused.")).to_be_visible(timeout=20_000)
    page.get_by_label("Search runs (any column)").fill("onerror")
    page.get_by_label("Search runs (any column)").press("Enter")
    wait_for_app(page)
    details = page.get_by_test_id("stText").filter(has_text="label:")
    expect(details).to_contain_text(f"label: {HOSTILE_LABEL}")
    expect(details).to_contain_text(f"notes: {HOSTILE_NOTES}")
    expect(details).to_contain_text("framework: <b>vllm</b>")
    page.goto(server + "/?model=deepseek-r1&workload=1k1k&hw=h200&pct=p90&target=80")
    wait_for_app(page)
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=20_000)
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src='x']").count() == 0
    assert dialogs == []
    assert not page.js_errors


def test_every_download_links_back_to_the_address_it_came_from(server, page, tmp_path):
    """The files link to where the dashboard is served (here a random port), not to the
    default address: the download callbacks run outside the script run."""
    page.goto(server + "/?target=500")
    wait_for_app(page)
    with page.expect_download(timeout=60_000) as download:
        page.get_by_test_id("stDownloadButton").filter(has_text="JSON").click()
    path = tmp_path / "view.json"
    download.value.save_as(path)
    import json
    assert json.loads(path.read_text())["link"].startswith(server + "/?model=")
    with page.expect_download(timeout=60_000) as download:
        page.get_by_test_id("stDownloadButton").filter(has_text="Brief (HTML").click()
    brief = tmp_path / "brief.html"
    download.value.save_as(brief)
    assert server + "/?model=" in brief.read_text() and "localhost:8501" not in brief.read_text()


@pytest.mark.parametrize("link", ["/", "/compare", "/latency", "/planner", "/simulate"])
def test_every_pages_html_export_draws_its_chart_with_no_warning(full_db, catalog, page,
                                                                 tmp_path, link):
    """Each page's offline HTML chart of the data `make run` builds, opened from disk: drawn,
    and Vega says nothing (a legend hidden in one layer and shown in another logged
    "Conflicting legend property")."""
    from opx.links import parse_link
    from opx.publish import render
    path = tmp_path / "chart.html"
    path.write_bytes(render.render_link(parse_link(link), "html", full_db, catalog))
    said: list[str] = []
    page.on("console", lambda m: said.append(f"{m.type}: {m.text}")
            if m.type in ("warning", "error") else None)
    page.goto(path.as_uri())
    expect(page.locator("svg, canvas").first).to_be_visible()
    page.wait_for_timeout(500)
    assert said == [] and not page.js_errors
