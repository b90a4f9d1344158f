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
