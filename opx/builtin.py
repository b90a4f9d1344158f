"""The built-in data: the catalog, every published figure under data/published/ and the
measurements under data/measured/."""
from __future__ import annotations

import gzip
from pathlib import Path

from models import Catalog, Run
from opx.catalog import load_catalog
from opx.config import CATALOG_DIR, MEASURED_DIR, PUBLISHED_DIR
from opx.errors import OpxError
from opx.ingest.published import load_published

# data/measured/inferencex-silicon.csv.gz: where its figures come from (data/measured/NOTICE).
INFERENCEX_SOURCE = ("InferenceX measurements (database dump 2026-04-27), via NVIDIA "
                     "AIConfigurator 0.12.0 silicon_sample.csv (Apache-2.0)")
INFERENCEX_URL = ("https://github.com/ai-dynamo/aiconfigurator/blob/main/aic-core/src/"
                  "aiconfigurator_core/systems/silicon_sample.csv")


def builtin_runs(catalog_dir: Path = CATALOG_DIR, published_dir: Path = PUBLISHED_DIR,
                 measured_dir: Path | None = MEASURED_DIR) -> list[Run]:
    """The catalog's published figures and, unless `measured_dir` is None, the measurements."""
    catalog = load_catalog(catalog_dir)
    runs: list[Run] = []
    for path in sorted(Path(published_dir).glob("*.csv")):
        runs.extend(load_published(path, catalog))
    for path in sorted(Path(measured_dir).glob("*.csv.gz")) if measured_dir else ():
        runs.extend(load_measured(path, catalog))
    return runs


def load_measured(path: Path, catalog: Catalog) -> list[Run]:
    """A compact copy of AIConfigurator's silicon_sample.csv, read by the same importer as the
    original, with the measurements' origin as each run's source."""
    from opx.ingest.core import IngestOptions, parse_file
    name = path.name.removesuffix(".gz")
    result = parse_file(path, IngestOptions(format="aiconfigurator"), catalog,
                        data=gzip.decompress(path.read_bytes()), display_name=name)
    if result.error:
        raise OpxError(path, "file", result.error)
    if result.notices:         # every model and workload of the built-in data is in the catalog
        raise OpxError(path, "catalog", "; ".join(result.notices[:3]))
    return [run.model_copy(update={"source": INFERENCEX_SOURCE, "source_url": INFERENCEX_URL})
            for run in result.runs]


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
