"""Fixed words of the project (DESIGN.md, Vocabulary)."""
from typing import Literal, get_args

Percentile = Literal["p50", "p90", "p99"]
PERCENTILES: tuple[str, ...] = get_args(Percentile)

Provenance = Literal["measured", "published", "preview", "derived", "interpolated", "simulated"]
PROVENANCES: tuple[str, ...] = get_args(Provenance)

# y metrics the Explorer offers today; cost and power metrics come with the Compare issue.
YMetric = Literal["total", "output", "input"]
Y_METRICS: tuple[str, ...] = get_args(YMetric)

XScale = Literal["log", "linear"]
