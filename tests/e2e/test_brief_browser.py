"""Briefs and the embed view in a real browser: the HTML brief opens with the network blocked
and shows its chart and figures; an <iframe> in a local page shows the embed view's chart."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from opx.publish import render

from opx import links
from opx.links import PAGES, embed_link, embed_size, iframe_snippet, parse_link
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e


def _offline(page) -> list[str]:
    """Block every request that is not for a local file; return the ones that were tried."""
    tried: list[str] = []

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            tried.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    return tried


@pytest.mark.parametrize("link, figures", [
    ("/", ["58×", "2.7×", "Multiple at the target", "Multiple at peak"]),
    ("/compare?a=vr-nvl72&b=gb300-nvl72", ["58×", "2.7×", "Vera Rubin NVL72 ÷ GB300 NVL72"]),
    ("/planner?sessions=10000", ["Fleet plan", "Cheapest system meeting the SLA", "58×"]),
])
def test_the_html_brief_opens_offline_with_its_chart_and_figures(seed_db, catalog, page, tmp_path,
                                                                 link, figures):
    path = tmp_path / "brief.html"
    path.write_bytes(render.render_link(parse_link(link), "brief-html", seed_db, catalog))
    tried = _offline(page)
    page.goto(path.as_uri())
    chart = page.locator("figure.chart > svg")
    expect(chart).to_have_count(1)
    assert page.evaluate("document.querySelector('figure.chart > svg').getBBox().width") > 300
    assert chart.locator("path").count() > 0
    for text in figures:
        expect(page.locator("body")).to_contain_text(text)
    expect(page.locator("footer a")).to_have_attribute("href", links.build_link(
        parse_link(link).path, parse_link(link).state, "http://localhost:8501"))
    page.wait_for_timeout(300)
    assert tried == []
    assert page.locator("script").count() == 0
    assert not page.js_errors


def test_an_iframe_shows_the_embed_view(server, page, tmp_path):
    link = parse_link("/compare?a=vr-nvl72&b=gb300-nvl72&target=387")
    src = embed_link(link.path, link.state, server)
    host = tmp_path / "wiki.html"
    host.write_text(f'<!doctype html><html><body><h1>Our wiki</h1>'
                    f'<iframe src="{src.replace("&", "&amp;")}" width="960" height="900" '
                    f'title="opx chart"></iframe></body></html>')
    page.goto(host.as_uri())
    frame = page.frame_locator("iframe")
    expect(frame.get_by_test_id("stVegaLiteChart")).to_be_visible(timeout=60_000)
    expect(frame.get_by_text("Open the full view")).to_be_visible()
    expect(frame.get_by_test_id("stCaptionContainer").first).to_contain_text(
        "Vera Rubin NVL72 vs GB300 NVL72")
    expect(frame.get_by_test_id("stSidebar")).to_have_count(0)
    expect(frame.get_by_test_id("stSidebarNav")).to_have_count(0)
    expect(frame.get_by_test_id("stException")).to_have_count(0)
    width = page.evaluate("document.querySelector('iframe').getBoundingClientRect().width")
    chart = frame.locator("[data-testid='stVegaLiteChart'] .marks").first
    assert chart.bounding_box()["width"] <= width          # shrunk to the frame


@pytest.mark.parametrize("link", [
    "/", "/compare", "/planner",
    "/?hw=vr-nvl72&hw=gb300-nvl72&hw=gb200-nvl72&hw=b200&hw=h200",
    "/planner?hw=vr-nvl72&hw=gb300-nvl72&hw=gb200-nvl72&hw=b200&hw=h200&sessions=10000"])
def test_the_embed_snippet_shows_the_whole_embed(server, page, tmp_path, link):
    """The <iframe> the share box gives is tall enough for its chart, caption and link."""
    link = parse_link(link)
    src = embed_link(link.path, link.state, server)
    host = tmp_path / "wiki.html"
    snippet = iframe_snippet(src, size=embed_size(PAGES[link.path], len(link.state.hw)))
    host.write_text(f"<!doctype html><html><body style='margin:0'>{snippet}</body></html>")
    page.goto(host.as_uri())
    frame = page.frame_locator("iframe")
    expect(frame.get_by_text("Open the full view")).to_be_visible(timeout=60_000)
    page.wait_for_timeout(1500)            # the chart drawn at its size
    height = page.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
    bottom = page.frames[1].evaluate("document.querySelector("
                                     "'[data-testid=stMainBlockContainer]').getBoundingClientRect()"
                                     ".bottom")
    assert bottom <= height, (bottom, height)


def test_the_share_box_gives_the_embed_address(server, page):
    page.goto(server + "/?target=500")
    wait_for_app(page, timeout=60_000)
    page.get_by_text("Embed this chart").click()
    code = page.get_by_test_id("stCode").filter(has_text="<iframe")
    expect(code).to_contain_text("/embed?of=explorer", timeout=20_000)
    expect(code).to_contain_text("target=500")
    expect(page.get_by_test_id("stSidebarNav").get_by_text("Embedded chart")).to_be_hidden()
