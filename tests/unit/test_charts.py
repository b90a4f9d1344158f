"""Every chart the Explorer can draw renders through vl-convert, as exports will."""
import json
import math

import pytest
import vl_convert as vlc
import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from models import ViewState
from opx.publish.charts import PROVENANCE_SHAPES, explorer_chart, simulate_view_chart
from opx.answers.explorer import explore
from tests.unit.test_one_number import EXAMPLES, held, views  # noqa: F401 (a fixture)

STATES = [
    ViewState(),
    ViewState(runs=True, points=True, xscale="linear"),
    ViewState(model="deepseek-r1", workload="1k1k", hw=("gb200-nvl72", "gb300-nvl72"), pct="p50",
              target=50),
    ViewState(hw=()),
    ViewState(pct="p99", y="input"),
]


@pytest.mark.parametrize("state", STATES, ids=lambda s: json.dumps(s.to_query()))
def test_every_explorer_chart_renders(seed_db, catalog, state):
    spec = explorer_chart(explore(seed_db, state, catalog), catalog).to_dict()
    assert vlc.vegalite_to_svg(spec).lstrip().startswith("<svg")
    assert vlc.vegalite_to_png(spec, scale=1)[:4] == b"\x89PNG"


def _layers(spec):
    return spec["layer"]


def test_seed_chart_shows_provenance_target_and_reference_marks(seed_db, catalog):
    spec = explorer_chart(explore(seed_db, ViewState(), catalog), catalog).to_dict()
    layers = _layers(spec)
    marks = [layer["mark"]["type"] for layer in layers]
    shapes = [layer["encoding"]["shape"] for layer in layers if "shape" in layer.get("encoding", {})]
    # the legend lists the provenances drawn, each with its fixed shape
    scale = shapes[0]["scale"] if shapes else {}
    assert scale and scale["range"] == [PROVENANCE_SHAPES[p] for p in scale["domain"]]
    assert set(scale["domain"]) == {"preview", "derived"}
    assert marks.count("rule") >= 2        # the target line and the peak references
    text = json.dumps(spec)
    assert "target 387 tok/s/user" in text
    assert "peak, interactivity not stated" in text
    assert "1.7M" in text and "29.3k" in text
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"


# -- every builder renders; heights, titles, colours and figures stay readable ----------------

import datetime as dt
import re

import pandas as pd

from opx.publish import charts

from opx.answers import compare

from opx.curves import metrics
from opx.answers.over_time import over_time
from opx.publish.link_view import compare_state


def _render(chart):
    """SVG text and PNG bytes of a chart, as every export renders it."""
    spec = chart.to_dict()
    svg = vlc.vegalite_to_svg(spec)
    png = vlc.vegalite_to_png(spec, scale=1)
    assert svg.lstrip().startswith("<svg") and png[:4] == b"\x89PNG"
    return svg, png


def _svg_size(svg):
    head = svg.split(">", 1)[0]
    return (float(re.search(r'width="([\d.]+)"', head).group(1)),
            float(re.search(r'height="([\d.]+)"', head).group(1)))


def _compare_parts(db, catalog, query=""):
    from opx.links import parse_link
    state = compare_state(parse_link("/compare" + query).state)
    view = explore(db, state, catalog)
    a, b = compare.sides_from_view(view, catalog)
    metric = metrics.y_metric(state.y)
    return view, a, b, metric, compare.multiple_curve(a, b, metric)


@pytest.mark.parametrize("query", ["", "?target=500", "?y=usd_per_mtok", "?a=h200&b=b200"])
def test_the_multiple_chart_renders_tall_with_a_short_axis_title(seed_db, catalog, query):
    view, a, b, metric, curve = _compare_parts(seed_db, catalog, query)
    chart = charts.multiple_chart(curve, a.name, b.name, view.state.target, metric,
                                  view.state.pct)
    spec = chart.to_dict()
    assert spec["height"] >= 260
    y_titles = {layer["encoding"]["y"]["title"] for layer in spec["layer"]
                if "y" in layer.get("encoding", {}) and "title" in layer["encoding"]["y"]}
    # The names are in the subtitle: the axis title fits the height on screen (autosize "fit")
    # and in every export.
    assert all(len(t) <= 24 for t in y_titles), y_titles
    assert bool(y_titles) == (curve.status == "both").any()     # no multiple, no multiple axis
    assert f"A = {a.name}, B = {b.name}" in " ".join(spec["title"]["subtitle"])
    # On the page the chart is fitted to its height: a mark placed below the plot in pixels
    # would squeeze the plot to a sliver, so pixel positions stay inside it.
    for layer in spec["layer"]:
        for channel in ("x", "y"):
            value = layer.get("encoding", {}).get(channel, {}).get("value")
            assert not isinstance(value, (int, float)) or 0 <= value < spec["height"] / 2, layer
    svg, _ = _render(chart)
    assert _svg_size(svg)[1] >= 300


def test_a_single_point_multiple_is_drawn_and_labelled(seed_db, catalog):
    view, a, b, metric, curve = _compare_parts(seed_db, catalog)
    assert (curve.status == "both").sum() == 1           # the seed: one figure each, at 387
    spec = charts.multiple_chart(curve, a.name, b.name, 387, metric, "p90").to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert "point" in marks and "text" in marks
    assert "58×" in json.dumps(spec, ensure_ascii=False)


def test_a_band_covers_a_side_that_cannot_reach(catalog):
    curve = pd.DataFrame({"x": [10.0, 20.0, 40.0, 80.0],
                          "a": [4.0, 3.0, 2.0, 1.0], "b": [2.0, 1.0, None, None],
                          "multiple": [2.0, 3.0, None, None],
                          "status": ["both", "both", "B cannot reach", "B cannot reach"]})
    bands = charts._bands(curve, 5.0, 120.0)
    assert len(bands) == 1 and bands.x.iloc[0] < 40 and bands.x2.iloc[0] == 120.0
    empty = curve.iloc[0:0]
    _render(charts.multiple_chart(empty, "A", "B", 50, metrics.y_metric("total"), "p90"))


def test_the_over_time_chart_is_tall_and_coloured_by_hardware(full_db, catalog):
    state = ViewState(trend=True)
    rows = over_time(full_db, state, catalog)
    assert not rows.empty
    chart = charts.over_time_chart(rows, metrics.y_metric("total").title, state.target, state.pct)
    spec = chart.to_dict()
    assert spec["height"] >= 300
    color = next(layer["encoding"]["color"] for layer in spec["layer"])
    domain, colours = color["scale"]["domain"], color["scale"]["range"]
    assert len(domain) <= charts.MAX_LEGEND
    for configuration, colour in zip(domain, colours):
        slug = next(s for s, h in catalog.hardware.items() if configuration.startswith(h.name))
        assert colour == charts.hardware_color(catalog, slug)
    assert color["legend"]["orient"] == "bottom"     # a legend never squeezes the plot (400 px)
    svg, _ = _render(chart)
    assert _svg_size(svg)[1] >= 340


def test_a_hardware_has_one_colour_on_every_chart(full_db, catalog):
    state = ViewState(trend=True)
    explorer = explorer_chart(explore(full_db, state, catalog), catalog).to_dict()
    scale = explorer["layer"][0]["encoding"]["color"]["scale"]
    by_name = dict(zip(scale["domain"], scale["range"]))
    rows = over_time(full_db, state, catalog)
    trend = charts.over_time_chart(rows, "x", state.target, state.pct, catalog).to_dict()
    t_scale = trend["layer"][0]["encoding"]["color"]["scale"]
    for configuration, colour in zip(t_scale["domain"], t_scale["range"]):
        assert colour == by_name[configuration.split(" · ")[0]]
    # the order of the selection does not change a colour
    swapped = explorer_chart(explore(full_db, ViewState(hw=("gb300-nvl72", "vr-nvl72")), catalog),
                             catalog).to_dict()["layer"][0]["encoding"]["color"]["scale"]
    assert dict(zip(swapped["domain"], swapped["range"])) == by_name


@pytest.mark.parametrize("y", ["usd_per_mtok", "j_per_token", "per_mw", "total"])
def test_figures_carry_their_units_and_never_scientific_notation(full_db, catalog, y):
    chart = explorer_chart(explore(full_db, ViewState(y=y), catalog), catalog)
    svg, _ = _render(chart)
    labels = re.findall(r">([^<>]+)</text>", svg)
    assert not [t for t in labels if re.search(r"\d[eE][-+]?\d", t)], labels
    y_axis = svg.split('aria-label="Y-axis', 1)[1].split("role-axis-title", 1)[0]
    ticks = re.findall(r">([^<>]+)</text>", y_axis)
    assert len(ticks) >= 3
    if y == "usd_per_mtok":
        assert all(t.startswith("$") for t in ticks), ticks
        assert re.search(r">\$0\.0\d+<", svg)                        # the value at the target
    elif y == "j_per_token":
        assert all(t.endswith(" J") for t in ticks), ticks
    else:
        assert not [t for t in ticks if t.endswith(("m", "µ"))], ticks   # no milli-tokens
        assert any(t.endswith(("k", "M", "B")) for t in ticks)


def test_the_metric_registry_writes_every_figure():
    usd, joules, tput = (metrics.y_metric(k) for k in ("usd_per_mtok", "j_per_token", "total"))
    assert usd.format(0.000606) == "$0.000606" and usd.format(0.0251) == "$0.0251"
    assert usd.format(0.61, unit=True) == "$0.61/M tokens" and usd.format(2137) == "$2,137"
    assert joules.format(0.0682) == "0.0682 J" and joules.format(0.0682, unit=True) == "0.0682 J/token"
    assert tput.format(29300) == "29.3k" and tput.format(1.7e6, unit=True) == "1.7M tok/s/GPU"
    # value only: as before, and never scientific notation
    assert metrics.format_value(1.7e6) == "1.7M" and metrics.format_value(29300) == "29.3k"
    assert metrics.format_value(387) == "387" and metrics.format_value(0.512) == "0.512"
    assert metrics.format_value(0.000606) == "0.000606" and metrics.format_value(None) == "–"
    assert metrics.format_value(0.000606, usd) == "$0.000606"
    assert metrics.format_multiple(58.0) == "58×" and metrics.format_multiple(2.7) == "2.7×"
    assert "e" not in metrics.format_multiple(0.00001)
    for m in metrics.Y_METRICS.values():
        assert m.axis and m.d3_format


def test_long_context_lines_never_widen_the_chart(seed_db, catalog):
    view = explore(seed_db, ViewState(), catalog)
    short = _svg_size(_render(explorer_chart(view, catalog, link="/"))[0])
    long_link = "/?" + "&".join(f"hw=hardware-number-{i}" for i in range(40))
    chart = explorer_chart(view, catalog, link=long_link)
    subtitle = chart.to_dict()["title"]["subtitle"]
    assert all(len(line) <= charts.SUBTITLE_CHARS for line in subtitle)
    assert _svg_size(_render(chart)[0])[0] == short[0]
    unbroken = explorer_chart(view, catalog, link="/?q=" + "x" * 600)
    assert _svg_size(_render(unbroken)[0])[0] == short[0]


def test_wrapped_links_break_after_ampersands():
    lines = charts.wrap_line("opx · http://localhost:8501/?" + "&".join(["hw=gb300-nvl72"] * 12),
                             width=60)
    assert all(len(line) <= 60 for line in lines)
    assert all(line.endswith("&") for line in lines[:-1])
    assert charts.wrap_line("a " * 500, width=50, max_lines=3)[-1].endswith("…")


def test_a_wrapped_line_never_starts_with_a_unit_sign():
    text = "misses their points by " + "; ".join(f"model-{i} {i * 7} %" for i in range(30))
    for width in range(30, 120, 3):
        lines = charts.wrap_line(text, width=width, max_lines=99)
        assert not any(line.startswith("%") for line in lines), (width, lines)
        assert " ".join(lines).split() == text.split()


def test_context_lines_carry_an_absolute_link(seed_db, catalog, monkeypatch):
    view = explore(seed_db, ViewState(), catalog)
    monkeypatch.delenv("OPX_BASE_URL", raising=False)
    lines = charts.context_lines(view, "/compare?a=b200", dt.date(2026, 12, 1))
    assert lines[-1] == "opx, 2026-12-01 · http://localhost:8501/compare?a=b200"
    monkeypatch.setenv("OPX_BASE_URL", "https://opx.example.org/")
    assert charts.context_lines(view, "/?y=total")[-1].endswith(" · https://opx.example.org/?y=total")
    assert charts.context_lines(view, "http://h:1/?a=1")[-1].endswith(" · http://h:1/?a=1")


def test_the_stacked_exports_render(full_db, catalog):
    view, a, b, metric, curve = _compare_parts(full_db, catalog)
    stacked = charts.compare_chart(view, catalog, curve, a.name, b.name, "/compare")
    spec = stacked.to_dict()
    assert len(spec["vconcat"]) == 2
    _render(stacked)
    alone = charts.compare_chart(view, catalog, curve, a.name, b.name, "/compare",
                                 with_explorer=False).to_dict()
    assert len(alone["vconcat"]) == 1
    assert "localhost:8501/compare" in json.dumps(alone["vconcat"][0]["title"])
    state = ViewState(trend=True)
    trend = charts.explorer_export_chart(explore(full_db, state, catalog), catalog, "/?trend=1",
                                         trend=over_time(full_db, state, catalog))
    assert len(trend.to_dict()["vconcat"]) == 2
    _render(trend)


def test_the_simulate_chart_renders_empty():
    empty = pd.DataFrame({"interactivity_p50": [], "throughput_total_per_gpu": [], "layout": [],
                          "concurrency": []})
    _render(charts.simulate_chart(empty, empty, pd.DataFrame(), "Simulation", ["nothing yet"]))


def _builder_cases(full_db, catalog) -> dict:
    """A chart from every `*_chart` builder of opx.publish.charts, fed from the built-in data."""
    from opx.publish import charts
    from opx.answers import compare
    from opx.answers import latency
    from opx.curves import metrics
    from opx.answers import planner
    from opx.answers import over_time
    from opx.publish import link_view
    from opx.answers.simulation import simulate_view
    from models.simulate_view import SimulateState
    state = ViewState(trend=True, conc=64.0)
    view = explore(full_db, state, catalog)
    total = metrics.y_metric("total")
    side_a, side_b = compare.sides_from_view(
        explore(full_db, link_view.compare_state(ViewState()), catalog), catalog)
    curve = compare.multiple_curve(side_a, side_b, total)
    lat = latency.latency(full_db, ViewState(pct="p50", target=100), catalog)
    the_plan = planner.plan(full_db, ViewState(sessions=10_000), catalog)
    title, subtitle = link_view.planner_context(the_plan, catalog, "http://localhost:8501/planner")
    trend = over_time.over_time(full_db, ViewState(), catalog)
    sim = pd.DataFrame({"interactivity_p50": [], "throughput_total_per_gpu": [], "layout": [],
                        "concurrency": []})
    cases = {
        "explorer_chart": charts.explorer_chart(view, catalog),
        "explorer_export_chart": charts.explorer_export_chart(view, catalog, trend=trend),
        "compare_chart": charts.compare_chart(view, catalog, curve, side_a.name, side_b.name),
        "multiple_chart": charts.multiple_chart(curve, side_a.name, side_b.name, 387.0, total,
                                                "p90"),
        "latency_chart": charts.latency_chart(lat.points, "p90", 64.0, catalog),
        "planner_chart": charts.planner_chart(the_plan.rows, title, subtitle, catalog),
        "over_time_chart": charts.over_time_chart(trend, total.title, 387.0, "p90", catalog, total),
        "simulate_chart": charts.simulate_chart(sim, sim, pd.DataFrame(), "Simulation", ["-"]),
        "simulate_view_chart": charts.simulate_view_chart(
            simulate_view(full_db, SimulateState(hw="b200", model="glm-5", workload="1k1k"),
                          catalog), catalog, "http://localhost:8501/simulate"),
    }
    assert not lat.points.empty and not the_plan.rows.empty and not trend.empty
    return cases


def test_every_chart_builder_renders_through_vl_convert(full_db, catalog):
    """Every `*_chart` builder of opx.publish.charts, fed from the built-in data, renders to SVG and PNG;
    a new builder without a case here fails this test."""
    from opx.publish import charts
    cases = _builder_cases(full_db, catalog)
    # the default view's simulated curves are anchored: their band is an area of the chart
    assert any(layer.get("mark", {}).get("type") == "area"
               for layer in cases["explorer_chart"].to_dict()["layer"])
    builders = {n for n in dir(charts) if n.endswith("_chart") and callable(getattr(charts, n))}
    assert builders == set(cases)
    for name, chart in cases.items():
        spec = chart.to_dict()
        assert vlc.vegalite_to_svg(spec).lstrip().startswith("<svg"), name
        assert vlc.vegalite_to_png(spec, scale=1)[:4] == b"\x89PNG", name
        for tip in _tooltips(spec):
            # every field a reader hovers is named for people (no column names) and a number is
            # written short (or is a text column the metric registry wrote)
            assert tip.get("title") and "_" not in tip["title"], (name, tip)
            if tip.get("type") == "quantitative":
                assert tip.get("format"), (name, tip)


def test_no_chart_builder_makes_altair_search_its_schema(full_db, catalog, monkeypatch):
    """Every channel is given as its channel object (`alt.Text("label:N")`, `alt.YValue(0)`),
    never as a shorthand string or a dict: for those Altair 6 looks the channel's class up by
    hashing every class of its schema, 2-4 ms a channel, which a target change paid several
    times."""
    from altair.utils import schemapi
    looked_up = []
    original = schemapi.SchemaBase.from_dict.__func__

    def counting(cls, dct, validate=True):
        looked_up.append((cls.__name__, str(dct)[:60]))
        return original(cls, dct, validate)

    monkeypatch.setattr(schemapi.SchemaBase, "from_dict", classmethod(counting))
    cases = _builder_cases(full_db, catalog)
    for chart in cases.values():
        chart.to_dict()
    from opx.publish import charts
    view = explore(full_db, ViewState(), catalog)
    charts.with_target(charts.explorer_base_spec(view, catalog, charts.explorer_x_domain(view)),
                       view, catalog, still=True)
    assert looked_up == []


def _tooltips(spec) -> list[dict]:
    if isinstance(spec, dict):
        own = spec.get("tooltip")
        found = own if isinstance(own, list) else [own] if isinstance(own, dict) else []
        return found + [t for v in spec.values() for t in _tooltips(v)]
    if isinstance(spec, list):
        return [t for v in spec for t in _tooltips(v)]
    return []


def _encoded_fields(spec) -> set[str]:
    if isinstance(spec, dict):
        own = {spec["field"]} if isinstance(spec.get("field"), str) else set()
        return own.union(*(_encoded_fields(v) for v in spec.values()))
    if isinstance(spec, list):
        return set().union(*(_encoded_fields(v) for v in spec))
    return set()


@pytest.mark.parametrize("query", ["", "runs=1&points=1", "y=usd_per_mtok&conc=64"])
def test_a_chart_sends_only_the_columns_its_layers_draw(full_db, catalog, query):
    """Each layer's data is cut to the fields its encoding reads (a run's notes are kilobytes a
    mark never shows), layers drawing one frame sharing one cut: every column sent is drawn or
    named in a tooltip by a layer reading it, and every field a layer draws is sent."""
    from opx.links import parse_link
    state = parse_link(f"/?{query}").state
    spec = explorer_chart(explore(full_db, state, catalog), catalog).to_dict()
    _assert_lean(spec)


def _assert_lean(spec: dict) -> None:
    datasets = spec["datasets"]
    drawn_of: dict[str, set] = {}
    for layer in spec["layer"]:
        name = layer.get("data", {}).get("name")
        if not datasets.get(name):
            continue
        drawn = _encoded_fields(layer.get("encoding", {})) | set(
            re.findall(r"datum\.(\w+)", json.dumps(layer.get("mark", {}))))
        assert drawn <= set(datasets[name][0]), drawn - set(datasets[name][0])
        drawn_of.setdefault(name, set()).update(drawn)
    for name, drawn in drawn_of.items():
        sent = set(datasets[name][0])
        assert sent <= drawn, sent - drawn
    assert '"notes":' not in json.dumps(datasets)


def test_the_simulate_chart_sends_each_frame_once_with_only_what_it_draws(full_db, catalog):
    """The layout curves' line and points read one frame: it is sent once, cut to what either
    draws (the points frame has 25 columns, the chart reads 6)."""
    from models.simulate_view import SimulateState
    from opx.answers.simulation import simulate_view
    sim = simulate_view(full_db, SimulateState(), catalog)
    spec = simulate_view_chart(sim, catalog).to_dict()
    _assert_lean(spec)
    curves = sim.result.points_frame().interactivity_p50.notna().sum()
    envelope = len(sim.result.envelope)
    sizes = [len(rows) for rows in spec["datasets"].values()]
    assert sizes.count(curves) == 1 and sizes.count(envelope) == 1, sizes
    assert spec["config"]["axis"]["labelFont"]        # styled like every other chart


@pytest.mark.parametrize("query", ["", "target=5", "target=5000", "runs=1&points=1&target=120",
                                   "y=usd_per_mtok&conc=64&baseline=vr-nvl72",
                                   "xscale=linear&target=900", "pct=p50&hw=b200&hw=h200",
                                   "pct=mean&model=deepseek-r1&workload=1k1k&hw=gb200-nvl72&hw=b200",
                                   "hw=vr-nvl72&source=simulated&target=30"])
def test_the_page_s_chart_from_its_still_layers_equals_the_exported_chart(full_db, catalog, query):
    """The Explorer page builds the layers that stay when the target moves once per view
    (`explorer_base_spec`, from the view at another target) and adds the moving ones
    (`with_target`): the spec equals `explorer_chart`'s, which every export draws."""
    from opx.links import parse_link
    state = parse_link(f"/?{query}").state
    view = explore(full_db, state, catalog)
    elsewhere = explore(full_db, state.model_copy(update={"target": 77.0, "baseline": None}),
                        catalog)
    link = f"http://example.org/?{query}"
    whole = explorer_chart(view, catalog, link=link).to_dict(validate=False)
    parts = charts.with_target(charts.explorer_base_spec(elsewhere, catalog,
                                                         charts.explorer_x_domain(view)),
                               view, catalog, link=link)
    assert parts == whole


@pytest.mark.parametrize("query", ["", "target=5000", "runs=1&points=1&target=120",
                                   "y=usd_per_mtok&conc=64&baseline=vr-nvl72",
                                   "hw=vr-nvl72&hw=gb300-nvl72&hw=gb200-nvl72&xscale=linear",
                                   "model=deepseek-r1&workload=1k1k&hw=b200&hw=h200&pct=p50"
                                   "&y=usd_per_mtok&target=40", "hw=gb200-nvl72&pct=p50"])
def test_the_page_s_still_chart_draws_the_exported_chart(full_db, catalog, query):
    """The page's chart reads what moves with the target from named datasets and its subtitle
    through a signal (`still=True`); rendered, it is the exported chart pixel for pixel."""
    from opx.links import parse_link
    state = parse_link(f"/?{query}").state
    view = explore(full_db, state, catalog)
    link = f"http://example.org/?{query}"
    exported = explorer_chart(view, catalog, link=link).to_dict()
    page = charts.with_target(charts.explorer_base_spec(view, catalog,
                                                        charts.explorer_x_domain(view)),
                              view, catalog, link=link, still=True)
    assert page["title"]["subtitle"] != exported["title"]["subtitle"]     # it is a signal
    assert vlc.vegalite_to_png(page, scale=1) == vlc.vegalite_to_png(exported, scale=1)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=hst.data())
def test_moving_the_target_inside_the_data_keeps_the_page_s_chart_spec(full_db, catalog, held,
                                                                      data):
    """Inside the data's range a target change changes only the page chart's datasets, so the
    browser updates rows instead of compiling a new chart, over views drawn from what the
    database holds (a hardware that stops reaching the target among them); the datasets that do
    not move keep their names and rows."""
    state = data.draw(views(held))
    first = explore(full_db, state, catalog)
    hypothesis.assume(not first.points.empty)
    lo, hi = first.points.x.min(), first.points.x.max()
    specs = []
    for _ in range(3):
        # near a hardware's fastest point half the time, where it stops reaching the target
        near = data.draw(hst.sampled_from(sorted(set(first.points.groupby("hardware_name")
                                                     .x.max()))))
        target = (near * data.draw(hst.floats(0.9, 1.1)) if data.draw(hst.booleans())
                  else math.exp(data.draw(hst.floats(math.log(lo), math.log(hi)))))
        target = min(max(target, lo), hi)
        view = explore(full_db, state.model_copy(update={"target": target}), catalog)
        specs.append(charts.with_target(
            charts.explorer_base_spec(first, catalog, charts.explorer_x_domain(view)),
            view, catalog, link=f"/?target={target:g}", still=True))
    still = [json.dumps({k: v for k, v in s.items() if k != "datasets"}) for s in specs]
    assert all(s == still[0] for s in still)
    assert all(set(s["datasets"]) == set(specs[0]["datasets"]) for s in specs)
    differ = {k for s in specs for k in specs[0]["datasets"]
              if not k.startswith(("opx_target", "opx_context"))
              and json.dumps(specs[0]["datasets"][k]) != json.dumps(s["datasets"][k])}
    assert not differ, (differ, [s["datasets"][k] for s in specs for k in differ][:6])
    reached = {len(s["datasets"].get("opx_target_2", [])) for s in specs}
    hypothesis.event(f"hardware reaching the target differ between the targets: "
                     f"{len(reached) > 1}")


def test_adding_or_removing_a_hardware_keeps_the_page_s_chart_spec(full_db, catalog):
    """The colour, shape and dash scales span every value they can take, their legends and the
    axes' domains read datasets, and the other datasets have names by order (`still_spec`), so
    a hardware added or removed changes only the page chart's datasets: the browser updates
    rows instead of compiling a new chart. Each spec still draws the exported chart."""
    specs = []
    for hw in (["vr-nvl72", "gb300-nvl72"], ["vr-nvl72", "gb300-nvl72", "gb200-nvl72"],
               ["vr-nvl72", "gb200-nvl72"]):
        view = explore(full_db, ViewState(hw=hw), catalog)
        page = charts.with_target(charts.explorer_base_spec(view, catalog,
                                                            charts.explorer_x_domain(view)),
                                  view, catalog, link="/", still=True)
        exported = explorer_chart(view, catalog, link="/").to_dict()
        assert vlc.vegalite_to_png(page, scale=1) == vlc.vegalite_to_png(exported, scale=1), hw
        specs.append(page)
    still = [{k: v for k, v in s.items() if k != "datasets"} for s in specs]
    assert still[0] == still[1] == still[2]
    legend = [s["datasets"]["opx_legend_hardware_name"] for s in specs]
    assert [row["v"] for row in legend[1]] == ["Vera Rubin NVL72", "GB300 NVL72", "GB200 NVL72"]
    assert legend[0] != legend[2]


def test_a_hardware_named_like_another_keeps_its_colour_on_the_page(full_db, catalog):
    """An imported slug spelt as a catalog hardware's name must not shift the page's colours:
    the scales over every value list each name once."""
    hw = ["B200 (HGX)", "gb200-nvl72", "zz-x"]
    domain, _ = charts.nominal_domains(catalog, hw)["hardware_name"]
    assert len(domain) == len(set(domain))
    view = explore(full_db, ViewState(hw=hw), catalog)
    page = charts.with_target(charts.explorer_base_spec(view, catalog,
                                                        charts.explorer_x_domain(view)),
                              view, catalog, link="/", still=True)
    exported = explorer_chart(view, catalog, link="/").to_dict()
    assert vlc.vegalite_to_png(page, scale=1) == vlc.vegalite_to_png(exported, scale=1)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=hst.data())
def test_a_target_s_layers_filled_into_a_kept_spec_equal_those_built_afresh(full_db, catalog,
                                                                           held, data):
    """A target change serialises the target's layers only once per shape and puts the new
    target's rows into that spec (`charts._layers_spec`): over views drawn from what the
    database holds, each moved from another target, the page's and the export's specs are those
    built with nothing kept, key for key and in the same order."""
    first, then = data.draw(views(held)), data.draw(views(held))
    state = then.model_copy(update={"target": first.target})
    extra = data.draw(hst.sampled_from(({}, {"xscale": "linear"}, {"runs": True, "points": True},
                                        {"conc": 64})))
    before, after = (explore(full_db, s.model_copy(update=extra), catalog)
                     for s in (state, then))
    base = charts.explorer_base_spec(after, catalog, charts.explorer_x_domain(after))
    for still in (False, True):
        charts._TEMPLATES.clear()
        charts.with_target(base, before, catalog, link="/x", still=still)   # keeps its shape
        kept = charts.with_target(base, after, catalog, link="/x", still=still)
        filled = len(charts._TEMPLATES) == 1       # the same shape: filled with after's rows
        charts._TEMPLATES.clear()
        afresh = charts.with_target(base, after, catalog, link="/x", still=still)
        assert json.dumps(kept) == json.dumps(afresh)
    hypothesis.event(f"filled a spec kept at another target: {filled}")


def test_a_layer_s_shape_is_everything_but_its_rows():
    """`charts._shape`, the key a kept target spec is found by: rows do not change it; a
    property, a value channel, a column or a frame's type of column does; what it cannot read
    is never kept (None)."""
    import altair as alt
    import pandas as pd

    def rule(frame, **mark):
        return [alt.Chart(frame).mark_rule(**mark).encode(x="x:Q", y=alt.YValue(0))]
    one, two = pd.DataFrame({"x": [1.0]}), pd.DataFrame({"x": [2.0]})
    assert charts._shape(rule(one)) == charts._shape(rule(two))
    assert charts._shape(rule(one)) != charts._shape(rule(one, color="red"))
    moved = [alt.Chart(one).mark_rule().encode(x="x:Q", y=alt.YValue(5))]
    assert charts._shape(rule(one)) != charts._shape(moved)
    assert charts._shape(rule(one)) != charts._shape(rule(one.assign(label="a")))
    assert charts._shape(rule(one)) != charts._shape(rule(pd.DataFrame({"x": [1]})))
    assert charts._shape([alt.Chart(one).mark_rule(color=object())]) is None
    red, blue = (alt.vegalite.v6.schema.core.Color(c) for c in ("red", "blue"))   # positional
    assert charts._shape(rule(one, color=red)) != charts._shape(rule(one, color=blue))
    assert charts._shape(rule(one, dx=0.0)) != charts._shape(rule(one, dx=-0.0))


def test_layers_sharing_a_frame_or_not_are_kept_apart():
    """Which layers draw one frame decides how its columns are cut (`_lean`), so it is part of
    what a kept spec is found by: each spec equals the one built afresh."""
    import altair as alt
    import pandas as pd

    def layers(shared: bool):
        df = pd.DataFrame({"x": [1.0], "y": [2.0], "z": [3.0]})
        a, b = (df, df) if shared else (df.copy(), df.copy())
        return [alt.Chart(a).mark_rule().encode(x=alt.X("x:Q")),
                alt.Chart(b).mark_rule().encode(y=alt.Y("y:Q")),
                alt.Chart(df[["z"]]).mark_rule().encode(x=alt.X("z:Q"))]
    title = alt.TitleParams("t")
    for first, then in ((True, False), (False, True)):
        charts._TEMPLATES.clear()
        charts._layers_spec(layers(first), title)
        kept = charts._layers_spec(layers(then), title)
        charts._TEMPLATES.clear()
        assert json.dumps(kept) == json.dumps(charts._layers_spec(layers(then), title))
    kept = charts._layers_spec(layers(True), title)
    kept["layer"][0]["mark"]["color"] = "red"                 # the caller's to change
    assert "color" not in charts._layers_spec(layers(True), title)["layer"][0]["mark"]


def test_a_target_inside_the_data_fills_the_spec_kept_at_another(full_db, catalog):
    """Moving the target inside the data's range keeps the target layers' shape: the second
    target's spec is the first's filled with its rows, equal to one built afresh."""
    base = None
    for still in (False, True):
        charts._TEMPLATES.clear()
        specs = []
        for target in (150.0, 387.0, 420.0):
            view = explore(full_db, ViewState(target=target), catalog)
            base = base or charts.explorer_base_spec(view, catalog, charts.explorer_x_domain(view))
            specs.append((view, charts.with_target(base, view, catalog, link="/", still=still)))
        assert len(charts._TEMPLATES) == 1
        for view, kept in specs[1:]:
            charts._TEMPLATES.clear()
            assert kept == charts.with_target(base, view, catalog, link="/", still=still)


def test_the_simulate_chart_s_axis_reaches_the_target(full_db, catalog):
    """A target beyond the curve is on the axis (the rule inside the plot), as on the Explorer;
    one inside the curve's range leaves the axis to the data."""
    from models.simulate_view import SimulateState
    from opx.answers.simulation import simulate_view
    for target, beyond in ((5000.0, True), (20.0, False)):
        sim = simulate_view(full_db, SimulateState(target=target), catalog)
        spec = simulate_view_chart(sim, catalog).to_dict()
        lo, hi = next(layer["encoding"]["x"]["scale"]["domain"] for layer in spec["layer"]
                      if "scale" in layer["encoding"].get("x", {}))
        assert lo < target < hi
        top = sim.result.points_frame().interactivity_p50.max()
        assert bool(hi > top * 1.5 * 1.01) is beyond
