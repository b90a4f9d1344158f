"""opx.store: where runs, points and what is derived from them live: schema, DuckDB file, PostgreSQL, Parquet datasets, queries, fits, envelopes.
May import `models`, `opx.ingest`, `opx.simulate`, `opx.curves` and the base modules; never `opx.answers`, `opx.publish` or `opx.cli`.

This module opens a store of any kind by its `--db` (a DuckDB file, a Parquet dataset, or
postgresql://...) and names the operations every kind shares; the kinds are
`opx.store.duckdb_file`, `opx.store.dataset` and `opx.store.pgstore`.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb

from opx.errors import StoreError, shown
from opx.store import dataset, duckdb_file, pgstore
from opx.store.duckdb_file import storage_error
from opx.store.rows import (POINT_COLUMNS, POINT_VALUE_COLUMNS, RUN_COLUMNS, RunRows, WriteResult,
                            count_runs, data_version, delete_run, distinct_values, plan_write,
                            rows_of, run_exists, stored_points, write_runs)
from opx.store.schema import SCHEMA_VERSION, migrate

__all__ = ["POINT_COLUMNS", "POINT_VALUE_COLUMNS", "RUN_COLUMNS", "RunRows", "SCHEMA_VERSION",
           "WriteResult", "check", "count_runs", "data_stamp", "data_version", "delete_run",
           "describe", "distinct_values", "exists", "migrate", "name", "plan_write", "reading",
           "rows_of", "run_exists", "schema_version_of", "storage_error", "stored_points",
           "write_runs", "writing"]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")


def _refuse_unknown_url(path: str | os.PathLike) -> None:
    """A `--db` that is a URL opx does not know (mysql://...) is an error, not a folder named
    `mysql:` made in the working directory."""
    text = str(path)
    found = _URL.match(text)
    if found and not pgstore.is_postgres(text) and not any(
            text.startswith(r.rstrip("/").rstrip(":") + ":") for r in dataset.REMOTE):
        raise StoreError(text, "database", f"`{found.group(1)}:` is not a store opx knows: give a "
                                           "DuckDB file, a Parquet dataset, or postgresql://...")


@contextlib.contextmanager
def writing(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection with every migration applied. Waits (bounded) for readers to step
    aside; a corrupt file, a full disk or a fatal DuckDB error inside the block is a StoreError."""
    _refuse_unknown_url(path)
    if pgstore.is_postgres(path):
        with pgstore.writing(pgstore.url_of(path)) as con:
            yield con
        return
    if dataset.is_dataset(path):
        raise StoreError(path, "database", "a Parquet dataset is read-only: write to a DuckDB file "
                                           "and publish it with `python -m opx db export-parquet`")
    with duckdb_file.writing(Path(path)) as con:
        yield con


# The connection a `holding` block opened, by path: `reading` inside the block reuses it (an
# answer made of many views, the Overview's, opens the file once, not once per view).
_HELD: contextvars.ContextVar[dict | None] = contextvars.ContextVar("opx_held_reader",
                                                                   default=None)


@contextlib.contextmanager
def holding(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """`reading(path)`, kept open for every `reading(path)` in the block (same thread or task)."""
    held = _HELD.get() or {}
    if str(path) in held:
        yield held[str(path)]
        return
    with reading(path) as con:
        token = _HELD.set({**held, str(path): con})
        try:
            yield con
        finally:
            _HELD.reset(token)


@contextlib.contextmanager
def reading(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to an existing, current database (a DuckDB file, or a Parquet
    dataset folder, glob or URL). A file that cannot be read is a StoreError, also when a query
    in the block finds it truncated or corrupt. Inside `holding(path)`, its connection."""
    held = _HELD.get()
    if held and str(path) in held:
        yield held[str(path)]
        return
    _refuse_unknown_url(path)
    if pgstore.is_postgres(path):
        with pgstore.reading(pgstore.url_of(path)) as con:
            yield con
        return
    if dataset.is_dataset(path):
        con = dataset.open_dataset(path, SCHEMA_VERSION)
        try:
            yield con
        finally:
            con.close()
        return
    with duckdb_file.reading(Path(path)) as con:
        yield con


def check(path: str | os.PathLike) -> None:
    """Fail now, with a StoreError, if `path` exists and is not a database this build can open
    (zero-byte, truncated, corrupt, newer, busy), so a long command (an import, `db init`) stops
    before its work rather than after. A missing file passes: writing creates it."""
    _refuse_unknown_url(path)
    if pgstore.is_postgres(path):
        return pgstore.check(pgstore.url_of(path))
    if dataset.is_dataset(path):
        return
    duckdb_file.check(Path(path))


def exists(path: str | os.PathLike) -> bool:
    """Whether there is a database to read at `path` (a file, a dataset, a Postgres database
    with opx's schema)."""
    if pgstore.is_postgres(path):
        return pgstore.has_schema(pgstore.url_of(path))
    return dataset.is_dataset(path) or Path(path).exists()


def name(path: str | os.PathLike) -> str:
    """The database as messages name it (a Postgres URL without its password)."""
    url = pgstore.url_of(path)
    return pgstore.shown_url(url) if url else shown(path)


def describe(path: str | os.PathLike) -> str:
    """Where the data lives, in words, for the Data page: which kind of store and its name."""
    if pgstore.is_postgres(path):
        return (f"PostgreSQL at {name(path)}, shared by every dashboard and import that names it "
                f"(data version {data_stamp(path)[0]:,})")
    if dataset.is_dataset(path):
        return f"the Parquet dataset {shown(path)} (read-only)"
    return f"the DuckDB file {shown(path)}"


def schema_version_of(path: str | os.PathLike) -> int:
    """The schema version this build writes to `path`'s kind of store."""
    return pgstore.SCHEMA_VERSION if pgstore.is_postgres(path) else SCHEMA_VERSION


def data_stamp(path: Path) -> tuple[int, int]:
    """A cheap version of the data for cache keys: the file's mtime and size (no connection);
    on Postgres, its data version (one query)."""
    if pgstore.is_postgres(path):
        return pgstore.data_stamp(pgstore.url_of(path))
    if dataset.is_dataset(path):
        return dataset.stamp(path)
    return duckdb_file.stamp(Path(path))
