"""What the Explorer shows for a view state, computed from the store; no Streamlit.

The pages, the tests and the CLI export all call `explore`, so they show the same figures.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models import Catalog, Deployment, ViewState, pct_label
from models.view import RUN_FILTER_FIELDS, format_number
from opx import store
from opx.curves import metrics
from opx.store import queries
from opx.answers.anchoring import anchor_view, fits_for
from opx.answers.run_labels import deployment_label, deployment_labels, given
from opx.curves.economics import economics_for
from opx.curves.frontier import DATA, SIMULATED, Kind, Multiple, ValueAt
from opx.answers import resolve as resolver
from opx.answers.resolve import STRICTER, Answer, Peak
from opx.config import location


@dataclass(frozen=True)
class Drawn:
    """What is drawn for one hardware of one kind (data, or simulated): its value at the target
    (from `opx.answers.resolve`: the data's figure, or what the projection alone says), its peak and the
    interactivity its curve spans. Values are in the chosen metric."""
    kind: Kind
    at_target: ValueAt = ValueAt("no_data")
    peak: float | None = None          # highest throughput drawn: curve or reference line
    x_lo: float | None = None          # the curve's interactivity span (None: no curve drawn)
    x_hi: float | None = None

    @property
    def has_curve(self) -> bool:
        return self.x_lo is not None


@dataclass(frozen=True)
class HardwareSummary:
    """One hardware in a view: its figure at the target (`answer`, from `opx.answers.resolve`, the one
    function every page, export and brief reads), its one peak, and the curves drawn for it."""
    hardware: str
    name: str
    answer: Answer
    peak_figure: Peak
    projection: Answer                 # what the simulated curve alone says at the target
    data: Drawn                        # measured / published / preview / derived curve
    simulated: Drawn | None            # None: nothing simulated is drawn for this hardware
    multiple_at_target: Multiple | None    # None for the baseline itself
    multiple_at_peak: Multiple | None
    runs: int
    points: int

    @property
    def at_target(self) -> ValueAt:
        """The answer as a value at the target."""
        return _value_of(self.answer)

    @property
    def target_note(self) -> str:
        return "" if self.answer.ok else self.answer.reason

    @property
    def target_provenance(self) -> str:
        return self.answer.provenance

    @property
    def target_source(self) -> str:
        return "; ".join(dict.fromkeys(c.source for c in self.answer.configs if c.source))

    @property
    def simulated_only(self) -> bool:
        """The figure at the target is the projection's."""
        return self.answer.kind == SIMULATED

    @property
    def simulated_at_target(self) -> ValueAt | None:
        """What the projection alone says at the target, beside the answer (None without a
        simulated curve)."""
        return self.simulated.at_target if self.simulated and self.simulated.has_curve else None

    @property
    def peak(self) -> float | None:
        return self.peak_figure.value

    @property
    def peak_provenance(self) -> str:
        return self.peak_figure.provenance

    @property
    def peak_source(self) -> str:
        return self.peak_figure.source

    @property
    def reachable(self) -> bool | None:
        return self.answer.reachable

    def drawn(self) -> list[Drawn]:
        return [d for d in (self.data, self.simulated) if d is not None]


CAVEAT_CHARS = 160


def _caveat(note: str) -> str:
    """A point's note as a caveat beside a figure: without the source row's id, and a long
    derivation cut to what it is derived from (the whole note is in "Sources and notes")."""
    note = re.sub(r"^row \S+: ", "", str(note).strip())
    head = note.find(": ", 40)
    if len(note) > CAVEAT_CHARS and 0 < head <= CAVEAT_CHARS:
        return note[:head]
    return metrics.cut_text(note, CAVEAT_CHARS)


@dataclass
class ExplorerView:
    state: ViewState
    baseline: str | None
    points: pd.DataFrame              # chart marks: envelope / run-frontier / other points
    references: pd.DataFrame          # throughput figures with no stated interactivity
    summaries: list[HardwareSummary]
    notes: list[str] = field(default_factory=list)
    # the notes that say a chosen hardware has nothing here (also in `notes`): a page shows them
    # where they are seen, not folded away
    missing: list[str] = field(default_factory=list)
    operating: pd.DataFrame = field(default_factory=pd.DataFrame)   # points at `conc`, if asked
    anchoring: dict = field(default_factory=dict)   # hardware -> opx.answers.anchoring.Anchoring

    def empty_reason(self) -> str:
        """Why the chart draws no curve, and the change that would draw one ("" when it draws)."""
        if not self.points.empty or not self.summaries:
            return ""
        fixes = list(dict.fromkeys(s.answer.fix for s in self.summaries if s.answer.fix))
        pct = pct_label(self.state.pct)
        return (f"No figure of these systems has a {pct} interactivity"
                + (" under these filters" if self.state.run_filter_text() or self.state.source
                   else "") + " to draw" + (f": {fixes[0]}" if len(fixes) == 1 else
                                           "".join(f"; {s.name}: {s.answer.fix}"
                                                   for s in self.summaries if s.answer.fix))
                + ".")

    def run_ids(self) -> list[str]:
        """The runs whose figures are on screen."""
        ids = [df.run_id for df in (self.points, self.references) if not df.empty]
        return sorted(set(pd.concat(ids))) if ids else []

    def caveats(self) -> list[str]:
        """What the sources say about the figures on the cards (each hardware's figure at the
        target and its peak): the notes of the data points behind them, one line per hardware
        and figure, so a caveat is read beside the figure it qualifies."""
        return list(self._caveats)

    def tables_made(self) -> ExplorerView:
        """This view with its caveats and tables made, kept with it (in its `__dict__`, so in a
        pickled copy too): a page caches the view and draws them at every rerun."""
        self._caveats, self._provenance, self._table     # noqa: B018 (made on first read)
        return self

    @functools.cached_property
    def _caveats(self) -> list[str]:
        out = []
        for s in self.summaries:
            for what, rows in (("at the target", self._points_behind(s)),
                               ("peak", self._peak_behind(s))):
                notes = [n for n in dict.fromkeys(_caveat(r) for r in rows) if n]
                if notes:
                    out.append(f"{s.name}, {what}: {'; '.join(notes)}")
        return list(dict.fromkeys(out))

    @functools.cached_property
    def _noted(self) -> tuple[list[tuple], list[tuple]]:
        """The points and the reference figures whose source says something about them, as
        (hardware, simulated, run_id, x, y, note): the only rows a caveat can come from."""
        cols = ["hardware", "simulated", "run_id", "x", "y", "point_note"]
        return tuple(list(df.loc[df.point_note.notna(), cols].itertuples(index=False, name=None))
                     if not df.empty and "point_note" in df else []
                     for df in (self.points, self.references))

    def _points_behind(self, s) -> list[str]:
        if not s.answer.ok or s.answer.kind == SIMULATED:
            return []
        keys = {(c.run_id, round(c.x, 6)) for c in s.answer.configs}
        return [str(n) for _, _, r, x, _, n in self._noted[0] if (r, round(x, 6)) in keys]

    def _peak_behind(self, s) -> list[str]:
        value = s.peak_figure.value
        if value is None:
            return []
        return [str(n) for rows in reversed(self._noted)
                for hw, simulated, _, _, y, n in rows
                if hw == s.hardware and not simulated
                and (y == value or abs(y - value) <= 1e-8 + 1e-5 * abs(value))]  # np.isclose

    def provenance_table(self) -> pd.DataFrame:
        """One row per figure drawn: where it comes from and what its source says about it."""
        return self._provenance.copy()

    @functools.cached_property
    def _provenance(self) -> pd.DataFrame:
        cols = {"hardware_name": "Hardware", "label": "Run", "provenance": "Provenance",
                "point_note": "Note", "source_text": "Source"}
        frames = [df[list(cols)] for df in (self.points, self.references) if not df.empty]
        if not frames:
            return pd.DataFrame(columns=list(cols.values()))
        return pd.concat(frames).drop_duplicates().rename(columns=cols).reset_index(drop=True)

    def table(self) -> pd.DataFrame:
        """The per-hardware table under the chart, as shown: the figure at the target and how it
        was obtained (the resolver's), what the projection alone says there, the one peak; every
        cell a word or a formatted number."""
        return self._table.copy()

    @functools.cached_property
    def _table(self) -> pd.DataFrame:
        y = metrics.y_metric(self.state.y)
        peak = "Peak" if y.direction == "higher" else "Best (at peak throughput)"
        at = f"At {format_number(self.state.target)} tok/s/user"
        base_name = next((s.name for s in self.summaries if s.hardware == self.baseline), "")
        pct = pct_label(self.state.pct)
        rows = []
        for s in self.summaries:
            sim = s.simulated
            a = s.answer
            rows.append({
                "Hardware": s.name,
                f"{at} ({y.unit})": a.cell(y),
                "Kind": ("projection" if a.kind == SIMULATED else a.kind) or "no figure",
                "Provenance at target": a.provenance or "no figure",
                "Runs at target": (f"{a.spread.runs} runs" if a.spread else a.runs_text(y)
                                   or ("projection" if a.ok else "no figure")),
                "How": a.how_text(self.state.target),
                f"Projection at target ({y.unit})": _projection_cell(s.projection, sim, pct, y),
                f"× {base_name} at target": "baseline" if s.multiple_at_target is None
                    else s.multiple_at_target.text,
                f"{peak} ({y.unit})": _peak_cell(s.peak, "no data", y),
                "Provenance at peak": s.peak_provenance,
                "Simulated curve": (self.anchoring[s.hardware].text
                                    if sim and s.hardware in self.anchoring else ""),
                f"× {base_name} at peak": "baseline" if s.multiple_at_peak is None
                    else s.multiple_at_peak.text,
                "Source": "; ".join(dict.fromkeys(x for x in (s.target_source, s.peak_source)
                                                  if x)),
            })
        return pd.DataFrame(rows)


def _projection_cell(p: Answer, d: Drawn | None, pct: str, y: metrics.Metric) -> str:
    """The projection's own value at the target, or where its curve ends."""
    if p.ok:
        return p.cell(y)
    if d is None or not d.has_curve:
        return f"no {pct} simulation"
    return f"not reachable (tops out at {metrics.format_value(d.x_hi)})"


def _peak_cell(value: float | None, missing: str, metric: metrics.Metric | None = None) -> str:
    return metrics.format_value(value, metric) if value is not None else missing


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
    # what anchored simulated curves need (opx/answers/anchoring.py): the points a fit uses of each
    # hardware with a simulated curve, and their stored simulation parameters
    anchors: pd.DataFrame = field(default_factory=pd.DataFrame)
    sim_params: pd.DataFrame = field(default_factory=pd.DataFrame)
    # each hardware's anchored simulated curve (the fit, or why none): set by `prepare`
    fits: dict = field(default_factory=dict)


def query_key(state: ViewState) -> ViewState:
    """The part of a state the queries depend on (cache key of `fetch`)."""
    d = ViewState()
    return ViewState(model=state.model, workload=state.workload, hw=state.hw, pct=state.pct,
                     y=metrics.y_metric(state.y).base or state.y, source=state.source,
                     runs=state.runs, points=state.points, conc=state.conc,
                     unanchored=state.unanchored, target=d.target,
                     **{name: getattr(state, name) for name in RUN_FILTER_FIELDS})


def fetch(db: Path, state: ViewState) -> ExplorerData:
    f = queries.filters_for(state)
    with store.reading(db) as con:
        sim_params = queries.simulated_parameters(con, f)
        # anchors only for the hardware with a simulated curve, and only the points a fit uses
        anchors = (queries.anchor_points(con, dataclasses.replace(
            f, hardware=tuple(sim_params.hardware)), fitting=state.pct)
            if not sim_params.empty and not state.unanchored else pd.DataFrame())
        return ExplorerData(
            points=queries.chart_points(con, f, run_curves=state.runs, other_points=state.points),
            references=queries.reference_marks(con, f),
            coverage=queries.coverage(con, f),
            near=(queries.points_near_concurrency(con, f, state.conc) if state.conc
                  else pd.DataFrame()),
            stricter={p: queries.chart_points(con, dataclasses.replace(f, pct=p))
                      for p in STRICTER[state.pct]},
            anchors=anchors, sim_params=sim_params)


FETCH_CACHE_SIZE = 256


@functools.lru_cache(maxsize=FETCH_CACHE_SIZE)
def _fetch_cached(db: str, stamp: tuple[int, int], key_json: str) -> ExplorerData:
    return fetch(location(db), ViewState.model_validate_json(key_json))


def fetch_cached(db: Path, state: ViewState) -> ExplorerData:
    """`fetch`, shared by every session of the process and keyed on the query and the data
    version (the database file's stamp): moving the target costs no query, and new data shows on
    the next interaction. Callers must not mutate the frames."""
    return _fetch_cached(str(db), store.data_stamp(location(db)), query_key(state).model_dump_json())


def explore(db: Path, state: ViewState, catalog: Catalog) -> ExplorerView:
    # everything but the target and the baseline is prepared once per view and data version:
    # moving the target reads it and resolves the figures at the target only
    return finish(prepared(db, state, catalog), state, catalog)


def prepared(db: Path, state: ViewState, catalog: Catalog) -> "Prepared":
    """The view prepared for any target, kept per view and data version."""
    key = prepare_key(state).model_dump_json()
    return _prepared_cached(str(db), store.data_stamp(location(db)), key, catalog_key(catalog))


@dataclass(frozen=True)
class Prepared:
    """A view's data ready to resolve at any target: anchored, labelled, in the view's metric,
    with each hardware's peaks and curve spans (nothing here depends on the target)."""
    data: ExplorerData
    points: pd.DataFrame
    references: pd.DataFrame
    near: pd.DataFrame
    stricter: dict
    anchoring: dict
    econ: dict
    inputs: dict                    # hardware -> opx.answers.resolve.Inputs
    peaks: dict                     # hardware -> its one Peak
    drawn: dict                     # (hardware, simulated) -> Drawn without a value at target


def prepare_key(state: ViewState) -> ViewState:
    """The part of a state `prepare` depends on: the query's, the metric and its prices."""
    return query_key(state).model_copy(update={"y": state.y, "price": state.price,
                                               "power": state.power})


_CATALOGS: dict[str, Catalog] = {}


def catalog_key(catalog: Catalog) -> str:
    """A cache key for a catalog: its content's hash (equal catalogs are interchangeable); the
    catalog is kept so that a cached function given the key can have it back (`catalog_of`)."""
    from opx.catalog import fingerprint
    key = fingerprint(catalog)
    if key not in _CATALOGS:
        if len(_CATALOGS) > 8:
            _CATALOGS.clear()
        _CATALOGS[key] = catalog
    return key


def catalog_of(key: str) -> Catalog:
    return _CATALOGS[key]


@functools.lru_cache(maxsize=FETCH_CACHE_SIZE)
def _prepared_cached(db: str, stamp: tuple[int, int], key_json: str, catalog_key: str
                     ) -> Prepared:
    state = ViewState.model_validate_json(key_json)
    return prepare(fetch_cached(location(db), state), location(db), state, catalog_of(catalog_key))


def prepare(data: ExplorerData, db: Path, state: ViewState, catalog: Catalog) -> Prepared:
    """`data` anchored (the fits found or made: opx.answers.anchoring), labelled and converted to the
    view's metric, with each hardware's resolver inputs, peak and drawn curves."""
    data = dataclasses.replace(data, fits=fits_for(db, state, data.anchors, data.sim_params,
                                                   catalog))
    pts, refs, cover, near = data.points, data.references, data.coverage, data.near
    metric = metrics.y_metric(state.y)
    pts, anchoring = anchor_view(pts, data.fits, state, metric.base or state.y)
    pts = _decorate(pts, catalog)
    refs = _decorate(refs, catalog)
    econ = {hw: economics_for(catalog, state, hw) for hw in state.hw} if metric.derived else {}
    pts, refs = _convert(pts, metric, econ), _convert(refs, metric, econ)
    near = _convert(_decorate(near, catalog), metric, econ) if not near.empty else near
    stricter = {q: _convert(_decorate(df, catalog), metric, econ)
                for q, df in data.stricter.items()}
    inputs, peaks, drawn = {}, {}, {}
    for hw in state.hw:
        e = econ.get(hw)
        c = cover.set_index("hardware").loc[hw] if not cover.empty and hw in set(cover.hardware) \
            else None
        inputs[hw] = resolver.Inputs(
            pts, refs, stricter, convert=lambda t, e=e: _metric_value(metric, e, t),
            per_statistic=({q: int(c[f"n_{q}"]) for q in ("mean", "p50", "p90", "p99")}
                           if c is not None and "n_mean" in c else {}),
            filtered=bool(state.run_filter_text() or state.source))
        peaks[hw] = resolver.peak_of(inputs[hw], hw)
        for simulated in (False, True):
            drawn[hw, simulated] = _drawn(inputs[hw], hw, simulated)
    return Prepared(data, pts, refs, near, stricter, anchoring, econ, inputs, peaks, drawn)


def finish(p: Prepared, state: ViewState, catalog: Catalog) -> ExplorerView:
    """The view at the state's target and baseline, from its prepared data."""
    pts, refs, cover, near = p.points, p.references, p.data.coverage, p.near
    anchoring, econ = p.anchoring, p.econ
    metric = metrics.y_metric(state.y)
    baseline = state.effective_baseline()
    missing: list[str] = []
    notes: list[str] = ([f"Only runs with {state.run_filter_text()} are drawn."]
                        if state.run_filter_text() else [])

    # Simulated runs get envelopes of their own and never mix into the data's: each hardware has
    # a data side and a simulated side, each with its value at the target and its peak, and a
    # multiple divides the two figures shown, saying their kinds (`opx.answers.resolve`).
    summaries: list[HardwareSummary] = []
    for hw in state.hw:
        name = catalog.hardware_name(hw)
        c = cover.set_index("hardware").loc[hw] if not cover.empty and hw in set(cover.hardware) \
            else None
        inputs = p.inputs[hw]
        answer = resolver.resolve(inputs, hw, name, state.target, state.pct, metric)
        projected = resolver.projection(inputs, hw, name, state.target, state.pct, metric)
        data_drawn, sim_drawn = p.drawn[hw, False], p.drawn[hw, True]
        peak = p.peaks[hw]
        if peak.value is None and answer.reason:      # nothing drawn: the answer says why
            peak = dataclasses.replace(peak, reason=answer.reason
                                       + (f" ({answer.fix})" if answer.fix else ""))
        summaries.append(HardwareSummary(
            hardware=hw, name=name, answer=answer, peak_figure=peak,
            data=(dataclasses.replace(data_drawn, at_target=_value_of(answer))
                  if data_drawn is not None and answer.kind == DATA
                  else data_drawn or Drawn(DATA)),
            projection=projected,
            simulated=(dataclasses.replace(sim_drawn, at_target=_value_of(projected))
                       if sim_drawn is not None else None),
            multiple_at_target=None, multiple_at_peak=None,
            runs=int(c.runs) if c is not None else 0, points=int(c.points) if c is not None else 0))
    base = next((s for s in summaries if s.hardware == baseline), None)
    if base is not None:
        summaries = [s if s is base else dataclasses.replace(
            s, multiple_at_target=resolver.multiple_at_target(s.answer, base.answer, state.target,
                                                              metric),
            multiple_at_peak=resolver.multiple_at_peak(s.peak_figure, base.peak_figure, s.name,
                                                       base.name, metric))
            for s in summaries]
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
            missing.append(f"No runs of {name} for {catalog.model_name(state.model)} on "
                           f"{catalog.workload_name(state.workload)} under these filters.")
            notes.append(missing[-1])
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
                stated = metrics.y_metric(metric.base or state.y).label
                stated = stated[0].lower() + stated[1:]
                notes.append(f"{name}: {c.missing_y} point(s) have no {stated} in their source"
                             + (f", so no {metric.label.lower()}," if metric.derived else "")
                             + " and are not drawn.")
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
    # each curve's held-out error as its anchoring gives it (the Simulate chart quotes the same),
    # one note per figure with the hardware it applies to
    from opx.simulate.anchor_validation import fit_text
    by_text: dict[str, list[str]] = {}
    for hw in (h for h in state.hw if h in drawn_sim):
        text = fit_text(anchoring.get(hw), state.pct)
        if text:
            by_text.setdefault(text, []).append(catalog.hardware_name(hw))
    for text, names in by_text.items():
        notes.append(f"Simulated curves' error ({', '.join(names)}): {text}.")
    return ExplorerView(state=state, baseline=baseline, points=pts, references=refs,
                        summaries=summaries, notes=notes, missing=missing, operating=near,
                        anchoring=anchoring)


def _drawn(inputs: resolver.Inputs, hw: str, simulated: bool) -> Drawn | None:
    """One kind of figures of one hardware as drawn: its envelope, reference lines and peak
    (its value at the target is set by `finish`)."""
    env = inputs.envelope(hw, simulated)      # the resolver's, made once per prepared view
    if env.empty and _rows(inputs.references, hw, simulated).empty:
        return None
    return Drawn(kind=SIMULATED if simulated else DATA,
                 peak=resolver.peak_of_kind(inputs, hw, simulated).value,
                 x_lo=float(env.x.min()) if not env.empty else None,
                 x_hi=float(env.x.max()) if not env.empty else None)


def _value_of(answer: Answer) -> ValueAt:
    """An answer as a value at the target (the chart's circles and the JSON's statuses)."""
    return (ValueAt("ok", answer.value, exact=answer.how == "point") if answer.ok
            else ValueAt(answer.status))


def _rows(df: pd.DataFrame, hw: str, simulated: bool) -> pd.DataFrame:
    if df.empty:
        return df
    return df[(df.hardware == hw) & (df.simulated == simulated)]


def _simulated_percentiles() -> str:
    """The percentiles simulated points carry: P50, and those the spread model supports."""
    from opx.simulate.spread import load, modelled
    qs = sorted({name.split("_")[1] for name in modelled(load())})
    return " and ".join(["P50"] + [q.upper() for q in qs])


def _convert(df: pd.DataFrame, metric: metrics.Metric, econ: dict) -> pd.DataFrame:
    """Keep throughput per GPU in `tput`; put the chosen metric in `y` (cost and power metrics
    from each hardware's price and power)."""
    df = df.copy()
    df["tput"] = df["y"] if "y" in df else []
    if "y_lo" in df:            # a repeat set's least and most throughput (opx/store/repeats.py)
        df["tput_lo"], df["tput_hi"] = df["y_lo"], df["y_hi"]
    if metric.derived and not df.empty:
        for band in ("band_lo", "band_hi", "y_lo", "y_hi"):
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
    """Add display columns: hardware name, deployment label, framework and version, source
    text."""
    if df.empty:
        return df.assign(hardware_name=[], deployment=[], source_text=[], framework_text=[])
    df = df.copy()
    df["hardware_name"] = [catalog.hardware_name(h) for h in df.hardware]
    versions = df["framework_version"] if "framework_version" in df else pd.Series("", index=df.index)
    df["framework_text"] = [" ".join(str(p) for p in (f, v) if given(p) and str(p))
                            for f, v in zip(df.framework, versions)]
    df["deployment"] = deployment_labels(df)
    df["source_text"] = [_source_text(s, u) for s, u in zip(df.source, df.source_url)]
    df["date"] = df["date"].astype(str).replace({"NaT": "", "None": ""})
    return df


# -- the JSON every page gives of a figure (the field names of every export) ----------------

def answer_json(s: HardwareSummary, target: float) -> dict[str, object]:
    """One hardware's figure at the target as every page's JSON gives it: `at_target` is the
    resolver's (`opx.answers.resolve`), with how it was obtained and the configuration(s) behind it;
    `peak` the hardware's one peak."""
    a = s.answer
    return {"hardware": s.hardware, "name": s.name,
            "at_target": a.value, "at_target_status": "ok" if a.ok else a.status.replace("_", " "),
            "at_target_exact": a.how == "point", "at_target_how": a.how,
            "at_target_kind": a.kind, "at_target_bound": a.bound,
            "at_target_how_text": a.how_text(target),
            "at_target_throughput_per_gpu": a.tput, "at_target_interactivity": a.x,
            "at_target_spread": a.spread.as_json() if a.spread else None,
            "configurations": [c.as_json() for c in a.configs],
            "reachable": s.reachable, "target_note": s.target_note, "target_fix": a.fix,
            "target_provenance": s.target_provenance, "target_source": s.target_source,
            "peak": s.peak, "peak_provenance": s.peak_provenance, "peak_source": s.peak_source}


def multiple_json(prefix: str, m) -> dict[str, object]:
    """A multiple: its number (None when there is none), its text, and what it divides
    ("data", "simulated" or "mixed", and e.g. "preview vs derived")."""
    if m is None:
        return {prefix: None, f"{prefix}_text": "baseline", f"{prefix}_kind": "",
                f"{prefix}_basis": "", f"{prefix}_range": None}
    r = m.range
    return {prefix: m.value, f"{prefix}_text": m.text, f"{prefix}_kind": m.kind,
            f"{prefix}_basis": m.basis,
            f"{prefix}_range": {"lo": r[0], "hi": r[1]} if r else None}
