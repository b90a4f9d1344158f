"""A shared link to a page, opened as the very first visit of a fresh server, runs through the
page registry (app.py), not a legacy page router."""
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e


def test_a_page_link_as_the_first_visit(server, page):
    page.goto(server + "/compare?target=500")
    wait_for_app(page)
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_text("Explorer")).to_be_visible(timeout=20_000)
    expect(nav.get_by_text("app", exact=True)).to_have_count(0)
    expect(page.get_by_role("heading", name="Compare", level=1)).to_be_visible()
    expect(page.get_by_test_id("stMetric").first).to_contain_text("no multiple")
    expect(page.get_by_test_id("stCaptionContainer").filter(
        has_text="cannot reach 500").first).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert not page.js_errors
