"""opx vocabulary as pydantic models: no I/O, no Streamlit."""
from models.vocab import PERCENTILES, pct_label, PROVENANCES, Percentile, Provenance, YMetric, Y_METRICS, XScale
from models.catalog import Catalog, Hardware, LLM, SpecValue, Workload
from models.run import Deployment, Point, Run
from models.view import ViewState

__all__ = [
    "PERCENTILES", "pct_label", "PROVENANCES", "Percentile", "Provenance", "YMetric", "Y_METRICS", "XScale",
    "Catalog", "Hardware", "LLM", "SpecValue", "Workload",
    "Deployment", "Point", "Run", "ViewState",
]
