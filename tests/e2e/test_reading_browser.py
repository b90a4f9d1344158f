"""What a reader sees, measured in Chromium at a desktop's and a phone's width: charts keep a
readable plot, nothing runs past the page's edge, no button label is cut."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e

PAGES = ["/", "/compare", "/planner", "/latency", "/simulate"]

# in the page: the widest element past the viewport, and the buttons whose label is cut
MEASURE = """() => {
  const overflow = [...document.querySelectorAll('[data-testid=stMain] *')]
    .filter(e => e.getBoundingClientRect().width > 0 && !e.closest('[data-testid=stDataFrame]')
                 && !e.closest('[data-testid=stCode]') && !e.closest('[data-testid=stVegaLiteChart]')
                 && e.getBoundingClientRect().right > window.innerWidth + 2)
    .map(e => e.tagName + '.' + (e.getAttribute('data-testid') || '')).slice(0, 5);
  const cut = [...document.querySelectorAll(
      ':is([data-testid=stDownloadButton], [data-testid=stButton]) [data-testid=stMarkdownContainer]')]
    .filter(p => p.scrollWidth > p.clientWidth).map(p => p.textContent);
  const charts = [...document.querySelectorAll('[data-testid=stVegaLiteChart] .marks')]
    .map(c => { const r = c.getBoundingClientRect(); return [r.width, r.height, r.right]; });
  return {overflow, cut, charts, width: window.innerWidth};
}"""


@pytest.mark.parametrize("width", [1500, 400])
@pytest.mark.parametrize("path", PAGES)
def test_a_reader_sees_whole_charts_and_labels(server, browser, path, width):
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    try:
        page.goto(server + path)
        wait_for_app(page, timeout=90_000)
        page.locator("[data-testid='stVegaLiteChart']").first.wait_for(timeout=60_000)
        page.wait_for_timeout(2500)            # the charts drawn at their size
        seen = page.evaluate(MEASURE)
    finally:
        context.close()
    assert seen["overflow"] == [], seen["overflow"]
    assert seen["cut"] == [], seen["cut"]
    assert seen["charts"]
    for w, h, right in seen["charts"]:
        assert right <= width + 2, (w, h, right)       # a chart fits the page's width
        assert h >= 300, (w, h)                        # and keeps a readable height
