"""The built-in data: the catalog and every published figure under data/published/."""
from __future__ import annotations

from pathlib import Path

from models import Run
from opx.catalog import load_catalog
from opx.config import CATALOG_DIR, PUBLISHED_DIR
from opx.ingest.published import load_published


def builtin_runs(catalog_dir: Path = CATALOG_DIR, published_dir: Path = PUBLISHED_DIR) -> list[Run]:
    catalog = load_catalog(catalog_dir)
    runs: list[Run] = []
    for path in sorted(Path(published_dir).glob("*.csv")):
        runs.extend(load_published(path, catalog))
    return runs


# Simulated envelopes built into a new database, so the Explorer shows whole curves beside the
# published points (drawn dashed and labelled simulated; never mixed into the data's figures).
SIMULATED_HARDWARE = ("vr-nvl72", "gb300-nvl72", "gb200-nvl72", "b200", "h200")
SIMULATED_WORKLOADS = ("agentx", "1k1k", "8k1k")
SIMULATED_MODEL = "deepseek-v4.1-flash"
SIMULATED_MTP_DEPTH = 1


def builtin_simulations(catalog_dir: Path = CATALOG_DIR) -> tuple[list[Run], list[str]]:
    """Each built-in system's simulated envelope (one system of GPUs, MTP 0-1), and notes on any
    combination the model cannot serve."""
    from opx.simulate import api
    catalog = load_catalog(catalog_dir)
    runs: list[Run] = []
    notes: list[str] = []
    for hw in SIMULATED_HARDWARE:
        for workload in SIMULATED_WORKLOADS:
            try:
                result = api.simulate(hw, SIMULATED_MODEL, workload, None,
                                      api.SimKnobs(mtp_depth=SIMULATED_MTP_DEPTH), catalog)
            except ValueError as exc:
                notes.append(f"{hw} {workload}: not simulated ({exc})")
                continue
            runs.extend(result.to_runs(envelope_only=True))
    return runs, notes
