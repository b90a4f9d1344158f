"""Parameterized view queries. Filtering, frontier flags and down-sampling happen in DuckDB, so the
page receives at most a few thousand rows however many points are stored. Column names come only
from the metric registry (never from user text); every value is a bound parameter."""
from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass

import duckdb
import pandas as pd

from models import PERCENTILES, ViewState
from models.view import RUN_FILTER_FIELDS
from opx.store import envelopes, repeats
from opx.curves import metrics
from opx.curves.frontier import frontier_flag_sql

# A chart's datasets stay under about 5,000 rows (bench/bench_marks.py) with every layer on: the
# envelope (sent in full, and drawn by three layers) and these
MAX_OTHER_POINTS = 1500     # sampled non-frontier points
MAX_RUN_CURVE_POINTS = 2000  # points of run curves, thinned evenly when there are more


@dataclass(frozen=True)
class RunFilters:
    """Which runs a view or `runs list` takes: each a tuple of stored values (empty: any), or
    None (any). Framework and precision compare case-insensitively (they are free text); `mode`
    is `agg` or `disagg`; `gpus` the deployments' GPU counts; `mtp` `on`, or `off` (which keeps
    runs that do not state MTP); `since`/`until` bound the run's date (undated runs are left out
    when either is set). One WHERE clause (`WHERE`) serves every query that filters runs."""
    hardware: tuple[str, ...] = ()
    model: tuple[str, ...] = ()
    workload: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()
    framework: tuple[str, ...] = ()
    precision: tuple[str, ...] = ()
    mode: str | None = None
    gpus: tuple[int, ...] = ()
    mtp: str | None = None
    since: dt.date | None = None
    until: dt.date | None = None

    WHERE = ("(len($hardware) = 0 OR list_contains($hardware, r.hardware)) "
             "AND (len($model) = 0 OR list_contains($model, r.model)) "
             "AND (len($workload) = 0 OR list_contains($workload, r.workload)) "
             "AND (len($provenance) = 0 OR list_contains($provenance, r.provenance)) "
             "AND (len($framework) = 0 OR list_contains($framework, lower(r.framework))) "
             "AND (len($precision) = 0 OR list_contains($precision, lower(r.precision))) "
             "AND ($mode IS NULL OR r.disaggregated = ($mode = 'disagg')) "
             "AND (len($gpus) = 0 OR list_contains($gpus, r.gpus_total)) "
             "AND ($mtp IS NULL OR coalesce(r.mtp, false) = ($mtp = 'on')) "
             "AND ($since IS NULL OR r.date >= $since) "
             "AND ($until IS NULL OR r.date <= $until)")

    def params(self) -> dict:
        return {"hardware": list(self.hardware), "model": list(self.model),
                "workload": list(self.workload), "provenance": list(self.provenance),
                "framework": [f.lower() for f in self.framework],
                "precision": [p.lower() for p in self.precision], "mode": self.mode,
                "gpus": [int(g) for g in self.gpus], "mtp": self.mtp, "since": self.since,
                "until": self.until}


@dataclass(frozen=True)
class Filters:
    """A view's query: one model and workload, the hardware shown, the interactivity statistic
    and y metric, and the run filters every page shares."""
    model: str
    workload: str
    hardware: tuple[str, ...]
    pct: str
    y: str
    sources: tuple[str, ...] = ()
    runs: RunFilters = RunFilters()

    def run_filters(self) -> RunFilters:
        return dataclasses.replace(self.runs, model=(self.model,), workload=(self.workload,),
                                   hardware=tuple(self.hardware), provenance=tuple(self.sources))

    def params(self) -> dict:
        return self.run_filters().params()

    def unfiltered(self) -> bool:
        """No run filter and no provenance filter: the view takes every run of its hardware."""
        return not self.sources and self.runs == RunFilters()


RUN_FIELDS = ("r.id AS run_id, r.hardware, r.framework, r.framework_version, r.precision, r.tp, "
              "r.ep, r.dp_attention, r.disaggregated, r.gpus_prefill, r.gpus_decode, r.gpus_total, "
              "r.mtp, r.provenance, r.source, r.source_url, r.date, r.label, r.notes")


# Per statistic, the point's interactivity: only the coverage query reads them (so the chart's
# marks do not carry four more columns to the browser).
STATISTIC_COLUMNS = ", ".join(f"m.interactivity_{q} AS m_{q}" for q in ("mean", "p50", "p90", "p99"))


def _base_cte(f: Filters, extra: str = "", among: str = "") -> str:
    """The view's points with their run fields (`extra`: more columns; `among`: a join that
    narrows the points, e.g. to the stored envelope)."""
    x_col = metrics.interactivity(f.pct).column
    y_col = metrics.y_metric(f.y).column
    return f"""
    base AS (
        SELECT {RUN_FIELDS}, m.seq, m.concurrency, m.request_rate,
               m.{x_col} AS x, m.{y_col} AS y, m.ttft_{f.pct}_s AS ttft, {extra}
               (m.tpot_mean_s IS NULL AND m.tpot_p50_s IS NULL AND m.tpot_p90_s IS NULL
                    AND m.tpot_p99_s IS NULL)
                   AS interactivity_unstated,
               (r.provenance = 'simulated') AS simulated,
               m.note AS point_note, {repeats.key_sql()} AS repeat_key
        FROM point_metrics m JOIN runs r ON r.id = m.run_id {among}
        WHERE {RunFilters.WHERE}
    )"""


def chart_points(con: duckdb.DuckDBPyConnection, f: Filters, run_curves: bool = False,
                 other_points: bool = False, max_other: int = MAX_OTHER_POINTS,
                 max_run: int = MAX_RUN_CURVE_POINTS) -> pd.DataFrame:
    """Points that have both coordinates, with `on_envelope` (frontier of the hardware) and
    `on_run_frontier`. Run curves are thinned evenly to about `max_run` points and non-frontier
    points sampled down to `max_other`, so the browser gets a few thousand marks at most."""
    if not f.hardware:
        return pd.DataFrame()
    if not (run_curves or other_points) and f.unfiltered() and envelopes.stored(con):
        return _stored_envelope(con, f)
    # The envelope is taken over configurations (a repeat set counts once, at its medians:
    # opx/store/repeats.py); run curves and other points are the runs' own points.
    sql = f"""
    WITH {_base_cte(f)},
    drawable AS (SELECT * FROM base WHERE x IS NOT NULL AND y IS NOT NULL),
    envelope AS (
        SELECT * FROM (SELECT *, {frontier_flag_sql('hardware, simulated')} AS on_envelope,
                              TRUE AS on_run_frontier, 'envelope' AS kind
                       FROM {repeats.configurations_sql('drawable')})
        WHERE on_envelope),
    raw AS (
        SELECT *, y AS y_lo, y AS y_hi, 1 AS repeat_runs, FALSE AS on_envelope,
               {frontier_flag_sql('run_id', tiebreak='seq')} AS on_run_frontier
        FROM drawable ANTI JOIN (SELECT run_id, seq FROM envelope WHERE repeat_runs = 1) e
            USING (run_id, seq)
        WHERE $run_curves OR $other_points),
    run_curves AS (
        -- thinned evenly over all run-curve points (not within each run), so thousands of runs
        -- still send at most about max_run marks
        SELECT * EXCLUDE (gn, total), 'run' AS kind FROM (
            SELECT *, row_number() OVER (ORDER BY run_id, x) AS gn, count(*) OVER () AS total
            FROM raw WHERE $run_curves AND on_run_frontier)
        WHERE total <= $max_run OR (gn - 1) % ceil(total / $max_run) = 0
    ),
    others AS (
        SELECT *, 'other' AS kind FROM raw
        WHERE $other_points AND NOT ($run_curves AND on_run_frontier)
        ORDER BY hash(run_id, seq) LIMIT $max_other
    )
    SELECT * FROM envelope UNION ALL BY NAME SELECT * FROM run_curves
    UNION ALL BY NAME SELECT * FROM others
    ORDER BY hardware, x
    """
    params = f.params() | {"run_curves": run_curves, "other_points": other_points,
                           "max_other": int(max_other), "max_run": int(max_run)}
    return con.execute(sql, params).df()


def _stored_envelope(con: duckdb.DuckDBPyConnection, f: Filters) -> pd.DataFrame:
    """`chart_points` of a view without run filters, from the envelopes stored on write
    (opx/store/envelopes.py): the same rows, without sorting every stored point. An envelope point is
    on its own run's frontier too."""
    sql = f"""
    WITH on_envelope AS (
        SELECT run_id, seq FROM envelope_points
        WHERE model = $model[1] AND workload = $workload[1] AND list_contains($hardware, hardware)
          AND pct = $pct AND ybase = $ybase
    ),
    {_base_cte(f, among="SEMI JOIN on_envelope e ON e.run_id = m.run_id AND e.seq = m.seq")}
    -- (stored envelope points have both coordinates: a filter on them here would be pushed
    -- below the join, to every stored point). The table holds every member of an envelope's
    -- repeat sets, collapsed here as `chart_points` does.
    SELECT *, TRUE AS on_envelope, TRUE AS on_run_frontier, 'envelope' AS kind
    FROM {repeats.configurations_sql('base')} ORDER BY hardware, x
    """
    return con.execute(sql, f.params() | {"pct": f.pct, "ybase": metrics.y_metric(f.y).base
                                          or f.y}).df()


def reference_marks(con: duckdb.DuckDBPyConnection, f: Filters) -> pd.DataFrame:
    """Throughput figures published without any interactivity (e.g. a peak): drawn as horizontal
    reference marks, never placed at an invented x."""
    if not f.hardware:
        return pd.DataFrame()
    sql = f"WITH {_base_cte(f)} SELECT * FROM base WHERE y IS NOT NULL AND interactivity_unstated " \
          "ORDER BY hardware, y DESC"
    return con.execute(sql, f.params()).df()


def peaks(con: duckdb.DuckDBPyConnection, f: Filters) -> pd.DataFrame:
    """Per hardware, apart for simulated and other runs: the highest throughput of any point under
    the filters (with or without a stated interactivity), and the run it comes from."""
    if not f.hardware:
        return pd.DataFrame()
    sql = f"""
    WITH {_base_cte(f)}
    SELECT hardware, simulated, max(y) AS peak,
           arg_max(provenance, y) AS provenance, arg_max(source, y) AS source,
           arg_max(source_url, y) AS source_url, arg_max(run_id, y) AS run_id,
           arg_max(interactivity_unstated, y) AS interactivity_unstated
    FROM base WHERE y IS NOT NULL GROUP BY hardware, simulated ORDER BY hardware, simulated
    """
    return con.execute(sql, f.params()).df()


def coverage(con: duckdb.DuckDBPyConnection, f: Filters) -> pd.DataFrame:
    """Per hardware: runs and points under the filters, and how many points lack the chosen
    percentile or y metric (so the page can say why they are not drawn)."""
    if not f.hardware:
        return pd.DataFrame()
    sql = f"""
    WITH {_base_cte(f, STATISTIC_COLUMNS + ",")}
    SELECT hardware, count(DISTINCT run_id) AS runs, count(*) AS points,
           count(*) FILTER (WHERE x IS NOT NULL AND y IS NOT NULL) AS drawable,
           count(*) FILTER (WHERE x IS NULL AND NOT interactivity_unstated AND NOT simulated)
               AS missing_pct,
           count(*) FILTER (WHERE x IS NULL AND NOT interactivity_unstated AND simulated)
               AS missing_pct_simulated,
           count(*) FILTER (WHERE y IS NULL) AS missing_y,
           {", ".join(f"count(*) FILTER (WHERE y IS NOT NULL AND m_{q} IS NOT NULL) AS n_{q}"
                      for q in ("mean", "p50", "p90", "p99"))}
    FROM base GROUP BY hardware ORDER BY hardware
    """
    return con.execute(sql, f.params()).df()


def export_points(con: duckdb.DuckDBPyConnection, run_ids: list[str] | None = None) -> pd.DataFrame:
    """Runs and points with the canonical column names (the opx CSV format), one row per point."""
    from opx.ingest.opx_csv import POINT_COLUMNS, RUN_COLUMNS
    run_cols = ", ".join(f"r.{c}" for c in RUN_COLUMNS)
    point_cols = ", ".join(f"m.{c}" for c in POINT_COLUMNS)
    sql = (f"SELECT {run_cols}, {point_cols} FROM runs r JOIN point_metrics m ON m.run_id = r.id "
           "WHERE $all OR list_contains($ids, r.id) ORDER BY r.model, r.hardware, r.id, m.seq")
    return con.execute(sql, {"all": run_ids is None, "ids": list(run_ids or [])}).df()


def run_facts(con: duckdb.DuckDBPyConnection, ids: list[str]) -> pd.DataFrame:
    """The configuration and date of each run, for labels and run pickers."""
    return con.execute(
        "SELECT id AS run_id, framework, precision, tp, ep, dp_attention, disaggregated, "
        "gpus_prefill, gpus_decode, gpus_total, mtp, date FROM runs WHERE list_contains($ids, id)",
        {"ids": list(ids)}).df()


def run_detail(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[dict | None, pd.DataFrame]:
    """One run's fields and its points (canonical names, with the interactivity at every
    statistic), or (None, empty) when there is none."""
    from opx.ingest.opx_csv import POINT_COLUMNS
    cur = con.execute("SELECT * EXCLUDE (ingested_at) FROM runs WHERE id = ?", [run_id])
    row = cur.fetchone()
    if row is None:
        return None, pd.DataFrame()
    run = dict(zip([d[0] for d in cur.description], row))
    cols = ", ".join(POINT_COLUMNS)
    points = con.execute(f"SELECT seq, {cols}, interactivity_mean, source FROM point_metrics "
                         "WHERE run_id = ? ORDER BY seq", [run_id]).df()
    return run, points


def runs_overview(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The Data page's table: one row per run with its provenance, source and point count."""
    return con.execute(
        "SELECT r.id, r.hardware, r.model, r.workload, r.framework, r.precision, r.gpus_total, "
        "r.provenance, count(p.seq) AS points, r.date, r.label, r.source, r.notes, r.ingested_at "
        "FROM runs r LEFT JOIN points p ON p.run_id = r.id GROUP BY ALL "
        "ORDER BY r.ingested_at DESC, r.model, r.hardware, r.id").df()


# -- `runs list` / `runs show`: cursors to stream, never whole frames -----------------------------
# The run's canonical fields (the opx CSV's run columns) with its point count after provenance.
RUN_LIST_FIELDS = ("id", "hardware", "model", "framework", "framework_version", "precision",
                   "workload", "isl", "osl", "prefix_hit_rate", "tp", "ep", "dp_attention",
                   "disaggregated", "gpus_prefill", "gpus_decode", "gpus_total", "mtp",
                   "provenance", "points", "source", "source_url", "date", "label", "notes", "meta")
RUN_TEXT_FIELDS = frozenset({"id", "hardware", "model", "framework", "framework_version",
                             "precision", "workload", "provenance", "source", "source_url",
                             "label", "notes", "meta"})


_COUNTS = ("LEFT JOIN (SELECT run_id, count(*) AS points FROM points GROUP BY run_id) c "
           "ON c.run_id = r.id")


def _run_field_expr(name: str) -> str:
    return "coalesce(c.points, 0)" if name == "points" else f"r.{name}"


def _run_field_sql(name: str, limit: int | None) -> str:
    """A run field for output; text cut to `limit` + 1 characters in DuckDB when there is a limit
    (the caller marks the cut), so a 30 MB label never leaves the database for a table cell."""
    if limit is not None and name in RUN_TEXT_FIELDS:
        return f"left(CAST(r.{name} AS VARCHAR), {int(limit) + 1}) AS {name}"
    return f"{_run_field_expr(name)} AS {name}"


def run_field_widths(con: duckdb.DuckDBPyConnection, f: RunFilters, fields: tuple[str, ...]
                     ) -> tuple[int, dict[str, int]]:
    """How many runs are under the filters, and the longest value (in characters, as text) of
    each field among them: what a table needs before it streams the rows."""
    if set(fields) - set(RUN_LIST_FIELDS):
        raise ValueError(sorted(set(fields) - set(RUN_LIST_FIELDS)))
    cols = ", ".join(f"coalesce(max(length(CAST({_run_field_expr(n)} AS VARCHAR))), 0)"
                     for n in fields)
    row = con.execute(f"SELECT count(*), {cols} FROM runs r {_COUNTS} WHERE {RunFilters.WHERE}",
                      f.params()).fetchone()
    return row[0], dict(zip(fields, row[1:]))


# Keyset paging in the listing's order: the runs after run $after (newest import first, then
# model, hardware and id, which are unique together).
_AFTER = ("(r.ingested_at < k.ingested_at OR (r.ingested_at = k.ingested_at AND "
          "(r.model > k.model OR (r.model = k.model AND (r.hardware > k.hardware OR "
          "(r.hardware = k.hardware AND r.id > k.id))))))")


def runs_listing(con: duckdb.DuckDBPyConnection, f: RunFilters,
                 fields: tuple[str, ...] = RUN_LIST_FIELDS,
                 text_limits: dict[str, int] | None = None, limit: int | None = None,
                 after: str | None = None) -> duckdb.DuckDBPyConnection:
    """The runs under the filters, newest import first (as `runs_overview`), as an open cursor:
    read it with fetchmany so any number of runs streams in bounded memory. `text_limits` cuts
    text fields in DuckDB to their limit + 1 characters (the caller marks the cut). `limit` and
    `after` (a run id: the last of the previous page) page through it."""
    if set(fields) - set(RUN_LIST_FIELDS):
        raise ValueError(sorted(set(fields) - set(RUN_LIST_FIELDS)))
    limits = text_limits or {}
    cols = ", ".join(_run_field_sql(n, limits.get(n)) for n in fields)
    params = f.params()
    join, where = "", RunFilters.WHERE
    if after is not None:
        join = "CROSS JOIN (SELECT ingested_at, model, hardware, id FROM runs WHERE id = $after) k "
        where = f"{where} AND {_AFTER}"
        params["after"] = after
    sql = (f"SELECT {cols} FROM runs r {_COUNTS} {join}WHERE {where} "
           "ORDER BY r.ingested_at DESC, r.model, r.hardware, r.id"
           + (f" LIMIT {int(limit)}" if limit is not None else ""))
    return con.execute(sql, params)


def coverage_overview(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per model, workload and hardware: runs and points by provenance, and for the data's
    (non-simulated) points how many state each interactivity statistic and the span they cover."""
    stats = ("mean", "p50", "p90", "p99")
    # a point is drawn (and so answers at a target) when it has a throughput too
    drawn = "r.provenance <> 'simulated' AND m.throughput_total_per_gpu IS NOT NULL"
    per_stat = ", ".join(
        f"count(m.interactivity_{q}) FILTER (WHERE {drawn}) AS n_{q}, "
        f"min(m.interactivity_{q}) FILTER (WHERE {drawn}) AS lo_{q}, "
        f"max(m.interactivity_{q}) FILTER (WHERE {drawn}) AS hi_{q}"
        for q in stats)
    return con.execute(f"""
        SELECT r.model, r.workload, r.hardware, r.provenance, count(DISTINCT r.id) AS runs,
               count(*) AS points, {per_stat}
        FROM runs r JOIN point_metrics m ON m.run_id = r.id
        GROUP BY ALL ORDER BY r.model, r.workload, r.hardware, r.provenance""").df()


def overview_slices(con: duckdb.DuckDBPyConnection, f: RunFilters, pct: str, y: str
                    ) -> pd.DataFrame:
    """Per model, workload and hardware under the run filters: how many data (non-simulated)
    points state both the interactivity at `pct` and throughput `y`, ordered. The Overview's
    rows are the slices where two hardware or more have any."""
    x_col = metrics.interactivity(pct).column
    y_col = metrics.y_metric(y).column
    return con.execute(f"""
        SELECT r.model, r.workload, r.hardware, count(*) AS points
        FROM point_metrics m JOIN runs r ON r.id = m.run_id
        WHERE {RunFilters.WHERE} AND r.provenance <> 'simulated'
          AND m.{x_col} IS NOT NULL AND m.{y_col} IS NOT NULL
        GROUP BY ALL ORDER BY r.model, r.workload, r.hardware""", f.params()).df()


def slice_prints(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Per model and workload, a fingerprint of its runs and points (a run or a point added or
    removed changes it): an Overview's row of an unchanged slice is kept, not made again."""
    rows = con.execute("""
        SELECT r.model, r.workload, count(*), bit_xor(hash(r.id, p.point_key))
        FROM runs r LEFT JOIN points p ON p.run_id = r.id GROUP BY ALL""").fetchall()
    return {f"{m}\x1f{w}": f"{n}:{h}" for m, w, n, h in rows}


def overview_evidence(con: duckdb.DuckDBPyConnection, f: RunFilters, pct: str, y: str,
                      slices: list[tuple[str, str, str]]) -> pd.DataFrame:
    """Per provenance and source, the runs and points with both axes under the run filters, of
    the (model, workload, hardware) `slices` an overview shows: its provenance and sources."""
    x_col = metrics.interactivity(pct).column
    y_col = metrics.y_metric(y).column
    keys = sorted({"\x1f".join(s) for s in slices})
    return con.execute(f"""
        SELECT r.provenance, r.source, count(DISTINCT r.id) AS runs, count(*) AS points
        FROM point_metrics m JOIN runs r ON r.id = m.run_id
        WHERE {RunFilters.WHERE} AND m.{x_col} IS NOT NULL AND m.{y_col} IS NOT NULL
          AND list_contains($slices, r.model || chr(31) || r.workload || chr(31) || r.hardware)
        GROUP BY ALL ORDER BY r.provenance, r.source""", f.params() | {"slices": keys}).df()


def filter_choices(con: duckdb.DuckDBPyConnection, model: str | None = None,
                   workload: str | None = None, hardware: tuple[str, ...] = ()) -> dict[str, list]:
    """What the run filters can pick from: the frameworks and precisions (lower case, as the
    filters compare them) and GPU counts of the stored runs of this slice (a model, a workload,
    the hardware shown; all runs where one is not given), so a list offers what the view has."""
    out: dict[str, list] = {}
    where = ("($model IS NULL OR model = $model) AND ($workload IS NULL OR workload = $workload) "
             "AND (len($hw) = 0 OR list_contains($hw, hardware))")
    params = {"model": model, "workload": workload, "hw": list(hardware)}
    for name, expr in (("framework", "lower(framework)"), ("precision", "lower(precision)"),
                       ("gpus", "gpus_total")):
        out[name] = [r[0] for r in con.execute(
            f"SELECT DISTINCT {expr} FROM runs WHERE {where} AND {expr} IS NOT NULL AND "
            f"CAST({expr} AS VARCHAR) <> '' ORDER BY 1", params).fetchall()]
    return out


def run_frameworks(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The frameworks the stored runs name (as stored)."""
    return [r[0] for r in con.execute("SELECT DISTINCT framework FROM runs ORDER BY 1").fetchall()]


def run_fields(con: duckdb.DuckDBPyConnection, run_id: str, text_limit: int | None = None
               ) -> dict | None:
    """One run's canonical fields and point count (text cut as in `runs_listing`), or None."""
    cols = ", ".join(_run_field_sql(n, text_limit) for n in RUN_LIST_FIELDS)
    cur = con.execute(f"SELECT {cols} FROM runs r "
                      "LEFT JOIN (SELECT run_id, count(*) AS points FROM points "
                      "WHERE run_id = $id GROUP BY run_id) c ON c.run_id = r.id "
                      "WHERE r.id = $id", {"id": run_id})
    row = cur.fetchone()
    return None if row is None else dict(zip(RUN_LIST_FIELDS, row))


def run_point_columns() -> tuple[str, ...]:
    """A point's canonical fields, as `run_detail` gives them."""
    from opx.ingest.opx_csv import POINT_COLUMNS
    return ("seq", *POINT_COLUMNS, "source")


def run_points_present(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[str, ...]:
    """The point fields that at least one of the run's points states (not null, not empty)."""
    cols = run_point_columns()
    counts = ", ".join(f"count(nullif(CAST({c} AS VARCHAR), ''))" for c in cols)
    row = con.execute(f"SELECT {counts} FROM point_metrics WHERE run_id = ?", [run_id]).fetchone()
    return tuple(c for c, n in zip(cols, row) if n)


def run_points(con: duckdb.DuckDBPyConnection, run_id: str, fields: tuple[str, ...] | None = None,
               text_limit: int | None = None) -> duckdb.DuckDBPyConnection:
    """One run's points (canonical names, in order) as an open cursor to read with fetchmany."""
    every = run_point_columns()
    fields = fields or every
    if set(fields) - set(every):
        raise ValueError(sorted(set(fields) - set(every)))
    cols = ", ".join(f"left({c}, {int(text_limit) + 1}) AS {c}"
                     if text_limit is not None and c in ("note", "source") else c for c in fields)
    return con.execute(f"SELECT {cols} FROM point_metrics WHERE run_id = ? ORDER BY seq", [run_id])


def latency_points(con: duckdb.DuckDBPyConnection, f: Filters, run_ids: list[str] | None = None,
                   max_rows: int = 5000) -> pd.DataFrame:
    """Latency against concurrency: every point of the matching runs that has a concurrency,
    with TTFT, TPOT and E2E at the filters' percentile, interactivity and throughput per GPU."""
    if not f.hardware:
        return pd.DataFrame()
    p = f.pct
    sql = f"""
    SELECT r.id AS run_id, r.hardware, r.label, r.provenance, r.framework, r.precision,
           r.gpus_total, r.source, r.meta, m.seq, m.concurrency,
           m.ttft_{p}_s AS ttft_s, m.tpot_{p}_s AS tpot_s, m.e2e_{p}_s AS e2e_s,
           m.interactivity_{p} AS interactivity, m.throughput_total_per_gpu AS tput,
           m.note
    FROM point_metrics m JOIN runs r ON r.id = m.run_id
    WHERE {RunFilters.WHERE}
      AND (len($runs) = 0 OR list_contains($runs, r.id))
      AND m.concurrency IS NOT NULL
      AND (m.ttft_{p}_s IS NOT NULL OR m.tpot_{p}_s IS NOT NULL OR m.e2e_{p}_s IS NOT NULL)
    ORDER BY r.hardware, r.id, m.concurrency
    LIMIT $limit
    """
    return con.execute(sql, f.params() | {"runs": list(run_ids or []), "limit": max_rows}).df()


def kv_pool_percentiles(con: duckdb.DuckDBPyConnection, f: Filters) -> list[str]:
    """The statistics at which the matching runs that say whether they used a KV-cache pool
    (run metadata `kv_pool`) report a TTFT, so a page at another one can point to them."""
    if not f.hardware:
        return []
    stated = ", ".join(f"bool_or(m.ttft_{p}_s IS NOT NULL)" for p in PERCENTILES)
    row = con.execute(f"""
        SELECT {stated} FROM point_metrics m JOIN runs r ON r.id = m.run_id
        WHERE {RunFilters.WHERE} AND r.meta LIKE '%"kv_pool"%'""", f.params()).fetchone()
    return [p for p, hit in zip(PERCENTILES, row or ()) if hit]


def latency_percentiles(con: duckdb.DuckDBPyConnection, f: Filters) -> list[str]:
    """The statistics at which the matching runs report a latency with a concurrency (what the
    Latency page draws), so a page at another one can point to them."""
    if not f.hardware:
        return []
    stated = ", ".join(f"bool_or(m.ttft_{p}_s IS NOT NULL OR m.tpot_{p}_s IS NOT NULL "
                       f"OR m.e2e_{p}_s IS NOT NULL)" for p in PERCENTILES)
    row = con.execute(f"""
        SELECT {stated} FROM point_metrics m JOIN runs r ON r.id = m.run_id
        WHERE {RunFilters.WHERE} AND m.concurrency IS NOT NULL""", f.params()).fetchone()
    return [p for p, hit in zip(PERCENTILES, row or ()) if hit]


def points_near_concurrency(con: duckdb.DuckDBPyConnection, f: Filters, conc: float,
                            tolerance: float = 1.25) -> pd.DataFrame:
    """Each run's drawable point nearest a concurrency (within a factor `tolerance`), to mark an
    operating point on any chart."""
    if not f.hardware:
        return pd.DataFrame()
    sql = f"""
    WITH {_base_cte(f)}
    SELECT * FROM base
    WHERE x IS NOT NULL AND y IS NOT NULL AND concurrency IS NOT NULL
      AND concurrency BETWEEN $conc / $tol AND $conc * $tol
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY abs(ln(concurrency / $conc))) = 1
    """
    return con.execute(sql, f.params() | {"conc": float(conc), "tol": float(tolerance)}).df()


def dated_run_frontiers(con: duckdb.DuckDBPyConnection, f: Filters) -> pd.DataFrame:
    """Each dated run's own frontier points (for value-over-time charts): the frontier is taken
    in DuckDB, so only a few points per run come back however many are stored."""
    if not f.hardware:
        return pd.DataFrame()
    sql = f"""
    WITH {_base_cte(f)},
    dated AS (SELECT * FROM base WHERE date IS NOT NULL AND x IS NOT NULL AND y IS NOT NULL)
    SELECT * FROM (SELECT *, {frontier_flag_sql('run_id', tiebreak='seq')} AS on_run_frontier
                   FROM dated)
    WHERE on_run_frontier ORDER BY hardware, run_id, x
    """
    return con.execute(sql, f.params()).df()



ANCHOR_COLUMNS = ("run_id", "hardware", "model", "workload", "provenance", "label", "concurrency",
                  "interactivity_p50", "interactivity_mean", "interactivity_p90",
                  "throughput_total_per_gpu", "meta", "disaggregated")


def anchor_points(con: duckdb.DuckDBPyConnection, f: Filters | None = None,
                  run_ids: list[str] | None = None, fitting: str | None = None) -> pd.DataFrame:
    """Points that can anchor a simulated projection (opx/simulate/anchor.py): every point of the
    given runs, or the non-simulated points under the filters (model, workload, hardware,
    provenance; every statistic), with the P50, mean and P90 interactivity and the total throughput
    per GPU. Simulated runs' rows carry `meta` (their parameters), the others do not need it.

    `fitting` (a statistic the fit prefers): only the points `anchors_from_points(..., prefer=
    fitting)` would fit, chosen by its rules in DuckDB (per hardware: the frontier of the points
    at each anchoring statistic, the highest peak, the fastest single session), so a view's fit
    reads a few rows however many points are stored."""
    if fitting is not None and run_ids is None:
        return _fitted_anchor_points(con, f, fitting)
    sel = ("r.id AS run_id, r.hardware, r.model, r.workload, r.provenance, r.label, m.concurrency, "
           "m.interactivity_p50, m.interactivity_mean, m.interactivity_p90, "
           "m.throughput_total_per_gpu, "
           "CAST(r.meta AS VARCHAR) AS meta, r.disaggregated")
    if run_ids is not None:
        sql = (f"SELECT {sel} FROM point_metrics m JOIN runs r ON r.id = m.run_id "
               "WHERE list_contains($ids, r.id) ORDER BY r.id, m.seq")
        return con.execute(sql, {"ids": list(run_ids)}).df()
    if f is None or not f.hardware:
        return pd.DataFrame(columns=list(ANCHOR_COLUMNS))
    sql = (f"SELECT {sel} FROM point_metrics m JOIN runs r ON r.id = m.run_id "
           f"WHERE {RunFilters.WHERE} AND r.provenance <> 'simulated' "
           "ORDER BY r.hardware, r.id, m.seq")
    return con.execute(sql, f.params()).df()


def _fitted_anchor_points(con: duckdb.DuckDBPyConnection, f: Filters | None,
                          prefer: str) -> pd.DataFrame:
    from opx.simulate.anchor import ANCHOR_PCTS
    if f is None or not f.hardware:
        return pd.DataFrame(columns=list(ANCHOR_COLUMNS))
    order = list(dict.fromkeys(([prefer] if prefer in ANCHOR_PCTS else []) + list(ANCHOR_PCTS)))

    def usable(col: str) -> str:
        return f"({col} IS NOT NULL AND isfinite({col}) AND {col} > 0)"
    pct_case = " ".join(f"WHEN {usable(f'interactivity_{p}')} THEN '{p}'" for p in order)
    x_case = " ".join(f"WHEN '{p}' THEN interactivity_{p}" for p in order)
    sql = f"""
    WITH pts AS (
        SELECT r.id AS run_id, m.seq, r.hardware, r.model, r.workload, r.provenance, r.label,
               m.concurrency, m.interactivity_p50, m.interactivity_mean, m.interactivity_p90,
               m.throughput_total_per_gpu, CAST(NULL AS VARCHAR) AS meta, r.disaggregated,
               CASE {pct_case} END AS apct,
               {usable("m.throughput_total_per_gpu")} AS has_y
        FROM point_metrics m JOIN runs r ON r.id = m.run_id
        WHERE {RunFilters.WHERE} AND r.provenance <> 'simulated'
    ),
    xy AS (SELECT *, CASE apct {x_case} END AS ax, throughput_total_per_gpu AS ay FROM pts),
    point_anchors AS (
        SELECT * FROM xy WHERE has_y AND apct IS NOT NULL
        QUALIFY {frontier_flag_sql('hardware, apct', x='ax', y='ay', tiebreak='run_id, seq')}
    ),
    peak AS (
        SELECT * FROM xy WHERE has_y AND apct IS NULL
        QUALIFY row_number() OVER (PARTITION BY hardware ORDER BY ay DESC, run_id, seq) = 1
    ),
    single AS (
        SELECT * FROM xy WHERE NOT has_y AND apct IS NOT NULL
          AND (concurrency IS NULL OR NOT isfinite(concurrency) OR concurrency <= 1)
        QUALIFY row_number() OVER (PARTITION BY hardware ORDER BY ax DESC, run_id, seq) = 1
    )
    SELECT {", ".join(ANCHOR_COLUMNS)} FROM (
        SELECT * FROM point_anchors UNION ALL SELECT * FROM peak UNION ALL SELECT * FROM single)
    ORDER BY hardware, run_id, seq
    """
    return con.execute(sql, f.params()).df()


def fit_groups(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    """(hardware, model, workload) of every system with a simulated run that records its
    parameters and a non-simulated run to anchor it (the systems `opx.answers.precompute` fits)."""
    return [tuple(r) for r in con.execute("""
        SELECT DISTINCT s.hardware, s.model, s.workload FROM runs s
        WHERE s.provenance = 'simulated'
          AND json_extract_string(s.meta, '$.parameters') IS NOT NULL
          AND EXISTS (SELECT 1 FROM runs d WHERE d.provenance <> 'simulated'
                      AND d.hardware = s.hardware AND d.model = s.model
                      AND d.workload = s.workload)
        ORDER BY 1, 2, 3""").fetchall()]


def simulated_parameters(con: duckdb.DuckDBPyConnection, f: Filters) -> pd.DataFrame:
    """Per hardware under the filters, the stored parameters of one simulated run (the built-in
    envelopes' knobs and GPU budget), so an anchored projection can be recomputed."""
    if not f.hardware:
        return pd.DataFrame(columns=["hardware", "meta"])
    sql = ("SELECT r.hardware, arg_min(CAST(r.meta AS VARCHAR), r.id) AS meta FROM runs r "
           f"WHERE {RunFilters.WHERE} AND r.provenance = 'simulated' "
           "GROUP BY r.hardware ORDER BY r.hardware")
    return con.execute(sql, f.params()).df()


# -- a view's filters ----------------------------------------------------------------------------

def filters_for(state: ViewState) -> Filters:
    """The query filters of a view: its model, workload, hardware, statistic, metric, sources and
    run filters."""
    metric = metrics.y_metric(state.y)
    return Filters(model=state.model, workload=state.workload, hardware=state.hw,
                   pct=state.pct, y=metric.base or state.y, sources=state.source,
                   runs=run_filters_for(state))


def run_filters_for(state: ViewState) -> RunFilters:
    """The view's run filters (framework, precision, serving mode, GPUs, MTP, dates)."""
    return RunFilters(**{name: getattr(state, name) for name in RUN_FILTER_FIELDS})
