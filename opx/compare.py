"""Head-to-head comparison of two sides (two hardware envelopes, or two runs): the multiple A/B
as a curve across interactivity, where each side can no longer reach, and where A leads."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models import Catalog, ViewState
from opx import metrics, queries, store
from opx.economics import Economics, economics_for
from opx.explorer import ExplorerView
from opx.frontier import pareto_mask, value_at

GRID_POINTS = 160


@dataclass(frozen=True)
class Side:
    key: str                  # hardware slug or run id
    name: str
    xs: np.ndarray            # frontier interactivity, ascending
    tputs: np.ndarray         # frontier throughput per GPU (the metric's base)
    provenance: str
    econ: Economics | None

    def value(self, x: float, metric: metrics.Metric) -> tuple[str, float | None]:
        v = value_at(self.xs, self.tputs, x)
        if v.status != "ok":
            return v.status, None
        if not metric.derived:
            return "ok", v.value
        if self.econ is None:
            return "no_data", None
        out = metric.convert(v.value, self.econ.usd_per_gpu_hour, self.econ.watts_per_gpu)
        return ("ok", float(out)) if np.isfinite(out) else ("no_data", None)


def sides_from_view(view: ExplorerView, catalog: Catalog) -> tuple[Side, Side]:
    """A and B from the hardware envelopes of a compare view (data first, else simulation)."""
    state = view.state
    out = []
    for hw in (state.a, state.b):
        summary = next(s for s in view.summaries if s.hardware == hw)
        pts = view.points
        env = pts[(pts.hardware == hw) & pts.on_envelope & (pts.simulated == summary.simulated_only)] \
            if not pts.empty else pts
        env = env.sort_values("x") if not env.empty else env
        provs = sorted(set(env.provenance)) if not env.empty else []
        out.append(Side(hw, catalog.hardware_name(hw),
                        env.x.to_numpy(dtype=float) if not env.empty else np.array([]),
                        env.tput.to_numpy(dtype=float) if not env.empty else np.array([]),
                        ", ".join(provs), economics_for(catalog, state, hw)))
    return out[0], out[1]


def side_from_run(con, run_id: str, state: ViewState, catalog: Catalog) -> Side | None:
    run, points = queries.run_detail(con, run_id)
    if run is None:
        return None
    base = metrics.y_metric(state.y).base or state.y
    x = points[f"interactivity_{state.pct}"].to_numpy(dtype=float)
    y = points[f"throughput_{base}_per_gpu"].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size:
        keep = pareto_mask(x, y)
        order = np.argsort(x[keep])
        x, y = x[keep][order], y[keep][order]
    name = run.get("label") or f"{catalog.hardware_name(run['hardware'])} run {run_id[:8]}"
    return Side(run_id, name, x, y, run["provenance"], economics_for(catalog, state, run["hardware"]))


def sides_from_runs(db, state: ViewState, catalog: Catalog, run_a: str, run_b: str):
    with store.reading(db) as con:
        return side_from_run(con, run_a, state, catalog), side_from_run(con, run_b, state, catalog)


def multiple_curve(a: Side, b: Side, metric: metrics.Metric, n: int = GRID_POINTS) -> pd.DataFrame:
    """A(x), B(x) and A/B on a log grid over both sides' interactivity; `status` says why a
    multiple is missing (`B cannot reach`, `A cannot reach`, `below measured range`)."""
    xs = np.concatenate([a.xs, b.xs])
    if xs.size == 0:
        return pd.DataFrame(columns=["x", "a", "b", "multiple", "status"])
    grid = np.unique(np.concatenate([np.geomspace(xs.min(), xs.max(), n), xs]))
    rows = []
    for x in grid:
        sa, va = a.value(x, metric)
        sb, vb = b.value(x, metric)
        if sa == "ok" and sb == "ok" and vb:
            status, mult = "both", va / vb
        elif sa == "ok" and sb == "not_reachable":
            status, mult = f"{b.name} cannot reach", None
        elif sb == "ok" and sa == "not_reachable":
            status, mult = f"{a.name} cannot reach", None
        elif "below_range" in (sa, sb):
            status, mult = "below measured range", None
        else:
            status, mult = "no data", None
        rows.append({"x": float(x), "a": va, "b": vb, "multiple": mult, "status": status})
    return pd.DataFrame(rows)


def lead_summary(curve: pd.DataFrame, a: Side, b: Side, metric: metrics.Metric) -> str:
    """Where A is better than B (by the metric's direction), in words."""
    if curve.empty:
        return "no interactivity where both have data"
    both = curve[curve.status == "both"]
    better = both[[metric.better(x, y) for x, y in zip(both.a, both.b)]] if not both.empty else both
    parts = []
    if not better.empty:
        parts.append(f"{a.name} leads from {better.x.min():.4g} to {better.x.max():.4g} tok/s/user"
                     + ("" if len(better) == len(both) else " (not everywhere in between)"))
    elif not both.empty:
        parts.append(f"{a.name} does not lead where both have data "
                     f"({both.x.min():.4g} to {both.x.max():.4g} tok/s/user)")
    only_a = curve[curve.status == f"{b.name} cannot reach"]
    if not only_a.empty:
        parts.append(f"above {only_a.x.min():.4g} tok/s/user only {a.name} reaches (up to "
                     f"{only_a.x.max():.4g})")
    only_b = curve[curve.status == f"{a.name} cannot reach"]
    if not only_b.empty:
        parts.append(f"above {only_b.x.min():.4g} tok/s/user only {b.name} reaches")
    return "; ".join(parts) if parts else "no interactivity where both have data"
