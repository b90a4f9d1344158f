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
