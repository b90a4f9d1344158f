"""Frontiers, values on an envelope at a target interactivity, and the figures multiples divide
(the rules that choose a figure for a hardware are `opx.answers.resolve`'s).

The frontier test is one SQL expression (`frontier_flag_sql`), used by the store's queries over
millions of rows and, through `pareto_mask`, on in-memory arrays, so both paths are the same code.
A point is on the frontier when no other point has at least its interactivity and at least its
throughput (ties keep one point). Values between frontier points come from monotone (PCHIP)
interpolation; nothing is extrapolated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import duckdb
import numpy as np
import pandas as pd
from scipy.interpolate import PchipInterpolator

# Relative tolerance when a target equals a frontier end (1 / (1 / 387) is not exactly 387).
SNAP = 1e-9


def frontier_flag_sql(partition_by: str, x: str = "x", y: str = "y",
                      tiebreak: str = "run_id, seq") -> str:
    """SQL boolean: the row's y beats every row with greater x (or equal x, ordered first)."""
    order = f"{x} DESC, {y} DESC, {tiebreak}"
    return (f"coalesce({y} > max({y}) OVER (PARTITION BY {partition_by} ORDER BY {order} "
            f"ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), TRUE)")


def pareto_mask(x: np.ndarray | list[float], y: np.ndarray | list[float]) -> np.ndarray:
    """Frontier membership of each (x, y), computed by the same SQL the store uses."""
    frame = pd.DataFrame({"x": np.asarray(x, dtype=float), "y": np.asarray(y, dtype=float)})
    frame["run_id"] = ""
    frame["seq"] = np.arange(len(frame))
    if frame.empty:
        return np.zeros(0, dtype=bool)
    con = duckdb.connect(":memory:")
    try:
        con.register("pts", frame)
        flags = con.execute(
            f"SELECT seq, {frontier_flag_sql('run_id')} AS f FROM pts ORDER BY seq").fetchall()
    finally:
        con.close()
    return np.array([f for _, f in flags], dtype=bool)


def pareto_mask_numpy(x: np.ndarray | list[float], y: np.ndarray | list[float]) -> np.ndarray:
    """`pareto_mask` for large in-memory arrays of finite values, evaluated in numpy: the same
    order as `frontier_flag_sql` (x descending, then y descending, then position) and the same
    test (y beats every row ordered before it), so the same flags, ties included
    (tests/unit/simulate/test_frontier_use.py checks it against `pareto_mask`). The simulator's
    search has ~170,000 points per envelope, where the SQL round trip costs more than the search.
    A NaN or infinite value is a ValueError (the SQL orders NaN above every number)."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError("x and y must be 1-d arrays of one length")
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise ValueError("pareto_mask_numpy needs finite values (pareto_mask takes any)")
    order = np.lexsort((-ys, -xs))          # stable: equal (x, y) keep their positions' order
    ordered = ys[order]
    before = np.concatenate(([-np.inf], np.maximum.accumulate(ordered)[:-1]))
    mask = np.zeros(len(xs), dtype=bool)
    mask[order] = ordered > before
    return mask


Status = Literal["ok", "not_reachable", "below_range", "no_data"]


@dataclass(frozen=True)
class ValueAt:
    status: Status
    value: float | None = None
    exact: bool = False                       # the target is a measured/published frontier point
    neighbours: tuple[int, ...] = ()          # indices (into the frontier) the value comes from

    @property
    def text(self) -> str:
        return {"not_reachable": "not reachable", "below_range": "below measured range",
                "no_data": "no data"}.get(self.status, "")


def value_at(xs: np.ndarray | list[float], ys: np.ndarray | list[float], target: float) -> ValueAt:
    """Throughput of a frontier at `target` interactivity. `xs`, `ys` are frontier points."""
    return values_at(xs, ys, [target])[0]


def values_at(xs: np.ndarray | list[float], ys: np.ndarray | list[float],
              targets) -> list[ValueAt]:
    """`value_at` of one frontier at each of `targets`, with one sort and one interpolant (a
    curve across interactivity asks hundreds of targets; `value_at` is this with one)."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    ts = np.asarray(targets, dtype=float).reshape(-1)
    if x.size == 0:
        return [ValueAt("no_data") for _ in ts]
    order = np.argsort(x)
    x, y = x[order], y[order]
    lo, hi = x[0], x[-1]
    near = np.isclose(x[None, :], ts[:, None], rtol=SNAP, atol=0)
    inside = (ts <= hi * (1 + SNAP)) & (ts >= lo * (1 - SNAP))
    between = inside & ~near.any(axis=1)
    curve = PchipInterpolator(x, y)(ts[between]) if between.any() else []
    right = np.searchsorted(x, ts)
    out, k = [], 0
    for j, t in enumerate(ts):
        if t != t:                  # NaN: no interactivity, no figure
            out.append(ValueAt("no_data"))
        elif t > hi * (1 + SNAP):
            out.append(ValueAt("not_reachable"))
        elif t < lo * (1 - SNAP):
            out.append(ValueAt("below_range"))
        elif not between[j]:
            i = int(np.argmax(near[j]))
            out.append(ValueAt("ok", float(y[i]), exact=True, neighbours=(int(order[i]),)))
        else:
            out.append(ValueAt("ok", float(curve[k]), exact=False,
                               neighbours=(int(order[right[j] - 1]), int(order[right[j]]))))
            k += 1
    return out


Kind = Literal["data", "simulated"]
DATA: Kind = "data"
SIMULATED: Kind = "simulated"


def kind_of(provenance: str) -> Kind:
    """Simulated figures are one kind; measured, published, preview, derived and interpolated
    figures are the other ("data")."""
    return SIMULATED if provenance_names(provenance) == ["simulated"] else DATA


def provenance_names(provenance: str) -> list[str]:
    """The bare provenances in a shown provenance: "interpolated between measured / published
    points" gives ["measured", "published"]; "preview (interactivity not stated)" gives ["preview"]."""
    text = provenance.split(" (")[0]
    if text.startswith("interpolated between ") and text.endswith(" points"):
        text = text[len("interpolated between "):-len(" points")]
    return [p.strip() for p in text.replace(",", " / ").split(" / ") if p.strip()]


@dataclass(frozen=True)
class Spread:
    """The spread of a figure that rests on repeat sets (opx/store/repeats.py): the least and the
    most its runs give, in the figure's metric, and how many runs there are."""
    lo: float
    hi: float
    runs: int

    def text(self, metric) -> str:
        """"1.42-1.71M, 3 runs"."""
        from opx.curves.metrics import format_range
        return f"{format_range(self.lo, self.hi, metric)}, {self.runs} runs"

    def as_json(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "runs": self.runs}


@dataclass(frozen=True)
class Figure:
    """One side's figure of one kind, at a target or at peak: what a multiple divides."""
    value: float
    provenance: str            # as shown, e.g. "preview", "interpolated between simulated points"
    bound: str = ""            # "≥" / "≤" when the figure is a bound (a point meeting the target)
    spread: Spread | None = None   # over its repeated runs (None: one run, or a projection)

    def text(self, metric, unit: bool = False) -> str:
        """"≥ 1.58M (1.42-1.71M, 3 runs)": the figure, its bound and its spread."""
        shown = f"{self.bound} {metric.format(self.value, unit=unit)}".strip()
        return f"{shown} ({self.spread.text(metric)})" if self.spread else shown

    @property
    def kind(self) -> Kind:
        return kind_of(self.provenance)

    @property
    def kind_text(self) -> str:
        """The figure's kind in a word or two: "preview", "measured / published", "simulated"."""
        return " / ".join(dict.fromkeys(provenance_names(self.provenance))) or self.kind


@dataclass(frozen=True)
class Multiple:
    value: float | None
    reason: str = ""                 # why there is no number
    a: Figure | None = None          # the figures divided, when there is a number
    b: Figure | None = None
    bounds: tuple[str, ...] = ()     # the sides whose figure is a bound ("at least"), by name
    metric: object = None            # the view's `opx.curves.metrics.Metric`: how the number reads

    @property
    def kind(self) -> str:
        """"data", "simulated", "mixed", or "" when there is no number."""
        if self.value is None or self.a is None or self.b is None:
            return ""
        return self.a.kind if self.a.kind == self.b.kind else "mixed"

    @property
    def basis(self) -> str:
        """What was divided: "preview vs derived", "simulated vs simulated",
        "mixed: simulated vs derived"."""
        if not self.kind:
            return ""
        words = f"{self.a.kind_text} vs {self.b.kind_text}"
        words = f"mixed: {words}" if self.kind == "mixed" else words
        if len(self.bounds) == 2:
            words += "; both figures are at-least figures"
        elif self.bounds:
            words += f"; {self.bounds[0]}'s figure is an at-least figure"
        return words

    @property
    def range(self) -> tuple[float, float] | None:
        """The multiple's range over the sides' repeated runs: the lowest over the highest and
        the highest over the lowest (None when neither side rests on repeated runs)."""
        if self.value is None or self.a is None or self.b is None or not (
                self.a.spread or self.b.spread):
            return None
        a_lo, a_hi = (self.a.spread.lo, self.a.spread.hi) if self.a.spread else (self.a.value,) * 2
        b_lo, b_hi = (self.b.spread.lo, self.b.spread.hi) if self.b.spread else (self.b.value,) * 2
        if not (b_lo and b_hi):
            return None
        ends = sorted((a_lo / b_hi, a_hi / b_lo))
        return ends[0], ends[1]

    @property
    def range_text(self) -> str:
        """"52-64× over the repeated runs", or "" without repeated runs."""
        r = self.range
        if r is None:
            return ""
        from opx.curves.metrics import format_multiple, format_range
        if self.metric is not None and getattr(self.metric, "direction", "higher") == "lower":
            return f"{format_multiple(r[0], self.metric)} to {format_multiple(r[1], self.metric)}" \
                   " over the repeated runs"
        return f"{format_range(r[0], r[1])} over the repeated runs"

    @property
    def short(self) -> str:
        """The number alone, or "no multiple": fits a headline figure; the basis or the reason
        goes beside it."""
        from opx.curves.metrics import format_multiple
        return format_multiple(self.value, self.metric) if self.value is not None else "no multiple"

    def caption(self, metric) -> str:
        """The figures divided, written as `metric` (an `opx.curves.metrics.Metric`) writes them, and
        their kinds ("1.7M vs 29.3k tok/s/GPU; preview vs derived", "$0.000606 vs $0.0251/M
        tokens; ..."), or the reason there is no number: the words beside a headline `short`."""
        if self.value is None or self.a is None or self.b is None:
            return self.reason
        text = f"{self.a.text(metric)} vs {self.b.text(metric, unit=True)}; {self.basis}"
        return f"{self.range_text}; {text}" if self.range_text else text

    @property
    def text(self) -> str:
        """The number, saying its basis unless it divides data by data, and its range over
        repeated runs; or the reason."""
        if self.value is None:
            return self.reason
        said = [w for w in ((self.basis if self.kind != DATA or self.bounds else ""),
                            self.range_text) if w]
        return f"{self.short} ({'; '.join(said)})" if said else self.short
