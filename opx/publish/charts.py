"""Altair chart builders. The page and every export use these functions, so an exported chart is
exactly what the link shows. Labels and units come from the metric registry."""
from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import math
import re
import threading
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from models import Catalog, PROVENANCES, pct_label
from models.view import format_number
from opx.curves import metrics
from opx.answers.explorer import ExplorerView
from opx.curves.frontier import SIMULATED
from opx.links import absolute_link

# Altair validates each mark and channel object against the schema as it is made ("debug
# mode"), 4-15 ms of each Explorer chart; the whole spec is still validated where it is checked
# (`to_dict()` in tests/unit/test_charts.py renders every builder's chart validated).
alt.utils.schemapi.disable_debug_mode()

# One marker shape per provenance, fixed so the legend reads the same on every chart.
PROVENANCE_SHAPES = {
    "measured": "circle", "published": "square", "preview": "diamond",
    "derived": "triangle-up", "interpolated": "cross", "simulated": "triangle-down",
}
assert set(PROVENANCE_SHAPES) == set(PROVENANCES)


def provenance_shape(used=None, title: str = "Provenance", **legend) -> alt.Shape:
    """The marker shape by provenance: fixed shapes, and a legend of the provenances `used`
    (all when None) in the registry's order."""
    used = set(PROVENANCE_SHAPES if used is None else used)
    domain = [p for p in PROVENANCE_SHAPES if p in used] or list(PROVENANCE_SHAPES)
    return alt.Shape("provenance:N", title=title,
                     scale=alt.Scale(domain=domain, range=[PROVENANCE_SHAPES[p] for p in domain]),
                     **({"legend": alt.Legend(**legend)} if legend else {}))


# Legends sit under the plot, each a column, side by side: at 400 px the plot keeps its width.
LEGEND = dict(orient="bottom", direction="vertical", labelLimit=220)

FONT = "sans-serif"
WIDTH, HEIGHT = 760, 440

# One colour per hardware, fixed by its place in the catalog, so a system has the same colour on
# every chart and page whatever else is selected. Hardware the catalog does not list (an import's
# own slug) takes a colour from its name.
PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b",
           "#9d755d", "#ff9da6", "#bab0ac", "#1f3b73", "#8c6d31"]


def hardware_color(catalog: Catalog, slug: str) -> str:
    order = list(catalog.hardware)
    if slug in order:
        return PALETTE[order.index(slug) % len(PALETTE)]
    return PALETTE[sum(slug.encode()) % len(PALETTE)]


def hardware_scale(catalog: Catalog, slugs) -> alt.Scale:
    """The colour scale for a chart whose colour field holds hardware *names*."""
    slugs = list(dict.fromkeys(slugs))
    if not slugs:
        return alt.Scale(domain=["–"], range=["#888"])
    return alt.Scale(domain=[catalog.hardware_name(h) for h in slugs],
                     range=[hardware_color(catalog, h) for h in slugs])


# what a deployment label's words mean (`models.Deployment.describe`), said where it is read
DEPLOYMENT_TITLE = "Deployment (TP, EP, DPA: DP attention, P+D: prefill+decode GPUs)"


def _tooltip(y_title: str, x_title: str) -> list[alt.Tooltip]:
    return [
        alt.Tooltip("hardware_name:N", title="Hardware"),
        alt.Tooltip("label:N", title="Run"),
        alt.Tooltip("x:Q", title=x_title, format=",.4~g"),
        alt.Tooltip("y_text:N", title=y_title),
        alt.Tooltip("concurrency:Q", title="Concurrency", format=",.0f"),
        alt.Tooltip("framework_text:N", title="Framework"),
        alt.Tooltip("precision:N", title="Precision"),
        alt.Tooltip("deployment:N", title=DEPLOYMENT_TITLE),
        alt.Tooltip("gpus_total:Q", title="GPUs (all)", format=",.0f"),
        alt.Tooltip("date:N", title="Date"),
        alt.Tooltip("provenance:N", title="Provenance"),
        alt.Tooltip("runs_text:N", title="Runs"),
        alt.Tooltip("point_note:N", title="Note"),
        alt.Tooltip("source_text:N", title="Source"),
    ]


# Drawn under a label, in the label's place, so lines behind it do not cross its letters.
HALO = {"color": "white", "stroke": "white", "strokeWidth": 4, "strokeJoin": "round",
        "opacity": 0.85}


def _with_text(frame: pd.DataFrame, metric: metrics.Metric, column: str = "y") -> pd.DataFrame:
    """`frame` with `<column>_text`: its figures written by the metric registry, and
    `runs_text`, what each rests on ("3 runs: 1.42-1.71M", "one run"), for tooltips."""
    if frame.empty:
        return frame.assign(**{f"{column}_text": pd.Series(dtype=str),
                               "runs_text": pd.Series(dtype=str)})
    return frame.assign(**{f"{column}_text": [metric.format(v, unit=True, digits=4)
                                              for v in frame[column]],
                           "runs_text": _runs_texts(frame, metric, column)})


def _runs_texts(frame: pd.DataFrame, metric: metrics.Metric, column: str = "y") -> list[str]:
    """Per mark, the runs it rests on: a repeat set's count and spread, "one run" for a data
    point, nothing for a simulated one (docs/metrics.md, "Repeated runs")."""
    n = frame["repeat_runs"] if "repeat_runs" in frame else pd.Series(1, index=frame.index)
    simulated = (frame["simulated"].fillna(False).astype(bool) if "simulated" in frame
                 else pd.Series(False, index=frame.index))
    lo = frame["y_lo"] if "y_lo" in frame else frame[column]
    hi = frame["y_hi"] if "y_hi" in frame else frame[column]
    out = []
    for k, sim, a, b in zip(n, simulated, lo, hi):
        if sim:
            out.append("")
        elif pd.notna(k) and k > 1 and pd.notna(a) and pd.notna(b):
            out.append(f"{int(k)} runs: {metrics.format_range(min(a, b), max(a, b), metric)}")
        else:
            out.append("one run")
    return out


def _stagger(values, top: float, height: float, gap: float = 16.0) -> list[float]:
    """Where to draw labels of `values` (on a linear axis from 0 to `top`, `height` px tall) so
    that they stay at least `gap` px apart: each value, or a little above the one below it."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    per_px = (top / height) if top and height else 0.0
    out = [float(v) for v in values]
    last = None
    for i in order:
        if last is not None and (out[i] - last) < gap * per_px:
            out[i] = last + gap * per_px
        last = out[i]
    return out


def _stagger_on(values, scale: alt.Scale, top: float) -> list[float]:
    """`_stagger` on the chart's y scale: in log space when the axis is logarithmic."""
    if scale.type != "log":
        return _stagger(values, top, HEIGHT)
    lo, hi = (math.log10(v) for v in scale.domain)
    moved = _stagger([math.log10(v) - lo if v > 0 else 0.0 for v in values], hi - lo, HEIGHT)
    return [10 ** (m + lo) for m in moved]


def _styled(chart):
    """Fonts of every chart, set once at the top of what is rendered; each layer's data cut to
    the columns it draws. The builders set no config of their own; it is set on a shallow copy
    (Altair's `configure_*` copies the chart's whole tree each, about 6 ms a call)."""
    chart = _lean(chart).copy(deep=False)
    # labels at least 4 px apart (Vega drops the ones that would not be): on a phone a log
    # axis's neighbouring ticks ran together ("40" and "50" read "4050")
    chart.config = alt.Config(axis=alt.AxisConfig(labelFont=FONT, titleFont=FONT,
                                                  labelSeparation=4),
                              legend=alt.LegendConfig(labelFont=FONT, titleFont=FONT))
    return chart


def _lean(chart, fields: set | None = None):
    """`chart` with each layer's inline data cut to the columns its encoding (or a mark
    property's expression) reads: a chart's
    data is sent to the browser whole at every rerun (and written into every export), and a
    point's run notes and sources are kilobytes no mark draws."""
    for attr in ("layer", "vconcat", "hconcat", "concat"):
        parts = getattr(chart, attr, alt.Undefined)
        if parts is not alt.Undefined:
            shared = getattr(chart, "data", alt.Undefined)
            if isinstance(shared, pd.DataFrame):    # data Altair lifted off layers sharing it
                parts = [p if p.data is not alt.Undefined else _with_data(p, shared)
                         for p in parts]
                chart = chart.copy(deep=False)
                chart.data = alt.Undefined
            # layers drawing one frame keep one cut of it (the union of what they read), so it
            # is sent once, not once per layer
            wanted: dict[int, set] = {}
            for p in parts:
                read = _read(p)
                if read is not None:
                    wanted.setdefault(id(p.data), set()).update(read)
            setattr(chart, attr, [_lean(p, wanted.get(id(getattr(p, "data", None))))
                                  for p in parts])
            return chart
    data = getattr(chart, "data", alt.Undefined)
    fields = fields if fields is not None else _read(chart)
    if fields is None:
        return chart
    keep = [c for c in data.columns if c in fields]
    if len(keep) < len(data.columns):
        chart = chart.copy(deep=False)
        chart.data = data[keep]
    return chart


def _read(chart) -> set | None:
    """The columns a single-view chart with a DataFrame reads: its encoding's fields and the
    ones its mark's expressions name (None for anything else)."""
    data = getattr(chart, "data", alt.Undefined)
    if not isinstance(data, pd.DataFrame) or getattr(chart, "encoding", alt.Undefined) is alt.Undefined:
        return None
    fields = set(_fields(chart.encoding.to_dict(validate=False)))
    fields |= set(_DATUM.findall(str(chart.mark.to_dict(validate=False)
                                     if hasattr(chart.mark, "to_dict") else chart.mark)))
    return fields


def _with_data(chart, data: pd.DataFrame):
    chart = chart.copy(deep=False)
    chart.data = data
    return chart


_DATUM = re.compile(r"datum\.(\w+)")      # fields a mark property's expression reads


def _fields(spec):
    """Every `field` an encoding's dict names."""
    if isinstance(spec, dict):
        if isinstance(spec.get("field"), str):
            yield spec["field"]
        for v in spec.values():
            yield from _fields(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from _fields(v)


def explorer_chart(view: ExplorerView, catalog: Catalog, link: str = "",
                   as_of: dt.date | None = None) -> alt.LayerChart:
    """The Explorer's chart; it carries its context (choices, provenance, sources, date, link) in
    its title so an exported image stands on its own."""
    return _styled(_explorer_layers(view, catalog, link, as_of))


# What the Explorer's chart draws, said under it on the page (true of every view it can draw).
ENVELOPE_CAPTION = (
    "Solid lines: each hardware's envelope from data (its frontier over all runs under the "
    "filters), with a marker on every point it passes through; between markers it is "
    "interpolated, and it stops at its last points. Dashed lines: simulated curves over the "
    "range the simulator reaches, anchored to the hardware's own figures where it has them "
    "(shaded: the band); a label says where one departs from those figures. Marker shape: "
    "provenance. Dashed horizontal lines: throughput figures published without an "
    "interactivity. Circles on the target line: each hardware's figure at the target.")

# A y axis whose positive figures span more than this many times is drawn on a log scale.
LOG_SPAN = 30.0

# the Explorer's envelope kinds: simulated curves anchored to the system's own figures (with a
# band), simulated curves with nothing to anchor to (or asked unanchored), and data
SERIES = ("simulated, anchored (shade: its band)", "simulated, unanchored", "data")
SERIES_DASH = {SERIES[0]: [6, 3], SERIES[1]: [2, 3], SERIES[2]: [1, 0]}


def explorer_x_domain(view: ExplorerView) -> tuple[float, float]:
    """The Explorer's interactivity range: every point and the target, with room either side."""
    xs = list(view.points.x) if not view.points.empty else []
    return min(xs + [view.state.target]) / 1.6, max(xs + [view.state.target]) * 1.6


def _explorer_layers(view: ExplorerView, catalog: Catalog, link: str = "",
                     as_of: dt.date | None = None) -> alt.LayerChart:
    base, target = _explorer_parts(view, catalog, explorer_x_domain(view))
    return alt.layer(*base, *target, width=WIDTH, height=HEIGHT,
                     title=_explorer_title(view, catalog, link, as_of))


def explorer_base_spec(view: ExplorerView, catalog: Catalog,
                       x_domain: tuple[float, float]) -> dict:
    """The Explorer chart's layers that do not move with the target (curves, points, bands,
    reference lines), as a Vega-Lite spec; `with_target` adds the rest. `view` may be at any
    target: these layers read its data only, and `x_domain` (`explorer_x_domain` of the view
    drawn)."""
    base, _ = _explorer_parts(view, catalog, x_domain, parts=("base",))
    return _styled(alt.layer(*base, width=WIDTH, height=HEIGHT)).to_dict(validate=False)


def with_target(base_spec: dict, view: ExplorerView, catalog: Catalog, link: str = "",
                as_of: dt.date | None = None, still: bool = False) -> dict:
    """`explorer_chart(view, ...).to_dict()` from the layers that do not move with the target
    (`explorer_base_spec`, stored per view) and those that do (the target line, the figures at
    the target, the title), so a target change builds only the latter; `still`: as
    `still_spec` keeps it for the page."""
    _, target = _explorer_parts(view, catalog, explorer_x_domain(view), parts=("target",))
    top = _layers_spec(target, _explorer_title(view, catalog, link, as_of))
    merged = {k: v for k, v in base_spec.items() if k != "data"}
    merged["layer"] = _own_data(base_spec) + top["layer"]
    merged["datasets"] = {**base_spec.get("datasets", {}), **top.get("datasets", {})}
    merged["title"] = top["title"]
    return still_spec(merged, top, nominal_domains(catalog, view.state.hw)) if still else merged


@dataclass(frozen=True)
class _Template:
    """A layered spec made once per shape (`_shape`), filled with each new target's rows."""
    top: dict                          # the spec without its layers, datasets and title
    layers: tuple[dict, ...]           # each layer (its data replaced where it is)
    columns: tuple[tuple[str, ...], ...]   # each layer's data cut to these (`_lean`'s cut)


_TEMPLATES: dict[tuple, _Template] = {}
_TEMPLATES_LOCK = threading.Lock()
_TEMPLATES_KEPT = 64


def _layers_spec(layers: list, title: alt.TitleParams) -> dict:
    """`_styled(alt.layer(*layers, title=title)).to_dict()`, each layer with its own data
    (`_own_data`). Layers of one shape (everything but their rows: a target's, moved) are
    serialised once; later ones put their rows through Altair's own data path into the kept
    spec, without serialising every mark and channel again (about 20 ms of a target change)."""
    shape = _shape(layers)
    # `_lean` cuts the columns of one frame to what all the layers drawing it read: which layers
    # share a frame is part of the shape
    first = {}
    key = None if shape is None else (shape, tuple(first.setdefault(id(p.data), i)
                                                   for i, p in enumerate(layers)))
    with _TEMPLATES_LOCK:
        template = _TEMPLATES.get(key)
    if template is None:
        # (properties as the layer's own arguments: `.properties` validates each against the
        # schema)
        chart = _styled(alt.layer(*layers, width=WIDTH, height=HEIGHT, title=title))
        spec = chart.to_dict(validate=False)
        spec["layer"] = _own_data(spec)
        if key is not None and all(isinstance(p.data, pd.DataFrame) for p in chart.layer):
            with _TEMPLATES_LOCK:
                while len(_TEMPLATES) >= _TEMPLATES_KEPT:
                    _TEMPLATES.pop(next(iter(_TEMPLATES)))
                _TEMPLATES[key] = _Template(      # a copy: the spec returned is the caller's
                    top=copy.deepcopy({k: v for k, v in spec.items()
                                       if k not in ("layer", "datasets", "title", "data")}),
                    layers=tuple(copy.deepcopy(spec["layer"])),
                    columns=tuple(tuple(p.data.columns) for p in chart.layer))
        return spec
    from altair.vegalite.v6.api import _prepare_data     # what `to_dict` does with each frame
    context: dict = {}
    named: dict[tuple, dict] = {}        # layers drawing one frame share its rows (as `_lean`)
    for p, cols in zip(layers, template.columns):
        if (id(p.data), cols) not in named:
            named[id(p.data), cols] = {"name": _prepare_data(p.data[list(cols)], context).name}
    # a copy: what is returned is the caller's to change, the kept spec is not
    out = copy.deepcopy(template.top)
    out["layer"] = [dict(copy.deepcopy(layer), data=named[id(p.data), cols])
                    for layer, cols, p in zip(template.layers, template.columns, layers)]
    out["datasets"] = context.get("datasets", {})
    out["title"] = title.to_dict(validate=False)
    return out


def _shape(obj):
    """What a chart's spec is made of apart from its rows: every property in its order, and
    each frame's columns (None for something this does not know, which is then never kept)."""
    if isinstance(obj, alt.utils.schemapi.SchemaBase):
        parts = (("", _shape(list(obj._args))),) + tuple(
            (k, _shape(v)) for k, v in obj._kwds.items() if v is not alt.Undefined)
        return None if any(v is None for _, v in parts) else (type(obj).__name__, parts)
    if isinstance(obj, pd.DataFrame):
        return ("frame", tuple(obj.columns), tuple(str(t) for t in obj.dtypes))
    if isinstance(obj, (list, tuple)):
        parts = tuple(_shape(v) for v in obj)
        return None if any(v is None for v in parts) else parts
    if isinstance(obj, dict):
        parts = tuple((k, _shape(v)) for k, v in obj.items())
        return None if any(v is None for _, v in parts) else ("dict", parts)
    if obj is None or isinstance(obj, (str, int, float, bool, np.number, np.bool_)):
        return ("value", type(obj).__name__, repr(obj))       # repr: -0.0 is not 0.0
    return None


# The page's chart keeps one spec while the target moves and while hardware is added or removed:
# what moves is data in datasets with fixed names (Streamlit then hands the browser new rows
# instead of a new chart to compile).
CONTEXT_DATA = "opx_context"
MOVING_DATA = "opx_target_{}"
STILL_DATA = "opx_still_{}"
SCALES_DATA = "opx_scales"
LEGEND_DATA = "opx_legend_{}"


def nominal_domains(catalog: Catalog, hw) -> dict[str, tuple[list, list]]:
    """Every value each nominal field of the Explorer chart can take, with its colour, shape or
    dash: every hardware of the catalog (and the view's others), provenance and envelope kind."""
    colour = hardware_scale(catalog, list(catalog.hardware) + list(hw)).to_dict()
    # a name twice (an imported slug spelt as a catalog name) keeps its first colour; where the
    # view draws it in another, `_stable` leaves that scale as the view gives it
    names = dict(reversed(list(zip(colour["domain"], colour["range"]))))
    names = {n: names[n] for n in dict.fromkeys(colour["domain"])}
    return {"hardware_name": (list(names), list(names.values())),
            "provenance": (list(PROVENANCE_SHAPES), list(PROVENANCE_SHAPES.values())),
            "series": (list(SERIES), [SERIES_DASH[s] for s in SERIES])}


def still_spec(spec: dict, moving: dict, nominal: dict | None = None) -> dict:
    """`spec` (from `with_target`) with what moves with the target read from named datasets: the
    data of the layers in `moving` (the target's layers) under fixed names, and the lines under
    the title from datasets through a Vega signal (re-wrapped, as `on_page` does, for a chart
    narrower than NARROW_PX); with `nominal` (`nominal_domains`), also what moves with the
    hardware (`_stable`). It draws the same chart (tests/unit/test_charts.py renders both); two
    targets inside the data's range, or two sets of hardware, give the same spec apart from its
    datasets."""
    names = {}
    for layer in moving.get("layer", []):
        name = layer.get("data", {}).get("name")
        if name is not None and name not in names:
            names[name] = MOVING_DATA.format(len(names))
    out = dict(spec)
    out["datasets"] = {names.get(k, k): v for k, v in spec.get("datasets", {}).items()}
    out["layer"] = [dict(layer, data={"name": names[layer["data"]["name"]]})
                    if layer.get("data", {}).get("name") in names else layer
                    for layer in spec["layer"]]
    title = spec.get("title")
    if isinstance(title, dict) and isinstance(title.get("subtitle"), list):
        wide, thin = CONTEXT_DATA, CONTEXT_DATA + "_narrow"
        out["datasets"][wide] = [{"line": line} for line in title["subtitle"]]
        out["datasets"][thin] = [{"line": line}
                                 for line in _narrow(title["subtitle"], NARROW_CHARS)]
        out["title"] = dict(title, subtitle={
            "signal": f"width < {NARROW_PX} ? pluck(data('{thin}'), 'line') "
                      f": pluck(data('{wide}'), 'line')"})
        # Vega-Lite compiles a dataset only when a layer reads it: these draw nothing
        out["layer"] = out["layer"] + _unseen((wide, thin))
    return _stable(out, nominal) if nominal else out


def _unseen(names) -> list[dict]:
    """Layers that read datasets and draw nothing: Vega-Lite compiles a dataset only when a layer
    reads it, and the signals read these."""
    return [{"data": {"name": name}, "mark": {"type": "text", "opacity": 0}} for name in names]


def _stable(spec: dict, nominal: dict[str, tuple[list, list]]) -> dict:
    """`spec` with what changes with the hardware drawn read from datasets: every other dataset
    under a name by its order of first use; each nominal field's scale over every value it can
    take (`nominal`) with its legend's entries (the values drawn, in order) read from a dataset;
    and the x and y domains read from a dataset. A scale this cannot carry over (a value it does
    not know, layers that disagree) is left as it is."""
    out = dict(spec)
    layers = [dict(layer) for layer in spec["layer"]]
    names: dict[str, str] = {}
    for layer in layers:
        name = layer.get("data", {}).get("name")
        if name is not None and not name.startswith("opx_") and name not in names:
            names[name] = STILL_DATA.format(len(names))
    datasets = {names.get(k, k): v for k, v in spec.get("datasets", {}).items()}
    for layer in layers:
        if layer.get("data", {}).get("name") in names:
            layer["data"] = {"name": names[layer["data"]["name"]]}

    def channels():
        for layer in layers:
            for channel, enc in layer.get("encoding", {}).items():
                scale = enc.get("scale") if isinstance(enc, dict) else None
                if isinstance(scale, dict) and isinstance(scale.get("domain"), list):
                    yield layer, channel, enc
    def shared(channel, enc):
        """What layers share one scale by: a nominal field, or the x or y channel."""
        field = enc.get("field")
        return field if field in nominal or channel not in ("x", "y") else channel
    drawn: dict[str, list] = {}
    for _, channel, enc in channels():
        drawn.setdefault(shared(channel, enc), []).append(enc["scale"]["domain"])
    read = []
    for layer, channel, enc in list(channels()):
        field = enc.get("field")
        domain = enc["scale"]["domain"]
        if any(d != domain for d in drawn[shared(channel, enc)]):
            continue
        if field in nominal:
            full, look = nominal[field]
            given = enc["scale"].get("range")
            if not (isinstance(given, list) and all(v in full for v in domain)
                    and all(look[full.index(v)] == r for v, r in zip(domain, given))):
                continue
            legend_data = LEGEND_DATA.format(field)
            datasets[legend_data] = [{"v": v} for v in domain]
            new = dict(enc, scale=dict(enc["scale"], domain=list(full), range=list(look)))
            if enc.get("legend", {}) is not None:
                new["legend"] = dict(enc.get("legend") or {}, values={
                    "expr": f"pluck(data('{legend_data}'), 'v')"})
            read.append(legend_data)
        elif channel in ("x", "y") and len(domain) == 2 \
                and all(isinstance(v, (int, float)) for v in domain):
            datasets.setdefault(SCALES_DATA, [{}])[0].update(
                {f"{channel}0": domain[0], f"{channel}1": domain[1]})
            # a domain read from data is not "given" to Vega-Lite, which would then round it
            # out and take in zero: as given, it does neither unless told
            new = dict(enc, scale={"nice": False, "zero": False, **enc["scale"], "domain": {
                "expr": f"[data('{SCALES_DATA}')[0].{channel}0, "
                        f"data('{SCALES_DATA}')[0].{channel}1]"}})
            read.append(SCALES_DATA)
        else:
            continue
        layer["encoding"] = dict(layer["encoding"], **{channel: new})
    out["layer"] = layers + _unseen(dict.fromkeys(read))
    out["datasets"] = datasets
    return out


def on_page(spec) -> dict:
    """`spec` (a Vega-Lite dict or an Altair chart) as a page draws it at the browser's width
    (Streamlit sets `width` to the column's): the height stays the plot's, as in an export,
    instead of the title and legends being squeezed into it; below NARROW_PX (a phone) the
    legends are stacked. Concatenated charts keep their own sizes (Vega-Lite fits no concat)."""
    if not isinstance(spec, dict):
        spec = spec.to_dict()
    if not ("layer" in spec or "mark" in spec):
        return spec
    out = dict(spec, autosize={"type": "fit-x", "contains": "padding"})
    title = out.get("title")
    if isinstance(title, dict):
        title = dict(title)
        for part, chars in (("text", NARROW_TITLE_CHARS), ("subtitle", NARROW_CHARS)):
            lines = title.get(part)
            lines = [lines] if isinstance(lines, str) else lines
            if isinstance(lines, list):
                thin = _narrow(lines, chars)
                if thin != lines:      # a phone's chart wraps them shorter instead of cutting
                    title[part] = {"signal": f"width < {NARROW_PX} ? {json.dumps(thin)} "
                                             f": {json.dumps(lines)}"}
        out["title"] = title
    config = dict(out.get("config", {}))
    config["legend"] = dict(config.get("legend", {}), layout={"bottom": {
        "anchor": "start", "margin": 12,
        "direction": {"signal": f"width < {NARROW_PX} ? 'vertical' : 'horizontal'"}}})
    out["config"] = config
    return out


def _narrow(lines: list[str], chars: int) -> list[str]:
    """A title's or subtitle's lines wrapped again for a phone's narrow chart."""
    return [piece for line in lines for piece in wrap_line(line, chars, max_lines=4)]


def _own_data(spec: dict) -> list[dict]:
    """A layered spec's layers, each with its data (Altair puts data the layers share on top)."""
    shared = spec.get("data")
    return [dict(layer, data=shared) if shared is not None and "data" not in layer else layer
            for layer in spec.get("layer", [])]


def _explorer_parts(view: ExplorerView, catalog: Catalog, x_domain: tuple[float, float],
                    parts: tuple[str, ...] = ("base", "target")) -> tuple[list, list]:
    """The Explorer chart's layers: those that stay when the target moves, and those that move."""
    state = view.state
    x_metric = metrics.interactivity(state.pct)
    y_metric = metrics.y_metric(state.y)
    color = alt.Color("hardware_name:N", title="Hardware",
                      scale=hardware_scale(catalog, state.hw), legend=alt.Legend(**LEGEND))
    shown = [df for df in (view.points, view.operating) if not df.empty and "provenance" in df]
    shape = provenance_shape(set().union(*(set(df.provenance.dropna()) for df in shown))
                             if shown else None, **LEGEND)

    pts = _with_text(view.points, y_metric) if "base" in parts else view.points
    x_lo, x_hi = x_domain
    x_scale = (alt.Scale(type="log", domain=[x_lo, x_hi]) if state.xscale == "log"
               else alt.Scale(type="linear", domain=[0, x_hi], nice=True))
    ys = list(pts.y) if not pts.empty else []
    ys += list(view.references.y) if not view.references.empty else []
    y_top = max(ys) * 1.08 if ys else 1
    y_scale = alt.Scale(domain=[0, y_top], nice=True)
    positive = [v for v in ys if v and v > 0]
    y_log = (y_metric.direction == "lower" and bool(positive)
             and max(positive) / min(positive) > LOG_SPAN)
    if y_log:     # costs and energies that span decades: on a linear axis the best lie on 0
        y_scale = alt.Scale(type="log", domain=[min(positive) / 1.3, max(positive) * 1.3])
    # a label that would touch its neighbour is left out (on a phone 1,000 ran into 2,000)
    x_enc = alt.X("x:Q", title=x_metric.title, scale=x_scale, axis=alt.Axis(labelSeparation=4))
    y_enc = alt.Y("y:Q", title=y_metric.title, scale=y_scale, axis=alt.Axis(**y_metric.axis))
    # labels moved apart so none is written over another (same scale, axis and title as y)
    label_y = alt.Y("label_y:Q", title=y_metric.title, scale=y_scale,
                    axis=alt.Axis(**y_metric.axis))
    tooltip = _tooltip(y_metric.title, x_metric.title)

    def across(x: float) -> float:
        """Where `x` lies across the plot, 0 (left) to 1 (right)."""
        return (math.log(x / x_lo) / math.log(x_hi / x_lo) if state.xscale == "log"
                else x / x_hi)

    layers: list[alt.Chart] = []
    env = pts[pts.on_envelope] if not pts.empty else pts
    if "base" not in parts:
        pts = env = pts.iloc[:0]            # only the layers that move with the target
    if state.runs and not pts.empty:
        runs = pts[pts.kind != "other"]       # each run's frontier (envelope points included)
        layers.append(alt.Chart(runs).mark_line(strokeWidth=1, opacity=0.45).encode(
            x=x_enc, y=y_enc, color=color, detail=alt.Detail("run_id:N"), order=alt.Order("x:Q")))
    if state.points and not pts.empty:
        others = pts[pts.kind == "other"]
        layers.append(alt.Chart(others).mark_point(size=28, opacity=0.45, filled=True).encode(
            x=x_enc, y=y_enc, color=color, shape=shape, tooltip=tooltip))
    if not env.empty:
        # Simulated envelopes are dashed and kept apart from the data's.
        # an anchored simulated curve (opx/answers/anchoring.py) is drawn with its band; one that is not
        # says so in the legend
        anchored = (env["anchored"].fillna(False).astype(bool) if "anchored" in env
                    else pd.Series(False, index=env.index))
        env = env.assign(series=[SERIES[2] if not sim else SERIES[0] if a else SERIES[1]
                                 for sim, a in zip(env.simulated, anchored)])
        series = [s for s in (SERIES[2], SERIES[0], SERIES[1]) if s in set(env.series)]
        dash = alt.StrokeDash("series:N", title="Envelope",
                              scale=alt.Scale(domain=series,
                                              range=[SERIES_DASH[s] for s in series]),
                              legend=alt.Legend(**LEGEND, symbolStrokeWidth=2.5,
                                                symbolType="stroke"))
        layers.append(alt.Chart(env).mark_line(strokeWidth=2.5, interpolate="monotone").encode(
            x=x_enc, y=y_enc, color=color, strokeDash=dash, detail=alt.Detail("series:N"),
            order=alt.Order("x:Q")))
        # every point a curve passes through is marked (a data point large, a simulated one
        # small), so a stretch between markers reads as interpolated; the size is a value, not
        # a field the dash legend would merge with
        env = env.assign(marker_size=[110 if s == SERIES[2] else 25 for s in env.series])
        layers.append(alt.Chart(env).mark_point(filled=True, opacity=1).encode(
            x=x_enc, y=y_enc, color=color, shape=shape, tooltip=tooltip,
            size=alt.Size("marker_size:Q", scale=None, legend=None)))
        if "repeat_runs" in env and (env.repeat_runs.fillna(1) > 1).any():
            # a repeat set's spread (its least to its most run) as an error bar at its median
            repeated = env[env.repeat_runs.fillna(1) > 1]
            layers.append(alt.Chart(repeated).mark_rule(strokeWidth=1.5, opacity=0.8).encode(
                x=x_enc, y=alt.Y("y_lo:Q", scale=y_scale), y2=alt.Y2("y_hi:Q"), color=color,
                tooltip=tooltip))
        if "band_lo" in env and env.band_lo.notna().any():
            band = env[env.band_lo.notna() & env.band_hi.notna()]
            layers.append(alt.Chart(band).mark_area(opacity=0.14, clip=True).encode(
                # the lines' own colour encoding: a layer without the legend would conflict
                # with theirs when Vega merges them ("Conflicting legend property 'disable'")
                x=x_enc, y=alt.Y("band_lo:Q", scale=y_scale), y2=alt.Y2("band_hi:Q"),
                color=color, detail=alt.Detail("hardware_name:N")))

    gaps = pd.concat([_departures(env, view.references, across),
                      _error_labels(env, state.model, across)], ignore_index=True) \
        if "base" in parts and not env.empty else pd.DataFrame()
    refs = view.references if "base" in parts else view.references.iloc[:0]
    # the reference lines' labels and the departure labels are moved apart together, so none is
    # written over another
    placed = _stagger_on((list(refs.y) if not refs.empty else [])
                         + (list(gaps.y) if not gaps.empty else []), y_scale, y_top)
    if not gaps.empty:
        gaps = gaps.assign(label_y=placed[len(refs):])
        # a projection that leaves the figures it is anchored to says so where it does
        for halo in (True, False):
            layers.append(alt.Chart(gaps).mark_text(
                align=alt.ExprRef(expr="datum.align"), dx=alt.ExprRef(expr="datum.dx"),
                baseline="bottom", dy=-2, fontSize=11, font=FONT,
                fontStyle="italic", limit=alt.ExprRef(expr="width * 0.75"),
                **(HALO if halo else {})).encode(
                x=x_enc, y=label_y, text=alt.Text("gap_label:N"),
                **({} if halo else {"color": color})))

    if not refs.empty:
        refs = refs.assign(
            ref_label=[f"{n} {y_metric.format(v)} ({p}): peak, interactivity not stated"
                       for n, v, p in zip(refs.hardware_name, refs.y, refs.provenance)],
            label_y=placed[:len(refs)])
        layers.append(alt.Chart(refs).mark_rule(strokeDash=[6, 4], strokeWidth=1.5).encode(
            y=y_enc, color=color,
            tooltip=[alt.Tooltip("ref_label:N", title="Reference"),
                     alt.Tooltip("source_text:N", title="Source")]))
        for halo in (True, False):      # a white halo keeps the label readable over lines
            layers.append(alt.Chart(refs).mark_text(
                align="left", baseline="bottom", dx=4, dy=-2, fontSize=11, font=FONT,
                limit=alt.ExprRef(expr="width - 12"),     # cut with … inside a narrow plot
                **(HALO if halo else {})).encode(
                x=alt.XValue(4), y=label_y, text=alt.Text("ref_label:N"),
                **({} if halo else {"color": color})))

    if state.conc and not view.operating.empty and "base" in parts:
        op = _with_text(view.operating, y_metric).assign(
            op_label=[f"c={c:,.0f}" for c in view.operating.concurrency])
        layers.append(alt.Chart(op).mark_point(size=420, shape="square", filled=False,
                                               strokeWidth=2, color="#111").encode(
            x=x_enc, y=y_enc, tooltip=tooltip))
        layers.append(alt.Chart(op).mark_text(align="left", dx=12, dy=10, fontSize=11,
                                              font=FONT, color="#111").encode(
            x=x_enc, y=y_enc, text=alt.Text("op_label:N")))

    base_layers, layers = layers, []
    if "target" not in parts:
        return base_layers, layers
    # The target's label sits left of its line when the line is near the right edge, so it never
    # runs into the legend (a datum's side, so the spec stays when the target moves).
    right = across(state.target) > 0.7
    target_df = pd.DataFrame({"x": [state.target],
                              "label": [f"target {format_number(state.target)} {x_metric.unit}"],
                              "align": ["right" if right else "left"], "dx": [-4 if right else 4]})
    layers.append(alt.Chart(target_df[["x"]]).mark_rule(color="#555", strokeDash=[2, 2]).encode(
        x=x_enc))
    layers.append(alt.Chart(target_df).mark_text(
        align=alt.ExprRef(expr="datum.align"), dx=alt.ExprRef(expr="datum.dx"), dy=8,
        color="#333", fontSize=11, font=FONT).encode(x=x_enc, y=alt.YValue(0),
                                                    text=alt.Text("label:N")))

    # each hardware's figure at the target (opx.answers.resolve): an at-least figure is labelled "≥" and
    # its tooltip names the faster point it comes from
    hits = [(s.name, s.answer) for s in view.summaries if s.answer.ok]
    if hits:
        how = {"point": "a point at the target", "interpolated": "interpolated",
               "at_least": "at least: a faster point meets the target",
               "stricter": "at least: a stricter statistic's point meets the target"}
        hit_df = pd.DataFrame({"hardware_name": [h[0] for h in hits], "x": state.target,
                               "y": [a.value for _, a in hits],
                               "value": [f"{a.sign} {y_metric.format(a.value)}".strip()
                                         for _, a in hits],
                               "runs_text": [a.runs_text(y_metric) for _, a in hits],
                               "value_text": [f"{a.sign} {y_metric.format(a.value, unit=True, digits=4)}"
                                              .strip() for _, a in hits],
                               "how": [how.get(a.how, a.how)
                                       + (" (projection)" if a.kind == SIMULATED else "")
                                       for _, a in hits]})
        hit_df["label_y"] = _stagger_on(list(hit_df.y), y_scale, y_top)
        layers.append(alt.Chart(hit_df).mark_point(size=260, shape="circle", filled=False,
                                                   strokeWidth=2).encode(
            x=x_enc, y=y_enc, color=color,
            tooltip=[alt.Tooltip("hardware_name:N", title="Hardware"),
                     alt.Tooltip("value_text:N", title="At target"),
                     alt.Tooltip("how:N", title="Value"),
                     alt.Tooltip("runs_text:N", title="Runs")]))
        for halo in (True, False):
            layers.append(alt.Chart(hit_df).mark_text(
                align="right", dx=-10, dy=-8, fontSize=12, fontWeight="bold", font=FONT,
                **(HALO if halo else {})).encode(
                x=x_enc, y=label_y, text=alt.Text("value:N"), **({} if halo else {"color": color})))

    return base_layers, layers


DEPARTURE = 0.05      # a projection this far (or more) from its own system's figures is labelled


def _departures(env: pd.DataFrame, refs: pd.DataFrame, where) -> pd.DataFrame:
    """Where an anchored projection departs from its system's own figures by DEPARTURE or more,
    in throughput (so the same on every metric): its peak against the system's published peak,
    or its curve against the system's data points under it. One row per hardware, at the
    projection's peak throughput; `where(x)` is the point's place across the plot (0-1), which
    puts the label on the side with room."""
    tput = "tput" if "tput" in env else "y"
    rows = []
    for hw, own in env.groupby("hardware_name", sort=False):
        sim = own[own.simulated & own.series.eq(SERIES[0])].sort_values("x")
        if len(sim) < 2:
            continue
        top = sim.loc[sim[tput].idxmax()]
        said = []
        mine = refs[refs.hardware_name == hw] if not refs.empty else refs
        peak = mine[tput if tput in mine else "y"].max() if not mine.empty else float("nan")
        if peak > 0 and abs(top[tput] / peak - 1) >= DEPARTURE:
            said.append(f"peak {abs(top[tput] / peak - 1):.0%} "
                        f"{'above' if top[tput] > peak else 'below'} the published one")
        data = own[~own.simulated & own.x.between(sim.x.min(), sim.x.max()) & (own[tput] > 0)]
        if not data.empty:
            at = np.interp(np.log(data.x), np.log(sim.x), sim[tput])
            off = pd.Series(at / data[tput].to_numpy() - 1, index=data.index)
            worst = off.abs().idxmax()
            if abs(off[worst]) >= DEPARTURE:
                said.append(f"{abs(off[worst]):.0%} "
                            f"{'above' if off[worst] > 0 else 'below'} its data at "
                            f"{metrics.format_interactivity(data.x[worst])} tok/s/user")
        if said:
            right = where(top.x) > 0.5
            rows.append({"hardware_name": hw, "x": top.x, "y": top.y,
                         "gap_label": "projected throughput: " + "; ".join(said),
                         "align": "right" if right else "left", "dx": -8 if right else 6})
    return pd.DataFrame(rows)


def _error_labels(env: pd.DataFrame, model: str, where) -> pd.DataFrame:
    """Beside each simulated curve whose model or system has a held-out error above
    opx.simulate.held_out.LIMIT, that error, at the curve's highest interactivity (one row per
    curve, in `_departures`' columns)."""
    from opx.simulate.held_out import beside_curve
    rows = []
    sim = env[env.simulated & env.series.isin(SERIES[:2])] if not env.empty else env
    for (hw, name, series), own in sim.groupby(["hardware", "hardware_name", "series"],
                                               sort=False):
        err = beside_curve(hw, model, series == SERIES[0])
        if err is None or own.empty:
            continue
        end = own.loc[own.x.idxmax()]
        right = where(end.x) > 0.5
        rows.append({"hardware_name": name, "x": end.x, "y": end.y, "gap_label": err.label,
                     "align": "right" if right else "left", "dx": -8 if right else 6})
    return pd.DataFrame(rows, columns=["hardware_name", "x", "y", "gap_label", "align", "dx"])


def _explorer_title(view: ExplorerView, catalog: Catalog, link: str,
                    as_of: dt.date | None) -> alt.TitleParams:
    state = view.state
    # two lines, so a phone's narrow chart shows the whole title
    return alt.TitleParams(
        text=[f"{metrics.y_metric(state.y).label} vs interactivity",
              f"{catalog.model_name(state.model)}, {catalog.workload_name(state.workload)}, "
              f"{pct_label(state.pct)}"],
        subtitle=context_lines(view, link, as_of),
        anchor="start", font=FONT, subtitleFont=FONT, fontSize=TITLE_SIZE,
        subtitleFontSize=SUBTITLE_SIZE)


MAX_SOURCE_CHARS = 200       # a source title past this is cut between words
TITLE_SIZE, SUBTITLE_SIZE = 14, 11
# Lines under a title are wrapped to this many characters: at 11 px, vl-convert's sans-serif
# (Liberation Sans) averages under 5.8 px a character in them, so a line stays inside the 760 px
# plot and a long subtitle never widens the image.
SUBTITLE_CHARS = 128
MAX_WRAPPED_LINES = 3
# On the page, a chart narrower than NARROW_PX (a phone) shows the lines under its title wrapped
# to NARROW_CHARS instead.
NARROW_PX, NARROW_CHARS, NARROW_TITLE_CHARS = 600, 58, 40


def wrap_line(text: str, width: int = SUBTITLE_CHARS,
              max_lines: int = MAX_WRAPPED_LINES) -> list[str]:
    """`text` in lines of at most `width` characters, broken at spaces (never before a unit sign:
    `75 %` stays whole) or, inside a link, after `?` and `&`; past `max_lines` the last line ends
    with `…`."""
    lines: list[str] = []
    line = ""
    for token in re.split(r"(?<=[ ?&])(?!%)", text):
        while len(token) > width:                    # a word longer than a line
            if line:
                lines.append(line.rstrip())
                line = ""
            lines.append(token[:width])
            token = token[width:]
        if line and len(line) + len(token.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += token
    if line.strip():
        lines.append(line.rstrip())
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = metrics.cut_text(lines[-1] + " …", width)
    return lines


def context_lines(view: ExplorerView, link: str = "", as_of: dt.date | None = None) -> list[str]:
    """Provenance, sources, date and the full link, as lines under the chart title, each wrapped
    to the chart's width."""
    lines = [f"Target {format_number(view.state.target)} tok/s/user, {pct_label(view.state.pct)}. "
             f"Provenance: {_provenance_summary(view)}. Per-GPU figures divide by all GPUs."
             + (f" Runs: {view.state.run_filter_text()}." if view.state.run_filter_text() else "")]
    sources = list(dict.fromkeys(list(view.points.get("source_text", []))
                                 + list(view.references.get("source_text", []))))
    for source in sources[:4]:
        lines.append(f"Source: {metrics.cut_text(source, MAX_SOURCE_CHARS)}")
    if len(sources) > 4:
        lines.append(f"… and {len(sources) - 4} more sources (see the data export)")
    lines.append(stamp_line(link, as_of))
    return [part for line in lines for part in wrap_line(line)]


def stamp_line(link: str = "", as_of: dt.date | None = None) -> str:
    """The last line under an exported chart's title: opx, the date and the full link."""
    return (f"opx, {(as_of or dt.date.today()).isoformat()}"
            + (f" · {absolute_link(link)}" if link else ""))


def _provenance_summary(view: ExplorerView) -> str:
    parts = []
    for s in view.summaries:
        provs = sorted({p.split(" (")[0] for p in (s.target_provenance, s.peak_provenance) if p})
        if provs:
            parts.append(f"{s.name}: {', '.join(provs)}")
    return "; ".join(parts) if parts else "no data under these filters"


def simulate_subtitle(result, fit=None, pct: str = "p50") -> list[str]:
    """The lines under the Simulate chart: engine and layouts, the held-out errors (by system,
    and the one that applies to how the curve is anchored), what it is anchored to, and what
    each mark is."""
    from opx.simulate import anchor_validation, api
    validation = result.validation if isinstance(result.validation, dict) else {}
    held_out = ", ".join(f"{k} {v:.0f}%" for k, v in validation.get("overall", {}).items()
                         if isinstance(v, float))
    anchored = ("Anchored to " + "; ".join(dict.fromkeys(
        r["label"] for r in fit.residuals if r["fitted"])) + "; " + fit.band_text() + "."
        if fit and fit.anchored
        else "Unanchored: pick runs under 'Anchor to runs' to fit the curve to them.")
    return [f"opx-sim {api.ENGINE_VERSION}, {result.gpus} GPUs, {len(result.curves)} layout "
            f"curves; simulated, drawn at {pct_label(pct)}"
            + (" (the spread model's P90 on the P50 step times)." if pct != "p50" else "."),
            f"Held-out error (leave-one-system-out, median abs. %): {held_out or 'not available'}.",
            *wrap_line(anchor_validation.fit_text(fit, pct) or "No anchoring validation on record."),
            *wrap_line(anchored),
            "Red dashed: the simulated envelope" + (", shaded: its band" if fit and fit.anchored
                                                    else "")
            + "; blue: measured or published points of the same hardware, model and workload."]


def simulate_view_chart(sim, catalog: Catalog, link_text: str = ""):
    """The Simulate page's chart of `sim` (an `opx.answers.simulation.SimulateView`): its points,
    envelope and band over the hardware's data, the target and the held-out error."""
    sub = simulate_subtitle(sim.result, sim.fit, sim.state.pct) + ([link_text] if link_text else [])
    pct = sim.state.pct
    points = sim.result.points_frame()
    return simulate_chart(points[points[f"interactivity_{pct}"].notna()],
                          sim.result.envelope_at(pct), sim.measured.points, sim.title(catalog),
                          sub, pct, sim.state.target, sim.held_out_error())


def simulate_chart(points: pd.DataFrame, envelope: pd.DataFrame, measured: pd.DataFrame,
                   title: str, subtitle: list[str], pct: str = "p50",
                   target: float | None = None, error: str | None = None) -> alt.LayerChart:
    """A simulation's layout curves and envelope at `pct` over the measured points of the same
    hardware, model and workload, with the target as a rule and `error` (the held-out error,
    opx.simulate.held_out) beside the envelope's fastest point. Clicking a simulated point
    selects it (`pick`: layout and concurrency)."""
    x_col = f"interactivity_{pct}"
    x_title = metrics.interactivity(pct).title
    y_title = metrics.y_metric("total").title
    # the target is on the axis, as on the Explorer: a curve that tops out below it shows how far
    xs = list(points[x_col]) + list(measured.get("x", [])) + ([target] if target else [])
    x_scale = alt.Scale(type="log", domain=[min(xs) / 1.5, max(xs) * 1.5] if xs else [1, 1000])
    x_enc = alt.X(f"{x_col}:Q", title=x_title, scale=x_scale)
    y_enc = alt.Y("throughput_total_per_gpu:Q", title=y_title, axis=alt.Axis(**metrics.y_metric("total").axis))
    pick = alt.selection_point(name="pick", fields=["layout", "concurrency"], on="click")
    tip = [alt.Tooltip("layout:N", title="Layout"),
           alt.Tooltip("concurrency:Q", title="Concurrency", format=",.0f"),
           alt.Tooltip(f"{x_col}:Q", title=x_title, format=",.4~g"),
           alt.Tooltip("throughput_total_per_gpu:Q", title=y_title, format=",.4~s"),
           alt.Tooltip("ttft_p50_s:Q", title="TTFT (s)", format=",.3~g"),
           alt.Tooltip("binding:N", title="Binding limit")]
    layers = []
    if not points.empty:
        layers.append(alt.Chart(points).mark_line(strokeWidth=1, opacity=0.25, color="#888").encode(
            x=x_enc, y=y_enc, detail=alt.Detail("layout:N"), order=alt.Order(f"{x_col}:Q")))
        layers.append(alt.Chart(points).mark_point(size=30, opacity=0.35, color="#888",
                                                   shape="triangle-down", filled=True).encode(
            x=x_enc, y=y_enc, tooltip=tip).add_params(pick))
    if not envelope.empty and "band_lo" in envelope:     # an anchored projection's band
        layers.append(alt.Chart(envelope).mark_area(opacity=0.15, color="#d62728").encode(
            x=x_enc, y=alt.Y("band_lo:Q", title=y_title), y2=alt.Y2("band_hi:Q")))
    if not envelope.empty:
        layers.append(alt.Chart(envelope).mark_line(strokeWidth=2.5, strokeDash=[6, 3],
                                                    color="#d62728").encode(
            x=x_enc, y=y_enc, order=alt.Order(f"{x_col}:Q")))
        layers.append(alt.Chart(envelope).mark_point(size=60, filled=True, color="#d62728",
                                                     shape="triangle-down").encode(
            x=x_enc, y=y_enc, tooltip=tip))
        if error:
            end = envelope.loc[[envelope[x_col].idxmax()]].assign(error_label=error)
            for halo in (True, False):
                layers.append(alt.Chart(end).mark_text(
                    align="right", dx=-8, baseline="bottom", dy=-4, fontSize=11, font=FONT,
                    fontStyle="italic", limit=alt.ExprRef(expr="width * 0.75"),
                    **(HALO if halo else {"color": "#d62728"})).encode(
                    x=x_enc, y=y_enc, text=alt.Text("error_label:N")))
    if not measured.empty:
        m = measured.rename(columns={"x": x_col, "y": "throughput_total_per_gpu"})
        shape = provenance_shape(set(measured.provenance.dropna()) if "provenance" in measured
                                 else None, title="Data (not simulated)", **LEGEND)
        layers.append(alt.Chart(m).mark_point(size=110, filled=True, color="#1f77b4").encode(
            x=x_enc, y=y_enc, shape=shape,
            tooltip=[alt.Tooltip("label:N", title="Run"),
                     alt.Tooltip("provenance:N", title="Provenance"),
                     alt.Tooltip(f"{x_col}:Q", title=x_title, format=",.4~g"),
                     alt.Tooltip("throughput_total_per_gpu:Q", title=y_title, format=",.4~s"),
                     alt.Tooltip("source_text:N", title="Source")]))
    if target is not None:
        rule = pd.DataFrame({x_col: [target], "label": [f"target {format_number(target)} tok/s/user"]})
        lo, hi = x_scale.domain
        right = math.log(target / lo) > 0.5 * math.log(hi / lo)   # the label on the side with room
        layers.append(alt.Chart(rule).mark_rule(color="#555", strokeDash=[2, 2]).encode(x=x_enc))
        layers.append(alt.Chart(rule).mark_text(align="right" if right else "left",
                                                dx=-4 if right else 4, dy=8, color="#333",
                                                fontSize=11, font=FONT).encode(
            x=x_enc, y=alt.YValue(0), text=alt.Text("label:N")))
    if not layers:
        layers.append(alt.Chart(pd.DataFrame({x_col: [], "throughput_total_per_gpu": []}))
                      .mark_point().encode(x=x_enc, y=y_enc))
    return _styled(alt.layer(*layers).properties(
        width=WIDTH, height=HEIGHT,
        title=alt.TitleParams(text=title, subtitle=subtitle, anchor="start", font=FONT,
                              subtitleFont=FONT)))


MULTIPLE_HEIGHT = 320       # on the page, fitted: title and axis take ~90 px of it


def multiple_chart(curve: pd.DataFrame, a_name: str, b_name: str, target: float,
                   metric: metrics.Metric, pct: str, context: list[str] | None = None
                   ) -> alt.LayerChart:
    """A/B across interactivity; where one side cannot reach, a shaded band says so instead of an
    infinite multiple. `context`: lines added under the title (an export of this chart alone)."""
    return _styled(_multiple_layers(curve, a_name, b_name, target, metric, pct, context))


def _bands(curve: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    """Runs of grid points with the same reason for no multiple, each widened halfway (in log
    space) to its neighbours and to the chart's edges, so a single point still shows."""
    xs, statuses = list(curve.x), list(curve.status)
    rows, start = [], None
    for i, status in enumerate(statuses + ["both"]):
        if start is not None and (i == len(statuses) or status != statuses[start]):
            left = lo if start == 0 else math.sqrt(xs[start - 1] * xs[start])
            right = hi if i == len(statuses) else math.sqrt(xs[i - 1] * xs[i])
            label = statuses[start]
            rows.append({"x": left, "x2": right, "label": label,
                         "reach": "cannot reach" in label})
            start = None
        if start is None and i < len(statuses) and status != "both":
            start = i
    return pd.DataFrame(rows, columns=["x", "x2", "label", "reach"])


def _multiple_layers(curve: pd.DataFrame, a_name: str, b_name: str, target: float,
                     metric: metrics.Metric, pct: str, context: list[str] | None = None,
                     x_domain: tuple[float, float] | None = None) -> alt.LayerChart:
    x_title = metrics.interactivity(pct).title
    curve = curve.sort_values("x") if not curve.empty else curve
    both = curve[curve.status == "both"] if not curve.empty else curve
    lo = min(list(curve.x) + [target]) / 1.3 if not curve.empty else target / 2
    hi = max(list(curve.x) + [target]) * 1.3 if not curve.empty else target * 2
    if x_domain:                       # stacked under the Explorer's chart: the same x axis
        lo, hi = min(lo, x_domain[0]), max(hi, x_domain[1])
    x_scale = alt.Scale(type="log", domain=[lo, hi])
    x_enc = alt.X("x:Q", title=x_title, scale=x_scale)
    # A short axis title (the names are in the subtitle), so it always fits the chart's height.
    mults = [m for m in (both.multiple if not both.empty else []) if m and m > 0] + [1.0]
    y_enc = alt.Y("multiple:Q", title="A ÷ B (log scale)",
                  scale=alt.Scale(type="log", domain=[min(mults) / 1.25, max(mults) * 1.25]),
                  axis=alt.Axis(values=_ticks_125(min(mults), max(mults)),
                                labelExpr="format(datum.value, '~g') + '×'"))
    layers = []
    if not both.empty:
        both = both.assign(multiple_text=[metrics.format_multiple(m) for m in both.multiple],
                           a_text=[metric.format(v, unit=True, digits=4) for v in both.a],
                           b_text=[metric.format(v, unit=True, digits=4) for v in both.b])
        tooltip = [alt.Tooltip("x:Q", title=x_title, format=",.4~g"),
                   alt.Tooltip("multiple_text:N", title="A ÷ B"),
                   alt.Tooltip("a_text:N", title=f"A: {a_name}"),
                   alt.Tooltip("b_text:N", title=f"B: {b_name}")]
        layers.append(alt.Chart(pd.DataFrame({"multiple": [1.0]})).mark_rule(
            color="#999").encode(y=y_enc))
        layers.append(alt.Chart(both).mark_line(strokeWidth=2.5, color="#333").encode(
            x=x_enc, y=y_enc, tooltip=tooltip))
        if len(both) <= 40:       # a dense curve reads better as a line alone
            layers.append(alt.Chart(both).mark_point(size=36 if len(both) > 5 else 90,
                                                     filled=True, color="#333").encode(
                x=x_enc, y=y_enc, tooltip=tooltip))
        if len(both) <= 5:        # a few points: say each multiple on the chart
            layers.append(alt.Chart(both).mark_text(align="left", dx=8, dy=-8, fontSize=12,
                                                    fontWeight="bold", font=FONT).encode(
                x=x_enc, y=y_enc, text=alt.Text("multiple_text:N")))
    bands = _bands(curve, lo, hi) if not curve.empty else pd.DataFrame()
    for reach, color, text_color in ((True, "#d62728", "#a00"), (False, "#888", "#555")):
        band_df = bands[bands.reach == reach] if not bands.empty else bands
        if band_df.empty:
            continue
        layers.append(alt.Chart(band_df).mark_rect(opacity=0.12, color=color).encode(
            x=x_enc, x2=alt.X2("x2:Q"), tooltip=[alt.Tooltip("label:N", title="No multiple")]))
        # A band reaching the right edge is labelled from its right end, so the text stays inside.
        for at_end, group in band_df.groupby(band_df.x2 >= hi):
            layers.append(alt.Chart(group).mark_text(
                align="right" if at_end else "left", baseline="top", dx=-3 if at_end else 3,
                dy=4 if reach else 20, color=text_color, fontSize=11, font=FONT).encode(
                x=alt.X("x2:Q" if at_end else "x:Q", scale=x_scale, title=x_title),
                y=alt.YValue(0), text=alt.Text("label:N")))
    target_df = pd.DataFrame({"x": [target], "label": [f"target {format_number(target)}"]})
    right = math.log(target / lo) / math.log(hi / lo) > 0.7
    layers.append(alt.Chart(target_df).mark_rule(color="#555", strokeDash=[2, 2]).encode(x=x_enc))
    layers.append(alt.Chart(target_df).mark_text(align="right" if right else "left",
                                                 baseline="bottom", dx=-4 if right else 4, dy=-4,
                                                 color="#333", fontSize=11, font=FONT).encode(
        x=x_enc, y=alt.YValue("height"), text=alt.Text("label:N")))
    # Marks placed in pixels stay inside the plot ("height", "width / 2"): on the page the chart
    # is fitted to its height, and a mark below the plot would squeeze the plot to make room.
    if both.empty:
        layers.append(alt.Chart(pd.DataFrame({"t": ["No interactivity where both have a value"]}))
                      .mark_text(fontSize=13, color="#555", font=FONT).encode(
            x=alt.XValue(alt.expr("width / 2")), y=alt.YValue(alt.expr("height / 2")),
            text=alt.Text("t:N")))
    better = ("higher is better" if metric.direction == "higher" else
              "lower is better: below 1× A is cheaper or uses less energy")
    subtitle = [*wrap_line(f"A = {a_name}, B = {b_name}. {metric.label} ({metric.unit}), "
                           f"{better}."),
                *wrap_line("Where a side cannot reach an interactivity there is no multiple: the "
                           "band says which side, instead of an infinite number."),
                *(context or [])]
    return alt.layer(*layers).properties(
        width=WIDTH, height=MULTIPLE_HEIGHT,
        title=alt.TitleParams(text=f"{a_name} ÷ {b_name} across interactivity",
                              subtitle=subtitle, anchor="start", font=FONT, subtitleFont=FONT,
                              fontSize=TITLE_SIZE, subtitleFontSize=SUBTITLE_SIZE))


def _ticks_125(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks covering [lo, hi] on a log axis (a tick per power of ten when that is many)."""
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1,) if hi_e - lo_e > 4 else (1, 2, 5)
    ticks = [m * 10.0 ** e for e in range(lo_e, hi_e + 1) for m in steps]
    inside = [t for t in ticks if lo / 1.5 <= t <= hi * 1.5]
    return inside or [1.0]


def compare_chart(view: ExplorerView, catalog: Catalog, curve: pd.DataFrame, a_name: str,
                  b_name: str, link: str = "", as_of: dt.date | None = None,
                  with_explorer: bool = True) -> alt.VConcatChart:
    """What Compare shows, as one image: the Explorer's chart of A and B over their multiple
    across interactivity (the multiple alone when two runs are compared, as on the page)."""
    state = view.state
    metric = metrics.y_metric(state.y)
    parts = [_explorer_layers(view, catalog, link, as_of)] if with_explorer else []
    parts.append(_multiple_layers(
        curve, a_name, b_name, state.target, metric, state.pct,
        None if with_explorer else context_lines(view, link, as_of),
        explorer_x_domain(view) if with_explorer and state.xscale == "log" else None))
    return _styled(alt.vconcat(*parts, spacing=40).resolve_scale(
        color="independent", shape="independent", strokeDash="independent", size="independent"))


@dataclass
class LatencyPanels:
    """The Latency chart in parts: its title, the lines under it (panels no run can fill) and one
    layered chart per latency. The export stacks them (`latency_chart`); the page draws each at
    the browser's width (`latency_page_specs`), as Vega-Lite fits no concatenated chart."""
    title: str
    missing: list[str]
    panels: list

    EMPTY = "No run shown reports latencies."


LATENCY_PAD = 1.2      # the concurrency axis reaches this factor past the first and last points


def latency_panels(points: pd.DataFrame, pct: str, conc: float | None, catalog: Catalog,
                   legends: str = "all") -> LatencyPanels:
    """TTFT, TPOT and end-to-end latency against concurrency (log axes), one line per run drawn.

    `points` are `opx.answers.latency.LatencyView.points` (a few runs, `run_name` unique per run). Each
    run takes its hardware's colour; runs of one hardware differ by dash. A panel no run can fill
    is left out and `missing` says why. Every panel has the same concurrency domain, so panels
    drawn apart line up; `legends="last"` puts the legends under the last panel only."""
    from opx.answers.latency import PANELS, missing_panels
    runs = (points.drop_duplicates("run_id")[["run_id", "run_name", "hardware"]]
            if not points.empty else pd.DataFrame(columns=["run_id", "run_name", "hardware"]))
    dashes = [[1, 0], [6, 3], [2, 2], [10, 3, 2, 3], [1, 3], [12, 4]]
    nth = runs.groupby("hardware", sort=False).cumcount() if not runs.empty else []
    names = list(runs.run_name)
    used = set(points.provenance.dropna()) if "provenance" in points else None

    def encodings(legend: bool):
        color = alt.Color("run_name:N", title="Run", sort=names,
                          scale=alt.Scale(domain=names or ["–"],
                                          range=[hardware_color(catalog, h) for h in runs.hardware]
                                          or ["#888"]),
                          legend=alt.Legend(orient="bottom", direction="vertical", columns=1,
                                            labelLimit=520, symbolType="stroke", symbolSize=400,
                                            symbolStrokeWidth=2.5) if legend else None)
        dash = alt.StrokeDash("run_name:N", title="Run", sort=names,
                              scale=alt.Scale(domain=names or ["–"],
                                              range=[dashes[i % len(dashes)] for i in nth]
                                              or [[1, 0]]),
                              legend=alt.Undefined if legend else None)
        shape = (provenance_shape(used, orient="bottom", direction="horizontal") if legend
                 else provenance_shape(used).legend(None))
        return color, dash, shape

    p = pct_label(pct)
    concs = [c for c in ([*points.concurrency] if "concurrency" in points else []) + [conc or 0]
             if c and c > 0]
    # a little room either side, so a run's first and last points are drawn whole, not cut by
    # the axes
    x = alt.X("concurrency:Q", title="Concurrency (requests in flight, log scale)",
              scale=alt.Scale(type="log", domain=[min(concs) / LATENCY_PAD,
                                                  max(concs) * LATENCY_PAD] if concs
                              else alt.Undefined),
              axis=alt.Axis(format="~s", labelOverlap="greedy", labelSeparation=6))
    filled = [(panel, data) for panel in PANELS if not (data := (
        points[points[panel[0]].notna() & points[panel[0]].gt(0)] if not points.empty
        else points)).empty]
    charts = []
    for i, ((column, short, long, unit, factor), data) in enumerate(filled):
        color, dash, shape = encodings(legends == "all" or i == len(filled) - 1)
        data = data.assign(value=data[column] * factor)
        y_title = f"{short} {p} ({unit})"
        y = alt.Y("value:Q", title=y_title, scale=alt.Scale(type="log"),
                  # one axis width for all: panels drawn apart keep their x axes aligned
                  axis=alt.Axis(format="~g", titlePadding=8, minExtent=40))
        tooltip = [alt.Tooltip("run_name:N", title="Run"),
                   alt.Tooltip("hardware_name:N", title="Hardware"),
                   alt.Tooltip("concurrency:Q", title="Concurrency", format=",.0f"),
                   alt.Tooltip("value:Q", title=y_title, format=",.4~g"),
                   alt.Tooltip("interactivity:Q", title=f"Interactivity {p} (tok/s/user)",
                               format=",.4~g"),
                   alt.Tooltip("tput:Q", title="Throughput (tok/s/GPU, total)", format=",.4~s"),
                   alt.Tooltip("provenance:N", title="Provenance"),
                   alt.Tooltip("source:N", title="Source")]
        base = alt.Chart(data)
        layer = [base.mark_line(strokeWidth=2).encode(x=x, y=y, color=color, strokeDash=dash,
                                                      detail=alt.Detail("run_id:N"),
                                                      order=alt.Order("concurrency:Q")),
                 base.mark_point(size=60, filled=True, opacity=1).encode(
                     x=x, y=y, color=color, shape=shape, tooltip=tooltip)]
        if conc:
            mark = pd.DataFrame({"concurrency": [conc], "text": [f"concurrency {conc:,.0f}"]})
            rule = alt.Chart(mark).encode(x=alt.X("concurrency:Q"))
            layer += [rule.mark_rule(color="#555", strokeDash=[3, 3]),
                      rule.mark_text(align="left", dx=4, baseline="top", y=2, color="#555",
                                     font=FONT).encode(text=alt.Text("text:N"))]
        charts.append(alt.layer(*layer).properties(
            width=WIDTH, height=240,
            title=alt.TitleParams(text=f"{long} ({short} {p}, {unit})", anchor="start",
                                  font=FONT, fontSize=13)))
    return LatencyPanels(f"Latency against concurrency ({p})", missing_panels(points, pct), charts)


def latency_chart(points: pd.DataFrame, pct: str, conc: float | None,
                  catalog: Catalog, context: list[str] | None = None) -> alt.VConcatChart:
    """The Latency chart as one figure (exports): the panels stacked, one legend under them, and
    under the title `context` (what the view is, where it comes from) and which panels are left
    out, so an exported chart explains itself."""
    parts = latency_panels(points, pct, conc, catalog)
    subtitle = [*(context or []), *parts.missing]
    title = alt.TitleParams(text=parts.title, anchor="start", font=FONT, fontSize=15,
                            subtitle=subtitle or alt.Undefined, subtitleFont=FONT, offset=14)
    if not parts.panels:
        return _styled(alt.vconcat(alt.Chart(pd.DataFrame({"text": [LatencyPanels.EMPTY]}))
                                   .mark_text(font=FONT).encode(text=alt.Text("text:N"))
                                   .properties(width=WIDTH, height=60)).properties(title=title))
    return _styled(alt.vconcat(*parts.panels, spacing=28).properties(title=title).resolve_scale(
        x="shared", color="shared", strokeDash="shared", shape="shared"))


def latency_page_specs(points: pd.DataFrame, pct: str, conc: float | None,
                       catalog: Catalog) -> tuple[LatencyPanels, list[dict]]:
    """The Latency chart as the page draws it: each panel its own chart at the browser's width
    (`on_page`), the legends under the last one only; the title and the missing lines are the
    export's, for the page to write above them."""
    parts = latency_panels(points, pct, conc, catalog, legends="last")
    return parts, [on_page(_styled(p)) for p in parts.panels]


def planner_chart(rows: pd.DataFrame, title: str, subtitle: list[str],
                  catalog: Catalog) -> alt.LayerChart:
    """Cost per hour of each system's fleet (or $/M tokens without a demand), cheapest first, one
    colour per hardware; each bar names its GPUs, racks and the provenance of its point."""
    import math

    from opx.answers.planner import money
    by_hour = not rows.empty and rows.usd_per_hour.notna().any()
    key, label, unit = (("usd_per_hour", "Fleet cost ($/hour)", "/hour") if by_hour else
                        ("usd_per_mtok", "Cost ($/M tokens)", "/M tokens"))
    shown = rows[rows[key].notna()] if not rows.empty else rows
    data = pd.DataFrame({
        "hardware": shown.get("hardware", pd.Series(dtype=str)),
        "value": shown.get(key, pd.Series(dtype=float)),
        "provenance": shown.get("provenance", pd.Series(dtype=str)),
        "run": shown.get("run", pd.Series(dtype=str)),
        "sized_by": shown.get("configuration", pd.Series(dtype=str)),
        "cost": [money(v) + unit for v in shown.get(key, [])],
        "fleet": [(f"{g:,.0f} GPUs" + (f", {r:,.0f} racks" if pd.notna(r) else "")
                   + (f", {mw:.3g} MW" if pd.notna(mw) else "")) if pd.notna(g) else
                  f"{'≥ ' if bound else ''}{metrics.format_value(t)} tok/s/GPU"
                  for g, r, mw, t, bound in zip(
                      shown.get("gpus", []), shown.get("racks", []), shown.get("mw", []),
                      shown.get("total_per_gpu", []),
                      shown.get("bound", pd.Series(False, index=shown.index)))],
    })
    data["text"] = [f"{c} · {f} · {p}" for c, f, p in
                    zip(data.cost, data.fleet, data.provenance)]
    # each bar's label sits above it from the plot's left edge, so at any width it has the
    # plot's whole width (cut with … on a phone) and never runs off past a long bar
    top = max([v for v in data.value if v > 0] or [1.0]) * 1.05
    # dollars with as many decimals as the ticks need ($0.02, $0.0004), never SI prefixes
    decimals = max(2, -math.floor(math.log10(top / 5)))
    x = alt.X("value:Q", title=label, scale=alt.Scale(domain=[0, top], nice=False),
              axis=alt.Axis(format="$,.0f" if by_hour else f"$,.{decimals}f",
                            tickCount=alt.ExprRef(expr="max(2, floor(width / 110))"),
                            labelOverlap="greedy", grid=True))
    y = alt.Y("hardware:N", sort=list(data.hardware), title=None,     # ranked: cheapest on top
              axis=alt.Axis(labelLimit=220, labelFontSize=12))
    tooltip = [alt.Tooltip("hardware:N", title="Hardware"), alt.Tooltip("cost:N", title="Cost"),
               alt.Tooltip("fleet:N", title="Fleet"), alt.Tooltip("sized_by:N", title="Configuration deployed"),
               alt.Tooltip("provenance:N", title="Provenance"), alt.Tooltip("run:N", title="Run")]
    slugs = list(shown.hardware_slug) if "hardware_slug" in shown else []
    base = alt.Chart(data).encode(x=x, y=y, tooltip=tooltip)
    bars = base.mark_bar(size=30).encode(                 # 30 px bars, however few
        color=alt.Color("hardware:N", scale=hardware_scale(catalog, slugs), legend=None))
    text = base.mark_text(align="left", baseline="bottom", dy=-16, font=FONT, fontSize=12,
                          color="#333", limit=alt.ExprRef(expr="width")).encode(
        x=alt.XValue(0), text=alt.Text("text:N"))
    # fit-x: the width follows the page; the height is the plot's own (60 px a bar), so the title
    # and axes never squeeze the bars (Streamlit's default `fit` counts them inside the height)
    return alt.layer(bars, text).properties(
        width=WIDTH, height=max(200, 60 * len(data)),
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        title=alt.TitleParams(text=title, subtitle=subtitle, anchor="start", font=FONT,
                              subtitleFont=FONT, fontSize=15, subtitleFontSize=11,
                              subtitlePadding=4, offset=12),
    ).configure_axis(labelFont=FONT, titleFont=FONT)


OVER_TIME_HEIGHT = 340      # on the page, fitted: title and axis take ~75 px of it
MAX_LEGEND = 12


def over_time_chart(rows: pd.DataFrame, metric_title: str, target: float, pct: str,
                    catalog: Catalog | None = None, metric: metrics.Metric | None = None
                    ) -> alt.LayerChart:
    """The value at a fixed interactivity over time, one line per configuration, in its
    hardware's colour (configurations of one hardware differ by dash)."""
    return _styled(_over_time_layers(rows, metric_title, target, pct, catalog, metric))


def _over_time_layers(rows: pd.DataFrame, metric_title: str, target: float, pct: str,
                      catalog: Catalog | None = None, metric: metrics.Metric | None = None
                      ) -> alt.LayerChart:
    catalog = catalog or _default_catalog()
    metric = metric or next((m for m in metrics.Y_METRICS.values() if m.title == metric_title),
                            metrics.y_metric("total"))
    by_name = {hw.name: slug for slug, hw in catalog.hardware.items()}
    rows = rows.copy()
    if "hardware" in rows:
        rows["hardware_name"] = [catalog.hardware_name(h) for h in rows.hardware]
    else:     # a configuration is "<hardware name> · framework · precision · deployment"
        rows["hardware_name"] = [str(c).split(" · ")[0] for c in rows.configuration]
    rows["hardware_slug"] = [by_name.get(n, n) for n in rows.hardware_name]
    rows = _with_text(rows, metric, "value")
    configs = (rows.drop_duplicates("configuration")[["configuration", "hardware_slug"]]
               .sort_values(["hardware_slug", "configuration"]))
    shape = provenance_shape(set(rows.provenance.dropna()) if "provenance" in rows else None,
                             **LEGEND)
    if len(configs) <= MAX_LEGEND:
        # One legend entry per configuration, coloured by its hardware, dashed apart within it.
        dashes = [[1, 0], [6, 3], [2, 2], [10, 3, 2, 3], [1, 3], [12, 4]]
        nth = configs.groupby("hardware_slug", sort=False).cumcount()
        names = list(configs.configuration)
        color = alt.Color("configuration:N", title="Configuration", sort=names,
                          scale=alt.Scale(domain=names, range=[hardware_color(catalog, h)
                                                               for h in configs.hardware_slug]),
                          legend=alt.Legend(**dict(LEGEND, labelLimit=300), symbolStrokeWidth=2.5))
        dash = alt.StrokeDash("configuration:N", sort=names, legend=None,
                              scale=alt.Scale(domain=names,
                                              range=[dashes[i % len(dashes)] for i in nth]))
        line_enc = dict(color=color, strokeDash=dash)
    else:     # too many for a legend: colour by hardware, a line per configuration
        slugs = list(dict.fromkeys(configs.hardware_slug))
        color = alt.Color("hardware_name:N", title="Hardware", scale=hardware_scale(catalog, slugs),
                          legend=alt.Legend(**LEGEND))
        line_enc = dict(color=color, detail=alt.Detail("configuration:N"))
    dates = pd.to_datetime(rows.date) if not rows.empty else pd.Series(dtype="datetime64[ns]")
    if len(dates):
        pad = max((dates.max() - dates.min()) * 0.05, pd.Timedelta(days=10))
        lo, hi = dates.min() - pad, dates.max() + pad
        x_scale = alt.Scale(domain=[alt.DateTime(year=d.year, month=d.month, date=d.day)
                                    for d in (lo, hi)])
    else:
        x_scale = alt.Scale()
    x = alt.X("date:T", title="Run date", scale=x_scale,
              axis=alt.Axis(format="%Y-%m-%d", labelAngle=0, tickCount=5, labelOverlap="greedy",
                            labelSeparation=8))
    y = alt.Y("value:Q", title=metric_title, axis=alt.Axis(**metric.axis),
              scale=alt.Scale(zero=True, nice=True))
    base = alt.Chart(rows)
    tooltip = [alt.Tooltip("date:T", title="Date", format="%Y-%m-%d"),
               alt.Tooltip("configuration:N", title="Configuration"),
               alt.Tooltip("value_text:N", title=metric_title),
               alt.Tooltip("provenance:N", title="Provenance"),
               alt.Tooltip("label:N", title="Run"), alt.Tooltip("source:N", title="Source")]
    return alt.layer(
        base.mark_line(strokeWidth=2).encode(x=x, y=y, order=alt.Order("date:T"), **line_enc),
        base.mark_point(size=90, filled=True, opacity=1).encode(
            x=x, y=y, color=color, shape=shape, tooltip=tooltip),
    ).properties(width=WIDTH, height=OVER_TIME_HEIGHT, title=alt.TitleParams(
        text=f"{metric.label} at {format_number(target)} tok/s/user ({pct_label(pct)}) over time",
        subtitle=wrap_line("Each dated run's own frontier at the target; one line per "
                           "configuration, in its hardware's colour."),
        anchor="start", font=FONT, subtitleFont=FONT, fontSize=TITLE_SIZE,
        subtitleFontSize=SUBTITLE_SIZE))


@functools.lru_cache(maxsize=1)
def _default_catalog() -> Catalog:
    from opx.catalog import load_catalog
    return load_catalog()


def explorer_export_chart(view: ExplorerView, catalog: Catalog, link: str = "",
                          as_of: dt.date | None = None,
                          trend: pd.DataFrame | None = None) -> alt.TopLevelMixin:
    """What the Explorer shows, as one image: its chart, and under it the value over time when
    the link asks for it (`trend=1`) and a dated run reaches the target."""
    if trend is None or trend.empty:
        return explorer_chart(view, catalog, link, as_of)
    state = view.state
    base = metrics.y_metric(metrics.y_metric(state.y).base or state.y)
    return _styled(alt.vconcat(
        _explorer_layers(view, catalog, link, as_of),
        _over_time_layers(trend, base.title, state.target, state.pct, catalog, base),
        spacing=40).resolve_scale(color="independent", shape="independent",
                                  strokeDash="independent", size="independent"))
