"""Documents derived from the data and stored with it, so a restart, another replica or another
user reads one instead of making it again (the Overview's default documents:
`opx.answers.overview.refresh`).

They share the `derived_fits` table with the anchored fits (`opx.store.stored_fits`): a row per
content key, the key naming everything the document depends on (the data's version among it),
the payload zlib-compressed JSON, never pickle. A key starts with its kind (`overview:`), and its
hardware, model and workload are empty. Pruning (`stored_fits.prune`) keeps the keys it is given.
"""
from __future__ import annotations

import json
import zlib

import duckdb

from opx.store import stored_fits


def keys(con: duckdb.DuckDBPyConnection) -> set[str]:
    try:
        return stored_fits.keys(con)
    except duckdb.CatalogException:       # a Parquet dataset: nothing stored
        return set()


def load(con: duckdb.DuckDBPyConnection, key: str) -> dict | None:
    """The stored document of this key, or None (none stored, or one this build cannot read)."""
    try:
        row = con.execute("SELECT payload FROM derived_fits WHERE key = ?", [key]).fetchone()
    except duckdb.CatalogException:
        return None
    if row is None:
        return None
    try:
        return json.loads(zlib.decompress(row[0]))
    except (ValueError, zlib.error):
        return None


def save(con: duckdb.DuckDBPyConnection, key: str, document: dict) -> None:
    stored_fits.save(con, key, "", "", "", zlib.compress(json.dumps(document).encode()))
