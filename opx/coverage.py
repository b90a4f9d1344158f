"""The Data page's coverage overview: what the database holds for each model and workload, by
hardware and provenance, with the Explorer link that opens each slice where its data can be seen."""
from __future__ import annotations

import math

import pandas as pd

from models import Catalog, ViewState, pct_label
from opx import queries, store
from opx.links import build_link

# When several statistics are reported, the link opens on the one most points state; ties go to
# the first here (P90 is the seed's, then the median, then the mean).
_PREFERENCE = ("p90", "p50", "mean", "p99")
COLUMNS = ("model", "workload", "hardware", "points", "provenance", "statistic", "link")


def coverage(db, catalog: Catalog) -> pd.DataFrame:
    with store.reading(db) as con:
        per_hw = queries.coverage_overview(con)
    return coverage_table(per_hw, catalog)


def coverage_table(per_hw: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """One row per (model, workload): its hardware with point counts, points by provenance, the
    statistic its data reports most, and the Explorer link of that slice (all its hardware, at
    that statistic, the target in the middle of the data's span)."""
    rows = []
    for (model, workload), g in per_hw.groupby(["model", "workload"], sort=False):
        by_hw = g.groupby("hardware", sort=False).points.sum().sort_values(ascending=False)
        by_prov = g.groupby("provenance").points.sum().sort_values(ascending=False)
        counts = {q: int(g[f"n_{q}"].sum()) for q in _PREFERENCE}
        pct = max(_PREFERENCE, key=lambda q: (counts[q], -_PREFERENCE.index(q)))
        state = ViewState(model=model, workload=workload, hw=tuple(by_hw.index), pct=pct,
                          target=_middle(g, pct) or ViewState().target)
        rows.append({
            "model": catalog.model_name(model), "workload": catalog.workload_name(workload),
            "hardware": ", ".join(f"{catalog.hardware_name(h)} {n:,}" for h, n in by_hw.items()),
            "points": int(g.points.sum()),
            "provenance": ", ".join(f"{p} {n:,}" for p, n in by_prov.items()),
            "statistic": _statistic_text(pct, counts[pct], g),
            "link": build_link("/", state)})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _statistic_text(pct: str, count: int, g: pd.DataFrame) -> str:
    if count:
        return f"{pct_label(pct)} ({count:,} data points)"
    if (g.provenance != "simulated").any():
        return "data without interactivity; simulated at P90" if (
            g.provenance == "simulated").any() else "no interactivity stated"
    return "simulated only"


def _middle(g: pd.DataFrame, pct: str) -> float | None:
    """A round target in the middle (geometrically) of the data's interactivity span."""
    lo, hi = g[f"lo_{pct}"].min(), g[f"hi_{pct}"].max()
    if pd.isna(lo) or pd.isna(hi) or lo <= 0:
        return None
    mid = math.sqrt(lo * hi)
    digits = 1 - int(math.floor(math.log10(mid)))
    return float(round(mid, digits)) if digits > 0 else float(round(mid, digits))
