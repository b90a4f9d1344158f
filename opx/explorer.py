"""What the Explorer shows for a view state, computed from the store; no Streamlit.

The pages, the tests and the CLI export all call `explore`, so they show the same figures.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models import Catalog, Deployment, ViewState, pct_label
from models.view import RUN_FILTER_FIELDS, format_number
from opx import metrics, queries, store
from opx.anchoring import anchor_view
from opx.economics import economics_for
from opx.frontier import (DATA, SIMULATED, SNAP, Figure, Kind, Multiple, ValueAt, divide,
                          like_with_like, provenance_names, value_at)


# Percentiles whose TPOT is at least this one's, so whose interactivity is at most this one's: a
# figure that reaches x at P90 reaches x at P50 too (the same requests' P50 TPOT <= P90 TPOT).
# The mean has no such order with any percentile (a long tail can put it above P90).
STRICTER = {"mean": (), "p50": ("p90", "p99"), "p90": ("p99",), "p99": ()}


@dataclass(frozen=True)
class Drawn:
    """What is drawn for one hardware of one kind (data, or simulated): its value at the target,
    its peak and the interactivity its curve spans. Values are in the chosen metric."""
    kind: Kind
    at_target: ValueAt = ValueAt("no_data")
    target_provenance: str = ""
    target_source: str = ""
    peak: float | None = None          # highest throughput drawn: curve or reference line
    peak_provenance: str = ""
    peak_source: str = ""
    x_lo: float | None = None          # the curve's interactivity span (None: no curve drawn)
    x_hi: float | None = None

    @property
    def has_curve(self) -> bool:
        return self.x_lo is not None

    @property
    def target_figure(self) -> Figure | None:
        return (Figure(self.at_target.value, self.target_provenance)
                if self.at_target.status == "ok" else None)

    @property
    def peak_figure(self) -> Figure | None:
        return Figure(self.peak, self.peak_provenance) if self.peak is not None else None


@dataclass(frozen=True)
class StricterFigure:
    """A figure (not simulated) at a stricter percentile that reaches the target, when no figure
    at the chosen percentile has a value there: the target is then reached at the chosen
    percentile too, with at least `value` (the throughput of that figure)."""
    pct: str
    x: float
    value: float
    provenance: str
    source: str


@dataclass(frozen=True)
class HardwareSummary:
    hardware: str
    name: str
    data: Drawn                        # measured / published / preview / derived figures
    simulated: Drawn | None            # None: nothing simulated is drawn for this hardware
    multiple_at_target: Multiple | None    # None for the baseline itself
    multiple_at_peak: Multiple | None
    runs: int
    points: int
    target_note: str = ""              # what is true at the target when no figure has a value
    stricter: StricterFigure | None = None

    # The headline figure of the hardware: the data's where data is drawn at this percentile,
    # else the simulation's (the planner and the chart's target circles read these).
    @property
    def _target_side(self) -> Drawn:
        if not self.data.has_curve and self.simulated is not None and self.simulated.has_curve:
            return self.simulated
        return self.data

    @property
    def simulated_only(self) -> bool:
        """No data curve at this percentile: the value at the target is the simulation's."""
        return self._target_side is self.simulated

    @property
    def at_target(self) -> ValueAt:
        return self._target_side.at_target

    @property
    def target_provenance(self) -> str:
        return self._target_side.target_provenance

    @property
    def target_source(self) -> str:
        return self._target_side.target_source

    @property
    def simulated_at_target(self) -> ValueAt | None:
        """The simulation at the target, beside the data (None without a simulated curve)."""
        return self.simulated.at_target if self.simulated and self.simulated.has_curve else None

    @property
    def _peak_side(self) -> Drawn:
        if self.data.peak is None and self.simulated is not None:
            return self.simulated
        return self.data

    @property
    def peak(self) -> float | None:
        return self._peak_side.peak

    @property
    def peak_provenance(self) -> str:
        return self._peak_side.peak_provenance

    @property
    def peak_source(self) -> str:
        return self._peak_side.peak_source

    @property
    def simulated_peak(self) -> float | None:
        return self.simulated.peak if self.simulated else None

    @property
    def reachable(self) -> bool:
        """Some figure drawn has a value at the target, or a stricter percentile's reaches it."""
        return (self.data.at_target.status == "ok" or self.stricter is not None
                or (self.simulated is not None and self.simulated.at_target.status == "ok"))

    def drawn(self) -> list[Drawn]:
        return [d for d in (self.data, self.simulated) if d is not None]


@dataclass
class ExplorerView:
    state: ViewState
    baseline: str | None
    points: pd.DataFrame              # chart marks: envelope / run-frontier / other points
    references: pd.DataFrame          # throughput figures with no stated interactivity
    summaries: list[HardwareSummary]
    notes: list[str] = field(default_factory=list)
    operating: pd.DataFrame = field(default_factory=pd.DataFrame)   # points at `conc`, if asked
    anchoring: dict = field(default_factory=dict)   # hardware -> opx.anchoring.Anchoring

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
        """The per-hardware table under the chart, as shown: data and simulated figures in columns
        of their own, every cell a word or a formatted number."""
        y = metrics.y_metric(self.state.y)
        peak = "Peak" if y.direction == "higher" else "Best (at peak throughput)"
        at = f"At {format_number(self.state.target)} tok/s/user"
        base_name = next((s.name for s in self.summaries if s.hardware == self.baseline), "")
        pct = pct_label(self.state.pct)
        rows = []
        for s in self.summaries:
            sim = s.simulated
            sources = [d.target_source for d in s.drawn()] + [d.peak_source for d in s.drawn()]
            if s.stricter:
                sources.append(s.stricter.source)
            rows.append({
                "Hardware": s.name,
                f"{at}, data ({y.unit})": _target_cell(s.data, s.stricter, pct, y),
                "Provenance at target": s.data.target_provenance,
                f"{at}, simulated ({y.unit})": (_target_cell(sim, None, pct, y) if sim
                                                 else f"no {pct} simulation"),
                f"× {base_name} at target": "baseline" if s.multiple_at_target is None
                    else s.multiple_at_target.text,
                f"{peak}, data ({y.unit})": _peak_cell(s.data.peak, "no data"),
                "Provenance at peak": s.data.peak_provenance,
                f"{peak}, simulated ({y.unit})": _peak_cell(sim.peak if sim else None,
                                                            "no simulation"),
                "Simulated curve": (self.anchoring[s.hardware].text
                                    if sim and s.hardware in self.anchoring else ""),
                f"× {base_name} at peak": "baseline" if s.multiple_at_peak is None
                    else s.multiple_at_peak.text,
                "Source": "; ".join(dict.fromkeys(x for x in sources if x)),
            })
        return pd.DataFrame(rows)


def _target_cell(d: Drawn, stricter: StricterFigure | None, pct: str, y: metrics.Metric) -> str:
    """One kind's value at the target, or what is true there instead."""
    if d.at_target.status == "ok":
        return metrics.format_value(d.at_target.value)
    if stricter is not None:
        bound = "≥" if y.direction == "higher" else "≤"
        return (f"{bound} {metrics.format_value(stricter.value)} ({pct_label(stricter.pct)} "
                f"{_provenance_words(stricter.provenance)} figure)")
    if not d.has_curve:
        return f"no {pct} data" if d.kind == DATA else f"no {pct} simulation"
    if d.kind == DATA:
        return d.at_target.text          # "not reachable", "below measured range"
    if d.at_target.status == "not_reachable":
        return f"not reachable (tops out at {metrics.format_value(d.x_hi)})"
    return f"below simulated range (starts at {metrics.format_value(d.x_lo)})"


def _peak_cell(value: float | None, missing: str) -> str:
    return metrics.format_value(value) if value is not None else missing


def _provenance_words(provenance: str) -> str:
    return " / ".join(dict.fromkeys(provenance_names(provenance))) or provenance


def filters_for(state: ViewState) -> queries.Filters:
    metric = metrics.y_metric(state.y)
    return queries.Filters(model=state.model, workload=state.workload, hardware=state.hw,
                           pct=state.pct, y=metric.base or state.y, sources=state.source,
                           runs=run_filters_for(state))


def run_filters_for(state: ViewState) -> queries.RunFilters:
    """The view's run filters (framework, precision, serving mode, GPUs, MTP, dates)."""
    return queries.RunFilters(**{name: getattr(state, name) for name in RUN_FILTER_FIELDS})


@dataclass(frozen=True)
class ExplorerData:
    """What the database gives a view: everything that does not depend on the target, the
    baseline, prices or scales, so those can change without another query."""
    points: pd.DataFrame
    references: pd.DataFrame
    coverage: pd.DataFrame
    near: pd.DataFrame
    # envelope points at each stricter percentile (`STRICTER`), read only when no figure at the
    # chosen percentile has a value at the target
    stricter: dict[str, pd.DataFrame] = field(default_factory=dict)
    # what anchored simulated curves need (opx/anchoring.py): the non-simulated points of every
    # percentile, and each hardware's stored simulation parameters
    anchors: pd.DataFrame = field(default_factory=pd.DataFrame)
    sim_params: pd.DataFrame = field(default_factory=pd.DataFrame)


def query_key(state: ViewState) -> ViewState:
    """The part of a state the queries depend on (cache key of `fetch`)."""
    d = ViewState()
    return ViewState(model=state.model, workload=state.workload, hw=state.hw, pct=state.pct,
                     y=metrics.y_metric(state.y).base or state.y, source=state.source,
                     runs=state.runs, points=state.points, conc=state.conc,
                     target=d.target, **{name: getattr(state, name) for name in RUN_FILTER_FIELDS})


def fetch(db: Path, state: ViewState) -> ExplorerData:
    f = filters_for(state)
    with store.reading(db) as con:
        return ExplorerData(
            points=queries.chart_points(con, f, run_curves=state.runs, other_points=state.points),
            references=queries.reference_marks(con, f),
            coverage=queries.coverage(con, f),
            near=(queries.points_near_concurrency(con, f, state.conc) if state.conc
                  else pd.DataFrame()),
            stricter={p: queries.chart_points(con, dataclasses.replace(f, pct=p))
                      for p in STRICTER[state.pct]},
            anchors=queries.anchor_points(con, f),
            sim_params=queries.simulated_parameters(con, f))


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
    pts, refs, cover, near = data.points, data.references, data.coverage, data.near
    metric = metrics.y_metric(state.y)
    pts, anchoring = anchor_view(pts, data.anchors, data.sim_params, state, catalog,
                                 metric.base or state.y)
    pts = _decorate(pts, catalog)
    refs = _decorate(refs, catalog)
    econ = {hw: economics_for(catalog, state, hw) for hw in state.hw} if metric.derived else {}
    pts, refs = _convert(pts, metric, econ), _convert(refs, metric, econ)
    near = _convert(_decorate(near, catalog), metric, econ) if not near.empty else near
    baseline = state.effective_baseline()
    target_text = f"{format_number(state.target)} tok/s/user"
    notes: list[str] = ([f"Only runs with {state.run_filter_text()} are drawn."]
                        if state.run_filter_text() else [])

    # Simulated runs get envelopes of their own and never mix into the data's: each hardware has
    # a data side and a simulated side, each with its value at the target and its peak, and a
    # multiple divides figures of one kind where it can (`frontier.like_with_like`).
    summaries: list[HardwareSummary] = []
    for hw in state.hw:
        name = catalog.hardware_name(hw)
        data_side = _drawn(pts, refs, hw, False, state.target, metric, econ.get(hw)) \
            or Drawn(DATA)
        sim_side = _drawn(pts, refs, hw, True, state.target, metric, econ.get(hw))
        sides = [d for d in (data_side, sim_side) if d is not None]
        has_value = any(d.at_target.status == "ok" for d in sides)
        stricter = None if has_value else _stricter_figure(
            data.stricter, hw, state.target, metric, econ.get(hw))
        c = cover.set_index("hardware").loc[hw] if not cover.empty and hw in set(cover.hardware) \
            else None
        summaries.append(HardwareSummary(
            hardware=hw, name=name, data=data_side, simulated=sim_side,
            multiple_at_target=None, multiple_at_peak=None,
            runs=int(c.runs) if c is not None else 0, points=int(c.points) if c is not None else 0,
            target_note="" if has_value else _target_note(name, sides, stricter, target_text,
                                                          state.pct, metric),
            stricter=stricter))
    base = next((s for s in summaries if s.hardware == baseline), None)
    if base is not None:
        summaries = [s if s is base else dataclasses.replace(
            s, multiple_at_target=_multiple_at_target(s, base, state.target, state.pct),
            multiple_at_peak=_multiple_at_peak(s, base)) for s in summaries]

    cover_by_hw = {r.hardware: r for r in cover.itertuples()} if not cover.empty else {}
    for hw in state.hw:
        name = catalog.hardware_name(hw)
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
                notes.append(f"{name}: {c.missing_pct} point(s) have no {pct_label(state.pct)} "
                             "interactivity in their source and are not drawn (never guessed "
                             "from another percentile).")
            if c.missing_pct_simulated:
                given = _simulated_percentiles()
                notes.append(f"{name}: {c.missing_pct_simulated} simulated point(s) have no "
                             f"{pct_label(state.pct)} (the simulator gives {given}; too few "
                             f"measured sources report a {pct_label(state.pct)} to model its spread, "
                             f"so none is claimed); choose {given.split(' and ')[-1]} to see "
                             "the simulated curves.")
            if c.missing_y:
                notes.append(f"{name}: {c.missing_y} point(s) have no {state.y} throughput "
                             "in their source and are not drawn.")
    if state.pct != "p50" and any(s.simulated is not None and s.simulated.has_curve
                                  for s in summaries):
        from opx.simulate.spread import load, note_text
        text = note_text(load(), state.pct)
        if text:
            notes.append(f"Simulated curves at {pct_label(state.pct)}: {text}.")
    if state.conc and near.empty:
        notes.append(f"No run has a point near concurrency {state.conc:,.0f} under these filters.")
    drawn_sim = {s.hardware for s in summaries if s.simulated is not None and s.simulated.has_curve}
    for hw, a in anchoring.items():
        if hw in drawn_sim:
            notes.append(f"{catalog.hardware_name(hw)} simulated curve: {a.text}.")
    if drawn_sim:
        from opx.simulate.anchor_validation import summary_text
        text = summary_text()
        if text:
            notes.append(f"Simulated curves' error: {text}.")
    return ExplorerView(state=state, baseline=baseline, points=pts, references=refs,
                        summaries=summaries, notes=notes, operating=near, anchoring=anchoring)


def _multiple_at_target(s: HardwareSummary, base: HardwareSummary, target: float,
                        pct: str) -> Multiple:
    """A(x) / B(x), like with like; else why there is none, in words true of what is drawn."""
    target_text = f"{format_number(target)} tok/s/user"
    pair = like_with_like([f for d in s.drawn() if (f := d.target_figure)],
                          [f for d in base.drawn() if (f := d.target_figure)])
    if pair:
        return divide(*pair, base.name, f"at {target_text}")
    # Only a side with no figure at all at x leaves no pair; the baseline's reason first.
    lacking = [x for x in (base, s) if x.target_note]
    if len(lacking) == 2 and base.stricter and s.stricter and base.stricter.pct == s.stricter.pct:
        stricter = pct_label(s.stricter.pct)
        reason = (f"no {pct_label(pct)} figure of {s.name} or {base.name} at {target_text}; their "
                  f"{stricter} figures reach it, so their {pct_label(pct)} interactivity does too")
        if _at(s.stricter.x, target) and _at(base.stricter.x, target) and base.stricter.value:
            # both stricter figures sit at the target: their multiple is the one at that percentile
            reason += (f" ({metrics.format_multiple(s.stricter.value / base.stricter.value)} "
                       f"at {stricter})")
        return Multiple(None, reason)
    return Multiple(None, lacking[0].target_note)


def _at(x: float, target: float) -> bool:
    return abs(x - target) <= SNAP * target


def _multiple_at_peak(s: HardwareSummary, base: HardwareSummary) -> Multiple:
    """max A / max B, like with like (data peaks, else simulated peaks, else mixed and named)."""
    pair = like_with_like([f for d in s.drawn() if (f := d.peak_figure)],
                          [f for d in base.drawn() if (f := d.peak_figure)])
    if pair:
        return divide(*pair, base.name, "at peak")
    missing = base if not any(d.peak is not None for d in base.drawn()) else s
    return Multiple(None, f"no {missing.name} data")


def _drawn(pts: pd.DataFrame, refs: pd.DataFrame, hw: str, simulated: bool, target: float,
           metric: metrics.Metric, econ) -> Drawn | None:
    """One kind of figures of one hardware as drawn: its envelope and its reference lines."""
    env = _rows(pts, hw, simulated, envelope=True)
    ref = _rows(refs, hw, simulated)
    if env.empty and ref.empty:
        return None
    v, prov, src = _value_on_envelope(pts, hw, simulated, target)
    marks = pd.concat([df.assign(unstated=unstated) for df, unstated in ((env, False), (ref, True))
                       if not df.empty], ignore_index=True)
    top = marks.loc[marks.tput.idxmax()]
    return Drawn(
        kind=SIMULATED if simulated else DATA, at_target=_in_metric(v, metric, econ),
        target_provenance=prov, target_source=src,
        peak=_metric_value(metric, econ, top.tput),
        peak_provenance=top.provenance + (" (interactivity not stated)" if top.unstated else ""),
        peak_source=top.source_text,
        x_lo=float(env.x.min()) if not env.empty else None,
        x_hi=float(env.x.max()) if not env.empty else None)


def _rows(df: pd.DataFrame, hw: str, simulated: bool, envelope: bool = False) -> pd.DataFrame:
    if df.empty:
        return df
    keep = (df.hardware == hw) & (df.simulated == simulated)
    return df[keep & df.on_envelope] if envelope else df[keep]


def _stricter_figure(frames: dict[str, pd.DataFrame], hw: str, target: float,
                     metric: metrics.Metric, econ) -> StricterFigure | None:
    """The best non-simulated figure at a stricter percentile that reaches the target: its
    interactivity at the chosen percentile is at least as high (TPOT P50 <= P90 <= P99 for the
    same requests), so the target is reached there too."""
    for pct, df in frames.items():
        if df.empty:
            continue
        env = df[(df.hardware == hw) & ~df.simulated.astype(bool) & df.on_envelope
                 & (df.x >= target * (1 - SNAP))]
        if env.empty:
            continue
        top = env.loc[env.y.idxmax()]
        value = _metric_value(metric, econ, top.y)
        if value is not None:
            return StricterFigure(pct, float(top.x), value, str(top.provenance),
                                  _source_text(top.source, top.source_url))
    return None


def _target_note(name: str, sides: list[Drawn], stricter: StricterFigure | None,
                 target_text: str, pct: str, metric: metrics.Metric) -> str:
    """Why a hardware has no value at the target, true of everything drawn for it (its data and
    its simulated curve) and of what a stricter percentile says."""
    if stricter is not None:
        bound = "at least" if metric.direction == "higher" else "at most"
        return (f"{name} has no {pct_label(pct)} figure at {target_text}; its "
                f"{pct_label(stricter.pct)} {_provenance_words(stricter.provenance)} figure reaches "
                f"it, so its {pct_label(pct)} interactivity does too ({bound} "
                f"{metrics.format_value(stricter.value)} {metric.unit} there)")
    curves = [d for d in sides if d.has_curve]
    if not curves:
        if any(d.peak is not None for d in sides):
            return f"{name} has no figure with a {pct_label(pct)} interactivity"
        return f"no {name} data"
    statuses = {d.at_target.status for d in curves}
    simulated = any(d.kind == SIMULATED for d in curves)
    if statuses == {"not_reachable"}:
        detail = "; ".join(_edge(d, top=True) for d in curves)
        return f"{name} cannot reach {target_text}" + (f" ({detail})" if simulated else "")
    if statuses == {"below_range"}:
        if not simulated:
            return f"{target_text} is below {name}'s measured range"
        ranges = " and ".join(dict.fromkeys("simulated" if d.kind == SIMULATED else "measured"
                                            for d in curves))
        detail = "; ".join(_edge(d, top=False) for d in curves)
        return f"{target_text} is below {name}'s {ranges} range ({detail})"
    # the target falls between what the data covers and what the simulation covers
    detail = "; ".join(_edge(d, top=d.at_target.status == "not_reachable") for d in curves)
    return f"{name} has no figure at {target_text} ({detail})"


def _edge(d: Drawn, top: bool) -> str:
    """Where one kind's curve ends ("simulated curve tops out at 327 tok/s/user")."""
    x = metrics.format_value(d.x_hi if top else d.x_lo)
    if d.kind == SIMULATED:
        return f"simulated curve {'tops out' if top else 'starts'} at {x} tok/s/user"
    return f"data {'top out' if top else 'start'} at {x} tok/s/user"


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
        for band in ("band_lo", "band_hi"):
            if band in df:
                df[band] = [_metric_value(metric, econ.get(h), t) for h, t in zip(df.hardware, df[band])]
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
