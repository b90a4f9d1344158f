"""Where things live. The database path comes from --db, else $OPX_DB, else data/opx.duckdb."""
from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"
CATALOG_DIR = DATA_DIR / "catalog"
PUBLISHED_DIR = DATA_DIR / "published"
MEASURED_DIR = DATA_DIR / "measured"
DEFAULT_DB = DATA_DIR / "opx.duckdb"


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def location(db: str | os.PathLike) -> Path | str:
    """A database as opx passes it around: a file or folder as a Path, a URL (postgresql://...,
    s3://...) as the text it is (a Path would fold its `//` and `/./`)."""
    text = os.fspath(db)
    return text if _URL.match(text) else Path(text)


def db_path(explicit: str | os.PathLike | None = None) -> Path | str:
    if explicit:
        return location(explicit)
    env = os.environ.get("OPX_DB")
    return location(env) if env else DEFAULT_DB
