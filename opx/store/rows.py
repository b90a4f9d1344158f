"""Runs and points in any store's DuckDB connection: written in one transaction keyed by a content
hash (a re-import changes nothing), deleted, counted. The envelopes and the journal follow each write."""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import duckdb
import pyarrow as pa

from models import Run
from opx.store import envelopes, journal
from opx.store.schema import rollback as _rollback

# -- writing runs ------------------------------------------------------------------------------

RUN_COLUMNS = ("id", "hardware", "model", "framework", "framework_version", "precision", "workload",
               "isl", "osl", "prefix_hit_rate", "tp", "ep", "dp_attention", "disaggregated",
               "gpus_prefill", "gpus_decode", "gpus_total", "mtp", "provenance", "source",
               "source_url", "date", "label", "notes", "meta")
POINT_VALUE_COLUMNS = ("concurrency", "request_rate", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s",
                       "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s",
                       "e2e_p99_s", "tpot_mean_s", "ttft_mean_s", "e2e_mean_s",
                       "throughput_total_tok_s", "throughput_output_tok_s",
                       "throughput_input_tok_s", "requests_completed", "requests_failed", "note",
                       "source")
POINT_COLUMNS = ("run_id", "seq", "point_key") + POINT_VALUE_COLUMNS


@dataclass(frozen=True)
class WriteResult:
    runs_added: int          # new configurations
    points_added: int        # new points, in new or existing runs
    runs_unchanged: int      # runs whose every point was already stored
    run_ids: tuple[str, ...] = ()
    # Per run given, in order: (1 if it added its configuration, points it added), as writing the
    # runs one at a time would count them (an importer attributes these to files).
    added: tuple[tuple[int, int], ...] = ()


class RunRows(NamedTuple):
    """A run as the rows the store writes: plain values only, so an importer's worker processes
    can send it back cheaply (a pickled pydantic Run costs several times more), and a tuple, which
    the importer builds again from what a worker sent for a fraction of a dataclass's cost."""
    run_id: str
    run: tuple                      # RUN_COLUMNS values, id first
    points: tuple[tuple, ...]       # per point: (point_key, *POINT_VALUE_COLUMNS values)


_SOURCE = POINT_VALUE_COLUMNS.index("source")


def rows_of(run: Run) -> RunRows:
    """The rows of a run, keys computed (the costly part of a write, done once)."""
    run_id = run.run_key()
    d = run.deployment
    row = (run_id, run.hardware, run.model, run.framework, run.framework_version, run.precision,
           run.workload, run.isl, run.osl, run.prefix_hit_rate, d.tp, d.ep, d.dp_attention,
           d.disaggregated, d.gpus_prefill, d.gpus_decode, d.gpus_total, d.mtp, run.provenance,
           run.source, run.source_url, run.date, run.label, run.notes,
           json.dumps(run.meta, sort_keys=True) if run.meta else None)
    points = []
    for p in run.points:
        values = p.__dict__
        point = [p.point_key()] + [values[c] for c in POINT_VALUE_COLUMNS]
        if not point[1 + _SOURCE]:
            point[1 + _SOURCE] = run.source
        points.append(tuple(point))
    return RunRows(run_id, row, tuple(points))


def plan_write(con: duckdb.DuckDBPyConnection, runs: Iterable[Run | RunRows]
               ) -> tuple[list[tuple], list[tuple], WriteResult]:
    """The rows `write_runs` would add (RUN_COLUMNS and POINT_COLUMNS tuples), without writing
    (also serves --dry-run)."""
    prepared = [r if isinstance(r, RunRows) else rows_of(r) for r in runs]
    ids = list(dict.fromkeys(r.run_id for r in prepared))
    existing_runs = {row[0] for row in con.execute(
        "SELECT id FROM runs WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
    known: dict[str, set[str]] = {}
    next_seq: dict[str, int] = {}
    for run_id, key, seq in con.execute(
            "SELECT run_id, point_key, seq FROM points WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [ids]).fetchall():
        known.setdefault(run_id, set()).add(key)
        next_seq[run_id] = max(next_seq.get(run_id, 0), seq + 1)
    run_rows, point_rows, per_run = [], [], []
    unchanged = 0
    for r in prepared:
        run_id = r.run_id
        new_run = run_id not in existing_runs and run_id not in next_seq
        if new_run:
            run_rows.append(r.run)
            next_seq[run_id] = 0
            existing_runs.add(run_id)
        seen = known.setdefault(run_id, set())
        added = 0
        for point in r.points:
            if point[0] in seen:
                continue
            seen.add(point[0])
            point_rows.append((run_id, next_seq[run_id]) + point)
            next_seq[run_id] += 1
            added += 1
        unchanged += added == 0
        per_run.append((int(new_run), added))
    result = WriteResult(len(run_rows), len(point_rows), unchanged, tuple(ids), tuple(per_run))
    return run_rows, point_rows, result


def write_runs(con: duckdb.DuckDBPyConnection, runs: Iterable[Run | RunRows]) -> WriteResult:
    """Add runs and their points in one transaction: a configuration already stored gains only
    the points it lacks, so a re-import changes nothing and a sweep split over files joins one run."""
    con.execute("BEGIN TRANSACTION")
    try:
        run_rows, point_rows, result = plan_write(con, runs)
        if run_rows:
            _insert(con, "runs", RUN_COLUMNS, run_rows)
            journal.added(con, "runs", [(r[0],) for r in run_rows])
        if point_rows:
            _insert(con, "points", POINT_COLUMNS, point_rows)
            journal.added(con, "points", [(r[0], r[1]) for r in point_rows])
            _fold_into_envelopes(con, point_rows)
        if run_rows or point_rows:
            con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
    except Exception:
        _rollback(con)
        raise
    return result


def _fold_into_envelopes(con: duckdb.DuckDBPyConnection, point_rows: list[tuple]) -> None:
    keys = pa.Table.from_pydict({"run_id": [r[0] for r in point_rows],
                                 "seq": [r[1] for r in point_rows]})
    con.register("new_point_keys", keys)
    try:
        envelopes.add_points(con, "new_point_keys")
    finally:
        con.unregister("new_point_keys")


def _insert(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str],
            rows: list[tuple]) -> None:
    # An Arrow table built from columns: several times cheaper than a pandas frame of rows.
    frame = pa.Table.from_pydict(dict(zip(columns, (list(c) for c in zip(*rows)))))
    name = f"new_{table}"
    con.register(name, frame)
    try:
        cols = ", ".join(columns)
        con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")
    finally:
        con.unregister(name)


# -- reading ------------------------------------------------------------------------------------

def count_runs(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    points = con.execute("SELECT count(*) FROM points").fetchone()[0]
    return runs, points


def stored_points(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]
                  ) -> set[tuple[str, str]]:
    """Which of the (run id, point key) pairs are stored."""
    import pandas as pd
    frame = pd.DataFrame(keys, columns=["run_id", "point_key"]).drop_duplicates()
    con.register("wanted_points", frame)
    try:
        rows = con.execute("SELECT p.run_id, p.point_key FROM points p JOIN wanted_points w "
                           "USING (run_id, point_key)").fetchall()
    finally:
        con.unregister("wanted_points")
    return {(r, k) for r, k in rows}


def run_exists(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    return con.execute("SELECT count(*) FROM runs WHERE id = ?", [run_id]).fetchone()[0] > 0


def delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    con.execute("BEGIN TRANSACTION")
    try:
        n = con.execute("SELECT count(*) FROM runs WHERE id = ?", [run_id]).fetchone()[0]
        groups = envelopes.groups_to_rebuild(con, run_id)
        con.execute("DELETE FROM points WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM runs WHERE id = ?", [run_id])
        if n:
            journal.replaced(con, "points", [(run_id,)])
            journal.replaced(con, "runs", [(run_id,)])
        if groups:
            envelopes.rebuild_groups(con, groups)
            con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
    except Exception:
        _rollback(con)
        raise
    return bool(n)


def distinct_values(con: duckdb.DuckDBPyConnection, column: str) -> list[str]:
    if column not in ("hardware", "model", "workload", "provenance"):
        raise ValueError(column)
    return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM runs ORDER BY 1").fetchall()]


def data_version(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT version FROM data_version").fetchone()[0]


