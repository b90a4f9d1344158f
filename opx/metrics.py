"""The one registry of metrics (key, label, unit, formula, direction, format). Charts, tables,
tooltips and exports read labels, units and formats from here and nowhere else."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from models.vocab import PERCENTILES


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    column: str           # column of the point_metrics view
    formula: str          # how it is derived from stored seconds and tokens
    direction: Literal["higher", "lower"]
    base: str | None = None       # derived metrics: the throughput metric they are computed from

    @property
    def title(self) -> str:
        return f"{self.label} ({self.unit})"

    @property
    def derived(self) -> bool:
        return self.base is not None

    def convert(self, tok_s_per_gpu, usd_per_gpu_hour: float, watts_per_gpu: float):
        """This metric from throughput per GPU (scalar or numpy array); NaN where undefined."""
        import numpy as np
        t = np.asarray(tok_s_per_gpu, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.key == "per_mw":
                out = t * 1e6 / watts_per_gpu
            elif self.key == "usd_per_mtok":
                out = np.where(t > 0, usd_per_gpu_hour / (t * 3600 / 1e6), np.nan)
            elif self.key == "j_per_token":
                out = np.where(t > 0, watts_per_gpu / t, np.nan)
            else:
                out = t
        return out if out.ndim else float(out)

    def better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "higher" else a < b


Y_METRICS: dict[str, Metric] = {
    "total": Metric("total", "Total throughput per GPU", "tok/s/GPU", "throughput_total_per_gpu",
                    "(input + output tokens/s of the deployment) / all its GPUs (prefill + decode)",
                    "higher"),
    "output": Metric("output", "Output throughput per GPU", "tok/s/GPU",
                     "throughput_output_per_gpu",
                     "output tokens/s of the deployment / all its GPUs (prefill + decode)", "higher"),
    "input": Metric("input", "Input throughput per GPU", "tok/s/GPU", "throughput_input_per_gpu",
                    "input tokens/s of the deployment / all its GPUs (prefill + decode)", "higher"),
    "per_mw": Metric("per_mw", "Throughput per MW", "tok/s per MW", "throughput_total_per_gpu",
                     "total tok/s/GPU x 1e6 / all-in W per GPU", "higher", base="total"),
    "usd_per_mtok": Metric("usd_per_mtok", "Cost per million tokens", "$/M tokens",
                           "throughput_total_per_gpu",
                           "($/GPU-hour) / (total tok/s/GPU x 3600 / 1e6)", "lower", base="total"),
    "j_per_token": Metric("j_per_token", "Energy per token", "J/token", "throughput_total_per_gpu",
                          "all-in W per GPU / total tok/s/GPU", "lower", base="total"),
}


def interactivity(pct: str) -> Metric:
    if pct not in PERCENTILES:
        raise ValueError(f"unknown percentile {pct!r}")
    return Metric(f"interactivity_{pct}", f"Interactivity {pct.upper()}", "tok/s/user",
                  f"interactivity_{pct}",
                  f"1 / TPOT {pct.upper()} in seconds (= 1000 / TPOT ms): the per-user token rate "
                  f"that {pct[1:]}% of requests meet or beat", "higher")


def y_metric(key: str) -> Metric:
    return Y_METRICS[key]


def format_value(value: float | None) -> str:
    """Short, readable figures: 1.70M, 29.3k, 387, 0.512."""
    if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
        return "–"
    a = abs(value)
    for threshold, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= threshold:
            return f"{value / threshold:.3g}{suffix}"
    if a >= 100:
        return f"{value:.0f}"
    if a >= 0.001 or a == 0:
        return f"{value:.3g}"
    return f"{value:.2e}"


def format_multiple(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}×" if value < 100 else f"{value:.0f}×"
