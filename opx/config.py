"""Where things live. The database path comes from --db, else $OPX_DB, else data/opx.duckdb."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"
CATALOG_DIR = DATA_DIR / "catalog"
PUBLISHED_DIR = DATA_DIR / "published"
MEASURED_DIR = DATA_DIR / "measured"
DEFAULT_DB = DATA_DIR / "opx.duckdb"


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get("OPX_DB")
    return Path(env) if env else DEFAULT_DB
