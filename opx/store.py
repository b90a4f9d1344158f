"""The DuckDB store: schema by numbered migrations, runs written in one transaction keyed by a
content hash, parameterized queries returning DataFrames.

Connections are short-lived: readers open the file read-only for one query batch and close it, so
a writer in another process (the CLI importing results) is blocked only for that moment; both sides
retry on DuckDB's file-lock error. Inside one process every thread gets its own connection, because
DuckDB 2.0 refuses a connection shared across threads.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd

from models import Run
from opx.errors import StoreError

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
LOCK_RETRY_SECONDS = 10.0


def migrations() -> list[tuple[int, Path]]:
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        found.append((int(path.name.split("_", 1)[0]), path))
    return found


SCHEMA_VERSION = max(v for v, _ in migrations())


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + LOCK_RETRY_SECONDS
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                raise StoreError(path, "database", f"cannot open: {exc}") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def _schema_version(con: duckdb.DuckDBPyConnection) -> int:
    has_table = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchone()[0]
    if not has_table:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]


def _refuse_newer(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(path, "schema_migrations",
                         f"the database has schema version {version}, newer than this build of opx "
                         f"supports ({SCHEMA_VERSION}); upgrade opx or use another --db")


@contextlib.contextmanager
def writing(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection with every migration applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = _connect(path, read_only=False)
    try:
        version = _schema_version(con)
        _refuse_newer(path, version)
        for number, sql_file in migrations():
            if number <= version:
                continue
            con.execute("BEGIN TRANSACTION")
            try:
                if number == 1:
                    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations "
                                "(version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)")
                con.execute(sql_file.read_text())
                con.execute("INSERT INTO schema_migrations VALUES (?, current_timestamp)", [number])
                con.execute("COMMIT")
            except Exception:
                con.execute("ROLLBACK")
                raise
        yield con
    finally:
        con.close()


@contextlib.contextmanager
def reading(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to an existing, current database."""
    if not Path(path).exists():
        raise StoreError(path, "database", "no such file; run `python -m opx db init` to build it")
    con = _connect(path, read_only=True)
    try:
        version = _schema_version(con)
        _refuse_newer(path, version)
        if version < SCHEMA_VERSION:
            raise StoreError(path, "schema_migrations",
                             f"the database has schema version {version}, older than this build "
                             f"({SCHEMA_VERSION}); run `python -m opx db init` to upgrade it")
        yield con
    finally:
        con.close()


def data_stamp(path: Path) -> tuple[int, int]:
    """A cheap version of the data for cache keys: the file's mtime and size (no connection)."""
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return (0, 0)
    wal = Path(str(path) + ".wal")
    wal_mtime = wal.stat().st_mtime_ns if wal.exists() else 0
    return (max(st.st_mtime_ns, wal_mtime), st.st_size)


# -- writing runs ------------------------------------------------------------------------------

RUN_COLUMNS = ("id", "hardware", "model", "framework", "framework_version", "precision", "workload",
               "isl", "osl", "prefix_hit_rate", "tp", "ep", "dp_attention", "disaggregated",
               "gpus_prefill", "gpus_decode", "gpus_total", "mtp", "provenance", "source",
               "source_url", "date", "label", "notes")
POINT_COLUMNS = ("run_id", "seq", "concurrency", "request_rate", "tpot_p50_s", "tpot_p90_s",
                 "tpot_p99_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s",
                 "e2e_p99_s", "throughput_total_tok_s", "throughput_output_tok_s",
                 "throughput_input_tok_s", "requests_completed", "requests_failed", "note")


@dataclass(frozen=True)
class WriteResult:
    runs_added: int
    points_added: int
    runs_unchanged: int


def _run_row(run: Run, run_id: str) -> dict:
    d = run.deployment
    return {"id": run_id, "hardware": run.hardware, "model": run.model, "framework": run.framework,
            "framework_version": run.framework_version, "precision": run.precision,
            "workload": run.workload, "isl": run.isl, "osl": run.osl,
            "prefix_hit_rate": run.prefix_hit_rate, "tp": d.tp, "ep": d.ep,
            "dp_attention": d.dp_attention, "disaggregated": d.disaggregated,
            "gpus_prefill": d.gpus_prefill, "gpus_decode": d.gpus_decode,
            "gpus_total": d.gpus_total, "mtp": d.mtp, "provenance": run.provenance,
            "source": run.source, "source_url": run.source_url, "date": run.date,
            "label": run.label, "notes": run.notes}


def write_runs(con: duckdb.DuckDBPyConnection, runs: Iterable[Run]) -> WriteResult:
    """Insert runs and their points in one transaction; a run already stored is left as it is."""
    runs = list(runs)
    ids = [r.content_hash() for r in runs]
    existing = set()
    if ids:
        existing = {row[0] for row in con.execute(
            "SELECT id FROM runs WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
    run_rows, point_rows, seen = [], [], set()
    for run, run_id in zip(runs, ids):
        if run_id in existing or run_id in seen:
            continue
        seen.add(run_id)
        run_rows.append(_run_row(run, run_id))
        for seq, p in enumerate(run.points):
            row = {"run_id": run_id, "seq": seq}
            row.update({c: getattr(p, c) for c in POINT_COLUMNS[2:]})
            point_rows.append(row)
    if not run_rows:
        return WriteResult(0, 0, len(runs))
    run_df = pd.DataFrame(run_rows, columns=list(RUN_COLUMNS))
    point_df = pd.DataFrame(point_rows, columns=list(POINT_COLUMNS))
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("new_runs", run_df)
        con.register("new_points", point_df)
        cols = ", ".join(RUN_COLUMNS)
        con.execute(f"INSERT INTO runs ({cols}) SELECT {cols} FROM new_runs")
        pcols = ", ".join(POINT_COLUMNS)
        con.execute(f"INSERT INTO points ({pcols}) SELECT {pcols} FROM new_points")
        con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("new_runs")
        con.unregister("new_points")
    return WriteResult(len(run_rows), len(point_rows), len(runs) - len(run_rows))


# -- reading ------------------------------------------------------------------------------------

def count_runs(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    points = con.execute("SELECT count(*) FROM points").fetchone()[0]
    return runs, points


def list_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return con.execute(
        "SELECT r.id, r.hardware, r.model, r.workload, r.framework, r.provenance, r.gpus_total, "
        "count(p.seq) AS points, r.source FROM runs r LEFT JOIN points p ON p.run_id = r.id "
        "GROUP BY ALL ORDER BY r.model, r.hardware, r.id").df()


def delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    con.execute("BEGIN TRANSACTION")
    try:
        n = con.execute("SELECT count(*) FROM runs WHERE id = ?", [run_id]).fetchone()[0]
        con.execute("DELETE FROM points WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM runs WHERE id = ?", [run_id])
        if n:
            con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return bool(n)


def distinct_values(con: duckdb.DuckDBPyConnection, column: str) -> list[str]:
    if column not in ("hardware", "model", "workload", "provenance"):
        raise ValueError(column)
    return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM runs ORDER BY 1").fetchall()]


def data_version(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT version FROM data_version").fetchone()[0]


def as_list(values: Sequence[str]) -> list[str]:
    return [str(v) for v in values]
