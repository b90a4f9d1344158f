"""Hostile labels, frameworks, sources and notes in a real browser: every HTML and SVG export of
`/`, `/compare` and `/planner` opens from disk with no script run and its chart drawn, and the
pages show the text (and a link's values, and saved-view titles) as typed, never as a link or an
image (docs/sharing.md, "Safe by construction")."""
from __future__ import annotations

import subprocess
import sys

import pytest
from playwright.sync_api import expect

from models import ViewState
from opx import store
from opx.store import saved_views
from opx.publish import render
from opx.links import parse_link
from tests.conftest import ROOT
from tests.e2e.conftest import wait_for_app
from tests.unit.test_hostile_text import (EVIL_LINK, FORMULA_LABEL, SCRIPT_LABEL, hostile_links,
                                          make_hostile_db)
from ui.text import WORD_JOINER

pytestmark = pytest.mark.e2e

HOSTILE_TITLE = "https://evil.example/login ![x](https://evil.example/x.png) :red[red] www.evil.example"


@pytest.fixture(scope="module")
def hostile_db(seed_db, catalog, tmp_path_factory):
    """The seed data with the hostile runs and a saved view with a hostile title."""
    path = tmp_path_factory.mktemp("hostile-e2e") / "opx.duckdb"
    ids = make_hostile_db(seed_db, path, catalog)
    with store.writing(path) as con:
        saved = saved_views.save(con, HOSTILE_TITLE, "/", ViewState(target=500), [])
    return path, ids, saved.slug


@pytest.fixture(scope="module")
def server_db(hostile_db, tmp_path_factory):
    """The server's own copy (the exports below read the other, so no file is shared)."""
    path = tmp_path_factory.mktemp("hostile-server") / "opx.duckdb"
    path.write_bytes(hostile_db[0].read_bytes())
    return path


def _watch(page) -> list[str]:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    return dialogs


@pytest.mark.parametrize("name", ["explorer", "compare", "planner"])
def test_the_brief_of_a_hostile_view_opens_with_no_dialog(hostile_db, page, tmp_path, name):
    db, ids, _ = hostile_db
    out = tmp_path / f"{name}-brief.html"      # as `python -m opx export LINK --format brief-html`
    r = subprocess.run([sys.executable, "-m", "opx", "export", hostile_links(ids)[name],
                        "--format", "brief-html", "-o", str(out), "--db", str(db)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    dialogs = _watch(page)
    page.goto(out.as_uri())
    expect(page.locator("figure.chart > svg")).to_have_count(1)
    page.wait_for_timeout(500)
    assert dialogs == []
    assert page.locator("script, img, iframe, object, embed").count() == 0
    # the sources (and Compare's run names) read as typed, as text
    expect(page.locator("body")).to_contain_text("<!--<script>alert(3)</script>")
    if name == "compare":
        expect(page.locator("body")).to_contain_text(SCRIPT_LABEL)


@pytest.mark.parametrize("name", ["explorer", "compare", "planner"])
def test_every_export_of_a_hostile_view_opens_with_no_script_run(hostile_db, catalog, page,
                                                               tmp_path, name):
    db, ids, _ = hostile_db
    link = hostile_links(ids)[name]
    html = tmp_path / f"{name}.html"           # as `python -m opx export LINK --format html`
    r = subprocess.run([sys.executable, "-m", "opx", "export", link, "--format", "html",
                        "-o", str(html), "--db", str(db)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    svg = tmp_path / f"{name}.svg"             # as the page's SVG download
    svg.write_bytes(render.render_link(parse_link(link), "svg", db, catalog))
    dialogs = _watch(page)

    page.goto(html.as_uri())
    chart = page.locator("#vega-chart svg.marks")
    expect(chart).to_have_count(1, timeout=30_000)
    expect(page.locator("#vega-chart svg.marks path").first).to_be_attached()
    if name == "compare":                      # the run names are the chart's title, as text
        expect(chart).to_contain_text(SCRIPT_LABEL)
    page.wait_for_timeout(500)
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == page.evaluate(
        "document.documentElement.outerHTML.split('<script').length - 1")

    page.goto(svg.as_uri())
    assert page.evaluate("document.documentElement.tagName") == "svg"
    assert page.evaluate("document.querySelectorAll('script, img, foreignObject, a').length") == 0
    assert page.evaluate("document.querySelectorAll('path').length") > 0
    if name == "compare":
        assert SCRIPT_LABEL in page.evaluate("document.documentElement.textContent")
    page.wait_for_timeout(500)
    assert dialogs == []
    assert not page.js_errors


def _no_live_text(page) -> None:
    """No link to the attacker's host (the page's own links may carry a slug made from the text)
    and no image, anywhere in the page."""
    hosts = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => new URL(a.href, "
                          "location.href).hostname)")
    assert not [h for h in hosts if h.endswith("evil.example")], hosts
    assert page.get_by_test_id("stMain").locator("img").count() == 0
    assert page.locator("img[src*='evil'], img[src='x']").count() == 0


def test_hostile_text_on_the_pages_is_shown_as_typed(server, hostile_db, page):
    _, ids, slug = hostile_db
    dialogs = _watch(page)

    page.goto(server + hostile_links(ids)["compare"])
    wait_for_app(page)
    heading = page.get_by_test_id("stHeading").filter(has_text=" vs ").first
    expect(heading).to_be_visible(timeout=30_000)
    assert heading.inner_text().replace(WORD_JOINER, "").strip() == \
        f"{SCRIPT_LABEL} vs {FORMULA_LABEL}"
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1)
    _no_live_text(page)

    page.goto(server + EVIL_LINK)
    wait_for_app(page)
    notice = page.get_by_test_id("stAlert").filter(has_text="evil")
    expect(notice.first).to_be_visible()
    assert "https://evil.example/login" in notice.first.inner_text().replace(WORD_JOINER, "")
    _no_live_text(page)

    page.goto(server + f"/?view={slug}")
    wait_for_app(page)
    expect(page.get_by_test_id("stAlert").filter(has_text="Saved view")).to_be_visible()
    _no_live_text(page)

    page.goto(server + "/data")
    wait_for_app(page)
    title = page.get_by_test_id("stMarkdown").filter(has_text="evil.example").first
    expect(title).to_be_visible()
    assert HOSTILE_TITLE in title.inner_text().replace(WORD_JOINER, "")
    assert page.get_by_role("link", name="open").count() >= 1      # the saved view's own link
    _no_live_text(page)
    assert dialogs == []
    assert not page.js_errors
