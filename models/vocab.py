"""Fixed words of the project (docs/architecture.md, "Vocabulary")."""
from typing import Literal, get_args

# The interactivity statistic: the mean or a percentile of TPOT, each as its source reported it.
Percentile = Literal["mean", "p50", "p90", "p99"]
PERCENTILES: tuple[str, ...] = get_args(Percentile)


def pct_label(pct: str) -> str:
    """How a statistic is written for people: `mean`, `P50`, `P90`, `P99`."""
    return pct if pct == "mean" else pct.upper()

Provenance = Literal["measured", "published", "preview", "derived", "interpolated", "simulated"]
PROVENANCES: tuple[str, ...] = get_args(Provenance)

# y metrics: throughput per GPU, and cost and power metrics derived from total throughput per GPU.
YMetric = Literal["total", "output", "input", "per_mw", "usd_per_mtok", "j_per_token"]
Y_METRICS: tuple[str, ...] = get_args(YMetric)

XScale = Literal["log", "linear"]

# Pages whose chart has an embed address (`/embed?of=<page>&...`) and a brief.
EmbedOf = Literal["explorer", "compare", "planner"]
EMBEDDABLE: tuple[str, ...] = get_args(EmbedOf)
