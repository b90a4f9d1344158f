"""Head-to-head comparison of two sides (two hardware envelopes, or two runs): the multiple A/B
as a curve across interactivity, where each side can no longer reach, and where A leads."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models import Catalog, ViewState
from opx import store
from opx.curves import metrics
from opx.store import queries
from opx.curves.economics import Economics, economics_for
from opx.answers.explorer import ExplorerView
from opx.curves.frontier import SNAP, Figure, Multiple, ValueAt, pareto_mask, values_at

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
        return self.values([x], metric)[0]

    def values(self, xs, metric: metrics.Metric) -> list[tuple[str, float | None]]:
        """(status, value in the metric) at each of `xs`: `value` at many interactivities."""
        return [self._in_metric(v, metric) for v in values_at(self.xs, self.tputs, xs)]

    def _in_metric(self, v: ValueAt, metric: metrics.Metric) -> tuple[str, float | None]:
        if v.status != "ok":
            return v.status, None
        out = self.metric_value(v.value, metric)
        return ("ok", out) if out is not None else ("no_data", None)

    def metric_value(self, tput: float, metric: metrics.Metric) -> float | None:
        """A throughput per GPU of this side in the chosen metric (None without price or power)."""
        if not metric.derived:
            return tput
        if self.econ is None:
            return None
        out = metric.convert(tput, self.econ.usd_per_gpu_hour, self.econ.watts_per_gpu)
        return float(out) if np.isfinite(out) else None


def sides_from_view(view: ExplorerView, catalog: Catalog) -> tuple[Side, Side]:
    """A and B for the multiple across interactivity, like with like: both data envelopes when
    they overlap over a span of interactivity, else both simulated envelopes when they overlap,
    else the data envelopes meeting at one interactivity; failing all of these, each side's data
    envelope, else its simulated one (a mixed pair, which `curve_basis` names). A simulated side's
    name says "(simulated)", so the curve, its bands and the lead sentence say which kind they
    divide."""
    state = view.state
    envs = {(hw, sim): _envelope(view.points, hw, sim) for hw in (state.a, state.b)
            for sim in (False, True)}
    spans = {sim: _overlap(envs[(state.a, sim)], envs[(state.b, sim)]) for sim in (False, True)}
    if spans[False] is not None and spans[False] > 0:
        choice = {state.a: False, state.b: False}
    elif spans[True] is not None:
        choice = {state.a: True, state.b: True}
    elif spans[False] is not None:
        choice = {state.a: False, state.b: False}
    else:
        choice = {hw: envs[(hw, False)].empty and not envs[(hw, True)].empty
                  for hw in (state.a, state.b)}
    out = []
    for hw in (state.a, state.b):
        env = envs[(hw, choice[hw])]
        name = catalog.hardware_name(hw) + (" (simulated)" if choice[hw] else "")
        out.append(Side(hw, name, env.x.to_numpy(dtype=float), env.tput.to_numpy(dtype=float),
                        ", ".join(sorted(set(env.provenance))), economics_for(catalog, state, hw)))
    return out[0], out[1]


def _envelope(pts: pd.DataFrame, hw: str, simulated: bool) -> pd.DataFrame:
    if pts.empty:
        return pd.DataFrame({"x": [], "tput": [], "provenance": []})
    return pts[(pts.hardware == hw) & pts.on_envelope & (pts.simulated == simulated)].sort_values("x")


def _overlap(a: pd.DataFrame, b: pd.DataFrame) -> float | None:
    """How far (in log interactivity) two envelopes overlap; 0 when they meet at one point, None
    when they do not meet."""
    if a.empty or b.empty:
        return None
    lo, hi = max(a.x.min(), b.x.min()), min(a.x.max(), b.x.max())
    if hi < lo * (1 - SNAP):
        return None
    return max(float(np.log(hi / lo)), 0.0)


def curve_basis(a: Side, b: Side) -> str:
    """What the multiple curve divides: "preview vs derived", "simulated vs simulated" or
    "mixed: simulated vs measured"."""
    if not a.provenance or not b.provenance:
        return ""
    return Multiple(1.0, a=Figure(1.0, a.provenance), b=Figure(1.0, b.provenance)).basis


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


def sides_for(db, view: ExplorerView, catalog: Catalog) -> tuple[Side, Side, bool]:
    """A and B as Compare shows them: the link's two runs (`ra`, `rb`) when both still exist,
    else the two hardware envelopes (a deleted run falls back to the hardware); the flag says
    whether runs are compared."""
    state = view.state
    if state.ra and state.rb:
        a, b = sides_from_runs(db, state, catalog, state.ra, state.rb)
        if a is not None and b is not None:
            return a, b, True
    a, b = sides_from_view(view, catalog)
    return a, b, False


def headline_multiples(view: ExplorerView, a: Side, b: Side, runs: bool
                       ) -> tuple[Multiple, Multiple]:
    """The multiples Compare shows at the top: the two runs' own (`run_multiples`), else the
    Explorer's of A over B (`hardware_multiples`), so the page, the JSON and the brief agree."""
    if runs:
        return run_multiples(a, b, view.state.target, metrics.y_metric(view.state.y),
                             view.state.pct)
    return hardware_multiples(view)


def multiple_curve(a: Side, b: Side, metric: metrics.Metric, n: int = GRID_POINTS) -> pd.DataFrame:
    """A(x), B(x) and A/B on a log grid over both sides' interactivity; `status` says why a
    multiple is missing (`B cannot reach`, `A cannot reach`, `below the range of B`)."""
    xs = np.concatenate([a.xs, b.xs])
    if xs.size == 0:
        return pd.DataFrame(columns=["x", "a", "b", "multiple", "status"])
    grid = np.unique(np.concatenate([np.geomspace(xs.min(), xs.max(), n), xs]))
    rows = []
    for x, (sa, va), (sb, vb) in zip(grid, a.values(grid, metric), b.values(grid, metric)):
        if sa == "ok" and sb == "ok" and vb:
            status, mult = "both", va / vb
        elif sa == "ok" and sb == "not_reachable":
            status, mult = f"{b.name} cannot reach", None
        elif sb == "ok" and sa == "not_reachable":
            status, mult = f"{a.name} cannot reach", None
        elif "below_range" in (sa, sb):
            # named by side: a simulated side's range is not a measured one
            lower = b if sb == "below_range" else a
            status, mult = f"below the range of {lower.name}", None
        else:
            status, mult = "no data", None
        rows.append({"x": float(x), "a": va, "b": vb, "multiple": mult, "status": status})
    return pd.DataFrame(rows)


def lead_summary(curve: pd.DataFrame, a: Side, b: Side, metric: metrics.Metric) -> str:
    """Where A is better than B (by the metric's direction), in words."""
    fmt = metrics.format_interactivity
    if curve.empty:
        return "no interactivity where both have data"
    both = curve[curve.status == "both"]
    better = both[[metric.better(x, y) for x, y in zip(both.a, both.b)]] if not both.empty else both
    parts = []
    if not both.empty and both.x.min() == both.x.max():
        # one interactivity in common: no span to speak of
        x = f"{fmt(both.x.iloc[0])} tok/s/user"
        parts.append(f"{a.name} leads at {x}, the one interactivity where both have figures"
                     if not better.empty else
                     f"{a.name} does not lead at {x}, the one interactivity where both have figures")
    elif not better.empty:
        parts.append(f"{a.name} leads from {fmt(better.x.min())} to {fmt(better.x.max())} "
                     "tok/s/user"
                     + ("" if len(better) == len(both) else " (not everywhere in between)"))
    elif not both.empty:
        parts.append(f"{a.name} does not lead where both have data "
                     f"({fmt(both.x.min())} to {fmt(both.x.max())} tok/s/user)")
    for side, other in ((a, b), (b, a)):
        alone = curve[curve.status == f"{other.name} cannot reach"]
        if alone.empty:
            continue
        # where the other side's curve ends, not the next sample of the grid the multiple is
        # drawn on, so no gap appears between "leads" and "only ... reaches"
        edge = both.x.max() if not both.empty and both.x.max() < alone.x.min() else alone.x.min()
        parts.append(f"above {fmt(edge)} tok/s/user, where {other.name}'s curve ends, only "
                     f"{side.name} reaches"
                     + (f" (up to {fmt(alone.x.max())})" if side is a else ""))
    return "; ".join(parts) if parts else "no interactivity where both have data"


def run_answer(side: Side, target: float, metric: metrics.Metric, pct: str = "p50"):
    """A run's figure at the target by the same resolver as a hardware's (`opx.answers.resolve`): its
    own frontier as the envelope, of the run's kind."""
    from opx.answers import resolve
    simulated = side.provenance == "simulated"
    pts = pd.DataFrame({"hardware": side.key, "simulated": simulated, "on_envelope": True,
                        "x": side.xs, "tput": side.tputs,
                        "y": [side.metric_value(float(t), metric) for t in side.tputs],
                        "run_id": side.key, "label": side.name, "provenance": side.provenance,
                        "gpus_total": 0})
    inputs = resolve.Inputs(pts, pd.DataFrame(),
                            convert=lambda t: side.metric_value(float(t), metric))
    return (resolve.resolve(inputs, side.key, side.name, target, pct, metric),
            resolve.peak_of(inputs, side.key) if side.tputs.size else resolve.Peak(None))


def run_multiples(a: Side, b: Side, target: float, metric: metrics.Metric, pct: str = "p50"
                  ) -> tuple[Multiple, Multiple]:
    """Two runs head to head: the multiple at the target and at peak (each run's highest
    throughput on its frontier), each saying what kinds it divides, as for two hardware."""
    from opx.answers import resolve
    (at_a, peak_a), (at_b, peak_b) = (run_answer(a, target, metric, pct),
                                      run_answer(b, target, metric, pct))
    return (resolve.multiple_at_target(at_a, at_b, target, metric),
            resolve.multiple_at_peak(peak_a, peak_b, a.name, b.name, metric))


def hardware_multiples(view: ExplorerView) -> tuple[Multiple, Multiple]:
    """The Explorer's multiples of A over B (B is the baseline of a compare view), so both pages
    and the export give the same figures."""
    state = view.state
    if state.a == state.b:
        same = Multiple(None, "A and B are the same hardware")
        return same, same
    a = next(s for s in view.summaries if s.hardware == state.a)
    return a.multiple_at_target, a.multiple_at_peak


def curve_note(a: Side, b: Side, at_target: Multiple) -> str:
    """What the multiple curve divides, and when that differs from the multiple at the target."""
    basis = curve_basis(a, b)
    if not basis:
        return ""
    text = f"The curve divides {basis} figures"
    if at_target.kind and at_target.basis != basis:
        text += f"; the multiple at the target divides {at_target.basis} figures"
    return text + "."
