"""Plan a fleet from an SLA: for each hardware, the best measured (or published, or simulated)
operating point that meets the SLA, the GPUs and racks a demand needs, power and cost, a ranking,
and why a system is excluded."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from models import Catalog, ViewState
from opx import store
from opx.economics import economics_for
from opx.explorer import filters_for


@dataclass
class Plan:
    state: ViewState
    rows: pd.DataFrame                       # one row per hardware that can serve, ranked
    excluded: list[tuple[str, str]] = field(default_factory=list)   # (hardware, why)
    notes: list[str] = field(default_factory=list)


def _candidates(con, state: ViewState) -> pd.DataFrame:
    f = filters_for(state.model_copy(update={"y": "total"}))
    p = f.pct
    sql = f"""
    SELECT r.id AS run_id, r.hardware, r.label, r.provenance, r.gpus_total, r.source,
           r.framework, r.precision, r.tp, r.ep, r.gpus_prefill, r.gpus_decode,
           m.concurrency, m.interactivity_{p} AS interactivity, m.ttft_{p}_s AS ttft_s,
           m.throughput_total_per_gpu AS total_per_gpu, m.throughput_output_per_gpu AS output_per_gpu
    FROM point_metrics m JOIN runs r ON r.id = m.run_id
    WHERE r.model = $model AND r.workload = $workload AND list_contains($hw, r.hardware)
      AND (len($sources) = 0 OR list_contains($sources, r.provenance))
    """
    return con.execute(sql, f.params()).df()


def plan(db: Path, state: ViewState, catalog: Catalog) -> Plan:
    """`state.target` is the SLA's minimum tok/s/user at `state.pct`; `state.ttft` the maximum
    TTFT at the same percentile; demand is `state.sessions` or `state.tps` (output tokens/s)."""
    with store.reading(db) as con:
        pts = _candidates(con, state)
    pct = state.pct.upper()
    notes, excluded, rows = [], [], []
    if not state.sessions and not state.tps:
        notes.append("Give a demand (concurrent sessions or output tokens/s) to size the fleet; "
                     "until then the table shows each system's best point only.")
    for hw in state.hw:
        name = catalog.hardware_name(hw)
        mine = pts[pts.hardware == hw]
        if mine.empty:
            excluded.append((name, "no runs of this model and workload under the filters"))
            continue
        ok = mine[mine.interactivity >= state.target]
        if ok.empty:
            best = mine.interactivity.max()
            excluded.append((name, f"no point reaches {state.target:g} tok/s/user at {pct}"
                                   + (f" (best {best:.4g})" if pd.notna(best) else
                                      f" (no {pct} interactivity reported)")))
            continue
        if state.ttft:
            with_ttft = ok[ok.ttft_s.notna()]
            if with_ttft.empty:
                excluded.append((name, f"no point meeting {state.target:g} tok/s/user reports "
                                       f"TTFT at {pct}"))
                continue
            ok = with_ttft[with_ttft.ttft_s <= state.ttft]
            if ok.empty:
                excluded.append((name, f"every point meeting {state.target:g} tok/s/user has TTFT "
                                       f"{pct} above {state.ttft:g} s (lowest "
                                       f"{with_ttft.ttft_s.min():.3g} s)"))
                continue
        if state.sessions:
            ok = ok[ok.concurrency.notna()]
            if ok.empty:
                excluded.append((name, "no point meeting the SLA states its concurrency"))
                continue
            ok = ok.assign(score=ok.concurrency / ok.gpus_total)
        elif state.tps:
            ok = ok[ok.output_per_gpu.notna()]
            if ok.empty:
                excluded.append((name, "no point meeting the SLA reports output throughput"))
                continue
            ok = ok.assign(score=ok.output_per_gpu)
        else:
            ok = ok[ok.total_per_gpu.notna()]
            if ok.empty:
                excluded.append((name, "no point meeting the SLA reports throughput"))
                continue
            ok = ok.assign(score=ok.total_per_gpu)
        best = ok.sort_values("score", ascending=False).iloc[0]
        econ = economics_for(catalog, state, hw)
        system = catalog.hardware[hw].system_gpus if hw in catalog.hardware else None
        gpus = None
        if state.sessions:
            deployments = math.ceil(state.sessions / best.concurrency)
            gpus = deployments * int(best.gpus_total)
        elif state.tps:
            deployments = math.ceil(state.tps / (best.output_per_gpu * best.gpus_total))
            gpus = deployments * int(best.gpus_total)
        row = {"hardware": name, "run": best.label or best.run_id, "provenance": best.provenance,
               "concurrency": best.concurrency, f"interactivity_{state.pct}": best.interactivity,
               f"ttft_{state.pct}_s": best.ttft_s, "total_per_gpu": best.total_per_gpu,
               "output_per_gpu": best.output_per_gpu, "gpus_per_deployment": int(best.gpus_total),
               "gpus": gpus, "racks": (math.ceil(gpus / system) if gpus and system else None),
               "mw": (gpus * econ.watts_per_gpu / 1e6 if gpus and econ else None),
               "usd_per_hour": (gpus * econ.usd_per_gpu_hour if gpus and econ else None),
               "usd_per_mtok": (econ.usd_per_gpu_hour / (best.total_per_gpu * 3600 / 1e6)
                                if econ and pd.notna(best.total_per_gpu) and best.total_per_gpu
                                else None),
               "price_power": econ.describe(name) if econ else "no price or power",
               "source": best.source}
        rows.append(row)
    df = pd.DataFrame(rows)
    if not df.empty:
        key = "usd_per_hour" if df.usd_per_hour.notna().any() else "usd_per_mtok"
        df = df.sort_values(key, na_position="last").reset_index(drop=True)
        df.insert(0, "rank", range(1, len(df) + 1))
    return Plan(state, df, excluded, notes)
