"""Where the held-out TTFT error comes from (docs/simulator.md, "Where the TTFT error comes from").

A sweep is one configuration (system, framework, precision, mode, ISL/OSL, layout, worker counts,
MTP flag) measured at several concurrencies. The held-out TTFT error splits into
- the sweep's offset: the median of log(pred/measured) over the sweep, and
- what is left along concurrency once that offset is removed.
If the offsets cannot be told from the configuration the rows record, no model of those
configurations can remove them, so they bound the error from below. The measurements' own
repeatability is reported beside them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

SWEEP = ("system", "backend", "precision", "mode", "isl_label", "osl_label", "d_tp", "d_dp", "d_ep",
         "d_moetp", "d_pp", "n_d", "p_tp", "p_dp", "p_ep", "p_moetp", "n_p", "mtp_suspect")
MIN_SWEEP = 3          # rows a sweep needs before its offset is read
RIDGE = 1.0            # the offsets' regression on the configuration: ridge strength


def _ape(log_ratio) -> float:
    return float(np.median(np.abs(np.expm1(np.asarray(log_ratio, float)))) * 100)


def _sweeps(rows: pd.DataFrame) -> pd.Series:
    return rows[list(SWEEP)].astype(str).agg("|".join, axis=1)


def _interpolated(rows: pd.DataFrame, column: str) -> list[float]:
    """log(interpolated / measured) for each interior row of each sweep, from its two neighbours
    in concurrency, log-log: how smooth the measurements themselves are."""
    out = []
    for _, g in rows.assign(_k=_sweeps(rows)).groupby("_k"):
        g = g.sort_values("conc")
        c, y = np.log(g.conc.to_numpy(float)), np.log(g[column].to_numpy(float))
        for i in range(1, len(g) - 1):
            if c[i + 1] > c[i - 1]:
                f = (c[i] - c[i - 1]) / (c[i + 1] - c[i - 1])
                out.append(y[i - 1] + f * (y[i + 1] - y[i - 1]) - y[i])
    return out


def _features(s: pd.DataFrame) -> np.ndarray:
    num = lambda c: np.log(s[c].astype(float).to_numpy())
    sgl = (s.backend == "sglang").to_numpy(float)
    dis = (s["mode"] == "disagg").to_numpy(float)
    fp4 = (s.precision == "fp4").to_numpy(float)
    cols = [np.ones(len(s)), sgl, dis, fp4, sgl * dis, sgl * fp4, s.mtp_suspect.to_numpy(float),
            *(num(c) for c in ("isl_label", "osl_label", "d_tp", "d_dp", "d_ep", "d_moetp", "n_d",
                               "p_tp", "n_p"))]
    return np.column_stack(cols)


def ttft_sources(rows: pd.DataFrame, ttft_ratio: np.ndarray) -> dict:
    """rows: the calibration rows; ttft_ratio: held-out pred/measured TTFT per row, in the rows'
    order (NaN where the row's TTFT is not used). Percentages are medians of |ratio - 1|."""
    lr = pd.Series(np.log(np.asarray(ttft_ratio, float)), index=rows.index)
    ok = lr.notna().to_numpy()
    r, lr = rows[ok], lr[ok]
    key = _sweeps(r)
    size = key.map(key.value_counts())
    big = (size >= MIN_SWEEP).to_numpy()
    offset = lr.groupby(key).transform("median")
    per = pd.DataFrame({"key": key, "off": offset, "system": r.system})[big].groupby("key").first()
    cfg = r[big].assign(key=key[big]).groupby("key").first().loc[per.index]
    X, y = _features(cfg), per.off.to_numpy()
    told = np.zeros_like(y)
    for s in per.system.unique():           # leave one system out, as the validation does
        te = (per.system == s).to_numpy()
        A = X[~te]
        told[te] = X[te] @ np.linalg.solve(A.T @ A + RIDGE * np.eye(A.shape[1]), A.T @ y[~te])
    by_conc = r.assign(k=key).groupby(["k", "conc"]).ttft_s
    spread = by_conc.max() / by_conc.min()
    repeats = spread[by_conc.size() > 1]
    return {
        "rows": int(big.sum()), "sweeps": int(len(per)),
        "held_out_mdape": _ape(lr[big]),
        "after_each_sweeps_offset_mdape": _ape((lr - offset)[big]),
        "sweep_offset_median_abs": _ape(y),
        "sweep_offset_sd_log": float(np.std(y)),
        "sweep_offset_sd_log_after_configuration": float(np.std(y - told)),
        "measured_interpolation_ttft_mdape": _ape(_interpolated(r, "ttft_s")),
        "measured_interpolation_tpot_mdape": _ape(_interpolated(r, "tpot_s")),
        "repeat_groups": int(len(repeats)),
        "repeat_max_over_min_median": float(repeats.median()) if len(repeats) else float("nan"),
    }


def summary_text(s: dict) -> list[str]:
    return [
        f"held-out TTFT {s['held_out_mdape']:.1f}% over {s['rows']} rows of {s['sweeps']} sweeps "
        f"(a sweep: one configuration at several concurrencies, {MIN_SWEEP}+ rows)",
        f"  with each sweep's own offset removed: {s['after_each_sweeps_offset_mdape']:.1f}% "
        "(the model's shape along concurrency)",
        f"  the offsets: median {s['sweep_offset_median_abs']:.1f}%, sd {s['sweep_offset_sd_log']:.2f} "
        f"in log; told from the recorded configuration, held out by system: sd "
        f"{s['sweep_offset_sd_log_after_configuration']:.2f}",
        f"  the measurements alone: an interior row from its two neighbours, log-log: TTFT "
        f"{s['measured_interpolation_ttft_mdape']:.1f}%, TPOT {s['measured_interpolation_tpot_mdape']:.1f}%; "
        f"the same configuration and concurrency in {s['repeat_groups']} sources differs "
        f"{s['repeat_max_over_min_median']:.2f}x (median max / min)",
    ]
