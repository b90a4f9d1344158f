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
