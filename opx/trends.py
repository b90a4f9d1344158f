"""Value at a fixed interactivity over time: each dated run's own frontier, interpolated at the
target, grouped by configuration, to catch regressions and show software gains."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from models import Catalog, ViewState
from opx import queries, store
from opx.explorer import _deployment_label, filters_for
from opx.frontier import pareto_mask, value_at


def over_time(db: Path, state: ViewState, catalog: Catalog) -> pd.DataFrame:
    """One row per dated run that reaches the target: date, configuration, value, provenance.
    Throughput metrics only (the y metric's base)."""
    with store.reading(db) as con:
        pts = queries.dated_run_points(con, filters_for(state))
    rows = []
    for run_id, g in (pts.groupby("run_id", sort=False) if not pts.empty else ()):
        mask = pareto_mask(g.x.to_numpy(float), g.y.to_numpy(float))
        front = g[mask].sort_values("x")
        v = value_at(front.x.to_numpy(float), front.y.to_numpy(float), state.target)
        if v.status != "ok":
            continue
        first = g.iloc[0]
        config = " · ".join(x for x in (catalog.hardware_name(first.hardware), first.framework,
                                        first.precision, _deployment_label(first)) if x)
        rows.append({"date": pd.Timestamp(first.date), "configuration": config,
                     "value": v.value, "provenance": first.provenance, "run_id": run_id,
                     "label": first.label, "source": first.source})
    return pd.DataFrame(rows).sort_values("date") if rows else pd.DataFrame(
        columns=["date", "configuration", "value", "provenance", "run_id", "label", "source"])
