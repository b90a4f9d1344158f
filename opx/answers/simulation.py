"""What the Simulate page shows for its state, computed from the catalog and the store; no
Streamlit. The page and `python -m opx export '/simulate?...'` both call `simulate_view`.

A Simulate address that says nothing of its own starts from the session's view
(`session_start`): its hardware, model, workload, statistic and target, the knobs the built-in
simulated curve of that system was made with, and the runs the Explorer anchors it to, so the
page's curve is the Explorer's until the user changes a knob.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from models import Catalog, ViewState
from models.simulate_view import SimulateState
from opx.answers import anchoring
from opx.curves import metrics
from opx.answers.explorer import ExplorerView, explore
from opx.links import simulate_question
from opx.answers.resolve import Inputs, projection as project

DATA_SOURCES = ("measured", "published", "preview", "derived", "interpolated")


@dataclass
class SimulateView:
    state: SimulateState
    result: object                    # opx.simulate.api.SimResult
    fit: object | None                # opx.simulate.anchor.AnchorFit when anchored
    measured: ExplorerView            # the hardware's data, drawn under the curve
    view: ExplorerView                # the session's question for this hardware (its answer)
    projection: object                # opx.answers.resolve.Answer of the projection alone at the target
    notes: list[str] = field(default_factory=list)

    def title(self, catalog: Catalog) -> str:
        r = self.result
        return (f"Simulated: {catalog.hardware_name(r.hardware)}, {catalog.model_name(r.model)}, "
                f"{catalog.workload_name(r.workload)}")

    def held_out_error(self) -> str | None:
        """The curve's held-out error when it is large enough to sit beside it."""
        from opx.simulate.held_out import beside_curve
        anchored = bool(self.fit is not None and self.fit.anchored)
        err = beside_curve(self.result.hardware, self.result.model, anchored)
        return err.label if err else None



def error_beside_floor(db: Path) -> str:
    """The model's held-out TTFT and TPOT error (leave one system out) beside the spread of the
    repeat sets in this database: the floor no model of one figure per configuration goes under
    (docs/simulator.md, "The floor: repeated runs")."""
    from opx import store
    from opx.simulate.api import load_calibration
    from opx.store import repeats
    overall = ((load_calibration() or {}).get("validation") or {}).get("overall") or {}
    with store.reading(db) as con:
        summary = repeats.stored_spread(con, store.data_version(con))
    model = (f"Held-out error of the model (median, each system left out of the calibration in "
             f"turn): TTFT {overall['ttft_mdape']:.1f}%, TPOT {overall['tpot_mdape']:.1f}%."
             if overall.get("ttft_mdape") is not None and overall.get("tpot_mdape") is not None
             else "No held-out validation of the model is on record (python -m opx simulate "
                  "--validate).")
    return f"{model} Repeated runs in this database: {repeats.spread_text(summary)}."


def simulate_view(db: Path, s: SimulateState, catalog: Catalog) -> SimulateView:
    """The simulation (anchored to `s.anchor` when given), the data under it, and the figure at
    the target: the resolver's for the hardware, and the projection's alone."""
    from opx.simulate import api
    notes: list[str] = []
    fit = None
    if s.anchor:
        fit, left_out = anchoring.simulate_anchored(db, s, catalog)
        notes += left_out
        result = fit.result
    else:
        result = api.simulate(s.hw, s.model, s.workload, s.gpus or None, anchoring.knobs_of(s),
                              catalog)
    measured = explore(db, ViewState(model=result.model, workload=result.workload,
                                     hw=(result.hardware,), pct=s.pct, points=True,
                                     source=DATA_SOURCES), catalog)
    view = explore(db, simulate_question(s), catalog)
    rows = anchoring.envelope_rows(fit, result, s.pct, "total")
    name = catalog.hardware_name(s.hw)
    projection = project(Inputs(rows, pd.DataFrame()), s.hw, name, s.target, s.pct,
                         metrics.y_metric("total"))
    return SimulateView(s, result, fit, measured, view, projection, notes)


def session_start(db: Path, view: ViewState, catalog: Catalog) -> SimulateState:
    """The Simulate state a session's view opens on (module doc)."""
    hw = next((h for h in view.hw if h in catalog.hardware), SimulateState().hw)
    base = SimulateState(hw=hw, model=view.model, workload=view.workload,
                         pct=view.pct if view.pct in ("p50", "p90") else "p50", target=view.target)
    try:
        ids = default_anchors(db, view.model_copy(update={"pct": base.pct}), hw, catalog)
    except Exception:          # no database yet: the page says so where it reads data
        return base
    knobs = anchoring.stored_knobs(db, view, hw)
    return base.model_copy(update={**knobs, "anchor": ids})


def default_anchors(db: Path, view: ViewState, hw: str, catalog: Catalog) -> tuple[str, ...]:
    """The runs the Explorer anchors `hw`'s simulated curve to under `view` (the fitted ones):
    what the Simulate page anchors a system to until the user picks others."""
    explorer = explore(db, view.model_copy(update={"hw": (hw,)}), catalog)
    a = explorer.anchoring.get(hw)
    return tuple(dict.fromkeys(r["run_id"] for r in (a.residuals if a and a.anchored else ())
                               if r.get("fitted")))
