"""The Explorer in a real browser: it renders, the address bar follows the controls, and a copied
address restores the same view in a fresh browser."""
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e


def _no_exception(page):
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert not page.js_errors, page.js_errors


def test_explorer_renders_the_seed_case(server, page):
    page.goto(server + "/")
    wait_for_app(page)
    chart = page.get_by_test_id("stVegaLiteChart")
    expect(chart).to_have_count(1, timeout=30_000)
    expect(chart.locator("canvas, svg").first).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stMetric").first).to_contain_text("58×")
    expect(page.get_by_test_id("stMetric").nth(1)).to_contain_text("2.7×")
    _no_exception(page)


def test_controls_update_the_url_and_the_link_restores_the_view(server, page, browser):
    page.goto(server + "/")
    wait_for_app(page)
    box = page.get_by_label("Typed target (tok/s/user)")
    box.fill("500")
    box.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"target=500"), timeout=15_000)
    expect(page.get_by_test_id("stMetric").first).to_contain_text("no multiple")
    expect(page.get_by_test_id("stCaptionContainer").filter(
        has_text="cannot reach 500").first).to_be_visible()

    page.get_by_test_id("stSidebar").get_by_text("P50", exact=True).click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"pct=p50"), timeout=15_000)
    shared = page.url
    _no_exception(page)

    other = browser.new_context()
    fresh = other.new_page()
    fresh.goto(shared)
    wait_for_app(fresh)
    # A new session's first run can take a while on a busy machine: wait for it, not 5 s.
    expect(fresh.get_by_label("Typed target (tok/s/user)")).to_have_value("500.00",
                                                                         timeout=60_000)
    expect(fresh.get_by_test_id("stSidebar").get_by_role("radio", name="P50")).to_be_checked()
    other.close()


def test_a_bad_link_shows_a_notice_not_an_exception(server, page):
    page.goto(server + "/?pct=p42&hw=vr-nvl72&hw=bogus&target=abc")
    wait_for_app(page)
    expect(page.get_by_test_id("stAlert").first).to_be_visible()
    expect(page.get_by_text(re.compile("Unknown hardware"))).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1)
    _no_exception(page)
