"""Marks sent to the browser per chart: the Explorer chart's Vega-Lite spec at 1k, 100k and 1M
stored points, with the frontier checked against a brute-force one.

    .venv/bin/python bench/bench_marks.py [--sizes 1000,100000,1000000] [--cache DIR] [--json FILE]

Marks are counted as the rows of every dataset in the spec (Altair puts each layer's data in the
top-level `datasets`; inline `values` count too). Each size is measured with the default view and
with every layer on (each run's curve and the non-frontier points): the figure is the larger.
The frontier check (on the view unanchored: an anchored simulated curve is a refit, not a
frontier of stored points) takes every stored point under the view's filters straight from the
points and runs tables, computes each hardware's Pareto frontier with numpy (sort by interactivity, keep a
point when its throughput beats every point at higher interactivity), and requires the envelope
the chart draws to be exactly those points.
"""
from __future__ import annotations

import sys
from pathlib import Path

import altair as alt
import numpy as np

from _common import Figure, Timer, cache_dir, emit

from models import ViewState
from opx import store
from opx.catalog import load_catalog
from opx.publish.charts import explorer_chart
from opx.answers.explorer import explore

import synthetic

MAX_MARKS = 5000


def count_marks(spec) -> int:
    """Rows of every dataset and inline `values` anywhere in a Vega-Lite spec."""
    total = 0
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "datasets" and isinstance(value, dict):
                total += sum(len(rows) for rows in value.values())
            elif key == "values" and isinstance(value, list):
                total += len(value)
            else:
                total += count_marks(value)
    elif isinstance(spec, list):
        total += sum(count_marks(v) for v in spec)
    return total


def pareto(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the frontier: no other point has both at least the interactivity and at least
    the throughput (of equal points, one is kept)."""
    order = np.lexsort((-y, -x))            # by x descending, then y descending
    ys = y[order]
    best_before = np.concatenate(([-np.inf], np.maximum.accumulate(ys)[:-1]))
    return order[ys > best_before]


def brute_force_envelopes(db: Path, state: ViewState) -> dict[tuple[str, bool], np.ndarray]:
    """(hardware, simulated) -> frontier (x, y) pairs, sorted by x, from the raw tables."""
    pct, y_col = state.pct, f"throughput_{state.y}_tok_s"
    with store.reading(db) as con:
        rows = con.execute(
            f"SELECT r.hardware, r.provenance = 'simulated', 1.0 / p.tpot_{pct}_s, "
            f"p.{y_col} / r.gpus_total FROM points p JOIN runs r ON r.id = p.run_id "
            f"WHERE r.model = ? AND r.workload = ? AND list_contains(?, r.hardware) "
            f"AND p.tpot_{pct}_s IS NOT NULL AND p.{y_col} IS NOT NULL",
            [state.model, state.workload, list(state.hw)]).fetchnumpy()
    hw, sim, x, y = (rows[k] for k in list(rows))
    hw, sim = np.asarray(hw).astype(str), np.asarray(sim).astype(bool)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    out = {}
    for key in sorted(set(zip(hw.tolist(), sim.tolist()))):
        mask = (hw == key[0]) & (sim == key[1])
        idx = pareto(x[mask], y[mask])
        pts = np.column_stack((x[mask][idx], y[mask][idx]))
        out[key] = pts[np.argsort(pts[:, 0], kind="stable")]
    return out


def drawn_envelopes(view) -> dict[tuple[str, bool], np.ndarray]:
    env = view.points[view.points.on_envelope] if not view.points.empty else view.points
    out = {}
    for (hw, sim), g in env.groupby(["hardware", "simulated"]):
        pts = np.column_stack((g.x.to_numpy(float), g.tput.to_numpy(float)))
        out[(hw, bool(sim))] = pts[np.argsort(pts[:, 0], kind="stable")]
    return out


def same_frontier(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k].shape == b[k].shape and np.allclose(a[k], b[k], rtol=1e-9, atol=0) for k in a)


def measure(db: Path, catalog) -> dict:
    out = {}
    for name, state in (("default", ViewState()), ("all layers", ViewState(runs=True, points=True))):
        with Timer() as t:
            view = explore(db, state, catalog)
            chart = explorer_chart(view, catalog, link="/")
            # Altair refuses a dataset over 5,000 rows; lift that here so an overflow is counted
            # rather than crashing the benchmark.
            with alt.data_transformers.disable_max_rows():
                spec = chart.to_dict()
        # anchored simulated curves are refitted to the data, not a frontier of stored points:
        # the frontier is checked on the same view unanchored (the curves as stored)
        as_stored = state.model_copy(update={"unanchored": True})
        drawn = drawn_envelopes(explore(db, as_stored, catalog))
        out[name] = {"marks": count_marks(spec), "seconds": t.seconds,
                     "envelope": sum(len(v) for v in drawn_envelopes(view).values()),
                     "frontier_ok": same_frontier(drawn, brute_force_envelopes(db, as_stored))}
    return out


def main(argv: list[str]) -> list[Figure]:
    sizes = ([int(s) for s in argv[argv.index("--sizes") + 1].split(",")] if "--sizes" in argv
             else [1_000, 100_000, 1_000_000])
    catalog = load_catalog()
    figures = []
    with cache_dir(argv) as cache:
        for n in sizes:
            m = measure(synthetic.cached(cache, n), catalog)
            marks = max(v["marks"] for v in m.values())
            frontier_ok = all(v["frontier_ok"] for v in m.values())
            detail = "; ".join(
                f"{k}: {v['marks']:,} marks, envelope {v['envelope']} points, frontier "
                f"{'identical to brute force' if v['frontier_ok'] else 'DIFFERS from brute force'}"
                f", {v['seconds']:.1f} s" for k, v in m.items())
            figures.append(Figure("marks", f"marks per chart at {synthetic.size_label(n)} points",
                                  marks, "marks", f"<= {MAX_MARKS:,}, frontier unchanged",
                                  marks <= MAX_MARKS and frontier_ok, detail))
    return figures


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
