"""Hostile text from data or links (run labels, frameworks, sources, notes, link values) stays
text: it never ends or opens an element in an HTML or SVG export, never becomes Markdown markup,
a link, an image, an icon or math on a page, and never a formula in a CSV meant for spreadsheets
(docs/sharing.md, "Safe by construction"). The hostile database built here is also used by the
AppTest (tests/app/test_hostile_text_app.py) and the browser test
(tests/e2e/test_hostile_exports_browser.py)."""
from __future__ import annotations

import csv
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from opx import store

from opx.publish import export

from opx.store import queries

from opx.publish import render
from opx.store.importer import import_uploads
from opx.ingest.core import IngestOptions
from opx.links import parse_link
from ui.text import WORD_JOINER, escape_md

SCRIPT_LABEL = "</script><script>alert(1)</script>"
IMG_FRAMEWORK = "<img src=x onerror=alert(2)>"
COMMENT_SOURCE = "<!--<script>alert(3)</script>"
MARKDOWN_NOTES = ("<script>alert(4)</script> https://evil.example/login "
                  "![x](https://evil.example/x.png) :red[red] :smile: $x^2$ www.evil.example "
                  "me@evil.example &lt;b&gt; [link](javascript:alert(5))")
FORMULA_LABEL = ("=HYPERLINK(\"https://evil.example\",\"x\") https://evil.example/login "
                 "![x](https://evil.example/x.png) :red[red] <img src=x onerror=alert(6)>")
FORMULA_FRAMEWORK = "-2+3+cmd|' /C calc'!A0"
FORMULA_SOURCE = "@SUM(1+1)*cmd|' /C calc'!A0"
FORMULA_NOTE = "+1+1 \t=1+1"
EVIL_LINK = "/?model=https://evil.example/login"

# Two runs of H200 for DeepSeek R1 on 1k1k (as the seed data has), so each shows on the Explorer,
# on Compare (run against run) and in the Planner.
HOSTILE_ROWS = [
    {"hardware": "h200", "model": "deepseek-r1", "workload": "1k1k", "gpus_total": 8,
     "label": SCRIPT_LABEL, "framework": IMG_FRAMEWORK, "source": COMMENT_SOURCE,
     "notes": MARKDOWN_NOTES, "concurrency": c, "interactivity_p50": 2 * x,
     "interactivity_p90": x, "throughput_total_per_gpu": y, "note": SCRIPT_LABEL}
    for c, x, y in ((4, 95, 900), (16, 80, 2600), (64, 40, 5200))
] + [
    {"hardware": "h200", "model": "deepseek-r1", "workload": "1k1k", "gpus_total": 16,
     "label": FORMULA_LABEL, "framework": FORMULA_FRAMEWORK, "source": FORMULA_SOURCE,
     "notes": MARKDOWN_NOTES, "concurrency": c, "interactivity_p50": 2 * x,
     "interactivity_p90": x, "throughput_total_per_gpu": y, "note": FORMULA_NOTE}
    for c, x, y in ((4, 90, 800), (16, 75, 2400), (64, 35, 5000))
]


def hostile_csv() -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(HOSTILE_ROWS[0]))
    writer.writeheader()
    writer.writerows(HOSTILE_ROWS)
    return buf.getvalue().encode()


def make_hostile_db(seed_db: Path, path: Path, catalog) -> dict[str, str]:
    """A copy of the seed database with the two hostile runs; their ids by label."""
    shutil.copy(seed_db, path)
    [result] = import_uploads([("hostile.csv", hostile_csv())], IngestOptions(), path, catalog)
    assert result.ok, result.error
    with store.reading(path) as con:
        runs = queries.runs_overview(con)
    ids = {label: runs[runs.label == label].id.iloc[0] for label in (SCRIPT_LABEL, FORMULA_LABEL)}
    return ids


def hostile_links(ids: dict[str, str]) -> dict[str, str]:
    """The exportable pages, each showing the hostile text."""
    view = "model=deepseek-r1&workload=1k1k&hw=h200&pct=p90&target=80"
    return {"explorer": f"/?{view}&runs=1&points=1",
            "compare": f"/compare?{view}&ra={ids[SCRIPT_LABEL]}&rb={ids[FORMULA_LABEL]}",
            "planner": f"/planner?{view}"}


@pytest.fixture(scope="module")
def hostile(seed_db, catalog, tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "opx.duckdb"
    return path, make_hostile_db(seed_db, path, catalog)


# -- Markdown: escape_md ------------------------------------------------------------------------

def unescaped(markdown: str) -> str:
    """What a reader sees: backslash escapes resolved, word joiners invisible."""
    return re.sub(r"\\(.)", r"\1", markdown, flags=re.S).replace(WORD_JOINER, "")


def assert_inert_markdown(markdown: str) -> None:
    """Nothing in `markdown` that Streamlit would turn into markup, a link, an image, an icon,
    an emoji or math: every special character escaped, every autolink pattern broken."""
    bare = re.sub(r"\\.", "", markdown, flags=re.S)
    assert not re.search(r"[`*_{}\[\]()#+\-.!|<>~$:&=\\]", bare), markdown
    seen = markdown.replace("\\", "")
    assert not re.search(r"(?i)https?://|www\.|@\w|:\w", seen), markdown


HOSTILE_TEXTS = [SCRIPT_LABEL, IMG_FRAMEWORK, COMMENT_SOURCE, MARKDOWN_NOTES, FORMULA_LABEL,
                 "https://evil.example/login", "HTTP://EVIL.EXAMPLE", "Www.evil.example",
                 "_www.evil.example", "mailto:me@evil.example", "xmpp:me@evil.example",
                 "![x](https://evil.example/x.png)", "<https://evil.example>", ":red[red]",
                 ":material/warning:", ":smile:", "$\\frac{1}{2}$", "$$x$$", "&#x3C;b&#x3E;",
                 "a\n===", "a\n---", "> quote", "1. item", "| a | b |\n|---|---|", "~~x~~",
                 "**bold** _it_", "`code`", "\\", "[x]: https://evil.example", "unknown model 'x'"]


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_escape_md_leaves_no_markup_and_reads_as_typed(text):
    md = escape_md(text)
    assert_inert_markdown(md)
    assert unescaped(md) == text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)
       | st.text(alphabet="htps:/w.@[]()!<>&$=:-_*`~#|\\ aex", max_size=60))
def test_escape_md_holds_for_any_text(text):
    md = escape_md(text)
    assert unescaped(md) == text.replace(WORD_JOINER, "")
    seen = md.replace("\\", "")
    assert not re.search(r"(?i)https?://|www\.|@\w", seen)


# -- HTML and SVG exports -----------------------------------------------------------------------

def test_script_json_cannot_end_a_script_and_reads_back_the_same():
    value = {"a": [SCRIPT_LABEL, COMMENT_SOURCE, IMG_FRAMEWORK, "\u2028\u2029 & <!-- -->"]}
    text = export.script_json(value)
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert json.loads(text) == value


def test_html_text_escapes_markup_and_quotes():
    assert export.html_text('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"


def _script_tags(page: str) -> int:
    """Tags that open or end a script or a comment, or open an image (the page's own only)."""
    return len(re.findall(r"(?i)<script|</script|<!--|<img", page))


def test_a_hostile_spec_cannot_add_or_end_elements_in_the_html_page():
    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
            "data": {"values": [{"a": t, "b": i} for i, t in enumerate(HOSTILE_TEXTS)]},
            "mark": "point", "encoding": {"x": {"field": "a", "type": "nominal"},
                                          "y": {"field": "b", "type": "quantitative"}},
            "title": {"text": SCRIPT_LABEL, "subtitle": [COMMENT_SOURCE, IMG_FRAMEWORK]}}
    page = export.chart_html(spec).decode()
    empty = export.chart_html({"mark": "point"}).decode()
    assert _script_tags(page) == _script_tags(empty)        # only the page's own elements
    found = re.search(r"const spec = (.*);\n", page)
    assert json.loads(found.group(1)) == spec               # the spec, intact


def test_svg_text_is_escaped_and_active_content_is_refused():
    spec = {"data": {"values": [{"a": SCRIPT_LABEL, "b": 1}]}, "mark": "point",
            "encoding": {"x": {"field": "a", "type": "nominal"},
                         "y": {"field": "b", "type": "quantitative"}},
            "title": {"text": IMG_FRAMEWORK, "subtitle": [COMMENT_SOURCE]}}
    svg = export.chart_svg(spec).decode()
    root = ET.fromstring(svg)
    texts = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert IMG_FRAMEWORK in texts and COMMENT_SOURCE in texts
    assert not [el for el in root.iter() if el.tag.rsplit("}", 1)[-1] in ("script", "img")]



@pytest.mark.parametrize("svg", [
    '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><g onload="alert(1)"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    '<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>'])
def test_an_svg_with_active_content_is_refused_not_written(monkeypatch, svg):
    """Should the renderer ever write script, links, handlers or HTML, the export fails."""
    monkeypatch.setattr(export.vlc, "vegalite_to_svg", lambda spec: svg)
    with pytest.raises(RuntimeError, match="active element"):
        export.chart_svg({})


@pytest.mark.parametrize("page", ["explorer", "compare", "planner"])
def test_every_markup_export_of_a_hostile_view_is_inert(hostile, catalog, page):
    db, ids = hostile
    link = parse_link(hostile_links(ids)[page])
    spec = json.loads(render.render_link(link, "vl.json", db, catalog))
    assert SCRIPT_LABEL in json.dumps(spec, ensure_ascii=False)     # the hostile text is shown
    html = render.render_link(link, "html", db, catalog).decode()
    empty = export.chart_html({"mark": "point"}).decode()
    assert _script_tags(html) == _script_tags(empty)
    svg = render.render_link(link, "svg", db, catalog).decode()
    assert "<script" not in svg and "<img" not in svg and "<!--" not in svg
    ET.fromstring(svg)                                             # well-formed, text escaped


# -- CSV for spreadsheets -----------------------------------------------------------------------

@pytest.mark.parametrize("cell, out", [
    ("=1+1", "'=1+1"), ("+1+1", "'+1+1"), ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("@SUM(1)", "'@SUM(1)"), ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("'=1", "''=1"),
    ("-5", "-5"), ("+1.5e3", "+1.5e3"), ("-.5", "-.5"), ("'hello", "'hello"), ("a=b", "a=b"),
    ("", ""), (-5.0, -5.0), (3, 3), (None, None)])
def test_spreadsheet_cells(cell, out):
    assert export.spreadsheet_cell(cell) == out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="'=+-@\t\r0123456789.eE abc", max_size=12) | st.text(max_size=12))
def test_unquote_cell_gives_back_exactly_the_text(text):
    assert export.unquote_cell(export.spreadsheet_cell(text)) == text


def test_csv_exports_neutralise_text_cells_and_keep_numbers(hostile, catalog):
    db, ids = hostile
    link = parse_link(hostile_links(ids)["explorer"])
    frame = pd.read_csv(io.BytesIO(render.render_link(link, "csv", db, catalog)))
    ours = frame[frame.label == "'" + FORMULA_LABEL]
    assert len(ours) and set(ours.framework) == {"'" + FORMULA_FRAMEWORK}
    assert set(ours.note) == {"'" + FORMULA_NOTE}
    assert pd.api.types.is_numeric_dtype(frame.concurrency)
    text_cols = frame.select_dtypes(include=["object", "str"])
    assert not text_cols.map(lambda v: isinstance(v, str) and v[:1] in export.FORMULA_START
                             and not re.fullmatch(r"[+-]?[\d.]+(e[+-]?\d+)?", v)).any().any()
    # the Data page's "Runs and points (CSV)" is the same registry format
    with store.reading(db) as con:
        points = queries.export_points(con)
    data_csv = pd.read_csv(io.BytesIO(export.render("csv", points)), keep_default_na=False)
    assert "'" + FORMULA_SOURCE in set(data_csv.source)
    assert "'" + FORMULA_LABEL in set(data_csv.label)


def test_the_data_page_csv_of_hostile_runs_imports_back_unchanged(hostile, catalog, tmp_path):
    db, ids = hostile
    with store.reading(db) as con:
        exported = queries.export_points(con, list(ids.values()))
    fresh = tmp_path / "fresh.duckdb"
    [result] = import_uploads([("export.csv", export.render("csv", exported))], IngestOptions(),
                              fresh, catalog)
    assert result.ok, result.error
    with store.reading(fresh) as con:
        again = queries.export_points(con)
    assert set(again.id) == set(ids.values())
    assert set(again.label) == {SCRIPT_LABEL, FORMULA_LABEL}
