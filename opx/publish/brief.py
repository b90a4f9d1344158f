"""A brief of a view for the people who decide: what an Explorer, Overview, Compare or Planner
link shows, with its evidence, built once (`build`) and rendered as an offline HTML page
(`opx.publish.brief_html`) and a one-page landscape PDF (`opx.publish.brief_pdf`). No Streamlit.

The figures are the page's and the JSON export's: the multiples come from the Explorer's
summaries (`opx.answers.explorer`, like with like) or Compare's (`opx.answers.compare.headline_multiples`), the
table from `ExplorerView.table`, the fleet from `opx.answers.planner.plan`, the chart from
`opx.publish.link_view.link_chart`. The same link on the same data gives the same brief apart from its date:
lists are sorted, and the fingerprint is a hash of the runs and points shown."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

import opx
from models import Catalog, ViewState, pct_label
from models.pages import PAGE_BY_PATH
from models.view import format_number
from opx.answers import compare
from opx.curves import metrics
from opx.publish import link_view
from opx.curves.economics import economics_for
from opx.errors import OpxError
from opx.answers.explorer import ExplorerView, explore
from opx.curves.frontier import Multiple
from opx.links import Link, base_url as absolute_base, build_link

BRIEF_PAGES = ("explorer", "overview", "compare", "planner")
BRIEF_PATHS = ", ".join(path for path, page in PAGE_BY_PATH.items() if page in BRIEF_PAGES)
HEADLINE_SCORES = 3          # an Overview brief's largest and smallest scores

# What each multiple means, said once and shown beside it wherever a brief is read.
MEANING_AT_TARGET = ("Throughput per GPU of A over B at the same interactivity per user: the "
                     "answer at the speed the product needs.")
MEANING_SCORE = ("The geometric mean of A's throughput per GPU over B's across the interactivities "
                 "both cover: one number for the whole shared range, not a figure at one speed.")
MEANING_AT_PEAK = ("Highest throughput per GPU of A over B, each at whatever interactivity it "
                   "peaks: not a figure at the product's speed.")


@dataclass(frozen=True)
class Headline:
    """One headline figure: a multiple (at the target or at peak) or a fleet."""
    kind: str                 # "at target", "at peak" or "fleet"
    heading: str              # "Multiple at the target, 387 tok/s/user (P90)"
    label: str                # "Vera Rubin NVL72 ÷ GB300 NVL72"
    value: str                # "58×", "no multiple", "$12.3k/hour"
    caption: str              # what was divided, or why there is no number
    number: float | None = None


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[str]]

    @classmethod
    def of(cls, frame: pd.DataFrame) -> "Table":
        return cls([str(c) for c in frame.columns],
                   [[_cell(v) for v in row] for row in frame.itertuples(index=False)])


@dataclass(frozen=True)
class Evidence:
    """The figures of one provenance drawn in the view."""
    provenance: str
    runs: int
    points: int
    sources: list[str]


@dataclass
class Brief:
    page: str
    title: str
    subtitle: str
    headlines: list[Headline]
    chart: dict                      # the Vega-Lite spec the link's page draws
    table_title: str
    table: Table                     # rows = fields, one column per system (transposed)
    link: str
    exported: dt.date
    fingerprint: str
    runs: int
    points: int
    evidence: list[Evidence] = field(default_factory=list)
    simulated_errors: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)     # beside the figures they qualify
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fleet_notes: list[str] = field(default_factory=list)
    version: str = opx.__version__

    @property
    def meanings(self) -> dict[str, str]:
        return {"at target": MEANING_AT_TARGET, "at peak": MEANING_AT_PEAK,
                "score": MEANING_SCORE}

    @property
    def footer(self) -> str:
        return (f"opx {self.version} · exported {self.exported.isoformat()} · data fingerprint "
                f"{self.fingerprint} ({self.runs:,} runs, {self.points:,} points)")


def build(link: Link, db: Path, catalog: Catalog, base_url: str = "",
          as_of: dt.date | None = None) -> Brief:
    """The brief of what `link` shows (Explorer `/`, `/overview`, `/compare` or `/planner`)."""
    if link.page not in BRIEF_PAGES:
        raise OpxError("LINK", "path", f"a brief of `{link.path}` is not available; briefs are "
                                       f"made of {BRIEF_PATHS}")
    as_of = as_of or dt.date.today()
    link_text = build_link(link.path, link.state, absolute_base(base_url))
    if link.page == "overview":
        return _overview_brief(link, db, catalog, link_text, as_of)
    if link.page == "planner":
        return _planner_brief(link, db, catalog, link_text, as_of)
    view = link_view.view_for(link, db, catalog)
    state = view.state
    y = metrics.y_metric(state.y)
    if link.page == "compare":
        a, b, runs = compare.sides_for(db, view, catalog)
        at_target, at_peak = compare.headline_multiples(view, a, b, runs)
        names = (a.name, b.name) if runs else (catalog.hardware_name(state.a),
                                                catalog.hardware_name(state.b))
        pairs = [(*names, at_target, at_peak)]
        title = f"{names[0]} vs {names[1]}"
    else:
        base = next((s for s in view.summaries if s.hardware == view.baseline), None)
        others = [s for s in view.summaries if s is not base]
        pairs = [(s.name, base.name, s.multiple_at_target, s.multiple_at_peak)
                 for s in others] if base else []
        title = (f"{_and([s.name for s in others])} vs {base.name}" if base and others else
                 _and([s.name for s in view.summaries]) or "No hardware chosen")
    chart = link_view.link_chart(link, db, catalog, link_text, as_of, view=view).to_dict()
    errors = simulated_errors(view)
    if link.page == "compare" and runs:           # two runs head to head: their own figures
        table, marks, proof, hardware = _runs_table(db, state, y, a, b, catalog)
        return Brief(
            page="compare", title=f"{title}, {_question(state, catalog)}",
            subtitle=_subtitle(state, y, "compare"), headlines=_multiples(pairs, state, y),
            chart=chart, table_title=f"At {_target_text(state)}", table=table,
            link=link_text, exported=as_of, fingerprint=fingerprint(marks),
            runs=int(marks.run_id.nunique()) if not marks.empty else 0, points=len(marks),
            evidence=proof, assumptions=assumptions(view, catalog, y.derived, hardware),
            notes=list(link.notices))
    return Brief(
        page=link.page, title=f"{title}, {_question(state, catalog)}",
        subtitle=_subtitle(state, y, link.page), headlines=_multiples(pairs, state, y),
        chart=chart, table_title=f"At {_target_text(state)}",
        table=_transposed(view.table(), "Hardware", drop=("Source",)),
        link=link_text, exported=as_of, fingerprint=fingerprint(view.points, view.references),
        runs=len(view.run_ids()), points=_count_points(view),
        evidence=evidence(view), simulated_errors=errors, caveats=view.caveats(),
        assumptions=assumptions(view, catalog, y.derived),
        notes=[*link.notices, *_other_notes(view, catalog, errors)])


def _runs_table(db: Path, state: ViewState, y: metrics.Metric, a, b, catalog: Catalog):
    """Compare of two runs: each run's value at the target, peak and provenance; the points
    its frontier is drawn from; its source."""
    from opx import store
    from opx.store import queries
    cols, marks, proof, hardware = {}, [], [], []
    with store.reading(db) as con:
        for side in (a, b):
            run, _ = queries.run_detail(con, side.key)
            hardware += [run["hardware"]] if run else []
            status, value = side.value(state.target, y)
            peak = side.metric_value(float(side.tputs.max()), y) if side.tputs.size else None
            cols[side.name] = [
                y.format(value, unit=True) if status == "ok" else status.replace("_", " "),
                y.format(peak, unit=True) if peak is not None else "no data",
                side.provenance, catalog.hardware_name(run["hardware"]) if run else "",
                side.key]
            marks.append(pd.DataFrame({"run_id": side.key, "x": side.xs, "tput": side.tputs,
                                       "provenance": side.provenance}))
            source = (f"{run['source']} ({run['source_url']})" if run and run.get("source_url")
                      else str(run["source"]) if run else "")
            proof.append(Evidence(side.provenance, 1, len(side.xs), [source] if source else []))
    fields = [f"At {_target_text(state)} ({y.unit})", f"Peak ({y.unit})", "Provenance",
              "Hardware", "Run id"]
    table = Table(["Run", *cols], [[f, *(c[i] for c in cols.values())]
                                   for i, f in enumerate(fields)])
    return table, pd.concat(marks, ignore_index=True), proof, tuple(dict.fromkeys(hardware))


def _planner_brief(link: Link, db: Path, catalog: Catalog, link_text: str,
                   as_of: dt.date) -> Brief:
    from opx.answers.planner import explorer_state, plan as make_plan
    the_plan = make_plan(db, link.state, catalog)
    state = the_plan.state
    view = explore(db, explorer_state(state), catalog)   # what the plan is checked against
    headlines = []
    if not the_plan.rows.empty:
        top = the_plan.rows.iloc[0]
        by_hour = pd.notna(top.usd_per_hour)
        value = (metrics.format_money(top.usd_per_hour) + "/hour" if by_hour else
                 metrics.format_money(top.usd_per_mtok) + "/M tokens"
                 if pd.notna(top.usd_per_mtok) else "no cost")
        fleet = (f"{top.gpus:,.0f} GPUs" + (f", {top.racks:,.0f} racks" if pd.notna(top.racks)
                                            else "") + (f", {top.mw:.3g} MW" if pd.notna(top.mw)
                                                        else "")
                 if pd.notna(top.gpus) else "no demand given: cost per token only")
        headlines.append(Headline("fleet", "Cheapest system meeting the SLA", str(top.hardware),
                                  value, f"{fleet}; sized with its figure at the target, "
                                         f"{'≥ ' if top.bound else ''}"
                                         f"{metrics.format_value(top.total_per_gpu)} tok/s/GPU "
                                         f"({top.provenance}), deploying {top.configuration}",
                                  None))
    base = next((s for s in view.summaries if s.hardware == view.baseline), None)
    pairs = [(s.name, base.name, s.multiple_at_target, s.multiple_at_peak)
             for s in view.summaries if s is not base] if base else []
    headlines += _multiples(pairs, view.state, metrics.y_metric("total"))
    demand = (f"{state.sessions:,.0f} concurrent sessions" if state.sessions else
              f"{state.tps:,.0f} output tok/s" if state.tps else "no demand given")
    chart = link_view.link_chart(link, db, catalog, link_text, as_of, plan=the_plan).to_dict()
    table = (_transposed(the_plan.table(), "Hardware", drop=("Source", "Run"))
             if not the_plan.rows.empty else Table(["Hardware"], []))
    errors = simulated_errors(view)
    fleet_notes = [link_view.planner_sizing_text(the_plan, catalog)]
    fleet_notes += [f"Excluded: {hw}: {why}." for hw, why in the_plan.excluded]
    return Brief(
        page="planner",
        title=f"Fleet for {demand}, {_question(state, catalog, sla=True)}",
        subtitle=(f"Planner: each system's operating point meeting the SLA (≥ "
                  f"{_target_text(state)}" + (f", TTFT ≤ {state.ttft:g} s" if state.ttft else "")
                  + "), the GPUs, racks, power and cost it needs; ranked by cost."),
        headlines=headlines, chart=chart, table_title="Fleet plan", table=table,
        link=link_text, exported=as_of,
        fingerprint=fingerprint(view.points, view.references, the_plan.rows),
        runs=len(view.run_ids()), points=_count_points(view), evidence=evidence(view),
        simulated_errors=errors, assumptions=assumptions(view, catalog, True),
        notes=[*link.notices, *the_plan.notes, *_other_notes(view, catalog, errors)],
        fleet_notes=fleet_notes)


def _overview_brief(link: Link, db: Path, catalog: Catalog, link_text: str,
                    as_of: dt.date) -> Brief:
    """Every slice at fixed interactivities: the scores as headlines (largest first), the page's
    table, the heatmap of multiples, the evidence of every row."""
    from opx.publish import overview_export
    doc, _, chart = overview_export.export(link, db, catalog, link_text)
    state, y = link.state, metrics.y_metric(doc["metric"]["key"])
    pct = pct_label(doc["percentile"])
    at = _and([format_number(t) for t in doc["at"]])
    scored = sorted(((h, row) for row in doc["rows"] for h in row["hardware"]
                     if h["score"] is not None), key=lambda p: -p[0]["score"])
    # the largest and the smallest scores, a few each: where a system wins most and least; the
    # table holds every pair
    top, low = scored[:HEADLINE_SCORES], scored[HEADLINE_SCORES:][-HEADLINE_SCORES:][::-1]
    headlines = [Headline("score", heading, f"{h['name']} ÷ {row['baseline_name']}, "
                                            f"{row['model_name']} · {row['workload_name']}",
                          h["score_text"].split(" over ")[0], h["score_text"], h["score"])
                 for heading, pairs in (("Largest scores over the shared range", top),
                                        ("Smallest scores over the shared range", low))
                 for h, row in pairs]
    if not headlines:        # no pair shares a range: say so, with why, rather than nothing
        headlines = [Headline("score", "Scores over the shared range",
                              f"{h['name']} ÷ {row['baseline_name']}, {row['model_name']} · "
                              f"{row['workload_name']}", "no score", h["score_text"])
                     for row in doc["rows"] for h in row["hardware"]
                     if h["hardware"] != row["baseline"]][:HEADLINE_SCORES]
    words = overview_export.shown(doc, state.sort)[0]
    if not words.empty:      # the score first: the brief's narrow table shows its first columns
        words = words[[words.columns[0], "Score", *words.columns[1:-1]]]
    evidence_ = [Evidence(e["provenance"], e["runs"], e["points"], e["sources"])
                 for e in doc["evidence"]]
    rows = [{**row, "hardware": [{k: v for k, v in h.items() if k != "link"} | {
        "at": [{k: v for k, v in c.items() if k != "link"} for c in h["at"]]}
        for h in row["hardware"]]} for row in doc["rows"]]
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode())
    notes = [*link.notices, *doc["notes"], *([doc["empty_reason"]] if doc["empty_reason"] else []),
             "A figure with no range in brackets rests on one run: one measurement, not an exact "
             "value; a range is the lowest to highest of a repeat set, whose median is shown."]
    return Brief(
        page="overview",
        title=f"Overview: every model and workload at {at} tok/s/user ({pct})",
        subtitle=(f"Overview: {y.label} ({y.unit}) of each hardware at fixed interactivities, "
                  f"its multiple against the row's baseline and one score per pair; per-GPU "
                  f"figures divide by all GPUs (prefill + decode)."),
        headlines=headlines, chart=chart().to_dict(),
        table_title=f"Each slice and hardware ({pct}); figure · multiple against the baseline",
        table=Table.of(words) if not words.empty else Table(["Slice · hardware"], []),
        link=link_text, exported=as_of, fingerprint="sha256:" + digest.hexdigest()[:16],
        runs=sum(e.runs for e in evidence_), points=sum(e.points for e in evidence_),
        evidence=evidence_, assumptions=[doc["target_rule"], doc["score_rule"]], notes=notes)


def caption(link: Link, catalog: Catalog) -> str:
    """One line saying what a view's chart answers (the embed view's caption), from the link
    alone: "Vera Rubin NVL72 vs GB300 NVL72, DeepSeek-V4.1-Flash on AgentX, at 387 tok/s/user
    P90"."""
    state = link.state
    if link.page == "compare":
        who = f"{catalog.hardware_name(state.a)} vs {catalog.hardware_name(state.b)}"
        if state.ra and state.rb:
            who = f"run {state.ra[:8]} vs run {state.rb[:8]}"
    elif link.page == "planner":
        return f"Fleet plan, {_question(state, catalog, sla=True)}"
    else:
        base = state.effective_baseline()
        others = [catalog.hardware_name(h) for h in state.hw if h != base]
        who = (f"{_and(others)} vs {catalog.hardware_name(base)}" if base and others else
               _and([catalog.hardware_name(h) for h in state.hw]) or "No hardware chosen")
    return f"{who}, {_question(state, catalog)}"


# -- the parts ---------------------------------------------------------------------------------

def _target_text(state: ViewState) -> str:
    return f"{format_number(state.target)} tok/s/user {pct_label(state.pct)}"


def _question(state: ViewState, catalog: Catalog, sla: bool = False) -> str:
    text = (f"{catalog.model_name(state.model)} on {catalog.workload_name(state.workload)}, "
            f"{'≥' if sla else 'at'} {_target_text(state)}")
    y = metrics.y_metric(state.y)
    return text if sla or state.y == "total" else f"{text}, in {y.unit}"


def _subtitle(state: ViewState, y: metrics.Metric, page: str) -> str:
    where = {"explorer": "Explorer", "compare": "Compare"}[page]
    return (f"{where}: {y.label} ({y.unit}) against interactivity at {pct_label(state.pct)} "
            f"(tok/s/user); per-GPU figures divide by all GPUs (prefill + decode).")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] \
        if names else ""


def _multiples(pairs, state: ViewState, y: metrics.Metric) -> list[Headline]:
    """The multiple at the target and the one at peak of each pair, kept apart."""
    out = []
    for heading, kind, pick in (
            (f"Multiple at the target, {format_number(state.target)} tok/s/user "
             f"({pct_label(state.pct)})", "at target", 2),
            ("Multiple at peak throughput (any interactivity)", "at peak", 3)):
        for pair in pairs:
            m: Multiple = pair[pick]
            out.append(Headline(kind, heading, f"{pair[0]} ÷ {pair[1]}", m.short, m.caption(y),
                                m.value))
    return out


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    return str(value)


def _transposed(frame: pd.DataFrame, key: str, drop: tuple[str, ...] = ()) -> Table:
    """One column per system (`key`), one row per field: a few systems read across the page."""
    if frame.empty:
        return Table([key], [])
    frame = frame.drop(columns=[c for c in drop if c in frame.columns])
    names = [_cell(v) for v in frame[key]]
    rows = [[str(col)] + [_cell(v) for v in frame[col]] for col in frame.columns if col != key]
    return Table([key, *names], rows)


def _count_points(view: ExplorerView) -> int:
    return sum(len(df) for df in (view.points, view.references))


def fingerprint(*frames: pd.DataFrame) -> str:
    """A hash of the runs and points shown (run id, load level, both axes, provenance), in a
    fixed order: the same data under the same link gives the same fingerprint."""
    keys = ["run_id", "seq", "concurrency", "x", "y", "tput", "provenance", "hardware", "gpus",
            "usd_per_hour", "usd_per_mtok", "total_per_gpu"]
    digest = hashlib.sha256()
    for frame in frames:
        cols = [c for c in keys if c in frame.columns]
        rows = sorted(json.dumps([_canonical(v) for v in row], separators=(",", ":"))
                      for row in frame[cols].itertuples(index=False)) if cols else []
        digest.update(json.dumps([cols, rows], separators=(",", ":")).encode())
    return "sha256:" + digest.hexdigest()[:16]


def _canonical(value):
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return None
    if isinstance(value, (bool, str)):
        return value
    try:
        return float(f"{float(value):.12g}")
    except (TypeError, ValueError):
        return str(value)


def evidence(view: ExplorerView) -> list[Evidence]:
    """Per provenance drawn: how many runs and points, and their sources (sorted)."""
    frames = [df for df in (view.points, view.references) if not df.empty]
    if not frames:
        return []
    marks = pd.concat(frames, ignore_index=True)
    out = []
    for prov, group in sorted(marks.groupby("provenance"), key=lambda g: str(g[0])):
        out.append(Evidence(str(prov), int(group.run_id.nunique()), len(group),
                            sorted({str(s) for s in group.source_text if str(s)})))
    return out


def _other_notes(view: ExplorerView, catalog: Catalog, shown: list[str]) -> list[str]:
    """The view's notes that the brief does not give elsewhere (errors, prices and powers)."""
    prices = {e.describe(catalog.hardware_name(hw)) for hw in view.state.hw
              if (e := economics_for(catalog, view.state, hw))}
    return [n for n in view.notes if n not in shown and n not in prices]


def simulated_errors(view: ExplorerView) -> list[str]:
    """The error figures of the simulated curves shown, as the page gives them: the view's note
    on the percentile's spread and each simulation's own statement of its held-out error."""
    if view.points.empty or not view.points.simulated.any():
        return []
    sim = view.points[view.points.simulated.astype(bool)]
    out = [n for n in view.notes if n.startswith("Simulated curves")]
    out += sorted({str(n) for n in sim.notes if str(n).strip()})
    return out


_SPEC_WORDS = {"fp4_dense_pflops": "FP4 dense", "fp8_dense_pflops": "FP8 dense",
               "bf16_dense_pflops": "BF16 dense", "hbm_gb": "HBM", "hbm_tb_s": "HBM bandwidth",
               "scale_up_tb_s": "scale-up bandwidth", "nvlink_domain": "NVLink domain"}


def assumptions(view: ExplorerView, catalog: Catalog, costs_used: bool,
                runs: tuple[str, ...] = ()) -> list[str]:
    """Prices and powers (catalog, assumed, or set in the link), and the catalog figures marked
    assumed that the simulated curves shown were computed from. `runs`: the hardware of two runs
    compared (their prices and powers; no simulated curve is drawn)."""
    state = view.state
    use = ("Prices and powers behind this view's cost and power figures" if costs_used else
           "Prices and powers (not used by this metric; they apply to cost and power metrics)")
    each = []
    for hw in runs or state.hw:
        e = economics_for(catalog, state, hw)
        name = catalog.hardware_name(hw)
        each.append(e.describe(name) if e else f"{name}: no catalog price or power")
    out = [f"{use}: " + "; ".join(each)] if each else []
    simulated = set(view.points.hardware[view.points.simulated.astype(bool)]) \
        if not view.points.empty and not runs else set()
    for hw in state.hw:
        spec = catalog.hardware.get(hw)
        if spec is None or hw not in simulated:
            continue
        figures = [f"{word} {getattr(spec, key).value:g} {getattr(spec, key).unit}"
                   for key, word in _SPEC_WORDS.items()
                   if getattr(spec, key) is not None and getattr(spec, key).assumed]
        if figures:
            out.append(f"{spec.name}: catalog figures marked assumed behind its simulated curve: "
                       + ", ".join(figures) + " (docs/catalog.md)")
    model = catalog.models.get(state.model)
    if model is not None and model.assumed and simulated:
        out.append(f"{model.name}: catalog architecture figures marked assumed "
                   f"({model.source.split(';')[0]})")
    if state.price or state.power:
        out.append("Set in the link: " + ", ".join([*(f"price={p}" for p in state.price),
                                                     *(f"power={p}" for p in state.power)]))
    if state.source:
        out.append("Only runs of provenance " + ", ".join(state.source) + " (source= in the link)")
    out.append("Values at the target are interpolated monotonically along each hardware's "
               "envelope, never extrapolated; simulated figures are never mixed with data.")
    return out
