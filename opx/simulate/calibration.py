"""Fit the efficiency factors to measured rows, and validate leave-one-system-out.

Method (docs/simulator.md, "Calibration"): robust nonlinear least squares (scipy least_squares) on
the cleaned DeepSeek rows of silicon_sample.csv: TPOT as log(predicted / measured) with a
redescending arctan loss, TTFT as predicted / measured - 1 (the percentage error the MdAPE targets
are stated in) with a soft-L1 loss (0.5.0; 0.1.0-0.4.1 fitted both in log space with soft-L1), each
system's rows weighted by 1/sqrt(rows) so no system dominates, plus weak priors (a factor of 3 is
one standard deviation) that keep factors the data cannot see near the reference values.

Grouped factors use partial pooling: the factor of a group (a serving framework, or a hardware
family) is the pooled value x exp(delta_group), and delta is shrunk towards 0 as if
`FitOptions.group_pseudo_rows` (3) extra rows of the group agreed with the pooled value. Grouped
now: the two closed-loop TTFT burst factors, per framework (TensorRT-LLM, SGLang). Nothing is per
hardware family: every family factor tried made the held-out errors worse (docs/simulator.md lists
what was tried).

`FitOptions` holds every choice a fit may vary (the model's structural options, the memory reading,
the loss, the fitted factors, the row rules); its defaults are the engine's. `ablations` validates
the variants of `ablation_variants()`, each an explicit FitOptions: nothing is patched at run time.

Two row flags from opx/simulate/silicon.py enter the fit and the validation identically:
- `mtp_suspect` (rule 8, provenance): the row is predicted with MTP (MTP_CAL_DEPTH drafts and one
  fitted acceptance `mtp_accept`), every other row without MTP. No per-row choice is made.
- `ttft_artefact` (rule 9, set here): the row's TTFT and throughput are left out of the fit and of
  the TTFT / throughput errors; its TPOT is used.
"""
from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from opx.simulate import model as M
from opx.simulate.arch import arch_for
from opx.simulate.hardware import BORROW, FAMILIES, FAMILY, hw_spec
from opx.simulate.silicon import load_rows, resolve_path, sha256
from opx.simulate.ttft_sources import ttft_sources

CAL_MODEL = "deepseek-r1"
METHOD = ("scipy.optimize.least_squares (trf) on the per-row residuals of TPOT, log(pred/measured) "
          "with an arctan loss (f_scale 0.5; weight 1), and TTFT, pred/measured - 1 (the relative "
          "error the MdAPE targets are stated in) with a soft-L1 loss (f_scale 1.0; weight 1), rows of each system weighted 1/sqrt(n), weak log-normal "
          "priors (sigma = ln 3) around the reference values; per-framework factors ("
          "burst_agg, burst_disagg) partially pooled with 3 pseudo-rows; MTP-suspect rows "
          "(TensorRT-LLM, source-file only) predicted with MTP1 at one fitted acceptance; rows "
          "whose TTFT breaks the closed-loop bound contribute TPOT only")

# Serving frameworks with measured rows (the `backend` column). Others (vLLM) get the pooled value.
FRAMEWORKS = ("trtllm", "sglang")
FRAMEWORK_NAMES = {"trtllm": "trtllm", "tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm",
                   "trt-llm": "trtllm", "sglang": "sglang", "vllm": "vllm"}
GROUPS = {"family": FAMILIES, "framework": FRAMEWORKS}

# name: (prior, low, high, group) with group None (one global value), "family" or "framework"
PARAMS = {
    "eta_m": (0.75, 0.2, 1.0, None),
    "eta_c": (0.5, 0.05, 1.0, None),
    "t_layer": (20e-6, 1e-6, 300e-6, None),
    "eta_cp": (0.5, 0.05, 1.0, None),
    "eta_n": (0.6, 0.05, 1.0, None),
    "alpha_ar": (8e-6, 1e-6, 100e-6, None),
    "alpha_a2a": (15e-6, 1e-6, 300e-6, None),
    "t_step": (1e-3, 20e-6, 20e-3, None),
    "q_wait": (0.5, 0.01, 50.0, None),
    "burst_agg": (0.2, 1e-3, 5.0, "framework"),
    "burst_disagg": (0.2, 1e-3, 5.0, "framework"),
    "ttft_fixed_agg": (0.05, 1e-3, 2.0, None),
    "ttft_fixed_disagg": (0.1, 1e-3, 2.0, None),
    "t_req": (1e-3, 1e-5, 0.05, None),
}
# q_wait: the M/D/1 prefill queue coefficient (ModelOptions.queue_form "md1": 0.1.0-0.3.0 and since
# 0.4.1). 0.4.0's batch-service queue (queue_form "batch", an ablation) has no fitted constant:
# BATCH_PARAMS.
BATCH_PARAMS = {k: p for k, p in PARAMS.items() if k != "q_wait"}
# calibration-only parameters (not efficiency factors; never used by simulate())
NUISANCE = {"mtp_accept": (0.7, 0.3, 0.95)}
PRIOR_SIGMA = np.log(3.0)
GROUP_BOUND = np.log(3.0)       # a group's factor stays within 3x of the pooled value
MTP_CAL_DEPTH = 1               # drafts assumed for MTP-suspect rows (DeepSeek-R1 ships one MTP module)
ARTEFACT_T0_S = 1.0             # rule 9 constants (fixed a priori)
ARTEFACT_TOKENS_PER_GPU_S = 1000.0
# The loss (0.5.0; docs/simulator.md, "Calibration", "The loss"). The targets are medians of
# absolute percentage errors, |pred/measured - 1|, which is asymmetric in log space (a 2x
# over-prediction costs 100 %, a 2x under-prediction 50 %). TTFT is noisy (sweep-level jumps,
# stalls, per-system software state: held-out log residuals spread by ~0.6), so a fit that is unbiased
# in log space (0.1.0-0.4.1) sits well above the value that minimises the percentage error: held out,
# its TTFT was over-predicted by +18 % in the median. 0.5.0 fits TTFT on the relative error itself.
# TPOT stays in log space (its residuals are narrow, the two residuals agree there) with a
# redescending loss, so the few rows a hardware-only model cannot follow (B300's slow software state,
# stalled sweeps) stop pulling the global factors.
# RESIDUAL: per metric, "log" = log(pred/measured), "rel" = pred/measured - 1.
# LOSSES: per part ("tpot", "ttft", "prior"), (scipy least_squares loss name, f_scale), applied to the
# weighted residuals directly: least_squares then minimises sum f_s^2 rho((r/f_s)^2) / 2.
RESIDUAL = {"tpot": "log", "ttft": "rel"}
LOSSES = {"tpot": ("arctan", 0.5), "ttft": ("soft_l1", 1.0), "prior": ("soft_l1", 0.25)}
# 0.1.0-0.4.1: both residuals in log space, one soft-L1 loss with f_scale 0.25 (an ablation now)
RESIDUAL_041 = {"tpot": "log", "ttft": "log"}
LOSSES_041 = {"tpot": ("soft_l1", 0.25), "ttft": ("soft_l1", 0.25), "prior": ("soft_l1", 0.25)}
_RHO = {"linear": lambda z: z, "soft_l1": lambda z: 2 * (np.sqrt(1 + z) - 1),
        "cauchy": np.log1p, "arctan": np.arctan}


@dataclass(frozen=True)
class FitOptions:
    """Everything a fit and its leave-one-system-out validation may vary. The defaults are the
    engine's (0.5.0); the ablation runner (`ablations`) passes other values down explicitly, so no
    module global is changed at run time."""
    model: M.ModelOptions = M.ENGINE_OPTIONS    # structural choices of the serving model
    runtime_memory: bool = True         # HBM as the runtime reports it (0.4.0); False: catalog GB x 1e9
    params: dict | None = None          # the fitted factors, as PARAMS (None: PARAMS)
    residual: dict = field(default_factory=lambda: dict(RESIDUAL))   # per metric: "log" or "rel"
    losses: dict = field(default_factory=lambda: dict(LOSSES))       # per part: (loss, f_scale)
    mtp_mode: str = "label"             # "label": mtp_suspect rows with MTP (rule 8); "none": MTP0
    artefact_rule: bool = True          # rule 9 of silicon.py
    ttft_weight: float = 1.0            # weight of the TTFT residuals against TPOT's
    group_pseudo_rows: float = 3.0      # partial pooling strength of a group's delta

    def __post_init__(self):
        if self.mtp_mode not in ("label", "none"):
            raise ValueError(f"mtp_mode {self.mtp_mode!r}: use 'label' or 'none'")


def _robust(f, loss: str, fs: float):
    """sign(f) f_s sqrt(rho((f/f_s)^2)): its sum of squares / 2 is scipy's robust loss of f."""
    return np.sign(f) * fs * np.sqrt(_RHO[loss]((f / fs) ** 2))


def framework_key(name: str | None) -> str | None:
    """Normalised framework name, or None (pooled)."""
    if name is None:
        return None
    key = FRAMEWORK_NAMES.get(str(name).strip().lower())
    if key is None:
        raise ValueError(f"unknown framework {name!r}: use one of trtllm, sglang, vllm (or None)")
    return key


def precision_bytes(precision: str, has_fp4: bool) -> dict:
    """Bytes per weight and the tensor peak used per part. fp4: NVFP4 routed experts on the FP4
    peak (FP8 where the GPU has no FP4), non-routed weights FP8; fp8: everything FP8. Attention
    core at the BF16 peak."""
    if precision == "fp4":
        return {"s_nr": 1.0, "s_e": M.FP4_BYTES, "e_peak": "fp4" if has_fp4 else "fp8"}
    if precision == "bf16":
        return {"s_nr": 2.0, "s_e": 2.0, "e_peak": "bf16"}
    return {"s_nr": 1.0, "s_e": 1.0, "e_peak": "fp8"}


def hw_rows(specs: list, precisions: list[str]) -> dict:
    """Per-row hardware and precision arrays (specs: HwSpec per row)."""
    out = {k: [] for k in ("bw", "p_e", "p_nr", "p_att", "link", "domain", "scale_out", "hbm",
                           "s_nr", "s_e")}
    for h, prec in zip(specs, precisions):
        pb = precision_bytes(prec, h.fp4_pflops is not None)
        peak = {"fp4": h.fp4_pflops or h.fp8_pflops, "fp8": h.fp8_pflops, "bf16": h.bf16_pflops}
        out["bw"].append(h.hbm_tb_s * 1e12)
        out["p_e"].append(peak[pb["e_peak"]] * 1e15)
        out["p_nr"].append(h.fp8_pflops * 1e15)
        out["p_att"].append(h.bf16_pflops * 1e15)
        out["link"].append(h.scale_up_tb_s / 2 * 1e12)
        out["domain"].append(h.domain)
        out["scale_out"].append(h.scale_out_gb_s * 1e9)
        out["hbm"].append(h.hbm_bytes)
        out["s_nr"].append(pb["s_nr"])
        out["s_e"].append(pb["s_e"])
    return {k: np.asarray(v, float) for k, v in out.items()}


class Problem:
    """The cleaned rows as model inputs, with the parameter packing, under one set of options."""

    def __init__(self, rows: pd.DataFrame, catalog, options: FitOptions | None = None):
        self.rows = rows
        self.options = options = FitOptions() if options is None else options
        self.params = dict(PARAMS if options.params is None else options.params)
        self.arch = arch_for(catalog.models[CAL_MODEL])
        specs = {s: hw_spec(catalog.hardware[s], runtime_memory=options.runtime_memory)
                 for s in rows.hardware.unique()}
        hw = hw_rows([specs[s] for s in rows.hardware], list(rows.precision))
        cols = {k: rows[k].to_numpy(float) for k in ("d_tp", "d_dp", "d_ep", "d_moetp", "d_pp", "n_d",
                                                       "p_tp", "p_dp", "p_ep", "p_moetp", "n_p",
                                                       "agg", "isl", "osl", "conc")}
        self.c = M.rows(**hw, **cols, hit=0.0, m=0.0, p_acc=0.0)
        self.group_idx = {
            "family": np.array([FAMILIES.index(FAMILY[h]) for h in rows.hardware]),
            "framework": np.array([FRAMEWORKS.index(framework_key(b)) for b in rows.backend]),
        }
        self.mtp = (rows["mtp_suspect"].to_numpy(bool) if options.mtp_mode == "label"
                    else np.zeros(len(rows), bool))
        self.c.m = np.where(self.mtp, float(MTP_CAL_DEPTH), 0.0)
        self.tpot = rows.tpot_s.to_numpy()
        self.ttft = rows.ttft_s.to_numpy()
        self.artefact = self.artefact_mask() if options.artefact_rule else np.zeros(len(rows), bool)
        n_sys = rows.system.map(rows.system.value_counts()).to_numpy(float)
        self.w = 1 / np.sqrt(n_sys)
        self.w = self.w / self.w.mean()
        # grouped factors are a pooled value times exp(delta_group); delta has its own prior
        self.names = []
        for name, (_, _, _, grp) in self.params.items():
            self.names += [name] + ([f"{name}:{g}" for g in GROUPS[grp]] if grp else [])
        if self.mtp.any():
            self.names += list(NUISANCE)
        self.is_group = np.array([":" in n for n in self.names])

    def artefact_mask(self) -> np.ndarray:
        """Rule 9 of silicon.py: TTFT above the closed-loop bound while KV capacity is not binding.
        Uses only fixed accounting (sequence lengths, GPU counts, KV capacity), no fitted value."""
        r, c = self.rows, self.c
        agg = c.agg > 0
        g_pre = np.where(agg, c.n_d * c.d_tp * c.d_dp * c.d_pp, c.n_p * c.p_tp * c.p_dp)
        bound = ARTEFACT_T0_S + c.conc * r.isl_label.to_numpy(float) / (ARTEFACT_TOKENS_PER_GPU_S * g_pre)
        cap, _ = M.kv_capacity(self.arch, c, c.isl + c.osl)
        fits = c.conc <= cap * c.n_d
        return (self.ttft > bound) & fits

    def bounds(self):
        lo, hi, x0, prior = [], [], [], []
        for n in self.names:
            if ":" in n:
                lo.append(-GROUP_BOUND); hi.append(GROUP_BOUND); x0.append(0.0); prior.append(0.0)
                continue
            p0, l, h = (NUISANCE[n] if n in NUISANCE else self.params[n][:3])
            lo.append(np.log(l)); hi.append(np.log(h)); x0.append(np.log(p0)); prior.append(np.log(p0))
        return np.array(lo), np.array(hi), np.array(x0), np.array(prior)

    def values(self, x) -> dict:
        """Parameter values: pooled, and name:group = pooled x exp(delta) (capped at the bound)."""
        v = dict(zip(self.names, x))
        out = {}
        for name, (_, _, hi, grp) in self.params.items():
            out[name] = float(np.exp(v[name]))
            for g in (GROUPS[grp] if grp else ()):
                out[f"{name}:{g}"] = float(min(np.exp(v[name] + v[f"{name}:{g}"]), hi))
        for name in NUISANCE:
            if name in v:
                out[name] = float(np.exp(v[name]))
        return out

    def eff_multi(self, X: np.ndarray, idx: np.ndarray) -> M.Eff:
        """Eff for k parameter sets X (k, npar), stacked row-block after row-block over rows idx."""
        k, n = len(X), len(idx)
        kw = {}
        for name, (_, _, hi, grp) in self.params.items():
            g = X[:, self.names.index(name)]
            if grp:
                cols = [self.names.index(f"{name}:{gr}") for gr in GROUPS[grp]]
                vals = np.minimum(np.exp(X[:, cols] + g[:, None]), hi)      # (k, groups)
                gi = np.tile(self.group_idx[grp][idx], k)
                kw[name] = vals[np.repeat(np.arange(k), n), gi]
            else:
                kw[name] = np.repeat(np.exp(g), n)
        return M.Eff(**kw)

    def rows_multi(self, X: np.ndarray, idx: np.ndarray):
        """Model rows for k parameter sets: rows idx tiled k times, MTP acceptance filled in."""
        k = len(X)
        c = SimpleNamespace(**{key: np.tile(v[idx], k) for key, v in vars(self.c).items()})
        if self.mtp.any():
            acc = np.repeat(np.exp(X[:, self.names.index("mtp_accept")]), len(idx))
            c.p_acc = np.where(np.tile(self.mtp[idx], k), acc, 0.0)
        return c

    def predict(self, x, idx=None, breakdown: bool = True) -> dict:
        idx = np.arange(len(self.rows)) if idx is None else np.asarray(idx)
        X = np.asarray(x)[None, :]
        return M.evaluate(self.rows_multi(X, idx), self.arch, self.eff_multi(X, idx),
                          breakdown=breakdown, options=self.options.model)


def _fit(prob: Problem, idx: np.ndarray, max_nfev: int = 40) -> np.ndarray:
    """Fit on rows idx. The Jacobian is computed in one vectorized pass over all perturbed
    parameter sets (the rows tiled once per parameter), which keeps a fit to seconds on two cores."""
    lo, hi, x0, prior = prob.bounds()
    npar = len(x0)
    n = len(idx)
    w = prob.w[idx] / prob.w[idx].mean()
    tpot, ttft = prob.tpot[idx], prob.ttft[idx]
    opts = prob.options
    w_ttft = np.where(prob.artefact[idx], 0.0, opts.ttft_weight * w)
    scale = np.sqrt(n)
    k = npar + 1
    prior_div = np.where(prob.is_group, 1.0 / np.sqrt(opts.group_pseudo_rows), PRIOR_SIGMA * scale)

    def res_of(lr, kind):
        return np.expm1(lr) if kind == "rel" else lr

    # the robust loss is applied to the weighted residual of each row before the 1/sqrt(n) scale, so
    # f_scale is in the residual's own units (0.25 in log space, 1.0 = 100 % relative error)
    def resid_rows(out_tpot, out_ttft, X):
        r1 = w * res_of(np.log(out_tpot / tpot), opts.residual["tpot"])
        r2 = w_ttft * res_of(np.log(np.maximum(out_ttft, 1e-6) / ttft), opts.residual["ttft"])
        pr = (X - prior) / prior_div
        parts = [_robust(f, *opts.losses[name]) for name, f in (("tpot", r1), ("ttft", r2), ("prior", pr))]
        return np.concatenate(parts) / scale

    def resid(x):
        out = prob.predict(x, idx, breakdown=False)
        return resid_rows(out["tpot"], out["ttft"], x)

    h = 1e-3

    def jac(x):
        X = np.vstack([x, x + h * np.eye(npar)])
        out = M.evaluate(prob.rows_multi(X, idx), prob.arch, prob.eff_multi(X, idx), breakdown=False,
                         options=opts.model)
        tp = out["tpot"].reshape(k, n)
        tf = out["ttft"].reshape(k, n)
        R = np.vstack([resid_rows(tp[i], tf[i], X[i]) for i in range(k)])
        return ((R[1:] - R[0]) / h).T

    res = least_squares(resid, x0, jac=jac, bounds=(lo, hi), loss="linear", max_nfev=max_nfev,
                        x_scale=1.0)
    return res.x


def _mdape(ratio) -> float:
    ratio = np.asarray(ratio, float)
    return float(np.median(np.abs(ratio - 1)) * 100) if len(ratio) else float("nan")


def _ratios(prob: Problem, x, idx) -> dict:
    """pred/measured per row for TPOT, TTFT and throughput (TTFT and throughput: NaN for rows whose
    TTFT is a rule-9 artefact), plus the same with every row predicted without MTP."""
    idx = np.asarray(idx)
    r = prob.rows.iloc[idx]
    out = prob.predict(x, idx, breakdown=False)
    ok = ~prob.artefact[idx]
    res = {"tpot": out["tpot"] / r.tpot_s.to_numpy(),
           "ttft": np.where(ok, out["ttft"] / r.ttft_s.to_numpy(), np.nan),
           "thr": np.where(ok, out["thr_output"] / r.thr_output_per_gpu.to_numpy(), np.nan),
           "ttft_all": out["ttft"] / r.ttft_s.to_numpy(),
           "thr_all": out["thr_output"] / r.thr_output_per_gpu.to_numpy()}
    if prob.mtp[idx].any():
        c = prob.rows_multi(np.asarray(x)[None, :], idx)
        c.m = np.zeros_like(c.m)
        out0 = M.evaluate(c, prob.arch, prob.eff_multi(np.asarray(x)[None, :], idx), breakdown=False,
                          options=prob.options.model)
        res["tpot_mtp0"] = out0["tpot"] / r.tpot_s.to_numpy()
    else:
        res["tpot_mtp0"] = res["tpot"]
    return res


def _summary(q: dict) -> dict:
    ok = ~np.isnan(q["ttft"])
    return {"n": int(len(q["tpot"])), "n_ttft": int(ok.sum()),
            "tpot_mdape": _mdape(q["tpot"]), "ttft_mdape": _mdape(q["ttft"][ok]),
            "throughput_mdape": _mdape(q["thr"][ok]),
            "tpot_median_signed": float(np.median(q["tpot"] - 1) * 100),
            "ttft_median_signed": float(np.median(q["ttft"][ok] - 1) * 100) if ok.any() else float("nan"),
            "ttft_mdape_all_rows": _mdape(q["ttft_all"]),
            "throughput_mdape_all_rows": _mdape(q["thr_all"]),
            "tpot_mdape_all_mtp0": _mdape(q["tpot_mtp0"])}


def errors(prob: Problem, x, idx) -> dict:
    return _summary(_ratios(prob, x, idx))


def _catalog(catalog):
    if catalog is None:
        from opx.catalog import builtin_catalog
        catalog = builtin_catalog()
    return catalog


def validate(silicon_csv: Path | None = None, catalog=None, max_nfev: int = 40,
             options: FitOptions | None = None) -> tuple[pd.DataFrame, dict]:
    """Leave-one-system-out: fit on the other systems, predict the held-out one. Grouped factors
    (per framework) of the held-out system come from the other systems' rows. `options`: the
    engine's unless an ablation passes others."""
    rows, stats = load_rows(silicon_csv)
    prob = Problem(rows, _catalog(catalog), options)
    systems = sorted(rows.system.unique())
    table, pooled, order = [], [], []
    for s in systems:
        test = np.flatnonzero(rows.system.to_numpy() == s)
        order.append(test)
        train = np.flatnonzero(rows.system.to_numpy() != s)
        x = _fit(prob, train, max_nfev)
        q = _ratios(prob, x, test)
        pooled.append(q)
        table.append({"system": s, "hardware": rows.hardware.iloc[test[0]], **_summary(q)})
    q = {k: np.concatenate([p[k] for p in pooled]) for k in pooled[0]}
    held_ttft = np.full(len(rows), np.nan)
    held_ttft[np.concatenate(order)] = q["ttft"]
    df = pd.DataFrame(table)
    overall = {**_summary(q),
               "systems_meeting_tpot_15": int((df.tpot_mdape <= 15).sum()),
               "systems_meeting_ttft_35": int((df.ttft_mdape <= 35).sum()),
               "systems": len(df),
               "ttft_artefact_rows": int(prob.artefact.sum()),
               "mtp_rows": int(prob.mtp.sum()),
               "ttft_sources": ttft_sources(rows, held_ttft),
               "rows": {**stats, "ttft_artefact_rows": int(prob.artefact.sum()),
                        **{f"ttft_artefact_rows_{s}": int(prob.artefact[rows.system.to_numpy() == s].sum())
                           for s in systems}}}
    return df, overall


def ablation_variants() -> list[tuple[str, FitOptions]]:
    """The variants `ablations` validates: the engine first, then one ingredient removed or
    replaced at a time (docs/simulator.md, "What each change is worth")."""
    no_fw = {k: p[:3] + (None,) for k, p in PARAMS.items()}
    no_treq = {k: p for k, p in PARAMS.items() if k != "t_req"}
    no_burst = {k: p for k, p in PARAMS.items() if k not in ("burst_agg", "burst_disagg")}
    batch_no_burst = {k: p for k, p in BATCH_PARAMS.items() if k not in ("burst_agg", "burst_disagg")}
    fam_t_layer = dict(no_fw, t_layer=PARAMS["t_layer"][:3] + ("family",))
    fw_fixed = dict(PARAMS, **{k: PARAMS[k][:3] + ("framework",)
                               for k in ("ttft_fixed_agg", "ttft_fixed_disagg")})
    batch = M.ModelOptions(queue_form="batch")
    return [
        ("this model (0.5.0)", FitOptions()),
        ("0.4.1's loss: both in log space, soft-L1 0.25",
         FitOptions(residual=RESIDUAL_041, losses=LOSSES_041)),
        ("TPOT with 0.4.1's soft-L1 loss (TTFT as 0.5.0)",
         FitOptions(losses=dict(LOSSES, tpot=LOSSES_041["tpot"]))),
        ("TTFT in log space with a robust arctan loss (TPOT as 0.5.0)",
         FitOptions(residual=RESIDUAL_041, losses=dict(LOSSES, ttft=("arctan", 0.25)))),
        ("TTFT relative error, plain least squares",
         FitOptions(losses=dict(LOSSES, ttft=("linear", 1.0)))),
        ("HBM read as catalog GB x 1e9 (0.3.0's KV accounting)", FitOptions(runtime_memory=False)),
        ("without the closed-loop TTFT bound",
         FitOptions(model=M.ModelOptions(ttft_bound=False))),
        ("batch-service prefill queue, no q_wait (0.4.0's TTFT)",
         FitOptions(model=batch, params=BATCH_PARAMS)),
        ("batch queue, a batch always running (no idle chance)",
         FitOptions(model=M.ModelOptions(queue_form="batch", batch_busy="always"),
                    params=BATCH_PARAMS)),
        ("batch queue without the burst term", FitOptions(model=batch, params=batch_no_burst)),
        ("without the burst term (M/D/1 queue)", FitOptions(params=no_burst)),
        ("per-framework fixed TTFT latency", FitOptions(params=fw_fixed)),
        ("M/D/1 queue, no iteration wait (0.2.0's TTFT)",
         FitOptions(model=M.ModelOptions(iter_wait=0.0))),
        ("without the MTP flag (every row MTP0)", FitOptions(mtp_mode="none")),
        ("without the TTFT artefact rule", FitOptions(artefact_rule=False)),
        ("without per-framework factors", FitOptions(params=no_fw)),
        ("without t_req (agg. per-request TTFT cost)", FitOptions(params=no_treq)),
        ("TTFT weight 0.5 (as 0.1.0)", FitOptions(ttft_weight=0.5)),
        ("per-family t_layer, no framework (as 0.1.0)", FitOptions(params=fam_t_layer)),
    ]


def ablations(silicon_csv: Path | None = None, catalog=None, max_nfev: int = 40) -> pd.DataFrame:
    """The leave-one-system-out validation of every `ablation_variants()` entry, one row each."""
    out = []
    for name, options in ablation_variants():
        df, ov = validate(silicon_csv, catalog, max_nfev, options)
        out.append({"variant": name, **{k: ov[k] for k in (
            "tpot_mdape", "ttft_mdape", "throughput_mdape", "ttft_mdape_all_rows",
            "throughput_mdape_all_rows", "tpot_mdape_all_mtp0")},
            **{f"tpot_{r.system}": r.tpot_mdape for r in df.itertuples()},
            **{f"ttft_{r.system}": r.ttft_mdape for r in df.itertuples()}})
    return pd.DataFrame(out)


def default_calibration_path() -> Path:
    from opx.config import ROOT
    return ROOT / "data" / "simulator" / "calibration.json"


def calibrate(silicon_csv: Path | None = None, out: Path | None = None, catalog=None) -> dict:
    """Refit on all rows, run the leave-one-system-out validation, write calibration.json."""
    path = resolve_path(silicon_csv)
    t0 = time.perf_counter()
    catalog = _catalog(catalog)
    rows, stats = load_rows(path)
    prob = Problem(rows, catalog)
    x = _fit(prob, np.arange(len(rows)), max_nfev=100)
    v = prob.values(x)
    factors = {"families": {}, "frameworks": {}, "global": {}}
    for f in FAMILIES:
        factors["families"][f] = {name: float(v[f"{name}:{f}"]) for name, p in PARAMS.items()
                                  if p[3] == "family"}
        factors["families"][f]["fitted_on"] = sorted(
            rows.system[[FAMILY[h] == f for h in rows.hardware]].unique())
    for fw in FRAMEWORKS:
        factors["frameworks"][fw] = {name: float(v[f"{name}:{fw}"]) for name, p in PARAMS.items()
                                     if p[3] == "framework"}
        factors["frameworks"][fw]["fitted_on"] = sorted(
            rows.system[rows.backend.map(framework_key) == fw].unique())
        factors["frameworks"][fw]["rows"] = int((rows.backend.map(framework_key) == fw).sum())
    for name in PARAMS:   # grouped factors: this is their pooled value (framework None, others)
        factors["global"][name] = float(v[name])
    nuisance = {name: float(v[name]) for name in NUISANCE if name in v}
    art = prob.artefact
    result = {
        "engine": "opx-sim",
        "fit_date": dt.date.today().isoformat(),
        "data_file": "shared/fixtures/aiconfigurator/silicon_sample.csv",
        "data_sha256": sha256(path),
        "calibration_model": CAL_MODEL,
        "rows": {**stats, "ttft_artefact_rows": int(art.sum()),
                 **{f"ttft_artefact_rows_{s}": int(art[rows.system.to_numpy() == s].sum())
                    for s in sorted(rows.system.unique())}},
        "method": METHOD,
        "priors": {k: {"prior": p[0], "low": p[1], "high": p[2], "grouped_by": p[3]}
                   for k, p in PARAMS.items()},
        "families": {f: sorted(k for k, v2 in FAMILY.items() if v2 == f) for f in set(FAMILY.values())},
        "borrow": BORROW,
        "factors": factors,
        "calibration_only": {
            **nuisance, "mtp_depth": MTP_CAL_DEPTH, "mtp_mode": prob.options.mtp_mode,
            "mtp_rows": int(prob.mtp.sum()),
            "note": f"mtp_accept is the per-draft acceptance the MTP-suspect rows imply at "
                    f"MTP{MTP_CAL_DEPTH}; it is not used by simulate() (SimKnobs.mtp_acceptance is)",
            "ttft_artefact_rule": f"TTFT > {ARTEFACT_T0_S:g} s + C x ISL / ("
                                  f"{ARTEFACT_TOKENS_PER_GPU_S:g} tok/s x prefill GPUs) with the "
                                  f"decode pool able to hold all C sequences"},
        "in_sample": {"overall": errors(prob, x, np.arange(len(rows))),
                      "per_system": {s: errors(prob, x, np.flatnonzero(rows.system.to_numpy() == s))
                                     for s in sorted(rows.system.unique())}},
        "regenerate": "python -m opx simulate --calibrate",
    }
    df, overall = validate(path, catalog)
    result["validation"] = {
        "method": "leave-one-system-out: fit without the system, predict its rows; MdAPE = "
                  "median absolute percentage error; TTFT and throughput over rows whose TTFT "
                  "is not a rule-9 artefact (the *_all_rows keys: every row)",
        "per_system": df.to_dict(orient="records"),
        "overall": {k: v2 for k, v2 in overall.items() if k != "rows"},
    }
    result["seconds"] = round(time.perf_counter() - t0, 2)
    out = Path(out) if out is not None else default_calibration_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n")
    return result
