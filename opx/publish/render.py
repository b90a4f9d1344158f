"""What a link shows, as files: the chart spec, the data behind it, and a JSON summary. The pages'
download buttons and `python -m opx export` both call these, so a file is what the link shows."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pandas as pd

from models import Catalog, ViewState, pct_label
from models.view import format_number
from opx.answers.explorer import ExplorerView, HardwareSummary, answer_json, multiple_json
from opx.answers.resolve import RULE
from opx.answers.simulation import SimulateView, simulate_view
from opx.curves import metrics
from opx.errors import OpxError
from opx.links import Link, base_url as absolute_base, link_text_of
from opx.publish import export
from opx.publish.brief import BRIEF_PAGES, BRIEF_PATHS, build as build_brief
from opx.publish.charts import latency_chart, simulate_view_chart, stamp_line, wrap_line
from opx.publish.link_view import link_chart, planner_sizing_text, view_for

EXPORTABLE_PAGES = ("explorer", "overview", "compare", "planner", "latency", "simulate")


def chart_data(view: ExplorerView) -> pd.DataFrame:
    """Every mark's data, with the metric names of the registry."""
    x = metrics.interactivity(view.state.pct).column
    y = metrics.y_metric(view.state.y).column
    cols = ["hardware", "label", "run_id", "provenance", "concurrency", "x", "y", "framework",
            "precision", "deployment", "gpus_total", "date", "point_note", "source_text"]
    frames = []
    if not view.points.empty:
        pts = view.points.assign(mark=view.points.kind.map(
            {"envelope": "envelope", "run": "run curve", "other": "point"}))
        frames.append(pts[cols + ["mark"]])
    if not view.references.empty:
        frames.append(view.references.assign(mark="reference (interactivity not stated)")[cols + ["mark"]])
    if not frames:
        return pd.DataFrame(columns=[*cols, "mark"])
    out = pd.concat(frames, ignore_index=True)
    return out.rename(columns={"x": x, "y": y, "source_text": "source", "point_note": "note"})


def _value_json(s: HardwareSummary, view: ExplorerView) -> dict[str, Any]:
    """`answer_json`, and `simulated_at_target`: what the projection alone says at the target,
    with its anchoring."""
    sim_at = s.simulated_at_target
    anchoring = view.anchoring.get(s.hardware)
    anchor = (anchoring.as_json() if anchoring else
              {"anchored": False,
               "anchoring": "no simulated curve" if s.simulated is None else "",
               "anchor_residuals": [], "anchor_parameters": None})
    return {**answer_json(s, view.state.target),
            "simulated_at_target": sim_at.value if sim_at and sim_at.status == "ok" else None,
            "simulated_at_target_status": (sim_at.text or "ok") if sim_at else "no simulation",
            **anchor}


def _header_json(link: Link, state: ViewState, link_text: str, notes: list[str]) -> dict:
    """What every page's JSON opens with: the link, the question and the notes."""
    y = metrics.y_metric(state.y)
    return {"link": link_text, "page": link.page, "model": state.model,
            "workload": state.workload, "percentile": state.pct, "target_tok_s_user": state.target,
            "metric": {"key": y.key, "label": y.label, "unit": y.unit, "formula": y.formula},
            "target_rule": RULE,
            "exported": dt.date.today().isoformat(), "notices": link.notices, "notes": notes}


def summary_json(link: Link, view: ExplorerView, link_text: str) -> dict[str, Any]:
    state = view.state
    base = _header_json(link, state, link_text, view.notes)
    by_hw = {s.hardware: s for s in view.summaries}
    if link.page == "compare":
        a, b = by_hw[state.a], by_hw[state.b]
        return {**base, "a": _value_json(a, view), "b": _value_json(b, view),
                **multiple_json("multiple_at_target", a.multiple_at_target),
                **multiple_json("multiple_at_peak", a.multiple_at_peak)}
    return {**base, "baseline": view.baseline,
            "hardware": [{**_value_json(s, view),
                          **multiple_json("multiple_at_target", s.multiple_at_target),
                          **multiple_json("multiple_at_peak", s.multiple_at_peak)}
                         for s in view.summaries]}


def planner_json(plan, link_text: str, catalog: Catalog) -> dict[str, Any]:
    s = plan.state
    return {"link": link_text, "page": "planner", "model": s.model, "workload": s.workload,
            "sla": {"min_tok_s_user": s.target, "percentile": s.pct, "max_ttft_s": s.ttft},
            "demand": {"concurrent_sessions": s.sessions, "output_tok_s": s.tps},
            "output_share": plan.output_share,
            "sizing": planner_sizing_text(plan, catalog),
            "ranking": json.loads(plan.rows.to_json(orient="records")) if not plan.rows.empty else [],
            "excluded": [{"hardware": h, "why": w} for h, w in plan.excluded], "notes": plan.notes,
            "exported": dt.date.today().isoformat()}


LATENCY_COLUMNS = ("hardware", "hardware_name", "run_id", "run_name", "provenance", "concurrency",
                   "interactivity", "tput", "ttft_s", "tpot_s", "e2e_s", "gpus_total")


def latency_export(link: Link, db: Path, catalog: Catalog, link_text: str):
    """/latency as files: the JSON (each hardware's figure at the target and the runs drawn),
    the drawn points as a table, and the page's chart."""
    from opx.answers import latency
    view = latency.latency(db, link.state, catalog)
    state = view.state
    payload = {**_header_json(link, state, link_text, view.notes),
               "hardware": [answer_json(s, state.target) for s in view.answers],
               "runs_shown": json.loads(latency.runs_table(view).to_json(orient="records"))
               if not view.runs.empty else [],
               "operating_points": json.loads(view.operating.to_json(orient="records"))
               if not view.operating.empty else []}
    cols = [c for c in LATENCY_COLUMNS if c in view.points.columns]
    frame = view.points[cols].rename(columns={
        "interactivity": metrics.interactivity(state.pct).column,
        "tput": "throughput_total_per_gpu"}) if cols else pd.DataFrame(columns=list(LATENCY_COLUMNS))
    runs = ("the runs picked" if view.picked else
            "per hardware, the run(s) behind its figure at the target")
    context = [*wrap_line(f"{catalog.model_name(state.model)}, {catalog.workload_name(state.workload)}"
                          f"; {runs} ({format_number(state.target)} tok/s/user, "
                          f"{pct_label(state.pct)})."), *wrap_line(stamp_line(link_text))]
    return payload, frame, lambda: latency_chart(view.points, state.pct, state.conc, catalog,
                                                 context)


def simulate_export(link: Link, db: Path, catalog: Catalog, link_text: str):
    """/simulate as files: the JSON (the projection's envelope, parameters and anchoring, and the
    hardware's figure at the target as every page gives it), the envelope as a table, and the
    page's chart."""
    sim = simulate_view(db, link.sim, catalog)
    payload = {**_header_json(link, link.state, link_text, sim.notes), **simulate_json(sim)}
    return payload, sim.result.envelope_at(link.sim.pct), lambda: simulate_view_chart(
        sim, catalog, link_text)


def simulate_json(sim: SimulateView) -> dict[str, Any]:
    """/simulate's own JSON: the hardware's figure at the target as every page gives it, the
    projection's alone, the knobs, the envelope and the simulator's parameters."""
    s = sim.state
    p = sim.projection
    return {"hardware": [answer_json(sim.view.summaries[0], s.target)],
            "projection": {"hardware": s.hw, "at_target": p.value, **p.as_json(s.target),
                           "anchored": bool(sim.fit is not None and sim.fit.anchored),
                           "anchors": list(s.anchor),
                           "held_out_error": sim.held_out_error()},
            "knobs": s.model_dump(mode="json"),
            "envelope": json.loads(sim.result.envelope_at(s.pct).to_json(orient="records")),
            "parameters": json.loads(json.dumps(sim.result.parameters, default=str))}


def overview_export(link: Link, db: Path, catalog: Catalog, link_text: str):
    from opx.publish import overview_export as ov
    return ov.export(link, db, catalog, link_text)


PAGE_EXPORTS = {"latency": latency_export, "simulate": simulate_export,
                "overview": overview_export}


def render_link(link: Link, fmt: str, db: Path, catalog: Catalog, base_url: str = "") -> bytes:
    """The file `fmt` of what `link` shows."""
    if fmt not in export.FORMATS:
        raise OpxError("--format", fmt, f"unknown format; known: {', '.join(export.FORMATS)}")
    base_url = absolute_base(base_url)     # an exported link is a full address ($OPX_BASE_URL)
    link_text = link_text_of(link, base_url)
    kind = export.FORMATS[fmt].kind
    if link.page not in EXPORTABLE_PAGES:
        raise OpxError("LINK", "path", f"`{link.path}` shows no figures to export; exportable "
                                       "pages: /, /overview, /compare, /planner, /latency, /simulate")
    if kind == "brief" and link.page not in BRIEF_PAGES:
        raise OpxError("--format", fmt, f"a brief is made of {BRIEF_PATHS}, not of "
                                        f"`{link.path}`; export it as json, csv or a chart")
    if kind == "brief":
        return export.render(fmt, build_brief(link, db, catalog, base_url))
    if link.page in PAGE_EXPORTS:
        payload, frame, chart = PAGE_EXPORTS[link.page](link, db, catalog, link_text)
        if kind == "chart":
            return export.render(fmt, chart().to_dict())
        return export.render(fmt, payload if fmt == "json" else frame)
    if kind == "chart":
        return export.render(fmt, link_chart(link, db, catalog, link_text).to_dict())
    if link.page == "planner":
        from opx.answers.planner import plan as make_plan
        the_plan = make_plan(db, link.state, catalog)
        if fmt == "json":
            return export.render(fmt, planner_json(the_plan, link_text, catalog))
        return export.render(fmt, the_plan.labelled())
    view = view_for(link, db, catalog)
    if fmt == "json":
        return export.render(fmt, summary_json(link, view, link_text))
    return export.render(fmt, chart_data(view))


