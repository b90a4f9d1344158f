"""Repeat sets: the runs of one configuration at one load level, counted as one configuration.

A configuration is the run's hardware, model, workload, framework and version, precision,
parallelism (TP, EP, attention DP, aggregated or disaggregated with its prefill and decode
GPUs), GPU count and MTP, with the point's concurrency (`CONFIGURATION`). The points of one
configuration, from several runs (the same benchmark on several days) or twice in one run, form
a repeat set: its figure is the median of its points' coordinates, its spread the minimum to the
maximum of their throughput, with their count. The envelopes are taken over configurations, so
the best of several noisy runs is not what gets reported (docs/metrics.md, "Repeated runs").

A point without a concurrency, and every simulated point (a model gives one answer per
configuration), is a configuration of its own. Only `opx.store` reads this module: the view
queries (`queries`) and the stored envelopes (`envelopes`) collapse their points with
`configurations_sql`, so both paths give the same rows.
"""
from __future__ import annotations

# The run's fields that make its configuration, with the point's concurrency.
CONFIGURATION = ("hardware", "model", "workload", "framework", "framework_version", "precision",
                 "tp", "ep", "dp_attention", "disaggregated", "gpus_prefill", "gpus_decode",
                 "gpus_total", "mtp")


def config_sql(run: str = "r") -> str:
    """SQL: the hash of a run's configuration, without the load level."""
    return f"hash({', '.join(f'{run}.{c}' for c in CONFIGURATION)})"


def key_sql(run: str = "r", point: str = "m") -> str:
    """SQL: the repeat set's key of a point (`point`) of a run (`run`): its configuration's hash,
    or the point's own where it cannot repeat."""
    fields = ", ".join(f"{run}.{c}" for c in CONFIGURATION)
    return (f"CASE WHEN {run}.provenance = 'simulated' OR {point}.concurrency IS NULL "
            f"THEN hash('point', {point}.run_id, {point}.seq) "
            f"ELSE hash({fields}, {point}.concurrency) END")


def configurations_sql(source: str, medians: tuple[str, ...] = ("x", "y", "ttft")) -> str:
    """SQL: the rows of `source` (a relation with `repeat_key`, `run_id`, `seq`, `x` and `y`,
    both set) one per configuration. A repeat set's row is its member nearest the median
    throughput (it names the configuration), with `medians` replaced by the set's medians; every
    row gains `y_lo`, `y_hi` (the set's least and most throughput; a lone point's own) and
    `repeat_runs` (its count). Lone points pass through without being grouped."""
    meds = ", ".join(f"median({c}) AS med_{c}" for c in medians)
    replace = ", ".join(f"s.med_{c} AS {c}" for c in medians)
    return f"""(
    WITH counted AS (SELECT repeat_key FROM {source} GROUP BY repeat_key HAVING count(*) > 1),
    sets AS (
        SELECT repeat_key, {meds}, min(y) AS set_lo, max(y) AS set_hi, count(*) AS set_n
        FROM {source} SEMI JOIN counted USING (repeat_key) GROUP BY repeat_key)
    SELECT k.* REPLACE ({replace}), s.set_lo AS y_lo, s.set_hi AS y_hi,
           s.set_n AS repeat_runs
    FROM {source} k JOIN sets s USING (repeat_key)
    QUALIFY row_number() OVER (PARTITION BY k.repeat_key
                               ORDER BY abs(k.y - s.med_y), k.run_id, k.seq) = 1
    UNION ALL BY NAME
    SELECT k.*, k.y AS y_lo, k.y AS y_hi, 1 AS repeat_runs
    FROM {source} k ANTI JOIN counted c USING (repeat_key)
    )"""


def spread_summary(con) -> dict:
    """How far the runs of one configuration lie from their set's median, over the repeat sets of
    measured data (not simulated) in the store whose runs differ (a row copied into two source
    files is one measurement, counted apart): the mean and the 90th percentile of the absolute
    percentage deviation of TTFT and TPOT (means, as the simulator's validation scores them). No
    model giving one figure per configuration can score under it."""
    row = con.execute(f"""
        WITH pts AS (
            SELECT {key_sql()} AS repeat_key, m.ttft_mean_s AS ttft, m.tpot_mean_s AS tpot
            FROM point_metrics m JOIN runs r ON r.id = m.run_id
            WHERE r.provenance <> 'simulated' AND m.concurrency IS NOT NULL
              AND m.ttft_mean_s > 0 AND m.tpot_mean_s > 0),
        sets AS (SELECT repeat_key, median(ttft) AS mt, median(tpot) AS mp,
                        (min(ttft) = max(ttft) AND min(tpot) = max(tpot)) AS copies
                 FROM pts GROUP BY repeat_key HAVING count(*) > 1)
        SELECT count(DISTINCT s.repeat_key) FILTER (WHERE NOT copies),
               count(DISTINCT s.repeat_key) FILTER (WHERE copies),
               count(*) FILTER (WHERE NOT copies),
               avg(abs(p.ttft / s.mt - 1)) FILTER (WHERE NOT copies) * 100,
               avg(abs(p.tpot / s.mp - 1)) FILTER (WHERE NOT copies) * 100,
               quantile_cont(abs(p.ttft / s.mt - 1), 0.9) FILTER (WHERE NOT copies) * 100,
               quantile_cont(abs(p.tpot / s.mp - 1), 0.9) FILTER (WHERE NOT copies) * 100
        FROM pts p JOIN sets s USING (repeat_key)""").fetchone()
    sets, copies, points, ttft, tpot, ttft90, tpot90 = row

    def pct(v):
        return None if v is None else float(v)
    return {"repeat_sets": int(sets or 0), "copies": int(copies or 0), "points": int(points or 0),
            "ttft_pct": pct(ttft), "tpot_pct": pct(tpot), "ttft_p90_pct": pct(ttft90),
            "tpot_p90_pct": pct(tpot90)}


def spread_key(version: int) -> str:
    """The key of the spread stored for this data version (`store.data_version`) and this
    module's code."""
    import hashlib
    from pathlib import Path
    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return f"repeat_spread:{version}:{code}"


def stored_spread(con, version: int) -> dict:
    """`spread_summary` as stored when the data changed (`opx.answers.precompute.refresh`), or
    made now where none is stored (a Parquet dataset, a store written by an older build)."""
    from opx.store import stored_documents
    return stored_documents.load(con, spread_key(version)) or spread_summary(con)


def spread_text(summary: dict) -> str:
    """The spread of repeated runs in a sentence, beside a model's error."""
    if not summary["repeat_sets"]:
        return "no configuration in this database was measured twice with different results"
    return (f"runs of one configuration lie {summary['ttft_pct']:.1f}% (TTFT) and "
            f"{summary['tpot_pct']:.1f}% (TPOT) from their repeat set's median (mean; 90th "
            f"percentile {summary['ttft_p90_pct']:.1f}% and {summary['tpot_p90_pct']:.1f}%; "
            f"{summary['points']:,} points in {summary['repeat_sets']:,} repeat sets, "
            f"{summary['copies']:,} more that are copies of one row left out): the floor no "
            "model of one figure per configuration goes under")
