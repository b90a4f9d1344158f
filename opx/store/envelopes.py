"""Stored envelopes: each hardware's frontier over all its runs of one model and workload, for
every statistic and throughput kind, kept in the `envelope_points` table as the data changes, so
a view without run filters reads its envelope instead of sorting every stored point.

The table holds (hardware, model, workload, simulated, pct, ybase, run_id, seq) of each point on
the envelope, by the rule `opx.curves.frontier.frontier_flag_sql` states (the one the view queries use,
ties broken by run id and sequence). It is maintained inside the store's write transactions:

- adding points: the frontier of a union is the frontier of the old frontier and the new points,
  so only the touched groups' stored envelope rows and the new points are sorted;
- deleting a run: its groups are rebuilt from their points.

Only `opx.store` (and the migration that creates the table) calls the writers here; the view
queries read the table through `queries.chart_points`. No Streamlit.
"""
from __future__ import annotations

import duckdb

from models import PERCENTILES
from opx.store import journal, repeats
from opx.curves import metrics
from opx.curves.frontier import frontier_flag_sql

YBASES = ("total", "output", "input")          # the throughput kinds a y metric is based on
GROUP = ("hardware", "model", "workload")


def _flagged_sql(candidates: str | None) -> str:
    """The rows of the envelope of `candidates` (a relation of run_id, seq; None: every stored
    point) for every statistic and throughput kind: every point of each configuration on it (a
    repeat set counts once, at its medians: opx/store/repeats.py)."""
    among = (f"SEMI JOIN {candidates} c ON c.run_id = m.run_id AND c.seq = m.seq"
             if candidates else "")
    parts = []
    for pct in PERCENTILES:
        x = metrics.interactivity(pct).column
        for yb in YBASES:
            y = metrics.y_metric(yb).column
            parts.append(f"""
            SELECT * FROM (
            WITH pts AS (
                SELECT r.hardware, r.model, r.workload, (r.provenance = 'simulated') AS simulated,
                       m.run_id, m.seq, m.{x} AS x, m.{y} AS y,
                       {repeats.key_sql()} AS repeat_key
                FROM point_metrics m JOIN runs r ON r.id = m.run_id
                {among}
                WHERE m.{x} IS NOT NULL AND m.{y} IS NOT NULL),
            on_envelope AS (
                SELECT repeat_key FROM {repeats.configurations_sql('pts', medians=('x', 'y'))}
                QUALIFY {frontier_flag_sql('hardware, model, workload, simulated')})
            SELECT hardware, model, workload, simulated, '{pct}' AS pct, '{yb}' AS ybase,
                   run_id, seq
            FROM pts SEMI JOIN on_envelope USING (repeat_key))""")
    return " UNION ALL ".join(parts)


def add_points(con: duckdb.DuckDBPyConnection, new_points: str) -> None:
    """Fold newly inserted points (`new_points`: a relation with run_id and seq, already in
    `points`) into the stored envelopes of their groups. Call inside the write's transaction.

    The envelope of a union is the envelope of the old envelope and the new points, as long as
    no new point joins a repeat set stored before (that moves the set's medians, and may bring a
    configuration the old envelope left out back onto it): such a group is rebuilt whole."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE envelope_groups AS
        SELECT DISTINCT r.hardware, r.model, r.workload FROM {new_points} n
        JOIN runs r ON r.id = n.run_id""")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE envelope_regroup AS
        WITH new_keys AS (
            SELECT DISTINCT {repeats.key_sql()} AS repeat_key FROM {new_points} n
            JOIN points m ON m.run_id = n.run_id AND m.seq = n.seq JOIN runs r ON r.id = m.run_id
            WHERE r.provenance <> 'simulated' AND m.concurrency IS NOT NULL),
        -- the stored runs of a new point's configuration: the runs table, not every point, is read
        same_runs AS (
            SELECT r.id FROM runs r WHERE {repeats.config_sql()} IN (
                SELECT DISTINCT {repeats.config_sql()} FROM {new_points} n
                JOIN runs r ON r.id = n.run_id))
        SELECT DISTINCT r.hardware, r.model, r.workload
        FROM points m SEMI JOIN same_runs s ON s.id = m.run_id
        JOIN runs r ON r.id = m.run_id
        ANTI JOIN {new_points} n ON n.run_id = m.run_id AND n.seq = m.seq
        WHERE {repeats.key_sql()} IN (SELECT repeat_key FROM new_keys)""")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE envelope_candidates AS
        SELECT e.run_id, e.seq FROM envelope_points e SEMI JOIN envelope_groups g
            USING (hardware, model, workload)
        UNION SELECT run_id, seq FROM {new_points}
        UNION SELECT p.run_id, p.seq FROM points p JOIN runs r ON r.id = p.run_id
            SEMI JOIN envelope_regroup g USING (hardware, model, workload)""")
    con.execute("DROP TABLE envelope_regroup")
    _replace_groups(con)


def rebuild_groups(con: duckdb.DuckDBPyConnection, groups: list[tuple[str, str, str]]) -> None:
    """Recompute the stored envelopes of these (hardware, model, workload) groups from all their
    points (after a delete). Call inside the write's transaction."""
    con.execute("CREATE OR REPLACE TEMP TABLE envelope_groups (hardware VARCHAR, model VARCHAR, "
                "workload VARCHAR)")
    if groups:
        con.executemany("INSERT INTO envelope_groups VALUES (?, ?, ?)", [list(g) for g in groups])
    con.execute("""
        CREATE OR REPLACE TEMP TABLE envelope_candidates AS
        SELECT p.run_id, p.seq FROM points p JOIN runs r ON r.id = p.run_id
        SEMI JOIN envelope_groups g USING (hardware, model, workload)""")
    _replace_groups(con)


def rebuild_all(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute every stored envelope (the migration that creates the table, bulk loaders)."""
    con.execute("SET enable_progress_bar = false")
    con.execute("DELETE FROM envelope_points")
    con.execute(f"INSERT INTO envelope_points {_flagged_sql(None)}")


def _replace_groups(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET enable_progress_bar = false")     # opx says what it does itself
    if journal.recording(con):
        journal.replaced(con, "envelope_points",
                         con.execute("SELECT * FROM envelope_groups").fetchall())
    con.execute("DELETE FROM envelope_points e WHERE (e.hardware, e.model, e.workload) IN "
                "(SELECT (hardware, model, workload) FROM envelope_groups)")
    con.execute(f"INSERT INTO envelope_points {_flagged_sql('envelope_candidates')}")
    con.execute("DROP TABLE envelope_candidates")
    con.execute("DROP TABLE envelope_groups")


def groups_to_rebuild(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple[str, str, str]]:
    """The groups whose envelopes change when this run is deleted: its own, if any of its points
    is on one of them, or is in a repeat set (taking a point out moves the set's medians, which
    may bring it onto the envelope); any other run leaves every envelope as it is."""
    return [tuple(r) for r in con.execute(f"""
        SELECT DISTINCT hardware, model, workload FROM envelope_points WHERE run_id = $id
        UNION
        SELECT r.hardware, r.model, r.workload FROM runs r
        WHERE r.id = $id AND r.provenance <> 'simulated' AND (
            EXISTS (SELECT 1 FROM runs o WHERE o.id <> r.id
                    AND {repeats.config_sql('o')} = {repeats.config_sql('r')})
            OR EXISTS (SELECT 1 FROM points p WHERE p.run_id = r.id AND p.concurrency IS NOT NULL
                       GROUP BY p.concurrency HAVING count(*) > 1))""",
        {"id": run_id}).fetchall()]


def stored(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this connection has stored envelopes (a Parquet dataset has none: its views
    compute them)."""
    return bool(con.execute("SELECT count(*) FROM information_schema.tables "
                            "WHERE table_name = 'envelope_points'").fetchone()[0])
