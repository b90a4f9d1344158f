"""Anchored projections: fit a few of the simulator's free parameters to one system's own measured
or published figures, and project the whole envelope through them with a band.

docs/simulator.md ("Anchored projections") gives the method; in short:

- Anchors are the non-simulated figures of one (hardware, model, workload): points with an
  interactivity and a throughput (`point`), throughputs without an interactivity (`peak`: read as
  the system's peak), and interactivities without a throughput at one request (`single`: the
  fastest single session). Each has an uncertainty `sigma` (log space) by provenance.
- Free parameters (FREE): four multipliers on the calibrated factors, fitted in log space with
  bounds by scipy's least_squares: the fixed step overhead (`t_layer`, `t_step`), the memory
  bandwidth efficiency (`eta_m`), the compute efficiency (`eta_c`, `eta_cp`) and the P90 TPOT
  spread (only P90 anchors see it). A weak log-normal
  prior (a factor of 3 is one standard deviation) keeps a parameter no anchor sees at its
  calibrated value.
- Residuals: log(predicted / anchor) of the throughput at the anchor's interactivity (point), of
  the envelope's highest throughput (peak) or of its highest interactivity (single), each divided
  by the anchor's sigma.
- Band: the parameter covariance (J'J)^-1 of the whitened fit, inflated by the anchors' reduced
  chi-square when above 1, propagated by the 2n sigma points (the fitted parameters +- one
  standard deviation along each principal axis): the band is the lowest and highest throughput
  any of them gives at each interactivity.
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from models.simulate_view import SIM_PERCENTILES
from opx.curves.frontier import pareto_mask_numpy
from opx.simulate import api
from opx.simulate.api import SAVED_SHAPE_NOTE, SHAPE_NOTE, is_shaped, saved_note  # noqa: F401

# name: (efficiency factors it multiplies, low, high, what it stands for)
FREE = {
    "overhead": (("t_layer", "t_step"), 0.02, 10.0,
                 "fixed cost per step (kernel launches, scheduler, sampling): sets the single-session speed"),
    "memory": (("eta_m",), 0.2, 1.6,
               "achieved fraction of HBM bandwidth: sets the step time of small and mid batches"),
    "compute": (("eta_c", "eta_cp"), 0.1, 2.3,
                "achieved fraction of tensor peak, decode and prefill: sets the peak throughput"),
    "spread": (("spread",), 0.05, 3.0,
               "the P90 TPOT spread factor k: how much slower the P90 request is than the P50 at "
               "many requests per decode instance (only P90 anchors see it)"),
}
PRIOR_SIGMA = float(np.log(3.0))
# the uncertainty of an anchor in log space, by provenance (a figure's stated uncertainty when the
# source gives none)
SIGMA = {"measured": 0.10, "published": 0.10, "preview": 0.15, "derived": 0.20,
         "interpolated": 0.25}
# an anchor above the envelope's reach: the residual keeps falling this steeply per log unit of
# missing interactivity, so the fit is pushed to reach it
REACH_SLOPE = 2.0
SIM_PCTS = SIM_PERCENTILES        # the statistics the simulator gives (one list)
# the statistics an anchor may state, and the simulated envelope each is compared with: the
# model's P50 is calibrated on InferenceX's mean TPOTs, so a mean anchors against the P50
ANCHOR_PCTS = {"p50": "p50", "mean": "p50", "p90": "p90"}


@dataclass(frozen=True)
class Anchor:
    """One figure a projection is anchored to."""
    run_id: str
    label: str
    provenance: str
    kind: str                   # "point", "peak" or "single"
    pct: str | None             # percentile of `x` (None for a peak)
    x: float | None             # interactivity, tok/s/user
    y: float | None             # total throughput per GPU, tok/s/GPU
    sigma: float
    fitted: bool = True
    reason: str = ""            # why it is not fitted
    disaggregated: bool = False  # measured on a disaggregated deployment (the shape it takes)

    def describe(self) -> str:
        if self.kind == "peak":
            return f"peak {self.y:,.0f} tok/s/GPU"
        if self.kind == "single":
            return f"single session {self.x:,.0f} tok/s/user {self.pct.upper()}"
        return f"{self.y:,.0f} tok/s/GPU at {self.x:,.4g} tok/s/user {self.pct.upper()}"


@dataclass
class AnchorFit:
    hardware: str
    model: str
    workload: str
    scale: dict                  # efficiency factor -> multiplier (simulate's eff_scale)
    parameters: dict             # free parameter -> {"value", "low", "high", "sd_log", ...}
    anchors: list[Anchor]
    residuals: list[dict]        # per anchor: predicted, residual (log), ratio, within
    result: object               # SimResult of the anchored search (envelopes carry band_lo/hi)
    chi2: float = 0.0
    seconds: float = 0.0
    evaluations: int = 0
    band_method: str = ""
    notes: list[str] = field(default_factory=list)
    shapes: dict[str, str] = field(default_factory=dict)   # statistic -> kind of shape followed

    @property
    def anchored(self) -> bool:
        return any(a.fitted for a in self.anchors)

    @property
    def shaped(self) -> bool:
        """Whether the curve follows the learned shape between its anchors (follow_shape)."""
        return bool(self.shapes)

    def notes_text(self) -> str:
        """The notes as sentences, for a caption."""
        return " ".join(n[:1].upper() + n[1:].rstrip(".") + "." for n in self.notes)

    def band_text(self) -> str:
        """Where the band comes from, in a few words for the pages."""
        return ("between the anchors the shape learned from measured curves, band from its "
                "held-out errors on measured envelopes; outside them from the fit's parameter "
                "covariance"
                if self.shaped else "band from the fit's parameter covariance")

    def summary(self) -> dict:
        """The fit as JSON-ready data: parameters, each anchor's residual, the band's method."""
        return {"anchored": self.anchored, "hardware": self.hardware, "model": self.model,
                "workload": self.workload, "parameters": self.parameters,
                "eff_scale": self.scale, "anchors": self.residuals,
                "chi2": round(self.chi2, 4), "band": self.band_method,
                "seconds": round(self.seconds, 3), "evaluations": self.evaluations,
                "notes": self.notes, "shapes": self.shapes}


# -- anchors from points ----------------------------------------------------------------------------

def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) and f > 0 else None


def anchors_from_points(points: pd.DataFrame, prefer: str = "p50") -> list[Anchor]:
    """Anchors from non-simulated points (columns run_id, provenance, interactivity_p50,
    interactivity_mean, interactivity_p90, throughput_total_per_gpu, optional label and
    concurrency). A point with a throughput and an interactivity anchors at `prefer` where it
    states it, else at P50, the mean (against the P50 envelope) or P90, in that order; points
    below the data's own frontier, slower single sessions than the fastest one and figures with
    neither coordinate are kept, not fitted, with the reason."""
    if points is None or points.empty:
        return []
    order = tuple(dict.fromkeys(((prefer,) if prefer in ANCHOR_PCTS else ()) + tuple(ANCHOR_PCTS)))
    out: list[Anchor] = []
    for r in points.to_dict("records"):
        prov = str(r.get("provenance") or "measured")
        sigma = SIGMA.get(prov, 0.2)
        label = str(r.get("label") or r.get("run_id"))
        y = _num(r.get("throughput_total_per_gpu"))
        pct = next((p for p in order if _num(r.get(f"interactivity_{p}")) is not None), None)
        x = _num(r.get(f"interactivity_{pct}")) if pct else None
        base = dict(run_id=str(r.get("run_id")), label=label, provenance=prov, sigma=sigma,
                    disaggregated=_true(r.get("disaggregated")))
        if y is not None and x is not None:
            out.append(Anchor(kind="point", pct=pct, x=x, y=y, **base))
        elif y is not None:
            out.append(Anchor(kind="peak", pct=None, x=None, y=y, **base))
        elif x is not None and (_num(r.get("concurrency")) or 1.0) <= 1.0:
            out.append(Anchor(kind="single", pct=pct, x=x, y=None, **base))
        elif x is not None:
            out.append(Anchor(kind="single", pct=pct, x=x, y=None, fitted=False,
                              reason="an interactivity without a throughput at more than one "
                                     "request: no place on the curve", **base))
    return _mark_unfitted(out)


def _true(v) -> bool:
    """A stored flag as a bool: None or NaN (a row that does not say) is False."""
    return isinstance(v, (bool, np.bool_)) and bool(v)


def _mark_unfitted(anchors: list[Anchor]) -> list[Anchor]:
    out = list(anchors)
    for pct in ANCHOR_PCTS:
        idx = [i for i, a in enumerate(out) if a.kind == "point" and a.pct == pct and a.fitted]
        if len(idx) > 1:
            x = np.array([out[i].x for i in idx])
            y = np.array([out[i].y for i in idx])
            keep = pareto_mask_numpy(x, y)
            for i, k in zip(idx, keep):
                if not k:
                    out[i] = dataclasses.replace(out[i], fitted=False,
                                                 reason="below the data's own frontier")
    # one single session and one peak per system: the fastest and the highest (a slower single
    # session is an older path, a lower peak another configuration)
    for kind, value, reason in (("single", "x", "a slower single session than the fastest one"),
                                ("peak", "y", "below the highest peak")):
        idx = [i for i, a in enumerate(out) if a.kind == kind and a.fitted]
        best = max(idx, key=lambda i: getattr(out[i], value), default=None)
        for i in idx:
            if i != best:
                out[i] = dataclasses.replace(out[i], fitted=False, reason=reason)
    return out


# -- predictions on an envelope -----------------------------------------------------------------------

def _env_xy(result, pct: str) -> tuple[np.ndarray, np.ndarray]:
    env = result.envelope_at(pct)
    if env.empty:
        return np.array([]), np.array([])
    x = env[f"interactivity_{pct}"].to_numpy(float)
    y = env.throughput_total_per_gpu.to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    o = np.argsort(x[ok])
    return x[ok][o], y[ok][o]


def loglog_at(xs: np.ndarray, ys: np.ndarray, x: float) -> float | None:
    """Throughput at interactivity x, linear in log-log between envelope points (None outside)."""
    if xs.size == 0 or x > xs[-1] * (1 + 1e-9) or x < xs[0] * (1 - 1e-9):
        return None
    if xs.size == 1:
        return float(ys[0])
    return float(np.exp(np.interp(np.log(x), np.log(xs), np.log(ys))))


def _predict(a: Anchor, result) -> tuple[float | None, float]:
    """(predicted value of the anchor's quantity, log residual predicted / anchor)."""
    if a.kind == "peak":
        ys = [e.throughput_total_per_gpu.max() for e in (result.envelope, result.envelope_p90)
              if e is not None and not e.empty]
        if not ys:
            return None, -5.0
        pred = float(max(ys))
        return pred, float(np.log(pred / a.y))
    xs, ys = _env_xy(result, ANCHOR_PCTS[a.pct])
    if xs.size == 0:
        return None, -5.0
    if a.kind == "single":
        return float(xs[-1]), float(np.log(xs[-1] / a.x))
    v = loglog_at(xs, ys, a.x)
    if v is not None:
        return v, float(np.log(v / a.y))
    if a.x > xs[-1]:       # not reachable: penalise the missing reach too
        return None, float(np.log(ys[-1] / a.y) - REACH_SLOPE * np.log(a.x / xs[-1]))
    return float(ys[0]), float(np.log(ys[0] / a.y))    # below the range: the flat low end


# -- the fit ---------------------------------------------------------------------------------------

def _scale_of(theta: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {}
    for (name, (targets, *_)), t in zip(FREE.items(), theta):
        for k in targets:
            out[k] = float(np.exp(t))
    return out


def _envelope_labels(result) -> frozenset[str]:
    labels = set()
    for env in (result.envelope, result.envelope_p90):
        if env is not None and not env.empty:
            labels |= {lab.split(" MTP")[0] for lab in env.layout}
    return frozenset(labels)


def fit(hardware: str, model: str, workload: str, gpus: int | None, knobs, catalog,
        anchors: list[Anchor], max_nfev: int = 8, shapes=None) -> AnchorFit:
    """Fit FREE to the anchors and project the envelope through them (see the module docstring).
    With no fitted anchor the projection is the unanchored one (every multiplier 1, no band).
    Between two or more point anchors of one statistic the envelope follows the learned shape
    (`shapes`, default data/simulator/shape.json; `follow_shape`)."""
    t0 = time.perf_counter()
    used = [a for a in anchors if a.fitted]
    base = api.simulate(hardware, model, workload, gpus, knobs, catalog, with_curves=not used)
    names = list(FREE)
    lo = np.log([FREE[n][1] for n in names])
    hi = np.log([FREE[n][2] for n in names])
    evals = [1]
    notes: list[str] = []
    if not used:
        _put_band(base, [])
        return _finish(AnchorFit(base.hardware, base.model, base.workload, {}, _param_table(
            np.zeros(len(names)), None), anchors, residuals_of(anchors, base), base,
            seconds=time.perf_counter() - t0, evaluations=1,
            band_method="none: nothing to anchor to, the unanchored projection",
            notes=["no anchor: the projection is unanchored"]))
    subset = _envelope_labels(base)
    cache: dict[tuple, object] = {}

    def sim(theta: np.ndarray, layouts: frozenset[str] | None):
        key = (tuple(np.round(theta, 10)), layouts)
        if key not in cache:
            evals[0] += 1
            cache[key] = api.simulate(hardware, model, workload, gpus, knobs, catalog,
                                      eff_scale=_scale_of(theta), only_layouts=layouts,
                                      with_curves=False)
        return cache[key]

    def resid(theta, layouts):
        r = sim(theta, layouts)
        out = [_predict(a, r)[1] / a.sigma for a in used]
        return np.array(out + list(theta / PRIOR_SIGMA))

    theta = np.zeros(len(names))
    for round_ in range(2):
        # the envelope's layouts at the current parameters (a faster or slower system may be best
        # served by other layouts), then refit on them from there
        sol = least_squares(resid, theta, bounds=(lo, hi), args=(subset,), method="trf",
                            diff_step=0.02, x_scale=1.0, max_nfev=max_nfev // (1 + round_),
                            ftol=1e-3, xtol=1e-3, gtol=1e-4)
        theta = sol.x
        full = sim(theta, None)
        new = _envelope_labels(full)
        if new <= subset:
            break
        subset = subset | new
    evals[0] += 1
    full = api.simulate(hardware, model, workload, gpus, knobs, catalog,
                        eff_scale=_scale_of(theta))
    sol_r = resid(theta, subset)
    n_a = len(used)
    chi2 = float(np.sum(sol_r[:n_a] ** 2))
    J = sol.jac
    try:
        cov = np.linalg.pinv(J.T @ J)
    except np.linalg.LinAlgError:
        cov = np.eye(len(names)) * PRIOR_SIGMA ** 2
    infl = max(1.0, chi2 / max(n_a - len(names), 1))
    cov = cov * infl
    # sigma points along the principal axes of the covariance
    w, v = np.linalg.eigh((cov + cov.T) / 2)
    w = np.clip(w, 0, None)
    sigma_results = []
    label_set = _envelope_labels(full)
    for k in range(len(names)):
        step = np.sqrt(w[k]) * v[:, k]
        if np.sqrt(w[k]) < 1e-4:
            continue
        for sgn in (1, -1):
            sigma_results.append(sim(np.clip(theta + sgn * step, lo, hi), label_set))
    _put_band(full, sigma_results)
    drawn = follow_shape(full, used, shapes)
    shaped = bool(drawn)
    if drawn:
        notes.append(shape_note(drawn))
    if infl > 1:
        notes.append(f"the anchors disagree with each other beyond their stated uncertainties "
                     f"(chi-square {chi2:.2g} on {n_a} anchors): the band is widened "
                     f"{np.sqrt(infl):.2g}x")
    return _finish(AnchorFit(full.hardware, full.model, full.workload, _scale_of(theta),
                     _param_table(theta, cov), anchors, residuals_of(anchors, full), full, chi2=chi2,
                     seconds=time.perf_counter() - t0, evaluations=evals[0],
                     band_method=(("between the point anchors: the learned shape's held-out "
                                   "errors on measured envelopes (80 %); outside them: "
                                   if shaped else "")
                                  + "parameter covariance (J'J)^-1 of the whitened fit"
                                  + (f", widened {np.sqrt(infl):.2g}x by the anchors' reduced "
                                     "chi-square" if infl > 1 else "")
                                  + ", propagated by sigma points (+- one standard deviation "
                                    "along each principal axis)"),
                     notes=notes, shapes={pct: s.kind for pct, s in drawn.items()}))


# -- between the anchors: the learned shape ------------------------------------------------------

THROUGHPUT_COLUMNS = ("throughput_total_per_gpu", "throughput_output_per_gpu",
                      "throughput_input_per_gpu", "band_lo", "band_hi")
# envelope points between two neighbouring anchors: one every 4 % of interactivity (readers
# interpolate between them log-log, which is within 0.3 % of the shape at that spacing), 2 to 160
SHAPE_STEP, SHAPE_STEPS = 1.04, (2, 160)
def followed_shape(fit, pct: str = "p50") -> str | None:
    """The kind of learned shape (a key of opx.simulate.shape.KINDS) the curve of statistic
    `pct` follows between its anchors (`fit`: an AnchorFit or anything with its `shapes`), None
    when it follows none. A P90 curve not shaped itself is kept under the shaped P50 one, so it
    takes the P50's."""
    shapes = getattr(fit, "shapes", None) or {}
    return shapes.get(ANCHOR_PCTS.get(pct, pct)) or next(iter(shapes.values()), None)


def follow_shape(result, used: list[Anchor], shapes=None) -> dict:
    """Between the point anchors of each statistic (two or more, a frontier), replace the
    envelope by the shape learned from the measured curves (opx/simulate/shape.py, `Shapes`)
    through them, with its band; outside them keep the physics' curve, scaled to meet the
    outermost anchors. Anchors of several runs are a system's envelope: of disaggregated runs
    they take the disaggregated envelopes' shape, else that of the model's envelopes on other
    systems or workloads where opx has some (`Shapes.pick`). Returns the shape drawn for each
    statistic ("p50", "p90"), empty when there was nothing to do."""
    from opx.simulate import shape as SH
    shapes = shapes if shapes is not None else SH.load()
    if shapes is None:
        return {}
    drawn = {}
    for pct, attr in (("p50", "envelope"), ("p90", "envelope_p90")):
        pts = [a for a in used if a.kind == "point" and ANCHOR_PCTS[a.pct] == pct]
        env = getattr(result, attr)
        if len(pts) < 2 or env is None or env.empty:
            continue
        ax = np.array([a.x for a in pts], float)
        ay = np.array([a.y for a in pts], float)
        ok = np.isfinite(ax) & np.isfinite(ay) & (ax > 0) & (ay > 0)
        ax, ay = ax[ok], ay[ok]
        if ax.size < 2:
            continue
        keep = pareto_mask_numpy(ax, ay)
        order = np.argsort(ax[keep])
        ax, ay = ax[keep][order], ay[keep][order]
        if ax.size < 2:
            continue
        envelope = len({a.run_id for a in pts}) > 1
        s = shapes.pick(envelope and all(a.disaggregated for a in pts),
                        (result.hardware, result.model, result.workload) if envelope else None)
        setattr(result, attr, _shaped_envelope(env, pct, ax, ay, s))
        drawn[pct] = s
    if drawn and result.envelope_p90 is not None and not result.envelope_p90.empty \
            and result.envelope is not None and not result.envelope.empty:
        result.envelope_p90 = _under(result.envelope_p90, result.envelope)
    return drawn


def shape_note(drawn: dict) -> str:
    """follow_shape's shapes as the fit's note."""
    described = dict.fromkeys(s.describe() for s in drawn.values())
    return (f"{SHAPE_NOTE} ({', '.join(p.upper() for p in drawn)}) the curve follows "
            f"{' and '.join(described)}; outside them, the physics model scaled to meet them")


def _shaped_envelope(env: pd.DataFrame, pct: str, ax: np.ndarray, ay: np.ndarray, s
                     ) -> pd.DataFrame:
    from opx.simulate import shape as SH
    xcol = f"interactivity_{pct}"
    ok = np.isfinite(env[xcol]) & np.isfinite(env.throughput_total_per_gpu)
    env = env[ok].sort_values(xcol).reset_index(drop=True)
    if env.empty:
        return env
    x = env[xcol].to_numpy(float)
    y = env.throughput_total_per_gpu.to_numpy(float)
    below, above = x < ax[0] * (1 - 1e-9), x > ax[-1] * (1 + 1e-9)
    outside = env[below | above].copy()
    if not outside.empty:
        # continuity: the physics at the outermost anchors, or at its own nearest end where it
        # does not reach them
        def at(xa: float) -> float:
            v = loglog_at(x, y, xa)
            return v if v else float(y[0] if xa < x[0] else y[-1])
        f_lo, f_hi = ay[0] / at(ax[0]), ay[-1] / at(ax[-1])
        factor = np.where(outside[xcol].to_numpy(float) < ax[0], f_lo, f_hi)
        for col in THROUGHPUT_COLUMNS:
            if col in outside:
                outside[col] = outside[col].to_numpy(float) * factor
    steps = [int(np.clip(np.ceil(np.log(ax[i + 1] / ax[i]) / np.log(SHAPE_STEP)), *SHAPE_STEPS))
             for i in range(ax.size - 1)]
    grid = np.unique(np.concatenate([np.geomspace(ax[i], ax[i + 1], n + 1)
                                     for i, n in enumerate(steps)]))
    grid = np.clip(grid, ax[0], ax[-1])
    # each new point takes the other fields (layout, concurrency, latencies) of the physics
    # envelope's nearest point, and its throughput split between output and input
    near = np.abs(np.log(x)[None, :] - np.log(grid)[:, None]).argmin(axis=1)
    inside = env.iloc[near].copy().reset_index(drop=True)
    total = inside.throughput_total_per_gpu.to_numpy(float)
    out_col = (inside.throughput_output_per_gpu.to_numpy(float)
               if "throughput_output_per_gpu" in inside else total)
    share_out = np.where(total > 0, out_col / np.where(total > 0, total, 1), 1.0)
    new = SH.through(ax, ay, grid, s)
    lo, hi = SH.band_through(ax, ay, grid, s)
    # the other statistic moves with this one, keeping the nearest point's modelled spread (so
    # P90 stays at or under P50), and the end-to-end latency with the P50 time per token
    ratio = grid / inside[xcol].to_numpy(float)
    tpot50 = inside.tpot_p50_s.to_numpy(float) if "tpot_p50_s" in inside else None
    for p in ("p50", "p90"):
        if f"interactivity_{p}" in inside:
            inside[f"interactivity_{p}"] = inside[f"interactivity_{p}"].to_numpy(float) * ratio
            if f"tpot_{p}_s" in inside:
                inside[f"tpot_{p}_s"] = 1.0 / inside[f"interactivity_{p}"].to_numpy(float)
    if tpot50 is not None and {"e2e_p50_s", "ttft_p50_s"} <= set(inside):
        ttft = inside.ttft_p50_s.to_numpy(float)
        tokens = (inside.e2e_p50_s.to_numpy(float) - ttft) / tpot50     # OSL - 1
        inside["e2e_p50_s"] = ttft + tokens * inside.tpot_p50_s.to_numpy(float)
    inside[xcol] = grid
    inside[f"tpot_{pct}_s"] = 1.0 / grid
    inside["throughput_total_per_gpu"] = new
    inside["throughput_output_per_gpu"] = new * share_out
    inside["throughput_input_per_gpu"] = new * (1 - share_out)
    inside["band_lo"], inside["band_hi"] = np.minimum(lo, new), np.maximum(hi, new)
    out = pd.concat([outside, inside], ignore_index=True)
    out = out[np.isfinite(out[xcol]) & np.isfinite(out.throughput_total_per_gpu)]
    mask = pareto_mask_numpy(out[xcol].to_numpy(float), out.throughput_total_per_gpu.to_numpy(float))
    return out[mask].sort_values(xcol, ascending=False).reset_index(drop=True)


def _under(env90: pd.DataFrame, env50: pd.DataFrame) -> pd.DataFrame:
    """The P90 envelope kept under the P50 one: a point's P90 interactivity is at most its P50
    one, so at any interactivity the P90 frontier cannot give more throughput. Below the P50
    envelope's range the cap is its highest throughput (every P50 point lies to the right)."""
    x50 = env50.interactivity_p50.to_numpy(float)
    y50 = env50.throughput_total_per_gpu.to_numpy(float)
    ok = np.isfinite(x50) & np.isfinite(y50)
    o = np.argsort(x50[ok])
    x50, y50 = x50[ok][o], y50[ok][o]
    env90 = env90[np.isfinite(env90.interactivity_p90)
                  & np.isfinite(env90.throughput_total_per_gpu)].copy()
    caps = [float(y50.max()) if x50.size and x < x50[0] else loglog_at(x50, y50, x)
            for x in env90.interactivity_p90]
    cap = np.array([c if c is not None and np.isfinite(c) else np.inf for c in caps], float)
    factor = np.minimum(1.0, cap / env90.throughput_total_per_gpu.to_numpy(float))
    for col in THROUGHPUT_COLUMNS:
        if col in env90:
            env90[col] = env90[col].to_numpy(float) * factor
    keep = pareto_mask_numpy(env90.interactivity_p90.to_numpy(float),
                             env90.throughput_total_per_gpu.to_numpy(float))
    return env90[keep].reset_index(drop=True)


def _finish(f: AnchorFit) -> AnchorFit:
    f.result.anchor = f.summary()
    return f


def _param_table(theta: np.ndarray, cov) -> dict:
    out = {}
    for i, (name, (targets, low, high, what)) in enumerate(FREE.items()):
        sd = float(np.sqrt(max(cov[i, i], 0))) if cov is not None else None
        out[name] = {"multiplier": round(float(np.exp(theta[i])), 4),
                     "sd_log": None if sd is None else round(sd, 4),
                     "applies_to": list(targets), "bounds": [low, high], "meaning": what}
    return out


def residuals_of(anchors: list[Anchor], result) -> list[dict]:
    """Each anchor's prediction by `result` and its residual (fitted or not)."""
    rows = []
    for a in anchors:
        pred, r = _predict(a, result)
        rows.append({"run_id": a.run_id, "label": a.label, "provenance": a.provenance,
                     "kind": a.kind, "pct": a.pct, "interactivity": a.x, "throughput": a.y,
                     "anchor": a.describe(), "predicted": None if pred is None else round(pred, 4),
                     "residual_log": round(r, 4),
                     "residual_pct": round((np.exp(r) - 1) * 100, 2),
                     "sigma_log": a.sigma, "within": bool(abs(r) <= a.sigma),
                     "fitted": a.fitted, "reason": a.reason})
    return rows


def _put_band(result, sigma_results: list) -> None:
    """Add band_lo / band_hi (total throughput per GPU) to the result's envelopes, at each
    envelope point's interactivity: the range over the sigma points' envelopes and the fit's."""
    for pct, attr in (("p50", "envelope"), ("p90", "envelope_p90")):
        env = getattr(result, attr)
        if env is None or env.empty:
            continue
        env = env.copy()
        x = env[f"interactivity_{pct}"].to_numpy(float)
        y = env.throughput_total_per_gpu.to_numpy(float)
        lo, hi = y.copy(), y.copy()
        for s in sigma_results:
            xs, ys = _env_xy(s, pct)
            for i, xi in enumerate(x):
                v = loglog_at(xs, ys, xi) if np.isfinite(xi) else None
                if v is not None:
                    lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
        env["band_lo"], env["band_hi"] = lo, hi
        setattr(result, attr, env)


def knobs_from_parameters(parameters: dict):
    """SimKnobs from a simulated run's stored parameters (`run.meta["parameters"]`)."""
    k = dict(parameters.get("knobs") or {})
    fields = {f.name for f in dataclasses.fields(api.SimKnobs)}
    k = {n: v for n, v in k.items() if n in fields}
    if k.get("concurrencies") is not None:
        k["concurrencies"] = tuple(k["concurrencies"])
    k.pop("layout", None)
    return api.SimKnobs(**k)


def fit_json(f: AnchorFit) -> str:
    return json.dumps(f.summary(), sort_keys=True, default=str)


def anchor_run_problems(points: pd.DataFrame, run_ids: list[str], hardware: str, model: str,
                        workload: str) -> dict[str, str]:
    """For each asked run id that cannot anchor this system's projection, what is wrong (points:
    `opx.store.queries.anchor_points` of those ids)."""
    problems: dict[str, str] = {}
    for rid in run_ids:
        rows = points[points.run_id == rid] if not points.empty else points
        if rows.empty:
            problems[rid] = "no run with this id in the database"
            continue
        r = rows.iloc[0]
        if r.provenance == "simulated":
            problems[rid] = "a simulated run cannot anchor a projection"
            continue
        wrong = [f"{what} {have}, not {want}" for what, have, want in
                 (("hardware", r.hardware, hardware), ("model", r.model, model),
                  ("workload", r.workload, workload)) if have != want]
        if wrong:
            problems[rid] = "the run is of " + ", ".join(wrong)
            continue
        usable = [a for a in anchors_from_points(rows) if a.kind in ("point", "peak", "single")]
        if not usable:
            problems[rid] = "no point with a throughput or an interactivity to anchor to"
    return problems
