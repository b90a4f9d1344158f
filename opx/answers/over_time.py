"""Value at a fixed interactivity over time: each dated run's own frontier, interpolated at the
target, grouped by configuration, to catch regressions and show software gains."""
from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from models import Catalog, ViewState
from opx import store
from opx.store import queries
from opx.answers.explorer import query_key
from opx.answers.run_labels import deployment_label
from opx.store.queries import filters_for
from opx.curves.frontier import value_at
from opx.config import location

COLUMNS = ["date", "configuration", "value", "provenance", "run_id", "label", "source"]


@functools.lru_cache(maxsize=64)
def _frontiers(db: str, stamp: tuple[int, int], key_json: str) -> pd.DataFrame:
    """Dated runs' frontiers, cached on the query and the data stamp (not on the target)."""
    with store.reading(location(db)) as con:
        return queries.dated_run_frontiers(con, filters_for(ViewState.model_validate_json(key_json)))


def over_time(db: Path, state: ViewState, catalog: Catalog) -> pd.DataFrame:
    """One row per dated run that reaches the target: date, configuration, value, provenance.
    Throughput metrics only (the y metric's base)."""
    pts = _frontiers(str(db), store.data_stamp(location(db)), query_key(state).model_dump_json())
    if not pts.empty:      # only runs whose own frontier spans the target can give a value
        span = pts.groupby("run_id").x.agg(["min", "max"])
        reach = span[(span["min"] <= state.target * (1 + 1e-9))
                     & (span["max"] >= state.target * (1 - 1e-9))].index
        pts = pts[pts.run_id.isin(reach)]
    rows = []
    for run_id, g in (pts.groupby("run_id", sort=False) if not pts.empty else ()):
        v = value_at(g.x.to_numpy(float), g.y.to_numpy(float), state.target)
        if v.status != "ok":
            continue
        first = g.iloc[0]
        config = " · ".join(x for x in (catalog.hardware_name(first.hardware), first.framework,
                                        first.precision, deployment_label(first)) if x)
        rows.append({"date": pd.Timestamp(first.date), "configuration": config,
                     "value": v.value, "provenance": first.provenance, "run_id": run_id,
                     "label": first.label, "source": first.source})
    return pd.DataFrame(rows).sort_values("date") if rows else pd.DataFrame(columns=COLUMNS)
