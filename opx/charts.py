"""Altair chart builders. The page and every export use these functions, so an exported chart is
exactly what the link shows. Labels and units come from the metric registry."""
from __future__ import annotations

import datetime as dt

import altair as alt
import pandas as pd

from models import PROVENANCES, Catalog
from models.view import format_number
from opx import metrics
from opx.explorer import ExplorerView

# One marker shape per provenance, fixed so the legend reads the same on every chart.
PROVENANCE_SHAPES = {
    "measured": "circle", "published": "square", "preview": "diamond",
    "derived": "triangle-up", "interpolated": "cross", "simulated": "triangle-down",
}
assert set(PROVENANCE_SHAPES) == set(PROVENANCES)

FONT = "sans-serif"
WIDTH, HEIGHT = 760, 440


def _tooltip(y_title: str, x_title: str) -> list[alt.Tooltip]:
    return [
        alt.Tooltip("hardware_name:N", title="Hardware"),
        alt.Tooltip("label:N", title="Run"),
        alt.Tooltip("x:Q", title=x_title, format=",.4~g"),
        alt.Tooltip("y:Q", title=y_title, format=",.4~s"),
        alt.Tooltip("concurrency:Q", title="Concurrency", format=",.0f"),
        alt.Tooltip("framework:N", title="Framework"),
        alt.Tooltip("precision:N", title="Precision"),
        alt.Tooltip("deployment:N", title="Deployment"),
        alt.Tooltip("gpus_total:Q", title="GPUs (all)"),
        alt.Tooltip("date:N", title="Date"),
        alt.Tooltip("provenance:N", title="Provenance"),
        alt.Tooltip("point_note:N", title="Note"),
        alt.Tooltip("source_text:N", title="Source"),
    ]


def explorer_chart(view: ExplorerView, catalog: Catalog, link: str = "",
                   as_of: dt.date | None = None) -> alt.LayerChart:
    """The Explorer's chart; it carries its context (choices, provenance, sources, date, link) in
    its title so an exported image stands on its own."""
    state = view.state
    x_metric = metrics.interactivity(state.pct)
    y_metric = metrics.y_metric(state.y)
    hw_names = [catalog.hardware_name(h) for h in state.hw]
    color = alt.Color("hardware_name:N", title="Hardware",
                      scale=alt.Scale(domain=hw_names or ["–"], scheme="tableau10"),
                      legend=alt.Legend(orient="right"))
    shape = alt.Shape("provenance:N", title="Provenance",
                      scale=alt.Scale(domain=list(PROVENANCE_SHAPES),
                                      range=list(PROVENANCE_SHAPES.values())))

    pts = view.points
    xs = list(pts.x) if not pts.empty else []
    x_lo = min(xs + [state.target]) / 1.6
    x_hi = max(xs + [state.target]) * 1.6
    x_scale = (alt.Scale(type="log", domain=[x_lo, x_hi]) if state.xscale == "log"
               else alt.Scale(type="linear", domain=[0, x_hi], nice=True))
    ys = list(pts.y) if not pts.empty else []
    ys += list(view.references.y) if not view.references.empty else []
    y_scale = alt.Scale(domain=[0, max(ys) * 1.08 if ys else 1], nice=True)
    x_enc = alt.X("x:Q", title=x_metric.title, scale=x_scale)
    y_enc = alt.Y("y:Q", title=y_metric.title, scale=y_scale, axis=alt.Axis(format="~s"))
    tooltip = _tooltip(y_metric.title, x_metric.title)

    layers: list[alt.Chart] = []
    env = pts[pts.on_envelope] if not pts.empty else pts
    if state.runs and not pts.empty:
        runs = pts[pts.on_run_frontier]
        layers.append(alt.Chart(runs).mark_line(strokeWidth=1, opacity=0.45).encode(
            x=x_enc, y=y_enc, color=color, detail="run_id:N", order="x:Q"))
    if state.points and not pts.empty:
        others = pts[~pts.on_envelope]
        layers.append(alt.Chart(others).mark_point(size=28, opacity=0.45, filled=True).encode(
            x=x_enc, y=y_enc, color=color, shape=shape, tooltip=tooltip))
    if not env.empty:
        layers.append(alt.Chart(env).mark_line(strokeWidth=2.5, interpolate="monotone").encode(
            x=x_enc, y=y_enc, color=color, order="x:Q"))
        layers.append(alt.Chart(env).mark_point(size=110, filled=True, opacity=1).encode(
            x=x_enc, y=y_enc, color=color, shape=shape, tooltip=tooltip))

    refs = view.references
    if not refs.empty:
        refs = refs.assign(ref_label=[
            f"{n} {metrics.format_value(v)} ({p}): peak, interactivity not stated"
            for n, v, p in zip(refs.hardware_name, refs.y, refs.provenance)])
        layers.append(alt.Chart(refs).mark_rule(strokeDash=[6, 4], strokeWidth=1.5).encode(
            y=y_enc, color=color,
            tooltip=[alt.Tooltip("ref_label:N", title="Reference"),
                     alt.Tooltip("source_text:N", title="Source")]))
        layers.append(alt.Chart(refs).mark_text(align="left", baseline="bottom", dx=4, dy=-2,
                                                fontSize=11, font=FONT).encode(
            x=alt.value(4), y=y_enc, text="ref_label:N", color=color))

    target_df = pd.DataFrame({"x": [state.target],
                              "label": [f"target {format_number(state.target)} {x_metric.unit}"]})
    layers.append(alt.Chart(target_df).mark_rule(color="#555", strokeDash=[2, 2]).encode(x=x_enc))
    layers.append(alt.Chart(target_df).mark_text(align="left", dx=4, dy=8, color="#333",
                                                 fontSize=11, font=FONT).encode(
        x=x_enc, y=alt.value(0), text="label:N"))

    hits = [(s.name, s.at_target.value, "exact" if s.at_target.exact else "interpolated")
            for s in view.summaries if s.at_target.status == "ok"]
    if hits:
        hit_df = pd.DataFrame({"hardware_name": [h[0] for h in hits], "x": state.target,
                               "y": [h[1] for h in hits],
                               "value": [metrics.format_value(h[1]) for h in hits],
                               "how": [h[2] for h in hits]})
        layers.append(alt.Chart(hit_df).mark_point(size=260, shape="circle", filled=False,
                                                   strokeWidth=2).encode(
            x=x_enc, y=y_enc, color=color,
            tooltip=[alt.Tooltip("hardware_name:N", title="Hardware"),
                     alt.Tooltip("value:N", title=f"At target ({y_metric.unit})"),
                     alt.Tooltip("how:N", title="Value")]))
        layers.append(alt.Chart(hit_df).mark_text(align="right", dx=-10, dy=-8, fontSize=12,
                                                  fontWeight="bold", font=FONT).encode(
            x=x_enc, y=y_enc, text="value:N", color=color))

    title = alt.TitleParams(
        text=f"{y_metric.label} vs interactivity: {catalog.model_name(state.model)}, "
             f"{catalog.workload_name(state.workload)}, {state.pct.upper()}",
        subtitle=context_lines(view, link, as_of),
        anchor="start", font=FONT, subtitleFont=FONT)
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT, title=title).configure_axis(
        labelFont=FONT, titleFont=FONT).configure_legend(labelFont=FONT, titleFont=FONT)


MAX_SOURCE_CHARS = 110


def context_lines(view: ExplorerView, link: str = "", as_of: dt.date | None = None) -> list[str]:
    """Provenance, sources and date, as lines under the chart title."""
    lines = [f"Target {format_number(view.state.target)} tok/s/user, {view.state.pct.upper()}. "
             f"Provenance: {_provenance_summary(view)}. Per-GPU figures divide by all GPUs."]
    sources = list(dict.fromkeys(list(view.points.get("source_text", []))
                                 + list(view.references.get("source_text", []))))
    for source in sources[:4]:
        short = source if len(source) <= MAX_SOURCE_CHARS else source[:MAX_SOURCE_CHARS - 1] + "…"
        lines.append(f"Source: {short}")
    if len(sources) > 4:
        lines.append(f"… and {len(sources) - 4} more sources (see the data export)")
    lines.append(f"opx, {(as_of or dt.date.today()).isoformat()}" + (f" · {link}" if link else ""))
    return lines


def _provenance_summary(view: ExplorerView) -> str:
    parts = []
    for s in view.summaries:
        provs = sorted({p.split(" (")[0] for p in (s.target_provenance, s.peak_provenance) if p})
        if provs:
            parts.append(f"{s.name}: {', '.join(provs)}")
    return "; ".join(parts) if parts else "no data under these filters"
