"""The one answer to "how much does this hardware deliver at this target": every page, export and
brief reads it, so a figure is the same number wherever it appears.

For a view (model, workload, statistic, target, metric, filters) and one hardware, `resolve`
walks one list of rules and stops at the first that gives a figure (docs/metrics.md, "The figure
at the target"):

1. the data envelope at the view's statistic has the target in its span: its value there, at a
   point or interpolated (PCHIP) between the two points around it, both named;
2. the data envelope starts above the target: "at least" the throughput of its slowest point,
   which is faster than the target and so meets it (named);
3. no data point at the statistic reaches the target, but a point of a stricter statistic does
   (P90 for a P50 target: the same requests' P50 TPOT is at most their P90 TPOT): "at least"
   that point's throughput, said so;
4. only then the projection (the simulated envelope, anchored where it can be): its value at the
   target, or "at least" its slowest point when the target lies below it;
5. otherwise there is no figure, and the answer says why and what change would give one.

Data answers before a projection: a figure that a source states, or that lies between two
stated figures, is not replaced by a model's estimate. A hardware has one peak: its data's
highest throughput where it has data, else its projection's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable, Literal

import numpy as np
import pandas as pd

from models import pct_label
from models.view import format_number
from opx.curves import metrics
from opx.curves.frontier import DATA, SIMULATED, SNAP, Figure, Multiple, Spread, value_at

# Statistics whose TPOT is at least this one's, so whose interactivity is at most this one's: a
# point that reaches x at P90 reaches x at P50 too. The mean has no such order with any
# percentile (a long tail can put it above P90).
STRICTER = {"mean": (), "p50": ("p90", "p99"), "p90": ("p99",), "p99": ()}

How = Literal["point", "interpolated", "at_least", "stricter", "none"]

RULE = ("Data first: a figure stated at the target or interpolated between two stated figures; "
        "below the data's range, at least its slowest point (it meets the target); then a "
        "stricter statistic's point that meets it; a projection only where no data meets the "
        "target.")


def own_label(label: str, hardware_name: str) -> str:
    """A run's label without a leading hardware name (said beside it already)."""
    for sep in (" · ", " - ", ": ", " "):
        if hardware_name and label.startswith(hardware_name + sep):
            return label[len(hardware_name) + len(sep):]
    return "" if label == hardware_name else label


@dataclass(frozen=True)
class Config:
    """One operating point behind an answer: the run's configuration and the point's load."""
    run_id: str
    label: str
    framework: str
    precision: str
    deployment: str
    gpus_total: int
    concurrency: float | None
    x: float                      # interactivity at `pct` (tok/s/user)
    pct: str
    tput: float                   # base throughput per GPU (the metric's base, e.g. total)
    provenance: str
    source: str
    ttft_s: float | None = None   # TTFT at `pct`, where the source states it
    hardware_name: str = ""

    def text(self) -> str:
        """"vLLM+Dynamo (preview) · disagg 72 GPUs · 387 tok/s/user (P90)", "sglang fp4 · TP8
        EP8 · concurrency 64 · 412 tok/s/user (P50)": the run's own label (without the hardware's
        name, which is said beside it), else its framework and precision."""
        what = own_label(self.label, self.hardware_name) or " ".join(p for p in (self.framework, self.precision) if p)
        parts = [p for p in (what, self.deployment) if p]
        if self.concurrency is not None:
            parts.append(f"concurrency {self.concurrency:,.0f}")
        parts.append(f"{metrics.format_value(self.x)} tok/s/user ({pct_label(self.pct)})")
        return " · ".join(dict.fromkeys(parts))

    def as_json(self) -> dict:
        return {"run_id": self.run_id, "label": self.label, "framework": self.framework,
                "precision": self.precision, "deployment": self.deployment,
                "gpus_total": self.gpus_total, "concurrency": self.concurrency,
                "interactivity": self.x, "percentile": self.pct, "throughput_per_gpu": self.tput,
                "provenance": self.provenance, "source": self.source, "ttft_s": self.ttft_s}


@dataclass(frozen=True)
class Answer:
    """The figure of one hardware at the target, in the view's metric, and how it was obtained."""
    hardware: str
    name: str
    value: float | None = None          # in the view's metric; None: no figure
    tput: float | None = None           # the same figure as base throughput per GPU
    kind: str = ""                      # "data", "simulated" or "" (no figure)
    how: How = "none"
    configs: tuple[Config, ...] = ()    # the point(s) the figure comes from
    provenance: str = ""                # as shown: "preview", "interpolated between derived points"
    reason: str = ""                    # why there is no figure
    fix: str = ""                       # the change that would give one
    direction: str = "higher"           # the metric's: a bound is "at least" or "at most"
    x: float | None = None              # the interactivity the figure sits at
    missing: str = "no_data"            # without a figure: "not_reachable" or "no_data"
    spread: Spread | None = None        # over the repeated runs it rests on (None: one run)

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def bound(self) -> bool:
        """The figure is a bound (the target is met at least this well), not a value at it."""
        return self.how in ("at_least", "stricter")

    @property
    def status(self) -> str:
        return "ok" if self.ok else self.missing

    @property
    def reachable(self) -> bool | None:
        """Whether the target is met: True with a figure, False when the curves top out below
        it, None when nothing is drawn to say either."""
        return {"ok": True, "not_reachable": False}.get(self.status)

    @property
    def bound_word(self) -> str:
        return "at least" if self.direction == "higher" else "at most"

    @property
    def meeting(self) -> "Config | None":
        """The configuration behind the figure that meets the target (of two interpolated
        points, the faster one): what a plan deploys and Latency details."""
        return max(self.configs, key=lambda c: c.x) if self.configs else None

    @property
    def sign(self) -> str:
        """"≥" (or "≤" for a lower-is-better metric) before a bound, else nothing."""
        return ("≥" if self.direction == "higher" else "≤") if self.bound else ""

    def figure(self) -> Figure | None:
        return Figure(self.value, self.provenance, self.sign, self.spread) if self.ok else None

    def cell(self, metric: metrics.Metric) -> str:
        """The figure as a table cell: "1.7M", "≥ 1.7M", "1.58M (1.42-1.71M, 3 runs)", or the
        reason in a few words."""
        if not self.ok:
            return self.reason
        return self.figure().text(metric)

    def runs_text(self, metric: metrics.Metric) -> str:
        """What the figure rests on: "1.42-1.71M, 3 runs", "one run" (a data figure never reads
        as exact), or "" (a projection, or no figure)."""
        if not self.ok or self.kind != DATA:
            return ""
        return self.spread.text(metric) if self.spread else "one run"

    def short(self, metric: metrics.Metric) -> str:
        """The figure as a headline value, which must fit a card: the cell, or "no figure"."""
        return self.cell(metric) if self.ok else "no figure"

    def how_text(self, target: float) -> str:
        """How the figure was obtained, naming its point(s)."""
        t = f"{format_number(target)} tok/s/user"
        if not self.ok:
            return self.reason + (f"; {self.fix}" if self.fix else "")
        proj = "projection: " if self.kind == SIMULATED else ""
        names = [c.text() for c in self.configs]
        if self.how == "point":
            return f"{proj}the point {names[0]}"
        if self.how == "interpolated":
            return f"{proj}interpolated between {names[0]} and {names[1]}"
        if self.how == "at_least":
            return (f"{proj}{self.bound_word} this: {names[0]} is faster than {t} and so meets "
                    "it (the target is below the range)")
        return (f"{self.bound_word} this: {names[0]} meets {t} at a stricter statistic, so it "
                "meets it at this one too")

    def as_json(self, target: float) -> dict:
        return {"value": self.value, "throughput_per_gpu": self.tput, "kind": self.kind,
                "how": self.how, "bound": self.bound, "provenance": self.provenance,
                "how_text": self.how_text(target), "reason": self.reason, "fix": self.fix,
                "interactivity": self.x,
                "spread": self.spread.as_json() if self.spread else None,
                "configurations": [c.as_json() for c in self.configs]}


@dataclass(frozen=True)
class Peak:
    """The one peak of a hardware on a screen."""
    value: float | None
    provenance: str = ""
    source: str = ""
    reason: str = ""                 # why there is none, and the fix (as the target's answer says)

    def figure(self) -> Figure | None:
        return Figure(self.value, self.provenance) if self.value is not None else None


@dataclass(frozen=True)
class Inputs:
    """What the rules read for one hardware, in the view's metric: chart marks (`points`, with
    `x`, `y` in the metric, `tput` base throughput, `on_envelope`, `simulated`), reference marks
    (figures without an interactivity) and, per stricter statistic, that statistic's points."""
    points: pd.DataFrame
    references: pd.DataFrame
    stricter: dict[str, pd.DataFrame] = field(default_factory=dict)
    convert: Callable[[float], float | None] = float     # base throughput -> the metric
    # for the fix when there is no figure: drawable points per statistic under the filters, and
    # whether the view sets filters that could be cleared
    per_statistic: dict[str, int] = field(default_factory=dict)
    filtered: bool = False
    _envelopes: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def envelope(self, hw: str, simulated: bool, statistic: str | None = None) -> pd.DataFrame:
        """The hardware's envelope of one kind, from `points` or a stricter statistic's points,
        by interactivity; made once per Inputs (a prepared view's), so a new target reads it.
        Callers must not mutate it."""
        key = (hw, simulated, statistic)
        env = self._envelopes.get(key)
        if env is None:
            frame = self.points if statistic is None else self.stricter.get(statistic,
                                                                            pd.DataFrame())
            env = self._envelopes[key] = _envelope(frame, hw, simulated)
        return env

    def envelope_rows(self, hw: str, simulated: bool, statistic: str | None = None) -> tuple:
        """`envelope`'s rows as records with attribute access, made once: the rules read a
        point or two of an envelope at each target, and a pandas row costs more than the rule."""
        key = ("rows", hw, simulated, statistic)
        rows = self._envelopes.get(key)
        if rows is None:
            env = self.envelope(hw, simulated, statistic)
            rows = self._envelopes[key] = tuple(SimpleNamespace(**r)
                                                for r in env.to_dict("records"))
        return rows


def _envelope(pts: pd.DataFrame, hw: str, simulated: bool) -> pd.DataFrame:
    if pts.empty:
        return pts
    keep = (pts.hardware == hw) & pts.on_envelope.astype(bool) & (pts.simulated == simulated)
    return pts[keep].sort_values("x").reset_index(drop=True)


def config_of(row, pct: str) -> Config:
    def num(v):
        return None if v is None or pd.isna(v) else float(v)

    def text(v):
        return "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v)
    return Config(run_id=str(row.run_id), label=text(getattr(row, "label", "")),
                  framework=text(getattr(row, "framework", "")),
                  precision=text(getattr(row, "precision", "")),
                  deployment=text(getattr(row, "deployment", "")),
                  gpus_total=int(row.gpus_total), concurrency=num(getattr(row, "concurrency", None)),
                  x=float(row.x), pct=pct, tput=float(row.tput), provenance=str(row.provenance),
                  source=text(getattr(row, "source_text", "")),
                  ttft_s=num(getattr(row, "ttft", None)),
                  hardware_name=text(getattr(row, "hardware_name", "")))


def _from_envelope(inputs: Inputs, hw: str, simulated: bool, name: str, target: float,
                   pct: str, direction: str, kind: str) -> Answer | None:
    """Rules 1 and 2 (or 4) on one envelope: a value in its span, or at least its slowest point.
    Throughput is interpolated and then written in the metric (cost and energy are monotone in
    throughput, so the envelope is the same in either space)."""
    env = inputs.envelope(hw, simulated)
    if env.empty:
        return None
    rows = inputs.envelope_rows(hw, simulated)
    v = value_at(env.x.to_numpy(float), env.tput.to_numpy(float), target)
    common = dict(hardware=hw, name=name, kind=kind, direction=direction)
    if v.status == "ok":
        value = inputs.convert(v.value)
        if value is None:
            return None
        used = [rows[i] for i in v.neighbours]
        provs = " / ".join(dict.fromkeys(str(r.provenance) for r in used))
        if v.exact:
            row = used[0]
            return Answer(value=value, tput=v.value, how="point", configs=(config_of(row, pct),),
                          provenance=provs, x=float(row.x), spread=_spread_of(row, inputs),
                          **common)
        return Answer(value=value, tput=v.value, how="interpolated",
                      configs=tuple(config_of(r, pct) for r in used),
                      provenance=f"interpolated between {provs} points", x=target,
                      spread=_interpolated_spread(env, used, inputs, target), **common)
    if v.status == "below_range":
        row = rows[0]                        # the slowest point: the most throughput that meets it
        value = inputs.convert(float(row.tput))
        if value is None:
            return None
        return Answer(value=value, tput=float(row.tput), how="at_least",
                      configs=(config_of(row, pct),), provenance=str(row.provenance),
                      x=float(row.x), spread=_spread_of(row, inputs), **common)
    return None


def repeat_runs(row) -> int:
    n = getattr(row, "repeat_runs", 1)
    return 1 if n is None or pd.isna(n) else int(n)


def _spread(lo: float, hi: float, runs: int, inputs: Inputs) -> Spread | None:
    """A spread of base throughputs in the view's metric, low to high."""
    ends = [inputs.convert(float(lo)), inputs.convert(float(hi))]
    if None in ends:
        return None
    return Spread(min(ends), max(ends), runs)


def _spread_of(row, inputs: Inputs) -> Spread | None:
    """A configuration's spread over its repeat set (None: one run)."""
    if repeat_runs(row) < 2:
        return None
    return _spread(row.tput_lo, row.tput_hi, repeat_runs(row), inputs)


def _interpolated_spread(env: pd.DataFrame, used: list, inputs: Inputs,
                         target: float) -> Spread | None:
    """An interpolated figure's spread: where both points it lies between rest on repeated runs,
    the same interpolation through the envelope's lowest and highest runs (a lone point's own
    figure at both ends), with the fewer of their counts; else None."""
    runs = [repeat_runs(r) for r in used]
    if min(runs) < 2:
        return None
    xs = env.x.to_numpy(float)
    lo = value_at(xs, env.tput_lo.to_numpy(float), target)
    hi = value_at(xs, env.tput_hi.to_numpy(float), target)
    if lo.status != "ok" or hi.status != "ok":
        return None
    return _spread(lo.value, hi.value, min(runs), inputs)


def resolve(inputs: Inputs, hw: str, name: str, target: float, pct: str,
            metric: metrics.Metric) -> Answer:
    """The figure of `hw` at `target` tok/s/user (statistic `pct`) in `metric` (module doc)."""
    direction = metric.direction
    data = _from_envelope(inputs, hw, False, name, target, pct, direction, DATA)
    if data is not None:
        return data
    for q in STRICTER[pct]:
        meets = [r for r in inputs.envelope_rows(hw, False, q) if r.x >= target * (1 - SNAP)]
        value = inputs.convert(float(meets[0].tput)) if meets else None
        if value is not None:
            row = meets[0]                   # the slowest point that meets it: the most throughput
            return Answer(hw, name, value=value, tput=float(row.tput), kind=DATA,
                          how="stricter", configs=(config_of(row, q),),
                          provenance=str(row.provenance), direction=direction, x=float(row.x),
                          spread=_spread_of(row, inputs))
    sim = projection(inputs, hw, name, target, pct, metric)
    if sim.ok:
        return sim
    reason, fix, missing = why_none(inputs, hw, name, target, pct, (False, True))
    return Answer(hw, name, reason=reason, fix=fix, direction=direction, missing=missing)


def projection(inputs: Inputs, hw: str, name: str, target: float, pct: str,
               metric: metrics.Metric) -> Answer:
    """What the projection (the simulated envelope) alone says at the target, by rules 1 and 2:
    the resolver's rule 4, and the value the Explorer shows beside a data figure."""
    sim = _from_envelope(inputs, hw, True, name, target, pct, metric.direction, SIMULATED)
    if sim is not None:
        return sim
    reason, fix, missing = why_none(inputs, hw, name, target, pct, (True,))
    return Answer(hw, name, reason=reason, fix=fix, direction=metric.direction, missing=missing)


def why_none(inputs: Inputs, hw: str, name: str, target: float, pct: str,
              kinds: tuple[bool, ...]) -> tuple[str, str, str]:
    """Why no rule gave a figure, true of every curve of `kinds` (simulated or not) drawn for
    the hardware, the fix, and whether the target is out of reach or there is no figure."""
    t = f"{format_number(target)} tok/s/user"
    p = pct_label(pct)
    refs = inputs.references
    curves = [(k, e) for k, e in (("data", inputs.envelope(hw, False)),
                                  ("simulated curve", inputs.envelope(hw, True)))
              if (k != "data") in kinds and not e.empty]
    if curves:
        tops = "; ".join(f"{k} {'top' if k == 'data' else 'tops'} out at "
                         f"{metrics.format_value(float(e.x.max()))} tok/s/user" for k, e in curves)
        return (f"{name} cannot reach {t} ({tops})",
                "lower the target" + ("" if pct == "mean" else " or choose another statistic"),
                "not_reachable")
    if kinds == (True,):
        return f"no {p} simulation of {name}", "", "no_data"
    has_refs = not refs.empty and (refs.hardware == hw).any()
    others = sorted((q for q, n in inputs.per_statistic.items() if n and q != pct),
                    key=lambda q: -inputs.per_statistic[q])
    if others:
        best = others[0]
        n = inputs.per_statistic[best]
        fix = (f"switch to {pct_label(best)}: {n:,} of its figures state{'s' if n == 1 else ''} "
               f"a {pct_label(best)} interactivity")
    elif inputs.filtered:
        fix = "clear a filter: no figure of it under these filters states an interactivity"
    else:
        fix = "import a benchmark file of it for this model and workload (the Data page)"
    if has_refs:
        return (f"{name} has no figure with a {p} interactivity (only figures without one)", fix,
                "no_data")
    return (f"no {p} figure of {name}" + (" under these filters" if inputs.filtered else ""),
            fix, "no_data")


def peak_of(inputs: Inputs, hw: str) -> Peak:
    """The hardware's one peak: its data's highest figure (curve or reference line) where it has
    data, else its projection's; the metric's best at peak throughput."""
    data = peak_of_kind(inputs, hw, simulated=False)
    return data if data.value is not None else peak_of_kind(inputs, hw, simulated=True)


def peak_of_kind(inputs: Inputs, hw: str, simulated: bool) -> Peak:
    """The highest figure of one kind (simulated or not) drawn for the hardware."""
    best = None                          # (throughput, frame, row, interactivity unstated)
    for df, unstated in ((inputs.points, False), (inputs.references, True)):
        if df.empty:
            continue
        keep = ((df.hardware.to_numpy() == hw) & (df.simulated.to_numpy() == simulated)
                & df.y.notna().to_numpy() & df.tput.notna().to_numpy())
        if not keep.any():
            continue
        rows = np.flatnonzero(keep)
        top = rows[int(np.argmax(df.tput.to_numpy(float)[rows]))]
        tput = float(df.tput.iloc[top])
        if best is None or tput > best[0]:       # the first of equal peaks, as idxmax picks
            best = (tput, df, top, unstated)
    if best is None:
        return Peak(None)
    _, df, top, unstated = best
    row = df.iloc[top]
    return Peak(float(row.y), str(row.provenance)
                + (" (interactivity not stated)" if unstated else ""),
                str(row.get("source_text", "")))


def multiple_at_target(a: Answer, b: Answer, target: float, metric=None) -> Multiple:
    """A / B of the two figures shown, saying when they mix kinds or are bounds; else why not
    (the baseline's reason first)."""
    t = f"{format_number(target)} tok/s/user"
    missing = [side.reason + (f" ({side.fix})" if side.fix else "") for side in (b, a)
               if not side.ok]
    if missing:                      # each side without a figure says why
        return Multiple(None, "; ".join(dict.fromkeys(missing)))
    if not b.value:
        return Multiple(None, f"{b.name} is zero at {t}")
    return Multiple(a.value / b.value, a=a.figure(), b=b.figure(),
                    bounds=tuple(s.name for s in (a, b) if s.bound), metric=metric)


def multiple_at_peak(a: Peak, b: Peak, a_name: str, b_name: str, metric=None) -> Multiple:
    missing = [side.reason or f"no {name} data" for side, name in ((b, b_name), (a, a_name))
               if side.value is None]
    if missing:
        return Multiple(None, "; ".join(dict.fromkeys(missing)))
    if not b.value:
        return Multiple(None, f"{b_name} is zero at peak")
    return Multiple(a.value / b.value, a=a.figure(), b=b.figure(), metric=metric)


SCORE_SAMPLES = 64
SCORE_RULE = ("The geometric mean of the throughput ratio A(x) / B(x) of the two data envelopes "
              f"at {SCORE_SAMPLES} interactivities evenly spaced on a log scale over the range "
              "both cover (the larger of their slowest points to the smaller of their fastest); "
              "no score where they share no range.")


@dataclass(frozen=True)
class Score:
    """One number per pair over a range of interactivity (docs/metrics.md, "The Overview's
    score"), or why there is none."""
    value: float | None
    lo: float | None = None            # the range it covers (tok/s/user)
    hi: float | None = None
    reason: str = ""

    def text(self, metric=None) -> str:
        if self.value is None:
            return self.reason
        span = f"{metrics.format_value(self.lo)}-{metrics.format_value(self.hi)} tok/s/user"
        return f"{metrics.format_multiple(self.value, metric)} over {span}"

    def as_json(self) -> dict:
        return {"value": self.value, "lo": self.lo, "hi": self.hi, "reason": self.reason}


def score(a_inputs: Inputs, a: str, b_inputs: Inputs, b: str, metric: metrics.Metric,
          a_name: str = "", b_name: str = "") -> Score:
    """A over B across the interactivity both data envelopes cover, by the rule-1 values of
    each (`value_at` on the envelopes `resolve` reads), in the view's metric."""
    from opx.curves.frontier import values_at
    ea, eb = a_inputs.envelope(a, False), b_inputs.envelope(b, False)
    for env, name in ((eb, b_name or b), (ea, a_name or a)):
        if env.empty:
            return Score(None, reason=f"no data curve of {name}")
    lo, hi = max(ea.x.min(), eb.x.min()), min(ea.x.max(), eb.x.max())
    if not lo < hi:
        return Score(None, reason="their data curves share no range of interactivity")
    xs = np.geomspace(lo, hi, SCORE_SAMPLES)
    va = values_at(ea.x.to_numpy(float), ea.tput.to_numpy(float), xs)
    vb = values_at(eb.x.to_numpy(float), eb.tput.to_numpy(float), xs)
    ratios = []
    for p, q in zip(va, vb):
        ya = a_inputs.convert(p.value) if p.status == "ok" else None
        yb = b_inputs.convert(q.value) if q.status == "ok" else None
        if ya is None or yb is None or ya <= 0 or yb <= 0:
            return Score(None, reason="a figure on the range has no value in this metric")
        ratios.append(ya / yb)
    return Score(float(np.exp(np.mean(np.log(ratios)))), float(lo), float(hi))
