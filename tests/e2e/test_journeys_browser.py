"""Journeys, not pages: a person moves through the sidebar, back and forward, and every page opens
on the same view, with the address bar stating it and the seed's figures where they belong."""
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e

SEED = {"model": ["deepseek-v4.1-flash"], "workload": ["agentx"],
        "hw": ["vr-nvl72", "gb300-nvl72"], "pct": ["p90"], "target": ["387"]}


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def path(page) -> str:
    return urlsplit(page.url).path


def click_sidebar(page, name: str) -> None:
    page.locator("[data-testid='stSidebarNav'] a").filter(
        has_text=re.compile(rf"{name}\s*$")).first.click()
    expect(page).to_have_url(
        re.compile(rf":\d+/{'' if name == 'Explorer' else name.lower()}(\?|$)"), timeout=30_000)
    wait_for_app(page, timeout=60_000)
    page.wait_for_timeout(500)
    wait_for_app(page, timeout=60_000)


def type_target(page, value: str):
    """Type a target in the page's box and wait for its run; returns the box."""
    typed = page.get_by_label("Typed target (tok/s/user)")
    typed.fill(value)
    typed.press("Enter")
    wait_for_app(page)
    return typed


def metric_values(page) -> list[str]:
    expect(page.get_by_test_id("stMetricValue").first).to_be_visible(timeout=30_000)
    return [m.inner_text().strip() for m in page.get_by_test_id("stMetricValue").all()]


def assert_shared(page, expected: dict[str, list[str]]) -> None:
    q = query(page)
    for key, value in expected.items():
        assert q.get(key) == value, (page.url, key)


def assert_no_error(page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert not page.js_errors, page.js_errors


def test_the_seed_view_survives_the_sidebar_in_two_orders(server, page):
    page.goto(server + "/")
    wait_for_app(page, timeout=60_000)
    assert metric_values(page)[:2] == ["58×", "2.7×"]
    assert_shared(page, SEED)
    for order in (["Compare", "Planner", "Latency", "Simulate", "Data", "Explorer"],
                  ["Data", "Latency", "Compare", "Simulate", "Planner", "Explorer", "Compare"]):
        for name in order:
            click_sidebar(page, name)
            assert_no_error(page)
            if name in ("Explorer", "Compare"):
                assert metric_values(page)[:2] == ["58×", "2.7×"], name
            if name in ("Explorer", "Compare", "Planner", "Latency"):
                assert_shared(page, SEED)
                assert "none" not in query(page).get("hw", []), page.url


def test_a_target_and_percentile_set_on_one_page_are_read_on_the_next(server, page):
    page.goto(server + "/")
    wait_for_app(page, timeout=60_000)
    type_target(page, "200")
    page.locator("[data-testid='stSidebar'] label").filter(has_text=re.compile("^P50$")).click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"target=200"), timeout=15_000)
    expect(page).to_have_url(re.compile(r"pct=p50"), timeout=15_000)
    explorer_url = page.url

    click_sidebar(page, "Compare")
    assert_shared(page, {"target": ["200"], "pct": ["p50"]})
    expect(page.get_by_label("Typed target (tok/s/user)")).to_have_value(re.compile(r"^200"))
    click_sidebar(page, "Planner")
    assert_shared(page, {"target": ["200"], "pct": ["p50"]})
    expect(page.get_by_label("SLA: at least tok/s/user")).to_have_value(re.compile(r"^200"))

    # Back and forward go through the pages as they were, reload keeps the page's view.
    page.go_back()
    expect(page).to_have_url(re.compile(r"/compare\?"), timeout=30_000)
    wait_for_app(page, timeout=60_000)
    assert_shared(page, {"target": ["200"], "pct": ["p50"]})
    page.go_back()
    expect(page).to_have_url(re.compile(r":\d+/\?"), timeout=30_000)
    wait_for_app(page, timeout=60_000)
    assert query(page) == parse_qs(urlsplit(explorer_url).query)
    page.go_forward()
    expect(page).to_have_url(re.compile(r"/compare\?"), timeout=30_000)
    wait_for_app(page, timeout=60_000)
    page.reload()
    wait_for_app(page, timeout=60_000)
    assert path(page) == "/compare"
    assert_shared(page, {"target": ["200"], "pct": ["p50"]})
    expect(page.get_by_label("Typed target (tok/s/user)")).to_have_value(re.compile(r"^200"))
    assert_no_error(page)


def test_hardware_chosen_on_the_explorer_is_what_compare_compares(server, page):
    page.goto(server + "/?hw=gb200-nvl72&hw=gb300-nvl72&model=deepseek-r1&workload=1k1k&pct=p50"
                       "&target=20")
    wait_for_app(page, timeout=60_000)
    click_sidebar(page, "Compare")
    assert_shared(page, {"model": ["deepseek-r1"], "workload": ["1k1k"], "pct": ["p50"],
                         "target": ["20"]})
    expect(page.get_by_role("heading", name="GB200 NVL72 vs GB300 NVL72")).to_be_visible()
    click_sidebar(page, "Data")
    click_sidebar(page, "Explorer")
    assert_shared(page, {"hw": ["gb200-nvl72", "gb300-nvl72"], "model": ["deepseek-r1"],
                         "target": ["20"]})
    assert_no_error(page)


def test_one_back_leaves_a_link_and_data_keeps_the_view(server, page):
    """A link opened after another page is one history entry, whatever the page writes into
    its address (here `y` and the dropped bad `hw`): one Back returns to the page before. And a
    page left for Data opens again on the session's view."""
    page.goto(server + "/compare")
    wait_for_app(page, timeout=60_000)
    page.goto(server + "/?model=deepseek-r1&workload=1k1k&hw=b200&hw=nope&pct=mean&target=50")
    wait_for_app(page, timeout=60_000)
    expect(page).to_have_url(re.compile(r"y=total"), timeout=15_000)
    assert "nope" not in page.url
    page.go_back()
    expect(page).to_have_url(re.compile(r"/compare(\?|$)"), timeout=30_000)
    wait_for_app(page, timeout=60_000)
    assert_no_error(page)
    page.goto(server + "/")
    wait_for_app(page, timeout=60_000)
    click_sidebar(page, "Data")
    click_sidebar(page, "Explorer")
    assert_shared(page, SEED)
    assert metric_values(page)[:2] == ["58×", "2.7×"]
    assert_no_error(page)


def test_a_change_after_back_is_kept(server, page):
    """Back to an earlier view in the same session, then a change: the change is the address's
    and the widget's (the replaced arrival entry does not seed the page again)."""
    page.goto(server + "/?model=deepseek-r1&workload=1k1k&hw=b200&hw=h200&pct=mean&target=50")
    wait_for_app(page, timeout=60_000)
    typed = type_target(page, "80")
    expect(page).to_have_url(re.compile(r"target=80"), timeout=15_000)
    page.go_back()
    expect(page).to_have_url(re.compile(r"target=50"), timeout=30_000)
    wait_for_app(page, timeout=60_000)
    expect(typed).to_have_value(re.compile(r"^50"))
    type_target(page, "120")
    expect(page).to_have_url(re.compile(r"target=120"), timeout=15_000)
    page.wait_for_timeout(1000)
    wait_for_app(page)
    expect(typed).to_have_value(re.compile(r"^120"))
    assert_shared(page, {"model": ["deepseek-r1"], "pct": ["mean"], "target": ["120"]})
    assert_no_error(page)
