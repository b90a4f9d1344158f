"""Runs and points as a Parquet dataset: exported from a DuckDB file for publishing, and opened
read-only as if it were one (`--db DIR`, a glob, or an object-storage URL DuckDB can read), so
benchmark hosts can publish to shared storage and one dashboard can serve it.

Layout: DIR/runs/*.parquet, DIR/points/*.parquet, DIR/saved_views/*.parquet (optional). Several
hosts may each add their own part files; a run or point present in several parts counts once.
"""
from __future__ import annotations

import datetime as dt
import os
import re
import socket
from pathlib import Path

import duckdb

from opx.errors import StoreError

TABLES = ("runs", "points", "saved_views")
REMOTE = ("s3://", "gs://", "gcs://", "az://", "azure://", "abfss://", "http://", "https://")


def is_dataset(path: str | os.PathLike) -> bool:
    from opx.store import pgstore
    text = str(path)
    if pgstore.is_postgres(text):       # a URL whose query has a `?`, not a glob
        return False
    return (text.startswith(REMOTE) or any(c in text for c in "*?[")
            or Path(text).is_dir())


def _glob(root: str, table: str) -> str:
    if any(c in root for c in "*?["):
        return root.replace("{table}", table) if "{table}" in root else f"{root.rstrip('/')}/{table}/*.parquet"
    return f"{root.rstrip('/')}/{table}/*.parquet"


def _point_metrics_sql() -> str:
    """The point_metrics view exactly as the latest migration that defines it (one definition)."""
    from opx.store.schema import migrations
    for _, sql_file in reversed(migrations()):
        match = re.search(r"CREATE (?:OR REPLACE )?VIEW point_metrics AS.*?;", sql_file.read_text(),
                          re.S)
        if match:
            return match.group(0)
    raise AssertionError("no migration defines the point_metrics view")


def open_dataset(path: str | os.PathLike, schema_version: int) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose `runs`, `points` and `saved_views` read the dataset."""
    root = str(path)
    if not root.startswith(REMOTE) and not any(c in root for c in "*?["):
        if not (Path(root) / "runs").is_dir() or not (Path(root) / "points").is_dir():
            raise StoreError(root, "dataset", "not an opx Parquet dataset (expected runs/ and "
                                              "points/ folders of .parquet files; see "
                                              "`python -m opx db export-parquet`)")
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet('{_glob(root, 'runs')}', "
                    "union_by_name = true) QUALIFY row_number() OVER (PARTITION BY id "
                    "ORDER BY ingested_at) = 1")
        con.execute(f"CREATE VIEW points AS SELECT * FROM read_parquet('{_glob(root, 'points')}', "
                    "union_by_name = true) QUALIFY row_number() OVER "
                    "(PARTITION BY run_id, point_key ORDER BY seq) = 1")
        try:
            con.execute(f"CREATE VIEW saved_views AS SELECT * FROM read_parquet("
                        f"'{_glob(root, 'saved_views')}', union_by_name = true)")
            con.execute("SELECT count(*) FROM saved_views").fetchone()
        except duckdb.Error:
            con.execute("DROP VIEW IF EXISTS saved_views")
            con.execute("CREATE TABLE saved_views (slug VARCHAR, title VARCHAR, page VARCHAR, "
                        "query VARCHAR, created_at TIMESTAMP, data_version BIGINT, run_ids JSON)")
        con.execute(_point_metrics_sql())
        con.execute("CREATE TABLE data_version AS SELECT 0::BIGINT AS version")
        con.execute("CREATE TABLE schema_migrations (version INTEGER, applied_at TIMESTAMP)")
        con.execute("INSERT INTO schema_migrations VALUES (?, current_timestamp)", [schema_version])
        con.execute("SELECT count(*) FROM runs").fetchone()
    except duckdb.Error as exc:
        con.close()
        raise StoreError(root, "dataset", f"cannot be read: {exc}") from None
    return con


def export(con: duckdb.DuckDBPyConnection, out_dir: Path) -> dict[str, Path]:
    """Write runs, points and saved views as part files under out_dir (written under a temporary
    name, then renamed, so a reader never sees half a file)."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    part = f"part-{re.sub(r'[^A-Za-z0-9]+', '-', socket.gethostname())}-{stamp}.parquet"
    written = {}
    for table in TABLES:
        folder = Path(out_dir) / table
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / part
        tmp = folder / f".{part}.tmp"
        quoted = str(tmp).replace("'", "''")      # COPY takes no parameter: quote the path
        con.execute(f"COPY (SELECT * FROM {table}) TO '{quoted}' (FORMAT parquet)")
        os.replace(tmp, final)
        written[table] = final
    return written


def stamp(path: str | os.PathLike) -> tuple[int, int]:
    """Cache key of a local dataset: newest mtime and total size of its part files."""
    root = Path(str(path))
    if str(path).startswith(REMOTE) or not root.is_dir():
        return (0, 0)
    files = [f for f in root.rglob("*.parquet") if f.is_file()]
    return (max((f.stat().st_mtime_ns for f in files), default=0),
            sum(f.stat().st_size for f in files))
