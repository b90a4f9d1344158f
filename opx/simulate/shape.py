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

Three kinds of shape are learned (`Shapes`): one from every curve; one from the envelopes of
disaggregated systems alone, which is drawn through anchors of a disaggregated system's
envelope; and one per model from that model's envelopes on other systems and workloads, drawn
through anchors of any other system of that model (`Shapes.pick`). A disaggregated frontier is a
stack of configurations whose throughput falls in steps, far steeper than one configuration's
curve; the shape of every curve bends the wrong way there. One model's envelopes bend alike
across systems and workloads (DeepSeek-R1's are straight or convex in log-log where most bend
the other way), which a shape for all models cannot follow (docs/simulator.md). All are fitted
once (`python -m opx simulate --shape`, written to data/simulator/shape.json) and validated
leaving each model out, and each envelope out (`held_out`).
"""
from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from opx.curves.frontier import pareto_mask_numpy

# candidate exponents of y and x; the fit picks one pair
POWERS = tuple(round(float(v), 2) + 0.0 for v in np.arange(-0.5, 1.51, 0.1))   # + 0.0: no -0
COVERAGE = 0.80                      # the band's stated coverage
# the held-out log error grows faster than the curve's fall (log y0/y1): scaled by the fall to
# this power, it is alike on steep and flat curves, runs and envelopes (80 % bands cover 78-81 %
# of each; to the power 1 steep curves got 72 %)
BAND_FALL_POWER = 1.5
MIN_POINTS = 3                       # a curve teaches a shape only with a point between its ends
MIN_DISAGGREGATED = 2                # disaggregated envelopes needed for a shape of their own
MIN_OWN_MODEL = 4                    # a model's envelopes needed for a shape (and band) of its own
KINDS = {"all": "curves", "disaggregated": "disaggregated envelopes",   # what each kind learns from
         "model": "envelopes of the same model on other systems or workloads"}


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
    kind: str                        # a key of KINDS

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def describe(self) -> str:
        return (f"the shape learned from {self.curves} measured {KINDS.get(self.kind, 'curves')} "
                f"(y^{self.y_power:g} linear in x^{self.x_power:g}, band "
                f"{round(self.coverage * 100)} %)")


def system_key(hardware: str, workload: str) -> str:
    """How a model's shapes name one of the systems that taught them."""
    return f"{hardware}/{workload}"


@dataclass(frozen=True)
class ModelShapes:
    """One model's shapes: `all` learned from every envelope of it, and `without[system]` from
    every envelope but that system's (None where too few were left), so a system's own envelope
    never teaches the shape drawn through its anchors."""
    all: Shape
    without: dict[str, Shape | None]

    def for_system(self, hardware: str, workload: str) -> Shape | None:
        key = system_key(hardware, workload)
        return self.without[key] if key in self.without else self.all

    def as_dict(self) -> dict:
        return {"all": self.all.as_dict(),
                "without": {k: v.as_dict() if v else None for k, v in self.without.items()}}


@dataclass(frozen=True)
class Shapes:
    """The learned shapes: `default` from every measured curve, `disaggregated` from the
    envelopes of disaggregated systems (None where fewer than MIN_DISAGGREGATED were there to
    learn from), `by_model` from each model's envelopes (models with MIN_OWN_MODEL or more)."""
    default: Shape
    disaggregated: Shape | None = None
    by_model: dict[str, ModelShapes] = dataclasses.field(default_factory=dict)

    def pick(self, disaggregated_envelope: bool, system: tuple[str, str, str] | None = None
             ) -> Shape:
        """The shape for a curve: a disaggregated system's envelope (several disaggregated
        configurations) takes the disaggregated one; the envelope of a system (`system`:
        hardware, model, workload; given for an envelope only, several configurations) whose
        model has envelopes on other systems or workloads takes theirs; anything else (one
        configuration's curve bends unlike an envelope: docs/simulator.md) the default."""
        if disaggregated_envelope and self.disaggregated is not None:
            return self.disaggregated
        if system is not None and system[1] in self.by_model:
            own = self.by_model[system[1]].for_system(system[0], system[2])
            if own is not None:
                return own
        return self.default

    def without_models(self) -> "Shapes":
        """These shapes as drawn for a model opx has no envelope of."""
        return dataclasses.replace(self, by_model={})

    def as_dict(self) -> dict:
        return {"default": self.default.as_dict(),
                "disaggregated": self.disaggregated.as_dict() if self.disaggregated else None,
                "by_model": {m: v.as_dict() for m, v in sorted(self.by_model.items())}}


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
    from opx.ingest.builtin import load_measured
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


def _at_least(shape: Shape, floor: Shape) -> Shape:
    """`shape` with a band at least as wide as `floor`'s on each side: the spread of a handful
    of curves understates what the shape misses held out (docs/simulator.md)."""
    band = (min(shape.band[0], floor.band[0]), max(shape.band[1], floor.band[1]))
    return dataclasses.replace(shape, band=band)


def model_shapes(curves: list[Curve]) -> dict[str, ModelShapes]:
    """Each model's shape from its envelopes (MIN_OWN_MODEL or more), and for each of them the
    shape learned from the others (where MIN_OWN_MODEL others are left). The band is the spread
    of the model's own envelopes, not floored at the default's: floored, it covered 91 % of
    their points held out against 80 % stated (docs/simulator.md)."""
    envelopes: dict[str, list[Curve]] = {}
    for c in curves:
        if c.scope == "envelope":
            envelopes.setdefault(c.model, []).append(c)
    out = {}
    for model, own in sorted(envelopes.items()):
        if len(own) < MIN_OWN_MODEL:
            continue
        without = {}
        for c in own:
            rest = [o for o in own if o is not c]
            without[system_key(c.hardware, c.workload)] = (
                fit_one(rest, "model") if len(rest) >= MIN_OWN_MODEL else None)
        out[model] = ModelShapes(fit_one(own, "model"), without)
    return out


def fit(curves: list[Curve], own_models: list[Curve] | None = None) -> Shapes:
    """The default shape from every curve, the disaggregated envelopes' own, and each model's
    from its envelopes (from `own_models` where given: the validation learns the first two
    leaving a model out and the model's own from its other envelopes). A shape per kind of model
    or workload, per scope (run, envelope), or one learned from every disaggregated curve (runs
    included) was no better held out (docs/simulator.md)."""
    default = fit_one(curves, "all")
    by_model = model_shapes(curves if own_models is None else own_models)
    disaggregated = [c for c in curves if is_disaggregated_envelope(c)]
    if len(disaggregated) < MIN_DISAGGREGATED:
        return Shapes(default, None, by_model)
    return Shapes(default, _at_least(fit_one(disaggregated, "disaggregated"), default), by_model)


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
    by_model = {m: ModelShapes(one(d["all"]), {k: one(w) for k, w in d["without"].items()})
                for m, d in v.get("by_model", {}).items()}
    return Shapes(one(v["default"]), one(v.get("disaggregated")), by_model)


def stored_validation() -> dict:
    p = default_path()
    return json.loads(p.read_text()).get("validation", {}) if p.is_file() else {}


# -- held out -------------------------------------------------------------------------------------

def held_out(curves: list[Curve], steep_fall: float = 10.0) -> dict:
    """Each curve drawn through its two ends with the shape for its kind (`Shapes.pick`) fitted
    on the other models' curves (leave one model out: a model opx has never measured), and for
    the envelopes also with the shape of the model's other envelopes (leave the envelope out:
    `own_model`): the median error of the points between, beside log-log interpolation; the
    share of curves where it does worse than log-log; the steep and disaggregated curves apart;
    the band's measured coverage."""
    models = sorted({c.model for c in curves})
    loglog = Shape(0.0, 0.0, (0.0, 0.0), COVERAGE, 0, "log-log")
    rows = []
    for m in models:
        train = [c for c in curves if c.model != m]
        if not train:
            continue              # one model alone: nothing to learn its shape from
        own = [c for c in curves if c.model == m]
        shapes = fit(train, own_models=own)
        for c in own:
            xi, yi = c.x[1:-1], c.y[1:-1]
            ll = between(c.x[0], c.y[0], c.x[-1], c.y[-1], xi, loglog)
            system = (c.hardware, c.model, c.workload) if c.scope == "envelope" else None
            for how, pick in (("model_out", shapes.without_models().pick(
                    is_disaggregated_envelope(c))), ("own_model", shapes.pick(
                    is_disaggregated_envelope(c), system))):
                pred = between(c.x[0], c.y[0], c.x[-1], c.y[-1], xi, pick)
                lo, hi = band_between(c.x[0], c.y[0], c.x[-1], c.y[-1], xi, pick)
                rows.append({"curve": c, "how": how, "ape": np.abs(pred / yi - 1) * 100,
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
    out = {"method": "each curve through its two ends, the shape for its kind fitted on the "
                     "other models' curves (leave one model out); with 'own model', an "
                     "envelope's through the shape of its model's other envelopes (leave the "
                     "envelope out)",
           "stated_coverage_pct": round(COVERAGE * 100)}
    for how, scopes, label in (("model_out", ("run", "envelope"), ""),
                               ("own_model", ("envelope",), "_own_model")):
        for scope in scopes:
            sel = [r for r in rows if r["curve"].scope == scope and r["how"] == how]
            out[scope + "s" + label] = summary(sel)
            out[scope + "s_steep" + label] = summary(
                [r for r in sel if r["curve"].y[0] / r["curve"].y[-1] >= steep_fall])
            out[scope + "s_disaggregated" + label] = summary(
                [r for r in sel if r["curve"].disaggregated])
    out["steep_fall"] = steep_fall
    return out
