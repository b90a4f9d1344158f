"""What the Explorer shows for a view state, computed from the store; no Streamlit.

The page, the tests and (later) the CLI export all call `explore`, so they show the same figures.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models import Catalog, ViewState
from models.view import format_number
from opx import metrics, queries, store
from opx.frontier import Multiple, ValueAt, multiple_at_peak, multiple_at_target, value_at


@dataclass(frozen=True)
class HardwareSummary:
    hardware: str
    name: str
    at_target: ValueAt
    target_provenance: str
    target_source: str
    peak: float | None
    peak_provenance: str
    peak_source: str
    peak_interactivity: float | None
    multiple_at_target: Multiple | None    # None for the baseline itself
    multiple_at_peak: Multiple | None
    runs: int
    points: int


@dataclass
class ExplorerView:
    state: ViewState
    baseline: str | None
    points: pd.DataFrame              # chart marks: envelope / run-frontier / other points
    references: pd.DataFrame          # throughput figures with no stated interactivity
    summaries: list[HardwareSummary]
    notes: list[str] = field(default_factory=list)

    def run_ids(self) -> list[str]:
        """The runs whose figures are on screen."""
        ids = [df.run_id for df in (self.points, self.references) if not df.empty]
        return sorted(set(pd.concat(ids))) if ids else []

    def provenance_table(self) -> pd.DataFrame:
        """One row per figure drawn: where it comes from and what its source says about it."""
        cols = {"hardware_name": "Hardware", "label": "Run", "provenance": "Provenance",
                "point_note": "Note", "source_text": "Source"}
        frames = [df[list(cols)] for df in (self.points, self.references) if not df.empty]
        if not frames:
            return pd.DataFrame(columns=list(cols.values()))
        return pd.concat(frames).drop_duplicates().rename(columns=cols).reset_index(drop=True)

    def table(self) -> pd.DataFrame:
        """The per-hardware table under the chart, as shown (text cells, numbers kept beside)."""
        y = metrics.y_metric(self.state.y)
        base_name = next((s.name for s in self.summaries if s.hardware == self.baseline), "")
        rows = []
        for s in self.summaries:
            rows.append({
                "Hardware": s.name,
                f"At {format_number(self.state.target)} tok/s/user ({y.unit})":
                    metrics.format_value(s.at_target.value) if s.at_target.status == "ok"
                    else s.at_target.text,
                f"× {base_name} at target": "baseline" if s.multiple_at_target is None
                    else s.multiple_at_target.text,
                f"Peak ({y.unit})": metrics.format_value(s.peak),
                f"× {base_name} at peak": "baseline" if s.multiple_at_peak is None
                    else s.multiple_at_peak.text,
                "Provenance at target": s.target_provenance,
                "Provenance at peak": s.peak_provenance,
                "Source": "; ".join(dict.fromkeys(x for x in (s.target_source, s.peak_source) if x)),
            })
        return pd.DataFrame(rows)


def filters_for(state: ViewState) -> queries.Filters:
    return queries.Filters(model=state.model, workload=state.workload, hardware=state.hw,
                           pct=state.pct, y=state.y, sources=state.source)


def explore(db: Path, state: ViewState, catalog: Catalog) -> ExplorerView:
    f = filters_for(state)
    with store.reading(db) as con:
        pts = queries.chart_points(con, f, run_curves=state.runs, other_points=state.points)
        refs = queries.reference_marks(con, f)
        peaks = queries.peaks(con, f)
        cover = queries.coverage(con, f)

    pts = _decorate(pts, catalog)
    refs = _decorate(refs, catalog)
    baseline = state.effective_baseline()
    target_text = f"{format_number(state.target)} tok/s/user"
    notes: list[str] = []

    at_target: dict[str, tuple[ValueAt, str, str]] = {}
    for hw in state.hw:
        env = pts[(pts.hardware == hw) & pts.on_envelope] if not pts.empty else pts
        if env.empty:
            at_target[hw] = (ValueAt("no_data"), "", "")
            continue
        env = env.sort_values("x").reset_index(drop=True)
        v = value_at(env.x.to_numpy(), env.y.to_numpy(), state.target)
        prov, src = "", ""
        if v.status == "ok":
            used = env.iloc[list(v.neighbours)]
            provs = list(dict.fromkeys(used.provenance))
            prov = " / ".join(provs) if v.exact else f"interpolated between {' / '.join(provs)} points"
            src = "; ".join(dict.fromkeys(used.source_text))
        at_target[hw] = (v, prov, src)

    peak_by_hw = {r.hardware: r for r in peaks.itertuples()} if not peaks.empty else {}
    cover_by_hw = {r.hardware: r for r in cover.itertuples()} if not cover.empty else {}
    summaries = []
    base_v = at_target.get(baseline, (ValueAt("no_data"), "", ""))[0] if baseline else None
    base_peak = _peak_value(peak_by_hw.get(baseline)) if baseline else None
    base_name = catalog.hardware_name(baseline) if baseline else ""
    for hw in state.hw:
        v, prov, src = at_target[hw]
        pk = peak_by_hw.get(hw)
        name = catalog.hardware_name(hw)
        is_base = hw == baseline
        summaries.append(HardwareSummary(
            hardware=hw, name=name, at_target=v, target_provenance=prov, target_source=src,
            peak=_peak_value(pk),
            peak_provenance=(pk.provenance + (" (interactivity not stated)"
                                              if pk.interactivity_unstated else "")) if pk else "",
            peak_source=_source_text(pk.source, pk.source_url) if pk else "",
            peak_interactivity=None if pk is None or pd.isna(pk.x_at_peak) else float(pk.x_at_peak),
            multiple_at_target=None if is_base else multiple_at_target(
                v, base_v, name, base_name, target_text),
            multiple_at_peak=None if is_base else multiple_at_peak(
                _peak_value(pk), base_peak, name, base_name),
            runs=int(cover_by_hw[hw].runs) if hw in cover_by_hw else 0,
            points=int(cover_by_hw[hw].points) if hw in cover_by_hw else 0,
        ))
        c = cover_by_hw.get(hw)
        if c is None:
            notes.append(f"No runs of {name} for {catalog.model_name(state.model)} on "
                         f"{catalog.workload_name(state.workload)} under these filters.")
        else:
            if c.missing_pct:
                notes.append(f"{name}: {c.missing_pct} point(s) have no {state.pct.upper()} "
                             "interactivity in their source and are not drawn (never guessed "
                             "from another percentile).")
            if c.missing_y:
                notes.append(f"{name}: {c.missing_y} point(s) have no {state.y} throughput "
                             "in their source and are not drawn.")
    return ExplorerView(state=state, baseline=baseline, points=pts, references=refs,
                        summaries=summaries, notes=notes)


def _peak_value(row) -> float | None:
    return None if row is None or pd.isna(row.peak) else float(row.peak)


def _source_text(source: str, url: str) -> str:
    return f"{source} ({url})" if url else source


def _decorate(df: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """Add display columns: hardware name, deployment label, source text."""
    if df.empty:
        return df.assign(hardware_name=[], deployment=[], source_text=[])
    df = df.copy()
    df["hardware_name"] = [catalog.hardware_name(h) for h in df.hardware]
    df["deployment"] = [_deployment_label(r) for r in df.itertuples()]
    df["source_text"] = [_source_text(s, u) for s, u in zip(df.source, df.source_url)]
    df["date"] = df["date"].astype(str).replace({"NaT": "", "None": ""})
    return df


def _deployment_label(r) -> str:
    parts = []
    if _given(r.gpus_prefill) and _given(r.gpus_decode):
        parts.append(f"disagg {int(r.gpus_prefill)} prefill + {int(r.gpus_decode)} decode GPUs")
    if _given(r.tp):
        parts.append(f"TP{int(r.tp)}")
    if _given(r.ep):
        parts.append(f"EP{int(r.ep)}")
    if _given(r.dp_attention) and bool(r.dp_attention):
        parts.append("DP-attention")
    if _given(r.mtp) and bool(r.mtp):
        parts.append("MTP")
    parts.append(f"{int(r.gpus_total)} GPUs")
    return ", ".join(parts)


def _given(v) -> bool:
    return v is not None and not (isinstance(v, float) and np.isnan(v)) and v is not pd.NA
