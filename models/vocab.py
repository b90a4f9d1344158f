"""Fixed words of the project (docs/architecture.md, "Vocabulary")."""
from typing import Literal, get_args

Percentile = Literal["p50", "p90", "p99"]
PERCENTILES: tuple[str, ...] = get_args(Percentile)

Provenance = Literal["measured", "published", "preview", "derived", "interpolated", "simulated"]
PROVENANCES: tuple[str, ...] = get_args(Provenance)

# y metrics: throughput per GPU, and cost and power metrics derived from total throughput per GPU.
YMetric = Literal["total", "output", "input", "per_mw", "usd_per_mtok", "j_per_token"]
Y_METRICS: tuple[str, ...] = get_args(YMetric)

XScale = Literal["log", "linear"]
