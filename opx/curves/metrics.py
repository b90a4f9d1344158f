"""The one registry of metrics (key, label, unit, formula, direction, format). Charts, tables,
tooltips and exports read labels, units and formats from here and nowhere else."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from models.vocab import PERCENTILES, pct_label

# How a metric's figures are written (one place: charts, tables, tooltips and exports read it):
#   count   throughput per GPU or per MW: 3 significant digits, k/M/B suffixes (29.3k, 1.7M)
#   money   dollars: whole from $100, else up to 3 significant digits, never scientific
#           ($0.61, $0.0006, $0.000606)
#   energy  joules: 3 significant digits in fixed notation, with J (0.0682 J)
#   rate    interactivity (tok/s/user): plain numbers (387, 42.5)
Kind = Literal["count", "money", "energy", "rate"]

# Vega expressions for axis labels, tick by tick (Vega's own "s" format would write 0.2M, 220m).
_SI_EXPR = ("abs(datum.value) >= 1e9 ? format(datum.value / 1e9, '.3~r') + 'B' : "
            "abs(datum.value) >= 1e6 ? format(datum.value / 1e6, '.3~r') + 'M' : "
            "abs(datum.value) >= 1e3 ? format(datum.value / 1e3, '.3~r') + 'k' : "
            "format(datum.value, '.3~r')")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    column: str           # column of the point_metrics view
    formula: str          # how it is derived from stored seconds and tokens
    direction: Literal["higher", "lower"]
    base: str | None = None       # derived metrics: the throughput metric they are computed from
    kind: Kind = "count"          # how its figures are written: see `format` and `axis`
    # lower-is-better metrics: how a multiple reads (A/B below 1: "41× cheaper"; above: "2× costlier")
    better_word: str = ""
    worse_word: str = ""

    @property
    def title(self) -> str:
        return f"{self.label} ({self.unit})"

    @property
    def derived(self) -> bool:
        return self.base is not None

    def linear_form(self, usd_per_gpu_hour: float, watts_per_gpu: float) -> tuple[float, int]:
        """(scale, power): this metric is scale * (throughput per GPU) ** power, defined where
        the throughput is positive when the power is negative. The one formula of every
        conversion, here and in the browser (`static/js/target_rules.js`)."""
        if self.key == "per_mw":
            return 1e6 / watts_per_gpu, 1
        if self.key == "usd_per_mtok":
            return usd_per_gpu_hour * 1e6 / 3600, -1
        if self.key == "j_per_token":
            return float(watts_per_gpu), -1
        return 1.0, 1

    def convert(self, tok_s_per_gpu, usd_per_gpu_hour: float, watts_per_gpu: float):
        """This metric from throughput per GPU (scalar or numpy array); NaN where undefined."""
        import numpy as np
        t = np.asarray(tok_s_per_gpu, dtype=float)
        scale, power = self.linear_form(usd_per_gpu_hour, watts_per_gpu)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = scale * t if power == 1 else np.where(t > 0, scale / t, np.nan)
        return out if out.ndim else float(out)

    def better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "higher" else a < b

    def format(self, value: float | None, unit: bool = False, digits: int = 3) -> str:
        """One figure of this metric, for people: `29.3k`, `$0.0251`, `0.0682 J`; with
        `unit=True` it says what it counts: `29.3k tok/s/GPU`, `$0.0251/M tokens`, `0.0682 J/token`."""
        if _missing(value):
            return "–"
        value = float(value)
        if self.kind == "money":
            text = format_money(value, digits)
            return text + (self.unit[1:] if unit and self.unit.startswith("$") else
                           f" {self.unit}" if unit else "")
        if self.kind == "energy":
            text = _short(value, digits) if abs(value) >= 999.5 else _fixed(value, digits)
            return f"{text} {self.unit if unit else 'J'}"
        text = _short(value, digits)
        return f"{text} {self.unit}" if unit else text

    @property
    def axis(self) -> dict:
        """Keyword arguments of `alt.Axis` that write this metric's ticks like `format` does."""
        if self.kind == "money":
            return {"format": "$,.3~r"}
        if self.kind == "energy":
            return {"labelExpr": "format(datum.value, ',.3~r') + ' J'"}
        if self.kind == "rate":
            return {"format": ",.4~g"}
        return {"labelExpr": _SI_EXPR}

    @property
    def d3_format(self) -> str:
        """A d3 format for a tooltip on a numeric field (a text column from `format` reads better
        where there is one)."""
        return {"money": "$,.4~r", "energy": ",.4~r", "rate": ",.4~g"}.get(self.kind, ",.4~s")


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
                           "($/GPU-hour) / (total tok/s/GPU x 3600 / 1e6)", "lower", base="total",
                           kind="money", better_word="cheaper", worse_word="costlier"),
    "j_per_token": Metric("j_per_token", "Energy per token", "J/token", "throughput_total_per_gpu",
                          "all-in W per GPU / total tok/s/GPU", "lower", base="total",
                          kind="energy", better_word="less energy", worse_word="more energy"),
}


def interactivity(pct: str) -> Metric:
    if pct not in PERCENTILES:
        raise ValueError(f"unknown percentile {pct!r}")
    meaning = ("the per-user token rate of the average request's time per token" if pct == "mean"
               else f"the per-user token rate that {pct[1:]}% of requests meet or beat")
    return Metric(f"interactivity_{pct}", f"Interactivity {pct_label(pct)}", "tok/s/user",
                  f"interactivity_{pct}",
                  f"1 / TPOT {pct_label(pct)} in seconds (= 1000 / TPOT ms): {meaning}", "higher",
                  kind="rate")


def y_metric(key: str) -> Metric:
    return Y_METRICS[key]


def format_value(value: float | None, metric: Metric | None = None, unit: bool = False) -> str:
    """Short, readable figures: 1.70M, 29.3k, 387, 0.512, 0.000606 (never scientific notation).
    With a metric, that metric's way of writing them (`$0.0251`, `0.0682 J`; see `Metric.format`)."""
    if metric is not None:
        return metric.format(value, unit=unit)
    if _missing(value):
        return "–"
    return _short(float(value))


def format_multiple(value: float | None, metric: "Metric | None" = None) -> str:
    """A / B: "58×"; for a lower-is-better metric it says which way, "41× cheaper" (A/B 0.0241),
    "1.9× costlier" (A/B 1.9)."""
    if _missing(value):
        return "–"
    if metric is not None and metric.direction == "lower" and metric.better_word and value > 0:
        if value < 1:
            return f"{format_multiple(1 / value)} {metric.better_word}"
        return f"{format_multiple(value)} {metric.worse_word}" if value > 1 else "1× (the same)"
    return f"{_fixed(value, 3)}×" if value < 100 else f"{value:,.0f}×"


def format_range(lo: float, hi: float, metric: "Metric | None" = None) -> str:
    """A span of figures, its shared suffix said once: "1.42-1.71M", "$0.61-$0.72", "52-64×"
    (`metric=None`: multiples)."""
    if metric is None:
        a, b = format_multiple(lo).rstrip("×"), format_multiple(hi)
        return f"{a}-{b}"
    a, b = metric.format(lo), metric.format(hi)
    if a == b:
        return a
    for suffix in ("k", "M", "B", " J"):
        if a.endswith(suffix) and b.endswith(suffix):
            return f"{a[:-len(suffix)]}-{b}"
    return f"{a}-{b}"


def _missing(value) -> bool:
    if value is None:
        return True
    try:
        v = float(value)
    except (TypeError, ValueError):
        return True
    return math.isnan(v) or math.isinf(v)


def _fixed(value: float, digits: int = 3) -> str:
    """`digits` significant digits in fixed notation, trailing zeros dropped: 0.000606, 0.512, 42.5."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _short(value: float, digits: int = 3) -> str:
    a = abs(value)
    for threshold, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= threshold * (1 - 0.5 * 10 ** -digits):     # 999,999.9 is 1M, not 1e+03k
            return f"{_fixed(value / threshold, digits)}{suffix}"
    if a >= 10 ** digits:
        return f"{value:.0f}"
    return _fixed(value, digits)


def format_interactivity(value: float) -> str:
    """An interactivity in words, to three figures: 19.8, 470, 1,670 (tok/s/user)."""
    return f"{float(f'{float(value):.3g}'):,g}"


def cut_text(text: str, chars: int) -> str:
    """`text` in at most `chars` characters, cut between words and ending " …" when cut."""
    if len(text) <= chars:
        return text
    head = text[:chars - 2]           # room for " …"
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(" ,;:·") + " …"


def format_money(value: float | None, digits: int = 3) -> str:
    """$121,272 / $2,137 / $3.71 / $0.61 / $0.0251 / $0.000606: whole dollars from $100, else up
    to `digits` significant digits (always cents), never scientific notation; "–" when missing."""
    if _missing(value):
        return "–"
    sign, a = ("-" if value < 0 else ""), abs(value)
    if a >= 100:
        return f"{sign}${a:,.0f}"
    if a == 0:
        return "$0"
    decimals = max(2, digits - 1 - math.floor(math.log10(a)))
    text = f"{a:.{decimals}f}"
    whole, cents = text.split(".")
    return f"{sign}${whole}.{cents[:2] + cents[2:].rstrip('0')}"      # $0.61, $0.0006, $25.10
