"""Latency against concurrency, the operating point at a chosen concurrency (with how far it sits
from its hardware's frontier), and runs that differ only by a KV-cache pool, side by side."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models import Catalog, ViewState
from opx import queries, store
from opx.explorer import ExplorerView, explore, filters_for
from opx.frontier import value_at


@dataclass
class LatencyView:
    state: ViewState
    points: pd.DataFrame            # run, concurrency, ttft_s, tpot_s, e2e_s, ...
    operating: pd.DataFrame         # one row per run at the chosen concurrency
    kv_pool: pd.DataFrame           # runs with and without a KV-cache pool, side by side
    notes: list[str] = field(default_factory=list)


def latency(db: Path, state: ViewState, catalog: Catalog) -> LatencyView:
    f = filters_for(state.model_copy(update={"y": "total"}))
    with store.reading(db) as con:
        pts = queries.latency_points(con, f, list(state.run))
    notes: list[str] = []
    if pts.empty:
        notes.append("No run of these hardware, model and workload has latencies with a "
                     f"concurrency at {state.pct.upper()} under these filters.")
        empty = pd.DataFrame()
        return LatencyView(state, pts, empty, empty, notes)
    pts = pts.copy()
    pts["hardware_name"] = [catalog.hardware_name(h) for h in pts.hardware]
    pts["run_name"] = [lbl or f"{n} · {rid[:8]}" for lbl, n, rid in
                       zip(pts.label, pts.hardware_name, pts.run_id)]
    operating = pd.DataFrame()
    if state.conc:
        view = explore(db, state.model_copy(update={"y": "total", "runs": False, "points": False}),
                       catalog)
        operating = operating_points(pts, state.conc, view)
    return LatencyView(state, pts, operating, kv_pool_pairs(pts), notes)


def operating_points(pts: pd.DataFrame, conc: float, view: ExplorerView) -> pd.DataFrame:
    """Each run's point nearest the chosen concurrency, and its throughput as a share of its
    hardware's frontier at the same interactivity."""
    rows = []
    env = view.points[view.points.on_envelope & ~view.points.simulated] if not view.points.empty \
        else view.points
    for run_id, group in pts.groupby("run_id", sort=False):
        nearest = group.iloc[int(np.argmin(np.abs(np.log(group.concurrency / conc))))]
        share = None
        hw_env = env[env.hardware == nearest.hardware] if not env.empty else env
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
    for r in pts.itertuples():
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
