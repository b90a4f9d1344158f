"""The simulated envelopes built into a new database, beside the published and measured data
(`opx.ingest.builtin`)."""
from __future__ import annotations

from pathlib import Path

from models import Run
from opx.catalog import load_catalog
from opx.config import CATALOG_DIR


# Simulated envelopes built into a new database, so the Explorer shows whole curves beside the
# published points (drawn dashed and labelled simulated; never mixed into the data's figures).
SIMULATED_HARDWARE = ("vr-nvl72", "gb300-nvl72", "gb200-nvl72", "b200", "h200")
SIMULATED_WORKLOADS = ("agentx", "1k1k", "8k1k")
SIMULATED_MODEL = "deepseek-v4.1-flash"
SIMULATED_MTP_DEPTH = 1


def builtin_simulations(catalog_dir: Path = CATALOG_DIR) -> tuple[list[Run], list[str]]:
    """Each built-in system's simulated envelope (one system of GPUs, MTP 0-1), and notes on any
    combination the model cannot serve. The systems are simulated in worker processes (one per
    CPU, at most 2), in a fixed order, so the runs are the same as one process makes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    catalog = load_catalog(catalog_dir)
    systems = [(hw, workload, catalog) for hw in SIMULATED_HARDWARE
               for workload in SIMULATED_WORKLOADS]
    count = min(2, multiprocessing.cpu_count() or 1)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    if count > 1 and method:
        with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context(method)) as pool:
            made = list(pool.map(_simulated_system, systems))
    else:
        made = [_simulated_system(s) for s in systems]
    runs = [run for system_runs, _ in made for run in system_runs]
    return runs, [note for _, note in made if note]


def _simulated_system(system: tuple) -> tuple[list[Run], str]:
    from opx.simulate import api
    hw, workload, catalog = system
    try:
        result = api.simulate(hw, SIMULATED_MODEL, workload, None,
                              api.SimKnobs(mtp_depth=SIMULATED_MTP_DEPTH), catalog)
    except ValueError as exc:
        return [], f"{hw} {workload}: not simulated ({exc})"
    return result.to_runs(envelope_only=True), ""
