"""What the Explorer shows for a view state, computed from the store; no Streamlit.

The page, the tests and (later) the CLI export all call `explore`, so they show the same figures.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models import Catalog, Deployment, ViewState
from models.view import format_number
from opx import metrics, queries, store
from opx.economics import economics_for
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
    multiple_at_target: Multiple | None    # None for the baseline itself
    multiple_at_peak: Multiple | None
    runs: int
    points: int
    simulated_only: bool = False              # no data at this percentile: the target value is simulated
    simulated_at_target: ValueAt | None = None   # the simulation at the target, beside the data


@dataclass
class ExplorerView:
    state: ViewState
    baseline: str | None
    points: pd.DataFrame              # chart marks: envelope / run-frontier / other points
    references: pd.DataFrame          # throughput figures with no stated interactivity
    summaries: list[HardwareSummary]
    notes: list[str] = field(default_factory=list)
    operating: pd.DataFrame = field(default_factory=pd.DataFrame)   # points at `conc`, if asked

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
        peak = "Peak" if y.direction == "higher" else "Best (at peak throughput)"
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
                f"{peak} ({y.unit})": metrics.format_value(s.peak),
                f"× {base_name} at peak": "baseline" if s.multiple_at_peak is None
                    else s.multiple_at_peak.text,
                "Simulated at target": _sim_text(s),
                "Provenance at target": s.target_provenance,
                "Provenance at peak": s.peak_provenance,
                "Source": "; ".join(dict.fromkeys(x for x in (s.target_source, s.peak_source) if x)),
            })
        return pd.DataFrame(rows)


def _sim_text(s: HardwareSummary) -> str:
    if s.simulated_only:
        return "(the value at target is simulated)"
    v = s.simulated_at_target
    if v is None:
        return "–"
    return metrics.format_value(v.value) if v.status == "ok" else v.text


def filters_for(state: ViewState) -> queries.Filters:
    metric = metrics.y_metric(state.y)
    return queries.Filters(model=state.model, workload=state.workload, hardware=state.hw,
                           pct=state.pct, y=metric.base or state.y, sources=state.source)


@dataclass(frozen=True)
class ExplorerData:
    """What the database gives a view: everything that does not depend on the target, the
    baseline, prices or scales, so those can change without another query."""
    points: pd.DataFrame
    references: pd.DataFrame
    peaks: pd.DataFrame
    coverage: pd.DataFrame
    near: pd.DataFrame


def query_key(state: ViewState) -> ViewState:
    """The part of a state the queries depend on (cache key of `fetch`)."""
    d = ViewState()
    return ViewState(model=state.model, workload=state.workload, hw=state.hw, pct=state.pct,
                     y=metrics.y_metric(state.y).base or state.y, source=state.source,
                     runs=state.runs, points=state.points, conc=state.conc,
                     target=d.target)


def fetch(db: Path, state: ViewState) -> ExplorerData:
    f = filters_for(state)
    with store.reading(db) as con:
        return ExplorerData(
            points=queries.chart_points(con, f, run_curves=state.runs, other_points=state.points),
            references=queries.reference_marks(con, f),
            peaks=queries.peaks(con, f),
            coverage=queries.coverage(con, f),
            near=(queries.points_near_concurrency(con, f, state.conc) if state.conc
                  else pd.DataFrame()))


FETCH_CACHE_SIZE = 256


@functools.lru_cache(maxsize=FETCH_CACHE_SIZE)
def _fetch_cached(db: str, stamp: tuple[int, int], key_json: str) -> ExplorerData:
    return fetch(Path(db), ViewState.model_validate_json(key_json))


def fetch_cached(db: Path, state: ViewState) -> ExplorerData:
    """`fetch`, shared by every session of the process and keyed on the query and the data
    version (the database file's stamp): moving the target costs no query, and new data shows on
    the next interaction. Callers must not mutate the frames."""
    return _fetch_cached(str(db), store.data_stamp(Path(db)), query_key(state).model_dump_json())


def explore(db: Path, state: ViewState, catalog: Catalog,
            fetched: ExplorerData | None = None) -> ExplorerView:
    data = fetched if fetched is not None else fetch_cached(db, state)
    return compute(data, state, catalog)


def compute(data: ExplorerData, state: ViewState, catalog: Catalog) -> ExplorerView:
    """The view from fetched data: values at the target, peaks, multiples, notes."""
    pts, refs, peaks, cover, near = (data.points, data.references, data.peaks, data.coverage,
                                     data.near)
    pts = _decorate(pts, catalog)
    refs = _decorate(refs, catalog)
    metric = metrics.y_metric(state.y)
    econ = {hw: economics_for(catalog, state, hw) for hw in state.hw} if metric.derived else {}
    pts, refs = _convert(pts, metric, econ), _convert(refs, metric, econ)
    near = _convert(_decorate(near, catalog), metric, econ) if not near.empty else near
    baseline = state.effective_baseline()
    target_text = f"{format_number(state.target)} tok/s/user"
    notes: list[str] = []

    # Simulated runs get envelopes of their own and never mix into the data's: the figures and
    # multiples come from measured/published data, and from a simulation only where a hardware has
    # no data under the filters (its provenance then says `simulated`).
    peak_rows = {(r.hardware, bool(r.simulated)): r for r in peaks.itertuples()} if not peaks.empty else {}
    drawn = ({(h, bool(sim)) for h, sim in zip(pts.hardware, pts.simulated)} if not pts.empty
             else set())
    # At the target: the data's envelope when it has points at this percentile, else the
    # simulation's. At peak: the data's peak when there is one, else the simulation's.
    target_sim = {hw: (hw, False) not in drawn and (hw, True) in drawn for hw in state.hw}
    primary_sim = {hw: (hw, False) not in peak_rows and (hw, True) in peak_rows for hw in state.hw}
    at_target: dict[str, tuple[ValueAt, str, str]] = {}
    sim_at_target: dict[str, ValueAt | None] = {}
    for hw in state.hw:
        v, prov, src = _value_on_envelope(pts, hw, target_sim[hw], state.target)
        at_target[hw] = (_in_metric(v, metric, econ.get(hw)), prov, src)
        sim_at_target[hw] = (None if target_sim[hw] or (hw, True) not in drawn
                             else _in_metric(_value_on_envelope(pts, hw, True, state.target)[0],
                                             metric, econ.get(hw)))

    peak_by_hw = {hw: peak_rows.get((hw, primary_sim[hw])) for hw in state.hw}
    peak_value = {hw: _metric_value(metric, econ.get(hw), _peak_value(peak_by_hw[hw]))
                  for hw in state.hw}
    cover_by_hw = {r.hardware: r for r in cover.itertuples()} if not cover.empty else {}
    summaries = []
    base_v = at_target.get(baseline, (ValueAt("no_data"), "", ""))[0] if baseline else None
    base_peak = peak_value.get(baseline) if baseline else None
    base_name = catalog.hardware_name(baseline) if baseline else ""
    for hw in state.hw:
        v, prov, src = at_target[hw]
        pk = peak_by_hw.get(hw)
        name = catalog.hardware_name(hw)
        is_base = hw == baseline
        summaries.append(HardwareSummary(
            hardware=hw, name=name, at_target=v, target_provenance=prov, target_source=src,
            peak=peak_value[hw],
            peak_provenance=(pk.provenance + (" (interactivity not stated)"
                                              if pk.interactivity_unstated else "")) if pk else "",
            peak_source=_source_text(pk.source, pk.source_url) if pk else "",
            multiple_at_target=None if is_base else multiple_at_target(
                v, base_v, name, base_name, target_text),
            multiple_at_peak=None if is_base else multiple_at_peak(
                peak_value[hw], base_peak, name, base_name),
            runs=int(cover_by_hw[hw].runs) if hw in cover_by_hw else 0,
            points=int(cover_by_hw[hw].points) if hw in cover_by_hw else 0,
            simulated_only=target_sim[hw], simulated_at_target=sim_at_target[hw],
        ))
        if metric.derived:
            e = econ.get(hw)
            notes.append(e.describe(name) if e else
                         f"{name}: no price or power in the catalog; set one with "
                         f"price={hw}:<USD per GPU-hour> and power={hw}:<W> in the link.")
        c = cover_by_hw.get(hw)
        if c is None:
            notes.append(f"No runs of {name} for {catalog.model_name(state.model)} on "
                         f"{catalog.workload_name(state.workload)} under these filters.")
        else:
            if c.missing_pct:
                notes.append(f"{name}: {c.missing_pct} point(s) have no {state.pct.upper()} "
                             "interactivity in their source and are not drawn (never guessed "
                             "from another percentile).")
            if c.missing_pct_simulated:
                given = _simulated_percentiles()
                notes.append(f"{name}: {c.missing_pct_simulated} simulated point(s) have no "
                             f"{state.pct.upper()} (the simulator gives {given}; too few "
                             f"measured sources report a {state.pct.upper()} to model its spread, "
                             f"so none is claimed); choose {given.split(' and ')[-1]} to see "
                             "the simulated curves.")
            if c.missing_y:
                notes.append(f"{name}: {c.missing_y} point(s) have no {state.y} throughput "
                             "in their source and are not drawn.")
    if state.pct != "p50" and any((hw, True) in drawn for hw in state.hw):
        from opx.simulate.spread import load, note_text
        text = note_text(load(), state.pct)
        if text:
            notes.append(f"Simulated curves at {state.pct.upper()}: {text}.")
    if state.conc and near.empty:
        notes.append(f"No run has a point near concurrency {state.conc:,.0f} under these filters.")
    return ExplorerView(state=state, baseline=baseline, points=pts, references=refs,
                        summaries=summaries, notes=notes, operating=near)


def _simulated_percentiles() -> str:
    """The percentiles simulated points carry: P50, and those the spread model supports."""
    from opx.simulate.spread import load, modelled
    qs = sorted({name.split("_")[1] for name in modelled(load())})
    return " and ".join(["P50"] + [q.upper() for q in qs])


def _value_on_envelope(pts: pd.DataFrame, hw: str, simulated: bool,
                       target: float) -> tuple[ValueAt, str, str]:
    """Value at the target on one envelope of a hardware, with its provenance and sources."""
    if pts.empty:
        return ValueAt("no_data"), "", ""
    env = pts[(pts.hardware == hw) & pts.on_envelope & (pts.simulated == simulated)]
    if env.empty:
        return ValueAt("no_data"), "", ""
    env = env.sort_values("x").reset_index(drop=True)
    v = value_at(env.x.to_numpy(), env.tput.to_numpy(), target)
    if v.status != "ok":
        return v, "", ""
    used = env.iloc[list(v.neighbours)]
    provs = list(dict.fromkeys(used.provenance))
    prov = " / ".join(provs) if v.exact else f"interpolated between {' / '.join(provs)} points"
    return v, prov, "; ".join(dict.fromkeys(used.source_text))


def _peak_value(row) -> float | None:
    return None if row is None or pd.isna(row.peak) else float(row.peak)


def _in_metric(v: ValueAt, metric: metrics.Metric, econ) -> ValueAt:
    """A throughput value at the target, expressed in the chosen metric."""
    if v.status != "ok" or not metric.derived:
        return v
    value = _metric_value(metric, econ, v.value)
    if value is None:
        return ValueAt("no_data")
    return ValueAt("ok", value, v.exact, v.neighbours)


def _convert(df: pd.DataFrame, metric: metrics.Metric, econ: dict) -> pd.DataFrame:
    """Keep throughput per GPU in `tput`; put the chosen metric in `y` (cost and power metrics
    from each hardware's price and power)."""
    df = df.copy()
    df["tput"] = df["y"] if "y" in df else []
    if metric.derived and not df.empty:
        df["y"] = [_metric_value(metric, econ.get(h), t) for h, t in zip(df.hardware, df.tput)]
        df = df[df.y.notna()].reset_index(drop=True)
    return df


def _metric_value(metric: metrics.Metric, econ, tput: float | None) -> float | None:
    """The chosen metric from a throughput per GPU (None when it cannot be computed)."""
    if tput is None or pd.isna(tput):
        return None
    if not metric.derived:
        return float(tput)
    if econ is None:
        return None
    value = metric.convert(float(tput), econ.usd_per_gpu_hour, econ.watts_per_gpu)
    return None if pd.isna(value) else float(value)


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
    """A stored run's deployment in the words `models.Deployment.describe` uses everywhere."""
    def whole(v):
        return int(v) if _given(v) else None

    def flag(v):
        return bool(v) if _given(v) else None
    return Deployment(tp=whole(r.tp), ep=whole(r.ep), dp_attention=flag(r.dp_attention),
                      disaggregated=bool(flag(r.disaggregated)), gpus_prefill=whole(r.gpus_prefill),
                      gpus_decode=whole(r.gpus_decode), gpus_total=int(r.gpus_total),
                      mtp=flag(r.mtp)).describe()


def _given(v) -> bool:
    return v is not None and not (isinstance(v, float) and np.isnan(v)) and v is not pd.NA
