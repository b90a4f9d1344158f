"""Exports are real files of the right kind, built by the same code as the page."""
import json

import pytest

from opx.publish import export

from opx.publish import link_view, render
from opx.errors import OpxError
from opx.links import build_link, parse_link
from models import ViewState

SIGNATURES = {
    "png": lambda b: b[:8] == b"\x89PNG\r\n\x1a\n",
    "pdf": lambda b: b[:5] == b"%PDF-",
    "svg": lambda b: b"<svg" in b[:200],
    "html": lambda b: b.lstrip().lower().startswith(b"<!doctype html>"),
    "vl.json": lambda b: json.loads(b)["$schema"].startswith("https://vega.github.io/schema/vega-lite/"),
    "csv": lambda b: b.splitlines()[0].startswith(b"hardware,"),
    "parquet": lambda b: b[:4] == b"PAR1" and b[-4:] == b"PAR1",
    "json": lambda b: isinstance(json.loads(b), dict),
    "brief-pdf": lambda b: b[:5] == b"%PDF-",
    "brief-html": lambda b: b.lstrip().lower().startswith(b"<!doctype html>"),
}


@pytest.mark.parametrize("fmt", list(export.FORMATS))
@pytest.mark.parametrize("link", ["/", "/compare?target=500", "/?pct=p50&hw=none"])
def test_every_format_writes_a_real_file(seed_db, catalog, fmt, link):
    data = render.render_link(parse_link(link), fmt, seed_db, catalog)
    assert SIGNATURES[fmt](data), data[:80]


def test_the_html_page_is_named_by_its_chart(seed_db, catalog):
    html = render.render_link(parse_link("/compare"), "html", seed_db, catalog).decode()
    spec = json.loads(render.render_link(parse_link("/compare"), "vl.json", seed_db, catalog))
    title = export._title_of(spec)             # a stack of charts: its first chart's title
    assert title.startswith("Total throughput per GPU vs interactivity")
    assert f"<title>{export.html_text(title)}</title>" in html and "<title>Chart</title>" not in html
    hostile = export.chart_html({"title": "</title><script>x</script>", "mark": "point"}).decode()
    assert "<title>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;</title>" in hostile


def test_html_is_offline_and_holds_the_spec(seed_db, catalog):
    html = render.render_link(parse_link("/"), "html", seed_db, catalog).decode()
    assert "Total throughput per GPU vs interactivity" in html
    assert '"$schema"' in html or "vega-lite" in html
    assert "<script src=" not in html.replace("'", '"')
    assert "cdn.jsdelivr" not in html


def test_png_is_rendered_at_twice_the_size(seed_db, catalog):
    import struct
    png = render.render_link(parse_link("/"), "png", seed_db, catalog)
    svg = render.render_link(parse_link("/"), "svg", seed_db, catalog).decode()
    width_px = struct.unpack(">I", png[16:20])[0]
    svg_width = float(svg.split('width="', 1)[1].split('"', 1)[0])
    assert width_px == pytest.approx(2 * svg_width, abs=2)


def test_the_chart_carries_its_context(seed_db, catalog):
    spec = json.loads(render.render_link(parse_link("/"), "vl.json", seed_db, catalog))
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "Vera Rubin NVL72: preview" in subtitle and "GB300 NVL72: derived" in subtitle
    assert "Source: vLLM (Inferact), 2026-11-12" in subtitle
    assert "opx, 20" in subtitle                       # the date


def test_the_latency_chart_says_what_it_shows(seed_db, catalog):
    link = "/latency?model=deepseek-r1&workload=1k1k&hw=b200&pct=mean"
    spec = json.loads(render.render_link(parse_link(link), "vl.json", seed_db, catalog))
    subtitle = "".join(spec["title"]["subtitle"])
    assert f"{catalog.model_name('deepseek-r1')}, {catalog.workload_name('1k1k')}" in subtitle
    assert "opx, 20" in subtitle and "/latency?model=deepseek-r1&workload=1k1k" in subtitle


def test_compare_json_holds_both_sides_and_both_multiples(seed_db, catalog):
    data = json.loads(render.render_link(parse_link("/compare"), "json", seed_db, catalog))
    for side, hw in (("a", "vr-nvl72"), ("b", "gb300-nvl72")):
        assert data[side]["hardware"] == hw
        assert {"at_target", "peak", "reachable"} <= set(data[side])
    assert data["a"]["at_target"] == pytest.approx(1.7e6) and data["b"]["reachable"] is True
    assert data["multiple_at_target"] == pytest.approx(58.0, rel=1e-3)
    assert data["multiple_at_peak"] == pytest.approx(2.7, rel=1e-3)
    unreachable = json.loads(render.render_link(parse_link("/compare?target=500"), "json",
                                               seed_db, catalog))
    assert unreachable["b"]["reachable"] is False and unreachable["multiple_at_target"] is None
    assert "cannot reach 500" in unreachable["multiple_at_target_text"]


def test_no_data_is_neither_reachable_nor_unreachable(seed_db, catalog):
    """Without a figure and with nothing drawn, `reachable` is null, not false: "no data" and
    "cannot reach" are different answers, and the JSON says one of them."""
    data = json.loads(render.render_link(parse_link("/simulate?hw=h100"), "json", seed_db,
                                         catalog))
    side = data["hardware"][0]
    assert side["at_target_status"] == "no data" and side["reachable"] is None
    assert "cannot reach" in data["projection"]["reason"]       # the projection's own answer


def test_file_names_say_what_they_hold():
    name = export.file_name("explorer", ViewState(), "png")
    assert name == "opx-explorer_deepseek-v4.1-flash_agentx_vr-nvl72_gb300-nvl72_p90-at-387.png"


def test_links_round_trip_and_bad_links_are_errors(catalog):
    state = ViewState(model="deepseek-r1", hw=("h200",), target=42.5, runs=True)
    link = build_link("/", state, "http://example.org:8501")
    assert link.startswith("http://example.org:8501/?")
    assert parse_link(link, catalog).state == state
    assert parse_link("/compare?a=h200&b=b200").state.a == "h200"
    with pytest.raises(OpxError, match="not a page"):
        parse_link("/nowhere?x=1")
    with pytest.raises(OpxError, match="has no Explorer view"):
        link_view.view_for(parse_link("/latency"), None, catalog)


def _png_size(png):
    import struct
    return struct.unpack(">II", png[16:24])


def test_compare_exports_hold_the_multiple_chart(seed_db, catalog):
    """Compare's files hold what the page shows: its Explorer chart over the multiple across
    interactivity, built by the page's code (opx.answers.compare.multiple_curve + charts.multiple_chart)."""
    spec = json.loads(render.render_link(parse_link("/compare"), "vl.json", seed_db, catalog))
    assert len(spec["vconcat"]) == 2
    top, bottom = spec["vconcat"]
    assert top["title"]["text"][0] == "Total throughput per GPU vs interactivity"
    assert bottom["title"]["text"] == "Vera Rubin NVL72 ÷ GB300 NVL72 across interactivity"
    assert bottom["height"] >= 260
    compare_png = render.render_link(parse_link("/compare"), "png", seed_db, catalog)
    explorer_png = render.render_link(parse_link("/"), "png", seed_db, catalog)
    assert SIGNATURES["png"](compare_png)
    assert _png_size(compare_png)[1] > _png_size(explorer_png)[1] + 2 * 260
    svg = render.render_link(parse_link("/compare"), "svg", seed_db, catalog).decode()
    assert "across interactivity" in svg
    html = render.render_link(parse_link("/compare"), "html", seed_db, catalog).decode()
    assert "across interactivity" in html


def test_the_explorer_export_holds_the_value_over_time_when_asked(full_db, catalog):
    plain = json.loads(render.render_link(parse_link("/"), "vl.json", full_db, catalog))
    assert "layer" in plain and "vconcat" not in plain
    spec = json.loads(render.render_link(parse_link("/?trend=1"), "vl.json", full_db, catalog))
    assert [" ".join(c["title"]["text"] if isinstance(c["title"]["text"], list)
                     else [c["title"]["text"]]).endswith("over time")
            for c in spec["vconcat"]] == [False, True]
    assert spec["vconcat"][1]["height"] >= 300


def test_exported_links_are_full_addresses(seed_db, catalog, monkeypatch):
    monkeypatch.delenv("OPX_BASE_URL", raising=False)
    spec = json.loads(render.render_link(parse_link("/compare?target=500"), "vl.json",
                                        seed_db, catalog))
    subtitle = "".join(spec["vconcat"][0]["title"]["subtitle"])
    assert " · http://localhost:8501/compare?" in subtitle
    assert subtitle.endswith("target=500")
    summary = json.loads(render.render_link(parse_link("/"), "json", seed_db, catalog))
    assert summary["link"].startswith("http://localhost:8501/")
    monkeypatch.setenv("OPX_BASE_URL", "https://opx.example.org")
    spec = json.loads(render.render_link(parse_link("/"), "vl.json", seed_db, catalog))
    assert " · https://opx.example.org/?model=" in "".join(spec["title"]["subtitle"])
    given = json.loads(render.render_link(parse_link("/"), "vl.json", seed_db, catalog,
                                         base_url="http://host:8502"))
    assert " · http://host:8502/?model=" in "".join(given["title"]["subtitle"])


def test_a_long_subtitle_never_widens_the_image(seed_db, catalog, monkeypatch):
    monkeypatch.delenv("OPX_BASE_URL", raising=False)
    width = _png_size(render.render_link(parse_link("/"), "png", seed_db, catalog))[0]
    monkeypatch.setenv("OPX_BASE_URL", "https://" + "very-long-host-name." * 20 + "example.org")
    png = render.render_link(parse_link("/?source=preview&source=derived&source=published"),
                            "png", seed_db, catalog)
    assert _png_size(png)[0] == width
