"""Fit the efficiency factors to measured rows, and validate leave-one-system-out.

Method (docs/simulator.md, "Calibration"): robust nonlinear least squares (scipy least_squares,
soft-L1 loss) on log(predicted / measured) of TPOT and TTFT for the cleaned DeepSeek rows of
silicon_sample.csv, each system's rows weighted by 1/sqrt(rows) so no system dominates, plus weak
priors (a factor of 3 is one standard deviation) that keep factors the data cannot see near the
reference values. Per hardware family (partial pooling: global value x exp(delta_family), delta with
a prior worth FAMILY_PSEUDO_ROWS rows): the fixed cost per layer. Global: everything else (HBM and
compute efficiency, prefill efficiency, network, step overhead, queueing terms). Making the HBM and
compute efficiencies per-family too was tried and made the held-out errors worse (docs/simulator.md).
"""
from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from opx.simulate import model as M
from opx.simulate.arch import arch_for
from opx.simulate.hardware import BORROW, FAMILIES, FAMILY, hw_spec
from opx.simulate.silicon import load_rows, resolve_path, sha256

CAL_MODEL = "deepseek-r1"
METHOD = ("scipy.optimize.least_squares (trf, soft_l1, f_scale 0.25) on log(pred/measured) of TPOT "
          "(weight 1) and TTFT (weight 0.5), rows of each system weighted 1/sqrt(n), weak log-normal "
          "priors (sigma = ln 3) around the reference values")

# name: (prior, low, high, per_family)
PARAMS = {
    "eta_m": (0.75, 0.2, 1.0, False),
    "eta_c": (0.5, 0.05, 1.0, False),
    "t_layer": (20e-6, 1e-6, 300e-6, True),   # the only per-family factor (see docs/simulator.md)
    "eta_cp": (0.5, 0.05, 1.0, False),
    "eta_n": (0.6, 0.05, 1.0, False),
    "alpha_ar": (8e-6, 1e-6, 100e-6, False),
    "alpha_a2a": (15e-6, 1e-6, 300e-6, False),
    "t_step": (1e-3, 20e-6, 20e-3, False),
    "q_wait": (0.5, 0.01, 50.0, False),
    "burst_agg": (0.2, 1e-3, 5.0, False),
    "burst_disagg": (0.2, 1e-3, 5.0, False),
    "ttft_fixed_agg": (0.05, 1e-3, 2.0, False),
    "ttft_fixed_disagg": (0.1, 1e-3, 2.0, False),
}
PRIOR_SIGMA = np.log(3.0)
FAMILY_SIGMA = np.log(1.5)      # a family's factor departs from the global one by ~1.5x at most
FAMILY_PSEUDO_ROWS = 30         # the family prior weighs as much as this many rows (partial pooling)
TTFT_WEIGHT = 0.5


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
        out["hbm"].append(h.hbm_gb * 1e9)
        out["s_nr"].append(pb["s_nr"])
        out["s_e"].append(pb["s_e"])
    return {k: np.asarray(v, float) for k, v in out.items()}


class Problem:
    """The cleaned rows as model inputs, with the parameter packing."""

    def __init__(self, rows: pd.DataFrame, catalog):
        self.rows = rows
        self.arch = arch_for(catalog.models[CAL_MODEL])
        specs = {s: hw_spec(catalog.hardware[s]) for s in rows.hardware.unique()}
        hw = hw_rows([specs[s] for s in rows.hardware], list(rows.precision))
        cols = {k: rows[k].to_numpy(float) for k in ("d_tp", "d_dp", "d_ep", "d_moetp", "d_pp", "n_d",
                                                       "p_tp", "p_dp", "p_ep", "p_moetp", "n_p",
                                                       "agg", "isl", "osl", "conc")}
        self.c = M.rows(**hw, **cols, hit=0.0, m=0.0, p_acc=0.0)
        self.fam = np.array([FAMILIES.index(FAMILY[h]) for h in rows.hardware])
        self.tpot = rows.tpot_s.to_numpy()
        self.ttft = rows.ttft_s.to_numpy()
        n_sys = rows.system.map(rows.system.value_counts()).to_numpy(float)
        self.w = 1 / np.sqrt(n_sys)
        self.w = self.w / self.w.mean()
        # per-family factors are a global value times exp(delta_family); delta has its own prior
        self.names = []
        for name, (_, _, _, fam) in PARAMS.items():
            self.names += [name] + ([f"{name}:{f}" for f in FAMILIES] if fam else [])
        self.is_family = np.array([":" in n for n in self.names])

    def bounds(self):
        lo, hi, x0, prior = [], [], [], []
        for n in self.names:
            p0, l, h, _ = PARAMS[n.split(":")[0]]
            if ":" in n:
                lo.append(-np.log(3)); hi.append(np.log(3)); x0.append(0.0); prior.append(0.0)
            else:
                lo.append(np.log(l)); hi.append(np.log(h)); x0.append(np.log(p0)); prior.append(np.log(p0))
        return np.array(lo), np.array(hi), np.array(x0), np.array(prior)

    def values(self, x) -> dict:
        """Parameter values: globals, and name:family = global x exp(delta) (efficiencies <= 1)."""
        v = dict(zip(self.names, x))
        out = {}
        for name, (_, _, hi, per_fam) in PARAMS.items():
            out[name] = float(np.exp(v[name]))
            if per_fam:
                for f in FAMILIES:
                    out[f"{name}:{f}"] = float(min(np.exp(v[name] + v[f"{name}:{f}"]), hi))
        return out

    def eff(self, x, fam=None) -> M.Eff:
        fam = self.fam if fam is None else fam
        v = self.values(x)
        kw = {}
        for name, (_, _, _, per_fam) in PARAMS.items():
            if per_fam:
                kw[name] = np.array([v[f"{name}:{f}"] for f in FAMILIES])[fam]
            else:
                kw[name] = v[name]
        return M.Eff(**kw)

    def predict(self, x, idx=None) -> dict:
        c = self.c if idx is None else M.subset(self.c, idx)
        fam = self.fam if idx is None else self.fam[idx]
        return M.evaluate(c, self.arch, self.eff(x, fam))


def _fit(prob: Problem, idx: np.ndarray, max_nfev: int = 40) -> np.ndarray:
    """Fit on rows idx. The Jacobian is computed in one vectorized pass over all perturbed
    parameter sets (the rows tiled once per parameter), which is what keeps a fit well under a
    second on two cores."""
    lo, hi, x0, prior = prob.bounds()
    npar = len(x0)
    c1 = M.subset(prob.c, idx)
    fam1 = prob.fam[idx]
    n = len(idx)
    w = prob.w[idx] / prob.w[idx].mean()
    tpot, ttft = prob.tpot[idx], prob.ttft[idx]
    scale = np.sqrt(n)
    k = npar + 1
    ck = M.SimpleNamespace(**{key: np.tile(v, k) for key, v in vars(c1).items()})
    famk = np.tile(fam1, k)

    def eff_multi(X):
        """Eff for k parameter sets stacked row-block after row-block."""
        kw = {}
        for name, (_, _, _, per_fam) in PARAMS.items():
            if per_fam:
                cols = [prob.names.index(f"{name}:{f}") for f in FAMILIES]
                g = X[:, prob.names.index(name)][:, None]
                vals = np.minimum(np.exp(X[:, cols] + g), PARAMS[name][2])   # (k, families)
                kw[name] = vals[np.repeat(np.arange(len(X)), n), famk[:len(X) * n]]
            else:
                kw[name] = np.repeat(np.exp(X[:, prob.names.index(name)]), n)
        return M.Eff(**kw)

    def resid_rows(out_tpot, out_ttft, X):
        r1 = w * np.log(out_tpot / tpot)
        r2 = TTFT_WEIGHT * w * np.log(np.maximum(out_ttft, 1e-6) / ttft)
        pr = np.where(prob.is_family, (X - prior) / (FAMILY_SIGMA / np.sqrt(FAMILY_PSEUDO_ROWS)),
                      (X - prior) / PRIOR_SIGMA) / scale
        return np.concatenate([r1, r2, pr]) / scale

    def resid(x):
        out = M.evaluate(c1, prob.arch, prob.eff(x, fam1), breakdown=False)
        return resid_rows(out["tpot"], out["ttft"], x)

    h = 1e-3

    def jac(x):
        X = np.vstack([x, x + h * np.eye(npar)])
        out = M.evaluate(ck, prob.arch, eff_multi(X), breakdown=False)
        tp = out["tpot"].reshape(k, n)
        tf = out["ttft"].reshape(k, n)
        R = np.vstack([resid_rows(tp[i], tf[i], X[i]) for i in range(k)])
        return ((R[1:] - R[0]) / h).T

    res = least_squares(resid, x0, jac=jac, bounds=(lo, hi), loss="soft_l1",
                        f_scale=0.25 / np.sqrt(n), max_nfev=max_nfev, x_scale=1.0)
    return res.x


def _mdape(pred, meas):
    return float(np.median(np.abs(pred / meas - 1)) * 100)


def errors(prob: Problem, x, idx) -> dict:
    out = prob.predict(x, idx)
    r = prob.rows.iloc[idx]
    thr_pred = out["thr_output"]
    return {"n": int(len(idx)), "tpot_mdape": _mdape(out["tpot"], r.tpot_s.to_numpy()),
            "ttft_mdape": _mdape(out["ttft"], r.ttft_s.to_numpy()),
            "throughput_mdape": _mdape(thr_pred, r.thr_output_per_gpu.to_numpy()),
            "tpot_median_signed": float(np.median(out["tpot"] / r.tpot_s.to_numpy() - 1) * 100)}


def _catalog(catalog):
    if catalog is None:
        from opx.catalog import builtin_catalog
        catalog = builtin_catalog()
    return catalog


def validate(silicon_csv: Path | None = None, catalog=None, max_nfev: int = 40
             ) -> tuple[pd.DataFrame, dict]:
    """Leave-one-system-out: fit on the other systems, predict the held-out one."""
    rows, stats = load_rows(silicon_csv)
    prob = Problem(rows, _catalog(catalog))
    systems = sorted(rows.system.unique())
    table, pooled_pred = [], {}
    all_t, all_f, all_h, all_idx = [], [], [], []
    for s in systems:
        test = np.flatnonzero(rows.system.to_numpy() == s)
        train = np.flatnonzero(rows.system.to_numpy() != s)
        x = _fit(prob, train, max_nfev)
        e = errors(prob, x, test)
        table.append({"system": s, "hardware": rows.hardware.iloc[test[0]], **e})
        out = prob.predict(x, test)
        r = rows.iloc[test]
        all_t.append(out["tpot"] / r.tpot_s.to_numpy())
        all_f.append(out["ttft"] / r.ttft_s.to_numpy())
        all_h.append(out["thr_output"] / r.thr_output_per_gpu.to_numpy())
    t, f, h = (np.concatenate(v) for v in (all_t, all_f, all_h))
    df = pd.DataFrame(table)
    overall = {"n": int(len(t)), "tpot_mdape": float(np.median(np.abs(t - 1)) * 100),
               "ttft_mdape": float(np.median(np.abs(f - 1)) * 100),
               "throughput_mdape": float(np.median(np.abs(h - 1)) * 100),
               "tpot_median_signed": float(np.median(t - 1) * 100),
               "systems_meeting_tpot_15": int((df.tpot_mdape <= 15).sum()),
               "systems_meeting_ttft_35": int((df.ttft_mdape <= 35).sum()),
               "systems": len(df), "rows": stats}
    return df, overall


def default_calibration_path() -> Path:
    from opx.config import ROOT
    return ROOT / "data" / "simulator" / "calibration.json"


def calibrate(silicon_csv: Path | None = None, out: Path | None = None, catalog=None,
              with_validation: bool = True) -> dict:
    """Refit on all rows, run the leave-one-system-out validation, write calibration.json."""
    path = resolve_path(silicon_csv)
    t0 = time.perf_counter()
    catalog = _catalog(catalog)
    rows, stats = load_rows(path)
    prob = Problem(rows, catalog)
    x = _fit(prob, np.arange(len(rows)), max_nfev=100)
    v = prob.values(x)
    fam_rows = {f: sorted(rows.system[[FAMILY[h] == f for h in rows.hardware]].unique())
                for f in FAMILIES}
    factors = {"families": {}, "global": {}}
    for f in FAMILIES:
        factors["families"][f] = {name: float(v[f"{name}:{f}"]) for name, p in PARAMS.items() if p[3]}
        factors["families"][f]["fitted_on"] = fam_rows[f]
    for name in PARAMS:   # per-family factors: this is their pooled value, used for other families
        factors["global"][name] = float(v[name])
    fit_err = errors(prob, x, np.arange(len(rows)))
    per_sys_fit = {s: errors(prob, x, np.flatnonzero(rows.system.to_numpy() == s))
                   for s in sorted(rows.system.unique())}
    result = {
        "engine": "opx-sim",
        "fit_date": dt.date.today().isoformat(),
        "data_file": "shared/fixtures/aiconfigurator/silicon_sample.csv",
        "data_sha256": sha256(path),
        "calibration_model": CAL_MODEL,
        "rows": stats,
        "method": METHOD,
        "priors": {k: {"prior": p[0], "low": p[1], "high": p[2], "per_family": p[3]}
                   for k, p in PARAMS.items()},
        "families": {f: sorted(k for k, v2 in FAMILY.items() if v2 == f) for f in set(FAMILY.values())},
        "borrow": BORROW,
        "factors": factors,
        "in_sample": {"overall": fit_err, "per_system": per_sys_fit},
        "regenerate": "python -m opx.simulate calibrate",
    }
    if with_validation:
        df, overall = validate(path, catalog)
        result["validation"] = {
            "method": "leave-one-system-out: fit without the system, predict its rows; MdAPE = "
                      "median absolute percentage error",
            "per_system": df.to_dict(orient="records"),
            "overall": {k: v2 for k, v2 in overall.items() if k != "rows"},
        }
    result["seconds"] = round(time.perf_counter() - t0, 2)
    out = Path(out) if out is not None else default_calibration_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n")
    return result


if __name__ == "__main__":   # prefer: python -m opx.simulate calibrate
    import sys
    res = calibrate(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(json.dumps(res.get("validation", {}), indent=2))
