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

    @property
    def title(self) -> str:
        return f"{self.label} ({self.unit})"


Y_METRICS: dict[str, Metric] = {
    "total": Metric("total", "Total throughput per GPU", "tok/s/GPU", "throughput_total_per_gpu",
                    "(input + output tokens/s of the deployment) / all its GPUs (prefill + decode)",
                    "higher"),
    "output": Metric("output", "Output throughput per GPU", "tok/s/GPU",
                     "throughput_output_per_gpu",
                     "output tokens/s of the deployment / all its GPUs (prefill + decode)", "higher"),
    "input": Metric("input", "Input throughput per GPU", "tok/s/GPU", "throughput_input_per_gpu",
                    "input tokens/s of the deployment / all its GPUs (prefill + decode)", "higher"),
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
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    a = abs(value)
    for threshold, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= threshold:
            return f"{value / threshold:.3g}{suffix}"
    if a >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def format_multiple(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}×" if value < 100 else f"{value:.0f}×"
