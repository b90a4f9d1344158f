"""The shape of a measured frontier between two of its points, learned from the measured curves
opx carries (docs/simulator.md, "The learned shape").

A frontier of throughput per GPU `y` against interactivity `x` between two of its points
(x0, y0) and (x1, y1), x0 < x1, is drawn as a straight line in power coordinates: `y ** p` linear
in `x ** q` (`p = q = 0` is log-log interpolation; `p = q = 1` straight lines). The exponents are
the ones that predict the held-out points of the measured curves best: every run's frontier (one
configuration over its concurrencies) and every system's envelope (all configurations of one
hardware, model and workload) in data/measured/. The band is the spread of the held-out log
errors, which are zero at the two points and largest between them: `log(y / pred)` divided by
`4 u (1 - u) log(y0 / y1) ** 1.5` (u the position between the points in `x ** q`), whose 10th
and 90th percentiles over the envelopes (each envelope counting once) give an 80 % band.

Two shapes are learned (`Shapes`): one from every curve, and one from the envelopes of
disaggregated systems alone, which is drawn through anchors of a disaggregated system's
envelope (`Shapes.pick`). A disaggregated frontier is a stack of configurations whose throughput
falls in steps, far steeper than one configuration's curve; the shape of every curve bends the
wrong way there (docs/simulator.md). Both are fitted once (`python -m opx simulate --shape`,
written to data/simulator/shape.json) and validated leaving each model out (`held_out`).
"""
from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from opx.frontier import pareto_mask_numpy

# candidate exponents of y and x; the fit picks one pair
POWERS = tuple(round(float(v), 2) + 0.0 for v in np.arange(-0.5, 1.51, 0.1))   # + 0.0: no -0
COVERAGE = 0.80                      # the band's stated coverage
# the held-out log error grows faster than the curve's fall (log y0/y1): scaled by the fall to
# this power, it is alike on steep and flat curves, runs and envelopes (80 % bands cover 78-81 %
# of each; to the power 1 steep curves got 72 %)
BAND_FALL_POWER = 1.5
MIN_POINTS = 3                       # a curve teaches a shape only with a point between its ends
MIN_DISAGGREGATED = 2                # disaggregated envelopes needed for a shape of their own
KINDS = {"all": "curves", "disaggregated": "disaggregated envelopes"}    # what each kind learns from


@dataclass(frozen=True)
class Curve:
    """One measured frontier, ascending in interactivity."""
    x: np.ndarray
    y: np.ndarray
    hardware: str
    model: str
    workload: str
    disaggregated: bool
    scope: str                       # "run" (one configuration) or "envelope" (one system)


@dataclass(frozen=True)
class Shape:
    y_power: float
    x_power: float
    band: tuple[float, float]        # percentiles of the normalised held-out log error
    coverage: float
    curves: int
    kind: str                        # "all", "aggregated" or "disaggregated"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def describe(self) -> str:
        return (f"the shape learned from {self.curves} measured {KINDS.get(self.kind, 'curves')} "
                f"(y^{self.y_power:g} linear in x^{self.x_power:g}, band "
                f"{round(self.coverage * 100)} %)")


@dataclass(frozen=True)
class Shapes:
    """The learned shapes: `default` from every measured curve, `disaggregated` from the
    envelopes of disaggregated systems (None where fewer than MIN_DISAGGREGATED were there to
    learn from)."""
    default: Shape
    disaggregated: Shape | None = None

    def pick(self, disaggregated_envelope: bool) -> Shape:
        """The shape for a curve: a disaggregated system's envelope (several disaggregated
        configurations) takes the disaggregated one, anything else the default."""
        if disaggregated_envelope and self.disaggregated is not None:
            return self.disaggregated
        return self.default

    def as_dict(self) -> dict:
        return {"default": self.default.as_dict(),
                "disaggregated": self.disaggregated.as_dict() if self.disaggregated else None}


def is_disaggregated_envelope(curve: "Curve") -> bool:
    return curve.disaggregated and curve.scope == "envelope"


def _pw(v, p: float):
    v = np.asarray(v, float)
    return np.log(v) if abs(p) < 1e-9 else v ** p


def _ipw(t, p: float):
    t = np.asarray(t, float)
    return np.exp(t) if abs(p) < 1e-9 else np.maximum(t, 1e-300) ** (1.0 / p)


def position(x0: float, x1: float, x, shape: Shape) -> np.ndarray:
    """Where x lies between x0 and x1 (0 at x0, 1 at x1) in the shape's x coordinate."""
    q = shape.x_power
    return (_pw(x, q) - _pw(x0, q)) / (_pw(x1, q) - _pw(x0, q))


def between(x0: float, y0: float, x1: float, y1: float, x, shape: Shape) -> np.ndarray:
    """The throughput at interactivity x (x0 <= x <= x1) on the learned shape through the two
    points."""
    p = shape.y_power
    u = position(x0, x1, x, shape)
    return _ipw(_pw(y0, p) + u * (_pw(y1, p) - _pw(y0, p)), p)


def band_between(x0: float, y0: float, x1: float, y1: float, x, shape: Shape
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The band (low, high) around `between` at x: as wide as the held-out errors were, and
    never outside the two points' throughputs (a frontier between two of its points lies
    between them: where they are far apart the errors' spread alone would reach far beyond)."""
    mid = between(x0, y0, x1, y1, x, shape)
    u = np.clip(position(x0, x1, x, shape), 0.0, 1.0)
    w = _width(u, y0, y1)
    low, high = min(y0, y1), max(y0, y1)
    return (np.clip(mid * np.exp(shape.band[0] * w), low, high),
            np.clip(mid * np.exp(shape.band[1] * w), low, high))


def _width(u, y0, y1):
    """How wide the held-out errors are at position u between points falling from y0 to y1."""
    return 4 * u * (1 - u) * np.abs(np.log(y0 / y1)) ** BAND_FALL_POWER


def through(ax, ay, x, shape: Shape) -> np.ndarray:
    """The learned shape through several points (ascending in x, a frontier): piecewise between
    neighbours; NaN outside their range."""
    ax, ay, x = np.asarray(ax, float), np.asarray(ay, float), np.asarray(x, float)
    out = np.full(x.shape, np.nan)
    for i in range(len(ax) - 1):
        m = (x >= ax[i]) & (x <= ax[i + 1])
        if m.any():
            out[m] = between(ax[i], ay[i], ax[i + 1], ay[i + 1], x[m], shape)
    return out


def band_through(ax, ay, x, shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    ax, ay, x = np.asarray(ax, float), np.asarray(ay, float), np.asarray(x, float)
    lo, hi = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    for i in range(len(ax) - 1):
        m = (x >= ax[i]) & (x <= ax[i + 1])
        if m.any():
            lo[m], hi[m] = band_between(ax[i], ay[i], ax[i + 1], ay[i + 1], x[m], shape)
    return lo, hi


# -- the measured curves -----------------------------------------------------------------------------

def _frontier(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    if x.size == 0:
        return x, y
    keep = pareto_mask_numpy(x, y)
    order = np.argsort(x[keep])
    return x[keep][order], y[keep][order]


def curves_from_runs(runs) -> list[Curve]:
    """Every non-simulated run's frontier and every system's envelope with a point between its
    ends. Interactivity is the P50 TPOT's where stated, else the mean's (as anchors read it)."""
    per_run, by_system = [], {}
    for run in runs:
        if run.provenance == "simulated":
            continue
        g = run.deployment.gpus_total
        xs, ys = [], []
        for p in run.points:
            tpot = p.tpot_p50_s or p.tpot_mean_s
            if tpot and p.throughput_total_tok_s:
                xs.append(1.0 / tpot)
                ys.append(p.throughput_total_tok_s / g)
        if not xs:
            continue
        key = (run.hardware, run.model, run.workload)
        sx, sy, dis = by_system.setdefault(key, ([], [], []))
        sx.extend(xs)
        sy.extend(ys)
        dis.append(bool(run.deployment.disaggregated))
        x, y = _frontier(np.array(xs), np.array(ys))
        if x.size >= MIN_POINTS:
            per_run.append(Curve(x, y, run.hardware, run.model, run.workload,
                                 bool(run.deployment.disaggregated), "run"))
    envs = []
    for (hw, model, wl), (sx, sy, dis) in by_system.items():
        x, y = _frontier(np.array(sx), np.array(sy))
        if x.size >= MIN_POINTS:
            envs.append(Curve(x, y, hw, model, wl, all(dis), "envelope"))
    return per_run + envs


def measured_curves(catalog=None) -> list[Curve]:
    """The curves of the measurements built into opx (data/measured/)."""
    from opx.builtin import load_measured
    from opx.catalog import load_catalog
    from opx.config import MEASURED_DIR
    catalog = catalog or load_catalog()
    runs = [r for path in sorted(Path(MEASURED_DIR).glob("*.csv.gz"))
            for r in load_measured(path, catalog)]
    return curves_from_runs(runs)


# -- the fit ---------------------------------------------------------------------------------------

class _Held:
    """Every curve's held-out points in one padded array (curves x points), so a candidate
    shape is scored in a few vector operations."""

    def __init__(self, curves: list[Curve]):
        n = max((c.x.size - 2 for c in curves), default=0)
        self.x = np.full((len(curves), max(n, 1)), np.nan)
        self.y = np.full_like(self.x, np.nan)
        for i, c in enumerate(curves):
            self.x[i, :c.x.size - 2] = c.x[1:-1]
            self.y[i, :c.y.size - 2] = c.y[1:-1]
        self.ends = np.array([[c.x[0], c.y[0], c.x[-1], c.y[-1]] for c in curves]).reshape(-1, 4)

    def predict(self, shape: Shape) -> np.ndarray:
        x0, y0, x1, y1 = (self.ends[:, i:i + 1] for i in range(4))
        return between(x0, y0, x1, y1, self.x, shape)

    def score(self, shape: Shape) -> float:
        """Median held-out error, each curve counting once whatever its number of points (the
        median over curves of each curve's median, averaged with the pooled median)."""
        e = np.abs(self.predict(shape) / self.y - 1)
        return float(0.5 * np.nanmedian(np.nanmedian(e, axis=1)) + 0.5 * np.nanmedian(e))

    def normalised(self, shape: Shape) -> tuple[np.ndarray, np.ndarray]:
        """Every held-out point's log error divided by the band's width there, and its weight:
        each curve weighs one in all, whatever its number of points."""
        x0, y0, x1, y1 = (self.ends[:, i:i + 1] for i in range(4))
        width = _width(position(x0, x1, self.x, shape), y0, y1)
        with np.errstate(divide="ignore", invalid="ignore"):
            norm = np.where(width > 1e-9, np.log(self.y / self.predict(shape)) / width, 0.0)
        held = np.isfinite(self.x)
        weight = np.broadcast_to(1.0 / held.sum(axis=1, keepdims=True), held.shape)
        return norm[held], weight[held]


def fit_one(curves: list[Curve], kind: str = "all") -> Shape:
    """The exponents that predict the curves' held-out points best, and the band of their
    errors."""
    held = _Held(curves)
    with np.errstate(all="ignore"):
        best = min(((p, q) for p in POWERS for q in POWERS),
                   key=lambda pq: held.score(Shape(*pq, (0.0, 0.0), COVERAGE, 0, kind)))
    s = Shape(best[0], best[1], (0.0, 0.0), COVERAGE, len(curves), kind)
    # The band is for what an anchored projection draws, a system's envelope: it is the spread
    # of the envelopes' errors, each envelope counting once (runs, more and flatter, and long
    # sweeps made it too narrow for envelopes held out: 72 % covered, docs/simulator.md)
    envelopes = [c for c in curves if c.scope == "envelope"] or curves
    norm, weight = _Held(envelopes).normalised(s)
    tail = (1 - COVERAGE) / 2
    band = tuple(float(np.quantile(norm, q, weights=weight, method="inverted_cdf"))
                 for q in (tail, 1 - tail))
    return dataclasses.replace(s, band=(round(band[0], 4), round(band[1], 4)))


def fit(curves: list[Curve]) -> Shapes:
    """The default shape from every curve, and the disaggregated envelopes' own. A shape per
    kind of model or workload, per scope (run, envelope), or one learned from every
    disaggregated curve (runs included) was no better held out (docs/simulator.md)."""
    default = fit_one(curves, "all")
    disaggregated = [c for c in curves if is_disaggregated_envelope(c)]
    if len(disaggregated) < MIN_DISAGGREGATED:
        return Shapes(default)
    own = fit_one(disaggregated, "disaggregated")
    # its band is at least as wide as the default's on each side: the spread of a handful of
    # envelopes (two models) understates what it misses held out (64 % covered, stated 80)
    band = (min(own.band[0], default.band[0]), max(own.band[1], default.band[1]))
    return Shapes(default, dataclasses.replace(own, band=band))


# -- stored ----------------------------------------------------------------------------------------

def default_path() -> Path:
    from opx.config import ROOT
    return ROOT / "data" / "simulator" / "shape.json"


def write(shapes: Shapes, curves: list[Curve], validation: dict | None = None,
          out: Path | None = None) -> Path:
    import datetime as dt
    path = Path(out or default_path())
    doc = {"fit_date": dt.date.today().isoformat(),
           "curves": {"runs": sum(c.scope == "run" for c in curves),
                      "envelopes": sum(c.scope == "envelope" for c in curves),
                      "disaggregated_envelopes": sum(map(is_disaggregated_envelope, curves))},
           "shapes": shapes.as_dict(),
           "validation": validation or {}}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    load.cache_clear()
    return path


@functools.lru_cache(maxsize=1)
def load() -> Shapes | None:
    p = default_path()
    if not p.is_file():
        return None
    v = json.loads(p.read_text())["shapes"]

    def one(d: dict | None) -> Shape | None:
        return Shape(**{**d, "band": tuple(d["band"])}) if d else None
    return Shapes(one(v["default"]), one(v.get("disaggregated")))


def stored_validation() -> dict:
    p = default_path()
    return json.loads(p.read_text()).get("validation", {}) if p.is_file() else {}


# -- held out -------------------------------------------------------------------------------------

def held_out(curves: list[Curve], steep_fall: float = 10.0) -> dict:
    """Each curve drawn through its two ends with the shape for its kind (`Shapes.pick`) fitted
    on the other models' curves: the median error of the points between, beside log-log
    interpolation; the share of curves where it does worse than log-log; the steep and
    disaggregated curves apart; the band's measured coverage."""
    models = sorted({c.model for c in curves})
    loglog = Shape(0.0, 0.0, (0.0, 0.0), COVERAGE, 0, "log-log")
    rows = []
    for m in models:
        train = [c for c in curves if c.model != m]
        if not train:
            continue              # one model alone: nothing to learn its shape from
        shapes = fit(train)
        for c in (c for c in curves if c.model == m):
            s = shapes.pick(is_disaggregated_envelope(c))
            xi, yi = c.x[1:-1], c.y[1:-1]
            pred = between(c.x[0], c.y[0], c.x[-1], c.y[-1], xi, s)
            lo, hi = band_between(c.x[0], c.y[0], c.x[-1], c.y[-1], xi, s)
            ll = between(c.x[0], c.y[0], c.x[-1], c.y[-1], xi, loglog)
            rows.append({"curve": c, "ape": np.abs(pred / yi - 1) * 100,
                         "loglog": np.abs(ll / yi - 1) * 100,
                         "inside": (yi >= lo * (1 - 1e-9)) & (yi <= hi * (1 + 1e-9))})

    def summary(sel: list[dict]) -> dict:
        if not sel:
            return {"curves": 0}
        ape = np.concatenate([r["ape"] for r in sel])
        ll = np.concatenate([r["loglog"] for r in sel])
        worse = sum(np.median(r["ape"]) > np.median(r["loglog"]) for r in sel)
        return {"curves": len(sel), "held_out_points": int(ape.size),
                "mdape": round(float(np.median(ape)), 1),
                "loglog_mdape": round(float(np.median(ll)), 1),
                "worse_than_loglog_pct": round(100.0 * worse / len(sel), 1),
                "band_coverage_pct": round(100.0 * float(np.mean(np.concatenate(
                    [r["inside"] for r in sel]))), 1)}
    out = {"method": "leave one model out: each curve through its two ends, the shape for its "
                     "kind fitted on the other models' curves",
           "stated_coverage_pct": round(COVERAGE * 100)}
    for scope in ("run", "envelope"):
        sel = [r for r in rows if r["curve"].scope == scope]
        out[scope + "s"] = summary(sel)
        out[scope + "s_steep"] = summary([r for r in sel if r["curve"].y[0] / r["curve"].y[-1]
                                          >= steep_fall])
        out[scope + "s_disaggregated"] = summary([r for r in sel if r["curve"].disaggregated])
    out["steep_fall"] = steep_fall
    return out
