"""The Data page's coverage overview: what the database holds for each model and workload, by
hardware and provenance, with the Explorer link that opens each slice where its data can be seen."""
from __future__ import annotations

import math

import pandas as pd

from models import Catalog, ViewState, pct_label
from opx import store
from opx.store import queries
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
        # the hardware with data at that statistic first, the one with most such points the
        # baseline, and a target that the two with most points both reach
        spans = (g.groupby("hardware", sort=False)
                 .agg(n=(f"n_{pct}", "sum"), lo=(f"lo_{pct}", "min"), hi=(f"hi_{pct}", "max"))
                 .sort_values("n", ascending=False, kind="stable"))
        with_data = list(spans.index[spans.n > 0])
        hw = tuple(with_data + [h for h in by_hw.index if h not in with_data])
        state = ViewState(model=model, workload=workload, hw=hw, pct=pct,
                          baseline=with_data[0] if with_data else None,
                          target=_shared_target(spans[spans.n > 0]) or ViewState().target)
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


def _shared_target(spans: pd.DataFrame) -> float | None:
    """A round target that the first two hardware of `spans` (lo, hi: their data's interactivity
    span) both reach: the geometric middle of where their spans overlap, or just under the lower
    of their tops where they do not (below a span the answer is an at-least figure)."""
    if spans.empty or spans.lo.iloc[0] <= 0:
        return None
    top = spans.head(2)
    lo, hi = float(top.lo.max()), float(top.hi.min())
    x = math.sqrt(lo * hi) if lo <= hi else hi
    digits = 1 - int(math.floor(math.log10(x)))
    rounded = float(round(x, digits))
    return rounded if rounded <= hi else float(math.floor(x * 10 ** digits) / 10 ** digits)
