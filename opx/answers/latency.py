"""Latency against concurrency for a few runs, the operating point at a chosen concurrency (with
how far it sits from its hardware's envelope), and runs that differ only by a KV-cache pool.

A model and workload can have hundreds of runs; the page draws a few. By default it draws, per
hardware, the run(s) behind its figure at the target (`opx.answers.resolve`, the figure every page shows:
`LatencyView.answers`); the user can pick others (`state.run`). Everything below the run picker (charts, operating points, tables) is about
the runs drawn, and says so when a figure is missing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models import Catalog, ViewState, pct_label
from models.view import format_number
from opx import store
from opx.curves import metrics
from opx.store import queries
from opx.answers.explorer import ExplorerView, explore
from opx.answers.run_labels import deployment_label
from opx.store.queries import filters_for
from opx.curves.frontier import SIMULATED, value_at
from opx.answers.resolve import own_label

MAX_RUNS = 12             # runs drawn at most: a legend a reader can follow
MAX_POINTS = 200_000      # latency points read at most (every run of a model and workload)

# The chart's panels: column, short name, long name, unit, factor from seconds.
PANELS = (("ttft_s", "TTFT", "Time to first token", "s", 1.0),
          ("tpot_s", "TPOT", "Time per output token", "ms", 1000.0),
          ("e2e_s", "E2E", "End-to-end latency", "s", 1.0))


@dataclass
class LatencyView:
    state: ViewState
    runs: pd.DataFrame              # every run with latencies under the filters, one row each
    shown: tuple[str, ...]          # the run ids drawn, in legend order
    points: pd.DataFrame            # the drawn runs' points: concurrency, ttft_s, tpot_s, e2e_s, ...
    operating: pd.DataFrame         # one row per drawn run at the chosen concurrency
    kv_pool: pd.DataFrame           # runs with and without a KV-cache pool, side by side
    notes: list[str] = field(default_factory=list)
    picked: bool = False            # the drawn runs are the user's (`run`), not the default
    answers: list = field(default_factory=list)   # opx.answers.explorer.HardwareSummary per hardware
    kv_pool_hint: str = ""          # where a KV-cache pool comparison is, when not at this statistic

    def missing_panels(self) -> list[str]:
        return missing_panels(self.points, self.state.pct)


def own_runs(picked, runs: pd.DataFrame) -> tuple[str, ...]:
    """The picked run ids that are among `runs` (a view's runs), in the order picked, at most
    MAX_RUNS (a legend a reader can follow)."""
    ids = set(runs.get("run_id", ()))
    return tuple(r for r in picked if r in ids)[:MAX_RUNS]


def dropped_runs_notes(asked, runs: pd.DataFrame, pct: str) -> list[str]:
    """What a link's picks (`run`) lose against the view's runs: runs not of it, picks beyond
    MAX_RUNS; said once, when the link is opened."""
    ids = set(runs.get("run_id", ()))
    own = [r for r in asked if r in ids]
    notes = []
    if len(asked) > len(own):
        notes.append(f"{len(asked) - len(own)} run(s) in the link are not runs of these "
                     f"hardware, model and workload with latencies at {pct_label(pct)}; they "
                     "are left out.")
    if len(own) > MAX_RUNS:
        notes.append(f"{len(own)} runs picked: the first {MAX_RUNS} are drawn.")
    return notes


def behind_answers(view: ExplorerView) -> dict[str, str]:
    """{run_id: why}: the runs behind each hardware's figure at the target."""
    out: dict[str, str] = {}
    for s in view.summaries:
        a = s.answer
        word = {"point": "the figure at the target is its point",
                "interpolated": "the figure at the target interpolates its point",
                "at_least": "its point meets the target (an at-least figure)",
                "stricter": "its point meets the target at a stricter statistic"}.get(a.how, "")
        for c in a.configs:
            out.setdefault(c.run_id, word + (" (projection)" if a.kind == SIMULATED else ""))
    return out


def latency(db: Path, state: ViewState, catalog: Catalog) -> LatencyView:
    f = filters_for(state.model_copy(update={"y": "total"}))
    view = explore(db, state.model_copy(update={"runs": False, "points": False, "conc": None}),
                   catalog)
    with store.reading(db) as con:
        pts = queries.latency_points(con, f, None, max_rows=MAX_POINTS)
        facts = queries.run_facts(con, sorted(set(pts.run_id))) if not pts.empty else pd.DataFrame()
        kv_at = queries.kv_pool_percentiles(con, f)
        elsewhere = ([p for p in queries.latency_percentiles(con, f) if p != state.pct]
                     if pts.empty else [])
    notes: list[str] = []
    empty = pd.DataFrame()
    filtered = bool(state.run_filter_text() or state.source)
    if pts.empty:
        fix = (f"switch to {' or '.join(pct_label(p) for p in elsewhere)}, at which they do"
               if elsewhere else "clear a filter" if filtered else
               "choose other hardware, model or workload (the Data page lists what is stored)")
        notes.append("No run of these hardware, model and workload has latencies with a "
                     f"concurrency at {pct_label(state.pct)}"
                     + (" under these filters" if filtered else "") + f": {fix}.")
        return LatencyView(state, empty, (), pts, empty, empty, notes, answers=view.summaries)
    pts = pts.copy()
    absent = [catalog.hardware_name(h) for h in state.hw if h not in set(pts.hardware)]
    if absent:
        notes.append(f"{', '.join(absent)}: no run reports latencies with a concurrency at "
                     f"{pct_label(state.pct)}" + (" under these filters." if filtered else "."))
    pts["hardware_name"] = [catalog.hardware_name(h) for h in pts.hardware]
    pts["simulated"] = pts.provenance.eq("simulated")
    behind = behind_answers(view)
    for s in view.summaries:
        mine = pts[pts.hardware == s.hardware]
        if not mine.empty and not set(mine.run_id) & set(behind):
            # no figure at the target (or its runs report no latencies): the run with the most
            # points, data first, so the page still shows the hardware's latencies
            kind = mine[~mine.simulated] if (~mine.simulated).any() else mine
            run = kind.groupby("run_id", sort=False).size().idxmax()
            behind[run] = ("most points; " + (s.answer.reason if not s.answer.ok else
                                              "the run behind its figure reports no latencies"))
    runs = _runs(pts, facts, catalog, behind)
    without = [s.name for s in view.summaries if s.answer.ok
               and not {c.run_id for c in s.answer.configs} & set(runs.run_id)]
    if without:
        notes.append(f"{', '.join(without)}: the run behind the figure at the target reports no "
                     "latencies with a concurrency, so its latencies cannot be drawn (the figure "
                     "stands); the run with the most points is drawn instead.")

    picked = list(own_runs(state.run, runs))
    if picked:
        shown = picked[:MAX_RUNS]
    else:
        shown = list(runs.run_id[runs.why != ""])[:MAX_RUNS]
    runs["shown"] = runs.run_id.isin(shown)
    if picked:
        runs["why"] = np.where(runs.shown, "picked", "")
    names = legend_names(runs[runs.shown])
    runs["name"] = runs.run_id.map(names).fillna("")
    order = {r: i for i, r in enumerate(_legend_order(runs[runs.shown], catalog))}
    shown_t = tuple(sorted(shown, key=order.__getitem__))

    drawn = pts[pts.run_id.isin(shown)].copy()
    drawn["run_name"] = drawn.run_id.map(names)
    drawn["order"] = drawn.run_id.map(order)
    drawn = drawn.sort_values(["order", "concurrency"]).reset_index(drop=True)

    operating = pd.DataFrame()
    if state.conc:
        total = explore(db, state.model_copy(update={"y": "total", "runs": False,
                                                     "points": False}), catalog)
        operating = operating_points(drawn, state.conc, total)
    pts["run_name"] = pts.run_id.map(dict(zip(runs.run_id, [
        lbl or d for lbl, d in zip(runs.label, runs.description)])))
    kv = kv_pool_pairs(pts)
    hint = ""
    if kv.empty and kv_at and state.pct not in kv_at:
        hint = ("Runs with and without a KV-cache pool report their TTFT at "
                + " and ".join(pct_label(p) for p in kv_at) + f", not at {pct_label(state.pct)}: "
                f"choose {pct_label(kv_at[0])} to compare them.")
    return LatencyView(state, runs, shown_t, drawn, operating, kv, notes,
                       picked=bool(picked), answers=view.summaries, kv_pool_hint=hint)


def _text(v) -> str:
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA \
        or v is pd.NaT else str(v)


def _runs(pts: pd.DataFrame, facts: pd.DataFrame, catalog: Catalog,
          behind: dict[str, str]) -> pd.DataFrame:
    """One row per run: its configuration in words, a unique description for the run picker, and
    why it is drawn by default (`why`, empty when it is not)."""
    first = pts.groupby("run_id", sort=False).agg(
        hardware=("hardware", "first"), hardware_name=("hardware_name", "first"),
        provenance=("provenance", "first"), simulated=("simulated", "first"),
        framework=("framework", "first"), precision=("precision", "first"),
        label=("label", "first"), source=("source", "first"), points=("seq", "size")).reset_index()
    first = first.merge(facts.drop(columns=["gpus_total", "framework", "precision"]), on="run_id",
                        how="left")
    gpus = pts.groupby("run_id", sort=False).gpus_total.first()
    first["gpus_total"] = first.run_id.map(gpus)
    first["deployment"] = [deployment_label(r) for r in first.itertuples()]
    first["date"] = [_text(d)[:10] for d in first.date]
    for col in ("framework", "precision", "label", "source"):
        first[col] = [_text(v) for v in first[col]]
    first["label"] = [own_label(lbl, hw) for lbl, hw in zip(first.label, first.hardware_name)]
    first["description"] = _unique([
        " · ".join(p for p in (r.hardware_name, f"{r.framework} {r.precision}".strip(),
                               r.deployment, r.date, r.provenance, r.label) if p)
        for r in first.itertuples()], list(first.run_id))
    first["why"] = first.run_id.map(behind).fillna("")
    return first


def _unique(names: list[str], ids: list[str]) -> list[str]:
    """Names made distinct with the run id's first characters where two are the same."""
    seen = pd.Series(names).duplicated(keep=False)
    return [f"{n} · {i[:8]}" if dup else n for n, i, dup in zip(names, ids, seen)]


LABEL_FIELDS = ("provenance", "framework", "precision", "deployment", "date")


def legend_names(runs: pd.DataFrame) -> dict[str, str]:
    """Legend names for the runs drawn: the hardware, then the parts of the configuration that
    differ between the drawn runs of that hardware (a run's own label only where they do not tell
    the runs apart, then the run id)."""
    names: dict[str, str] = {}
    for _, group in runs.groupby("hardware_name", sort=False):
        fields = [f for f in LABEL_FIELDS if group[f].nunique() > 1]
        parts = {r: [group.at[i, f] for f in fields if group.at[i, f]]
                 for i, r in zip(group.index, group.run_id)}
        texts = {r: " ".join(p) for r, p in parts.items()}
        if len(set(texts.values())) < len(texts):
            for i, r in zip(group.index, group.run_id):
                if group.label.nunique() > 1 and group.at[i, "label"]:
                    parts[r].append(group.at[i, "label"])
        for i, r in zip(group.index, group.run_id):
            text = " ".join(parts[r])
            names[r] = f"{group.at[i, 'hardware_name']} · {text}" if text else group.at[i, "hardware_name"]
    ids = list(names)
    return dict(zip(ids, _unique([names[r] for r in ids], ids)))


def _legend_order(runs: pd.DataFrame, catalog: Catalog) -> list[str]:
    """Catalog order of hardware, then by name."""
    rank = {h: i for i, h in enumerate(catalog.hardware)}
    keyed = sorted(zip(runs.hardware, runs.name, runs.run_id),
                   key=lambda t: (rank.get(t[0], len(rank)), t[0], t[1]))
    return [r for _, _, r in keyed]


def missing_panels(points: pd.DataFrame, pct: str) -> list[str]:
    """A sentence for each panel no drawn run can fill (the chart leaves those panels out)."""
    if points.empty:
        return []
    return [f"No run shown reports {_phrase(short, long)} at {pct_label(pct)}: that panel is left out."
            for column, short, long, _, _ in PANELS
            if not (points[column].notna() & points[column].gt(0)).any()]


def missing_by_run(points: pd.DataFrame, pct: str) -> list[str]:
    """A sentence for each drawn run missing from a panel that other runs fill."""
    if points.empty:
        return []
    drawn = [(c, _phrase(s, lg)) for c, s, lg, _, _ in PANELS
             if (points[c].notna() & points[c].gt(0)).any()]
    out = []
    for name, group in points.groupby("run_name", sort=False):
        lacking = [phrase for c, phrase in drawn if not (group[c].notna() & group[c].gt(0)).any()]
        if lacking:
            out.append(f"{name} reports no {' or '.join(lacking)} at {pct_label(pct)}.")
    return out


def _phrase(short: str, long: str) -> str:
    return short if short in ("TTFT", "TPOT") else long.lower()


def operating_points(pts: pd.DataFrame, conc: float, view: ExplorerView) -> pd.DataFrame:
    """Each drawn run's point nearest the chosen concurrency, and its throughput as a share of
    its hardware's envelope of the same kind (data or simulated) at the same interactivity."""
    rows = []
    env = (view.points[view.points.on_envelope] if not view.points.empty else view.points)
    for run_id, group in pts.groupby("run_id", sort=False):
        nearest = group.iloc[int(np.argmin(np.abs(np.log(group.concurrency / conc))))]
        share = None
        hw_env = (env[(env.hardware == nearest.hardware) & (env.simulated == nearest.simulated)]
                  if not env.empty else env)
        if not hw_env.empty and pd.notna(nearest.interactivity) and pd.notna(nearest.tput):
            frontier = value_at(hw_env.x.to_numpy(float), hw_env.tput.to_numpy(float),
                                float(nearest.interactivity))
            if frontier.status == "ok" and frontier.value:
                share = float(nearest.tput) / frontier.value
        rows.append({"run": nearest.run_name, "hardware": nearest.hardware_name,
                     "concurrency": nearest.concurrency,
                     "exact": bool(np.isclose(nearest.concurrency, conc)),
                     "interactivity": nearest.interactivity, "tput_per_gpu": nearest.tput,
                     "ttft_s": nearest.ttft_s, "tpot_s": nearest.tpot_s, "e2e_s": nearest.e2e_s,
                     "gpus": nearest.gpus_total, "share_of_frontier": share,
                     "provenance": nearest.provenance})
    return pd.DataFrame(rows)


def kv_pool_pairs(pts: pd.DataFrame) -> pd.DataFrame:
    """Runs that say whether they used a KV-cache pool (run metadata `kv_pool`), grouped by
    hardware and concurrency so the with/without pair reads side by side."""
    rows = []
    with_pool = pts[pts.meta.str.contains('"kv_pool"', regex=False, na=False)]
    for r in with_pool.itertuples():
        meta = json.loads(r.meta) if isinstance(r.meta, str) and r.meta else {}
        if "kv_pool" not in meta:
            continue
        rows.append({"hardware": r.hardware_name, "concurrency": r.concurrency,
                     "kv_pool": meta["kv_pool"], "ttft_s": r.ttft_s, "tpot_s": r.tpot_s,
                     "requests_served": meta.get("requests_served_vs_no_pool", ""),
                     "run": r.run_name, "provenance": r.provenance, "source": r.source})
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    counts = df.groupby(["hardware", "concurrency"]).kv_pool.transform("nunique")
    return df[counts > 1].sort_values(["hardware", "concurrency", "kv_pool"]).reset_index(drop=True)


# -- tables as shown: labelled columns with units, formatted text, a dash for a missing figure --

def _fmt(v, factor: float = 1.0) -> str:
    return metrics.format_value(None if v is None or pd.isna(v) else float(v) * factor)


def _conc(v) -> str:
    return "–" if v is None or pd.isna(v) else f"{float(v):,.0f}"


def answers_table(view: LatencyView) -> pd.DataFrame:
    """Each hardware's figure at the target (the resolver's, as on every page) and the point
    behind it: its configuration, concurrency, TTFT and TPOT there."""
    y = metrics.y_metric(view.state.y)
    rows = []
    for s in view.answers:
        a = s.answer
        c = a.meeting
        rows.append({
            "Hardware": s.name,
            f"At {format_number(view.state.target)} tok/s/user ({y.unit})": a.cell(y),
            "How": a.how_text(view.state.target),
            "Concurrency": _conc(c.concurrency) if c else "–",
            "TTFT (s)": _fmt(c.ttft_s) if c else "–",
            "TPOT (ms)": _fmt(1000.0 / c.x) if c else "–",
            "Run id": ", ".join(x.run_id for x in a.configs) or "–"})
    return pd.DataFrame(rows)


def runs_table(view: LatencyView) -> pd.DataFrame:
    """The drawn runs' configurations, keyed by their legend names."""
    runs = view.runs.set_index("run_id").loc[list(view.shown)] if view.shown else view.runs
    return pd.DataFrame({
        "Run": runs.name, "Framework": runs.framework.replace("", "–"), "Precision": runs.precision.replace("", "–"),
        "Deployment": runs.deployment.replace("", "–"), "Date": runs.date.replace("", "–"),
        "Provenance": runs.provenance, "Points": runs.points.astype(int),
        "Why shown": runs.why.replace("", "–"), "Run id": runs.index,
        "Source": runs.source.replace("", "–")}).reset_index(drop=True)


def operating_table(op: pd.DataFrame, pct: str, conc: float) -> pd.DataFrame:
    p = pct_label(pct)
    return pd.DataFrame({
        "Run": op.run, "Concurrency": [_conc(c) if exact else f"{_conc(c)} (nearest to {_conc(conc)})"
                        for c, exact in zip(op.concurrency, op.exact)],
        f"Interactivity {p} (tok/s/user)": [_fmt(v) for v in op.interactivity],
        "Throughput (tok/s/GPU, total)": [_fmt(v) for v in op.tput_per_gpu],
        f"TTFT {p} (s)": [_fmt(v) for v in op.ttft_s],
        f"TPOT {p} (ms)": [_fmt(v, 1000) for v in op.tpot_s],
        f"E2E {p} (s)": [_fmt(v) for v in op.e2e_s],
        "GPUs": [_conc(v) for v in op.gpus],
        "Share of envelope": [f"{v:.0%}" if v is not None and v == v else "–"
                              for v in op.share_of_frontier],
        "Provenance": op.provenance})


def kv_pool_table(kv: pd.DataFrame, pct: str) -> pd.DataFrame:
    p = pct_label(pct)
    return pd.DataFrame({
        "Hardware": kv.hardware, "Concurrency": [_conc(c) for c in kv.concurrency],
        "KV-cache pool": kv.kv_pool, f"TTFT {p} (s)": [_fmt(v) for v in kv.ttft_s],
        f"TPOT {p} (ms)": [_fmt(v, 1000) for v in kv.tpot_s],
        "Requests served (vs no pool)": [_text(v) or "–" for v in kv.requests_served],
        "Run": kv.run, "Provenance": kv.provenance,
        "Source": [_text(v) or "–" for v in kv.source]})
