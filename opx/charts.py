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
    color = alt.Color("hardware_name:N", title="Hardware",
                      scale=hardware_scale(catalog, state.hw),
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
        runs = pts[pts.kind != "other"]       # each run's frontier (envelope points included)
        layers.append(alt.Chart(runs).mark_line(strokeWidth=1, opacity=0.45).encode(
            x=x_enc, y=y_enc, color=color, detail="run_id:N", order="x:Q"))
    if state.points and not pts.empty:
        others = pts[pts.kind == "other"]
        layers.append(alt.Chart(others).mark_point(size=28, opacity=0.45, filled=True).encode(
            x=x_enc, y=y_enc, color=color, shape=shape, tooltip=tooltip))
    if not env.empty:
        # Simulated envelopes are dashed and kept apart from the data's.
        env = env.assign(series=["simulated" if sim else "data" for sim in env.simulated])
        dash = alt.StrokeDash("series:N", title="Envelope",
                              scale=alt.Scale(domain=["data", "simulated"], range=[[1, 0], [6, 3]]))
        layers.append(alt.Chart(env).mark_line(strokeWidth=2.5, interpolate="monotone").encode(
            x=x_enc, y=y_enc, color=color, strokeDash=dash, detail="series:N", order="x:Q"))
        layers.append(alt.Chart(env).mark_point(filled=True, opacity=1).encode(
            x=x_enc, y=y_enc, color=color, shape=shape, tooltip=tooltip,
            size=alt.Size("series:N", scale=alt.Scale(domain=["data", "simulated"],
                                                      range=[110, 25]), legend=None)))

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

    if state.conc and not view.operating.empty:
        op = view.operating.assign(op_label=[f"c={c:,.0f}" for c in view.operating.concurrency])
        layers.append(alt.Chart(op).mark_point(size=420, shape="square", filled=False,
                                               strokeWidth=2, color="#111").encode(
            x=x_enc, y=y_enc, tooltip=tooltip))
        layers.append(alt.Chart(op).mark_text(align="left", dx=12, dy=10, fontSize=11,
                                              font=FONT, color="#111").encode(
            x=x_enc, y=y_enc, text="op_label:N"))

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


def simulate_chart(points: pd.DataFrame, envelope: pd.DataFrame, measured: pd.DataFrame,
                   title: str, subtitle: list[str]) -> alt.LayerChart:
    """A simulation's layout curves and envelope over the measured points of the same hardware,
    model and workload. Clicking a simulated point selects it (`pick`: layout and concurrency)."""
    x_title = metrics.interactivity("p50").title
    y_title = metrics.y_metric("total").title
    xs = list(points.interactivity_p50) + list(measured.get("x", []))
    x_scale = alt.Scale(type="log", domain=[min(xs) / 1.5, max(xs) * 1.5] if xs else [1, 1000])
    x_enc = alt.X("interactivity_p50:Q", title=x_title, scale=x_scale)
    y_enc = alt.Y("throughput_total_per_gpu:Q", title=y_title, axis=alt.Axis(format="~s"))
    pick = alt.selection_point(name="pick", fields=["layout", "concurrency"], on="click")
    tip = [alt.Tooltip("layout:N", title="Layout"),
           alt.Tooltip("concurrency:Q", title="Concurrency", format=",.0f"),
           alt.Tooltip("interactivity_p50:Q", title=x_title, format=",.4~g"),
           alt.Tooltip("throughput_total_per_gpu:Q", title=y_title, format=",.4~s"),
           alt.Tooltip("ttft_p50_s:Q", title="TTFT (s)", format=",.3~g"),
           alt.Tooltip("binding:N", title="Binding limit")]
    layers = []
    if not points.empty:
        layers.append(alt.Chart(points).mark_line(strokeWidth=1, opacity=0.25, color="#888").encode(
            x=x_enc, y=y_enc, detail="layout:N", order="interactivity_p50:Q"))
        layers.append(alt.Chart(points).mark_point(size=30, opacity=0.35, color="#888",
                                                   shape="triangle-down", filled=True).encode(
            x=x_enc, y=y_enc, tooltip=tip).add_params(pick))
    if not envelope.empty:
        layers.append(alt.Chart(envelope).mark_line(strokeWidth=2.5, strokeDash=[6, 3],
                                                    color="#d62728").encode(
            x=x_enc, y=y_enc, order="interactivity_p50:Q"))
        layers.append(alt.Chart(envelope).mark_point(size=60, filled=True, color="#d62728",
                                                     shape="triangle-down").encode(
            x=x_enc, y=y_enc, tooltip=tip))
    if not measured.empty:
        m = measured.rename(columns={"x": "interactivity_p50", "y": "throughput_total_per_gpu"})
        shape = alt.Shape("provenance:N", title="Data (not simulated)",
                          scale=alt.Scale(domain=list(PROVENANCE_SHAPES),
                                          range=list(PROVENANCE_SHAPES.values())))
        layers.append(alt.Chart(m).mark_point(size=110, filled=True, color="#1f77b4").encode(
            x=x_enc, y=y_enc, shape=shape,
            tooltip=[alt.Tooltip("label:N", title="Run"), alt.Tooltip("provenance:N"),
                     alt.Tooltip("interactivity_p50:Q", title=x_title, format=",.4~g"),
                     alt.Tooltip("throughput_total_per_gpu:Q", title=y_title, format=",.4~s"),
                     alt.Tooltip("source_text:N", title="Source")]))
    if not layers:
        layers.append(alt.Chart(pd.DataFrame({"interactivity_p50": [], "throughput_total_per_gpu": []}))
                      .mark_point().encode(x=x_enc, y=y_enc))
    return alt.layer(*layers).properties(
        width=WIDTH, height=HEIGHT,
        title=alt.TitleParams(text=title, subtitle=subtitle, anchor="start", font=FONT,
                              subtitleFont=FONT))


def multiple_chart(curve: pd.DataFrame, a_name: str, b_name: str, target: float,
                   metric: metrics.Metric, pct: str) -> alt.LayerChart:
    """A/B across interactivity; where one side cannot reach, a shaded band says so instead of an
    infinite multiple."""
    x_title = metrics.interactivity(pct).title
    both = curve[curve.status == "both"] if not curve.empty else curve
    lo = min(list(curve.x) + [target]) / 1.3 if not curve.empty else target / 2
    hi = max(list(curve.x) + [target]) * 1.3 if not curve.empty else target * 2
    x_enc = alt.X("x:Q", title=x_title, scale=alt.Scale(type="log", domain=[lo, hi]))
    layers = []
    if not both.empty:
        layers.append(alt.Chart(both).mark_line(strokeWidth=2.5, color="#333").encode(
            x=x_enc, y=alt.Y("multiple:Q", title=f"{a_name} ÷ {b_name} ({metric.label})",
                             scale=alt.Scale(type="log")),
            tooltip=[alt.Tooltip("x:Q", title=x_title, format=",.4~g"),
                     alt.Tooltip("multiple:Q", title="Multiple", format=",.3~g"),
                     alt.Tooltip("a:Q", title=a_name, format=",.4~s"),
                     alt.Tooltip("b:Q", title=b_name, format=",.4~s")]))
        layers.append(alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(color="#999").encode(y="y:Q"))
    bands = []
    if not curve.empty:
        for status, group in curve[curve.status != "both"].groupby("status"):
            bands.append({"x": group.x.min(), "x2": group.x.max(), "label": status})
    if bands:
        band_df = pd.DataFrame(bands)
        layers.append(alt.Chart(band_df).mark_rect(opacity=0.12, color="#d62728").encode(
            x=x_enc, x2="x2:Q", tooltip=[alt.Tooltip("label:N", title="No multiple")]))
        layers.append(alt.Chart(band_df).mark_text(align="left", baseline="top", dx=3, dy=4,
                                                   color="#a00", fontSize=11, font=FONT).encode(
            x=x_enc, y=alt.value(0), text="label:N"))
    layers.append(alt.Chart(pd.DataFrame({"x": [target]})).mark_rule(
        color="#555", strokeDash=[2, 2]).encode(x=x_enc))
    return alt.layer(*layers).properties(
        width=WIDTH, height=260,
        title=alt.TitleParams(text=f"{a_name} ÷ {b_name} across interactivity",
                              subtitle=["Where a side cannot reach an interactivity there is no "
                                        "multiple: the band says which side, instead of an "
                                        "infinite number."], anchor="start", font=FONT,
                              subtitleFont=FONT))


def latency_chart(points: pd.DataFrame, pct: str, conc: float | None,
                  catalog: Catalog) -> alt.VConcatChart:
    """TTFT, TPOT and end-to-end latency against concurrency (log axes), one line per run drawn.

    `points` are `opx.latency.LatencyView.points` (a few runs, `run_name` unique per run). Each
    run takes its hardware's colour; runs of one hardware differ by dash. A panel no run can fill
    is left out and the title says why, so an exported chart explains itself."""
    from opx.latency import PANELS, missing_panels
    runs = (points.drop_duplicates("run_id")[["run_id", "run_name", "hardware"]]
            if not points.empty else pd.DataFrame(columns=["run_id", "run_name", "hardware"]))
    dashes = [[1, 0], [6, 3], [2, 2], [10, 3, 2, 3], [1, 3], [12, 4]]
    nth = runs.groupby("hardware", sort=False).cumcount() if not runs.empty else []
    names = list(runs.run_name)
    color = alt.Color("run_name:N", title="Run", sort=names,
                      scale=alt.Scale(domain=names or ["–"],
                                      range=[hardware_color(catalog, h) for h in runs.hardware]
                                      or ["#888"]),
                      legend=alt.Legend(orient="bottom", direction="vertical", columns=1,
                                        labelLimit=520, symbolType="stroke", symbolSize=400,
                                        symbolStrokeWidth=2.5))
    dash = alt.StrokeDash("run_name:N", title="Run", sort=names,
                          scale=alt.Scale(domain=names or ["–"],
                                          range=[dashes[i % len(dashes)] for i in nth] or [[1, 0]]))
    shape = alt.Shape("provenance:N", title="Provenance",
                      scale=alt.Scale(domain=list(PROVENANCE_SHAPES),
                                      range=list(PROVENANCE_SHAPES.values())),
                      legend=alt.Legend(orient="bottom", direction="horizontal"))
    p = pct.upper()
    x = alt.X("concurrency:Q", title="Concurrency (requests in flight, log scale)",
              scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    charts = []
    for column, short, long, unit, factor in PANELS:
        data = points[points[column].notna() & points[column].gt(0)] if not points.empty else points
        if data.empty:
            continue
        data = data.assign(value=data[column] * factor)
        y_title = f"{short} {p} ({unit})"
        y = alt.Y("value:Q", title=y_title, scale=alt.Scale(type="log"),
                  axis=alt.Axis(format="~g", titlePadding=8))
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
                                                      detail="run_id:N", order="concurrency:Q"),
                 base.mark_point(size=60, filled=True, opacity=1).encode(
                     x=x, y=y, color=color, shape=shape, tooltip=tooltip)]
        if conc:
            mark = pd.DataFrame({"concurrency": [conc], "text": [f"concurrency {conc:,.0f}"]})
            rule = alt.Chart(mark).encode(x="concurrency:Q")
            layer += [rule.mark_rule(color="#555", strokeDash=[3, 3]),
                      rule.mark_text(align="left", dx=4, baseline="top", y=2, color="#555",
                                     font=FONT).encode(text="text:N")]
        charts.append(alt.layer(*layer).properties(
            width=WIDTH, height=240,
            title=alt.TitleParams(text=f"{long} ({short} {p}, {unit})", anchor="start",
                                  font=FONT, fontSize=13)))
    missing = missing_panels(points, pct)
    title = alt.TitleParams(text=f"Latency against concurrency ({p})", anchor="start", font=FONT,
                            fontSize=15, subtitle=missing or alt.Undefined, subtitleFont=FONT,
                            offset=14)
    if not charts:
        return alt.vconcat(alt.Chart(pd.DataFrame({"text": ["No run shown reports latencies."]}))
                           .mark_text(font=FONT).encode(text="text:N")
                           .properties(width=WIDTH, height=60)).properties(title=title)
    return alt.vconcat(*charts, spacing=28).properties(title=title).resolve_scale(
        x="shared", color="shared", strokeDash="shared", shape="shared")


def planner_chart(rows: pd.DataFrame, title: str, subtitle: list[str],
                  catalog: Catalog) -> alt.LayerChart:
    """Cost per hour of each system's fleet (or $/M tokens without a demand), cheapest first, one
    colour per hardware; each bar names its GPUs, racks and the provenance of its point."""
    import math

    from opx.planner import money
    by_hour = not rows.empty and rows.usd_per_hour.notna().any()
    key, label, unit = (("usd_per_hour", "Fleet cost ($/hour)", "/hour") if by_hour else
                        ("usd_per_mtok", "Cost ($/M tokens)", "/M tokens"))
    shown = rows[rows[key].notna()] if not rows.empty else rows
    data = pd.DataFrame({
        "hardware": shown.get("hardware", pd.Series(dtype=str)),
        "value": shown.get(key, pd.Series(dtype=float)),
        "provenance": shown.get("provenance", pd.Series(dtype=str)),
        "run": shown.get("run", pd.Series(dtype=str)),
        "sized_by": shown.get("sized_by", pd.Series(dtype=str)),
        "cost": [money(v) + unit for v in shown.get(key, [])],
        "fleet": [(f"{g:,.0f} GPUs" + (f", {r:,.0f} racks" if pd.notna(r) else "")
                   + (f", {mw:.3g} MW" if pd.notna(mw) else "")) if pd.notna(g) else
                  f"{metrics.format_value(t)} tok/s/GPU"
                  for g, r, mw, t in zip(shown.get("gpus", []), shown.get("racks", []),
                                         shown.get("mw", []), shown.get("total_per_gpu", []))],
    })
    data["text"] = [f"{c} · {f} · {p}" for c, f, p in
                    zip(data.cost, data.fleet, data.provenance)]
    top = float(data.value.max()) if not data.empty and data.value.max() > 0 else 1.0
    # dollars with as many decimals as the ticks need ($0.02, $0.0004), never SI prefixes
    decimals = max(2, -math.floor(math.log10(top * 2 / 5)))
    # room right of the longest bar for its label, so no label runs off the plot or over another
    x = alt.X("value:Q", title=label, scale=alt.Scale(domain=[0, top * 2], nice=False),
              axis=alt.Axis(format="$,.0f" if by_hour else f"$,.{decimals}f", tickCount=5,
                            grid=True))
    y = alt.Y("hardware:N", sort=list(data.hardware), title=None,     # ranked: cheapest on top
              axis=alt.Axis(labelLimit=220, labelFontSize=12))
    tooltip = [alt.Tooltip("hardware:N", title="Hardware"), alt.Tooltip("cost:N", title="Cost"),
               alt.Tooltip("fleet:N", title="Fleet"), alt.Tooltip("sized_by:N", title="Sized by"),
               alt.Tooltip("provenance:N", title="Provenance"), alt.Tooltip("run:N", title="Run")]
    slugs = list(shown.hardware_slug) if "hardware_slug" in shown else []
    base = alt.Chart(data).encode(x=x, y=y, tooltip=tooltip)
    bars = base.mark_bar(height={"band": 0.6}).encode(
        color=alt.Color("hardware:N", scale=hardware_scale(catalog, slugs), legend=None))
    text = base.mark_text(align="left", baseline="middle", dx=6, font=FONT, fontSize=12,
                          color="#333").encode(text="text:N")
    # fit-x: the width follows the page; the height is the plot's own (60 px a bar), so the title
    # and axes never squeeze the bars (Streamlit's default `fit` counts them inside the height)
    return alt.layer(bars, text).properties(
        width=WIDTH, height=max(200, 60 * len(data)),
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        title=alt.TitleParams(text=title, subtitle=subtitle, anchor="start", font=FONT,
                              subtitleFont=FONT, fontSize=15, subtitleFontSize=11,
                              subtitlePadding=4, offset=12),
    ).configure_axis(labelFont=FONT, titleFont=FONT)


def over_time_chart(rows: pd.DataFrame, metric_title: str, target: float, pct: str) -> alt.Chart:
    """The value at a fixed interactivity over time, one line per configuration."""
    shape = alt.Shape("provenance:N", title="Provenance",
                      scale=alt.Scale(domain=list(PROVENANCE_SHAPES),
                                      range=list(PROVENANCE_SHAPES.values())))
    base = alt.Chart(rows)
    enc = dict(x=alt.X("date:T", title="Run date"),
               y=alt.Y("value:Q", title=metric_title, axis=alt.Axis(format="~s")),
               color=alt.Color("configuration:N", title="Configuration",
                               legend=alt.Legend(orient="bottom", columns=1)))
    return alt.layer(
        base.mark_line().encode(**enc),
        base.mark_point(size=80, filled=True).encode(
            **enc, shape=shape, tooltip=["date:T", "configuration:N", alt.Tooltip("value:Q", format=",.4~s"),
                                         "provenance:N", "label:N", "source:N"]),
    ).properties(width=WIDTH, height=260, title=alt.TitleParams(
        text=f"At {format_number(target)} tok/s/user ({pct.upper()}) over time", anchor="start",
        font=FONT))
