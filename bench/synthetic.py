"""A synthetic database of any size: the built-in data (as `db init` loads it, simulated envelopes
included) plus `points` synthetic measured points, written straight into the DuckDB file, then
what depends on the data made as after an import (the stored envelopes and anchored fits).

    .venv/bin/python bench/synthetic.py OUT.duckdb POINTS [--undated]

The synthetic runs are in the Explorer's default view (DeepSeek-V4.1-Flash on AgentX, on Vera Rubin
NVL72 and GB300 NVL72), so every stored point passes the default filters and the page's queries
work over all of them: the worst case for a given size. Each run is one concurrency sweep
(`POINTS_PER_RUN` points) whose throughput rises and interactivity falls with concurrency, scaled
by the run's own factors, so the envelope is made of a few runs' best points as in real data.
Runs are dated over a year, as imported vLLM results are (`--undated`: no dates).

`opx.store.write_runs` validates and hashes every point (about 10k points/s here); this writes
the same rows through DuckDB in bulk (about a million points in seconds). The rows keep the
schema's meaning: ids and point keys are unique, throughputs are system totals, times seconds.
"""
from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from opx import store  # noqa: E402

from opx.store import envelopes

from opx.answers import precompute
from opx.ingest.builtin import builtin_runs  # noqa: E402
from opx.simulate.builtin import builtin_simulations  # noqa: E402

MODEL, WORKLOAD = "deepseek-v4.1-flash", "agentx"
HARDWARE = {"vr-nvl72": (72, 1.0), "gb300-nvl72": (72, 0.35)}   # slug: (GPUs, speed factor)
POINTS_PER_RUN = 20
CONCURRENCIES = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
                          1024, 1536, 2048], dtype=float)[:POINTS_PER_RUN]


def _ids(prefix: str, n: int) -> list[str]:
    """n distinct 16-hex ids (like the store's content hashes), stable for a prefix."""
    return [hashlib.sha256(f"{prefix}{i}".encode()).hexdigest()[:16] for i in range(n)]


def frames(points: int, seed: int = 0, dated: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, points) rows for `points` synthetic points (runs dated over a year, or undated)."""
    rng = np.random.default_rng(seed)
    n_runs = max(1, -(-points // POINTS_PER_RUN))
    hw_slugs = list(HARDWARE)
    run_hw = [hw_slugs[i % len(hw_slugs)] for i in range(n_runs)]
    gpus = np.array([HARDWARE[h][0] for h in run_hw])
    speed = np.array([HARDWARE[h][1] for h in run_hw]) * rng.lognormal(0.0, 0.25, n_runs)
    run_ids = _ids("bench-run-", n_runs)
    tp = rng.choice([1, 2, 4, 8], n_runs)
    # vLLM result files carry their date, so imported runs have one: spread over a year.
    dates = pd.Timestamp("2025-06-01") + pd.to_timedelta(rng.integers(0, 365, n_runs), unit="D")
    runs = pd.DataFrame({
        "id": run_ids, "hardware": run_hw, "model": MODEL, "framework": "vllm",
        "framework_version": "0.11.0", "precision": "fp4", "workload": WORKLOAD,
        "isl": 85000, "osl": 345, "prefix_hit_rate": 0.96, "tp": tp, "ep": gpus // tp,
        "dp_attention": rng.random(n_runs) < 0.5, "disaggregated": False,
        "gpus_prefill": pd.array([None] * n_runs, dtype="Int64"),
        "gpus_decode": pd.array([None] * n_runs, dtype="Int64"),
        "gpus_total": gpus, "mtp": rng.random(n_runs) < 0.5, "provenance": "measured",
        "source": [f"bench-{i}.json (sha256 {rid})" for i, rid in enumerate(run_ids)],
        "source_url": "", "date": dates if dated else pd.NaT,
        "label": [f"bench run {i}" for i in range(n_runs)],
        "notes": "synthetic (bench/synthetic.py)", "meta": None})

    run_of = np.repeat(np.arange(n_runs), POINTS_PER_RUN)[:points]
    seq = np.tile(np.arange(POINTS_PER_RUN), n_runs)[:points]
    conc = CONCURRENCIES[seq] * rng.uniform(0.9, 1.1, points)
    # TPOT grows with the batch; per-GPU throughput = concurrency / TPOT, scaled by the run's speed.
    tpot50 = 0.0012 * (1 + conc / 64.0) / speed[run_of] * rng.uniform(0.95, 1.05, points)
    out_tok_s = conc / tpot50 * 0.9
    total_tok_s = out_tok_s * (1 + 85000 * (1 - 0.96) / 345)
    pts = pd.DataFrame({
        "run_id": np.asarray(run_ids)[run_of], "seq": seq.astype(np.int32),
        "point_key": _ids("bench-point-", points), "concurrency": conc, "request_rate": np.nan,
        "tpot_p50_s": tpot50, "tpot_p90_s": tpot50 * 1.15, "tpot_p99_s": tpot50 * 1.4,
        "ttft_p50_s": 0.2 + conc * 0.01, "ttft_p90_s": 0.3 + conc * 0.015,
        "ttft_p99_s": 0.5 + conc * 0.02, "e2e_p50_s": tpot50 * 345, "e2e_p90_s": tpot50 * 400,
        "e2e_p99_s": tpot50 * 480, "tpot_mean_s": tpot50 * 1.02, "ttft_mean_s": 0.25 + conc * 0.012,
        "e2e_mean_s": tpot50 * 360, "throughput_total_tok_s": total_tok_s,
        "throughput_output_tok_s": out_tok_s, "throughput_input_tok_s": total_tok_s - out_tok_s,
        "requests_completed": (conc * 8).astype(np.int64), "requests_failed": 0, "note": "",
        "source": runs.source.to_numpy()[run_of]})
    return runs, pts


def build(path: Path, points: int, seed: int = 0, dated: bool = True) -> Path:
    """A fresh database at `path`: migrations, the built-in runs, then the synthetic ones."""
    path = Path(path)
    for p in (path, Path(str(path) + ".wal")):
        p.unlink(missing_ok=True)
    runs, pts = frames(points, seed, dated)
    simulated, _ = builtin_simulations()
    with store.writing(path) as con:
        store.write_runs(con, builtin_runs() + simulated)
        con.execute("BEGIN TRANSACTION")
        for table, frame in (("runs", runs), ("points", pts)):
            cols = ", ".join(frame.columns)
            con.register("bulk", frame)
            con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM bulk")
            con.unregister("bulk")
        envelopes.rebuild_all(con)          # what the store's writes keep, for the bulk rows
        con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
    precompute.refresh(path)                # as `opx ingest` does after an import
    return path


def cached(folder: Path, points: int, dated: bool = True) -> Path:
    """The database of `points` points in `folder`, built there once."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"synthetic-{points}{'' if dated else '-undated'}"
    path = folder / f"{name}.duckdb"
    done = folder / f"{name}.done"
    if not done.exists():
        build(path, points, dated=dated)
        done.write_text("built\n")
    return path


def size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else (
        f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n))


if __name__ == "__main__":
    out, n = Path(sys.argv[1]), int(sys.argv[2])
    t = time.perf_counter()
    build(out, n, dated="--undated" not in sys.argv)
    with store.reading(out) as con:
        runs_n, points_n = store.count_runs(con)
    print(f"{out}: {runs_n} runs, {points_n} points in {time.perf_counter() - t:.1f} s")
