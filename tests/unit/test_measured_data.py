"""The built-in InferenceX measurements (data/measured/): carried as the project's own compact
copy, read by the same importer as the original, and giving on the Explorer exactly what an
independent reading of the original CSV gives."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy.interpolate import PchipInterpolator

from opx import cli, store

from opx.store import queries
from opx.ingest.builtin import INFERENCEX_SOURCE, builtin_runs
from opx.config import MEASURED_DIR
from tests.conftest import ROOT, shared_fixture

ORIGINAL = "aiconfigurator/silicon_sample.csv"
COPY = MEASURED_DIR / "inferencex-silicon.csv.gz"


def test_the_copy_is_what_the_script_makes_of_the_original():
    import importlib.util
    spec = importlib.util.spec_from_file_location("build", ROOT / "scripts" / "build_measured_data.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    data, rows = build.compact(shared_fixture(ORIGINAL))
    assert rows == 5221
    assert data == COPY.read_bytes(), "regenerate: python scripts/build_measured_data.py ..."


def test_the_copy_carries_its_notice():
    notice = (MEASURED_DIR / "NOTICE").read_text()
    for words in ("silicon_sample.csv", "aiconfigurator-core 0.12.0", "Apache License 2.0",
                  "2026-04-27", "scripts/build_measured_data.py"):
        assert words in notice


def test_every_measured_run_names_catalog_slugs_and_its_source(catalog):
    measured = [r for r in builtin_runs() if r.source == INFERENCEX_SOURCE]
    assert len(measured) == 1085
    assert sum(len(r.points) for r in measured) == 3819
    for run in measured:
        assert run.model in catalog.models, run.model
        assert run.workload in catalog.workloads, run.workload
        assert run.hardware in catalog.hardware, run.hardware
        assert run.provenance == "derived"
        assert "Little's law" in run.notes and "1,402 of the file's 5,221 rows were skipped" in run.notes
        for p in run.points:      # measured means only: never a percentile
            assert p.tpot_mean_s and p.tpot_p50_s is None and p.tpot_p90_s is None


def test_the_database_holds_thousands_of_data_points(seed_db):
    with store.reading(seed_db) as con:
        n = con.execute("SELECT count(*) FROM points p JOIN runs r ON r.id = p.run_id "
                        "WHERE r.provenance <> 'simulated'").fetchone()[0]
    assert n >= 3500


# -- the Explorer's figures against an independent reading of the original CSV ------------------

def _one(v) -> float:
    return 1.0 if pd.isna(v) or v == 0 else float(v)


def _independent(original) -> pd.DataFrame:
    """Throughput per GPU by Little's law and mean interactivity, row by row, from the CSV."""
    d = pd.read_csv(original)
    d["c"] = d.silicon_data_source.map(
        lambda s: float(m[1]) if (m := re.search(r"silicon_concurrency=([\d.]+)", s)) else np.nan)

    def gpus(r):
        if r["mode"] == "agg":
            if r.tp_size >= 12 and r.moe_tp_size == r.tp_size:     # GB200 "agg tp12..72"
                return np.nan
            return _one(r.tp_size) * _one(r.pp_size) * _one(r.attention_dp_size)
        if pd.isna(r.prefill_num_workers) or pd.isna(r.decode_num_workers):
            return np.nan
        return sum(r[f"{k}_num_workers"] * _one(r[f"{k}_tp_size"]) * _one(r[f"{k}_pp_size"])
                   * _one(r[f"{k}_attention_dp_size"]) for k in ("prefill", "decode"))
    d["g"] = d.apply(gpus, axis=1)
    d = d.dropna(subset=["c", "g"])
    seconds = (d.silicon_ttft_ms + (d.osl - 1) * d.silicon_tpot_ms) / 1000
    d["y"] = d.c * (d.isl + d.osl) / seconds / d.g
    d["x"] = 1000 / d.silicon_tpot_ms
    return d


def _value_at(rows: pd.DataFrame, target: float) -> float | None:
    if rows.empty:
        return None
    best, frontier = -math.inf, []
    for x, y in rows.sort_values(["x", "y"], ascending=False)[["x", "y"]].itertuples(index=False):
        if y > best:
            frontier.append((x, y))
            best = y
    xs, ys = zip(*sorted(frontier))
    if target > xs[-1]:
        return None
    if target < xs[0]:              # below the range: at least the slowest point, which meets it
        return ys[0]
    return float(PchipInterpolator(xs, ys)(target)) if len(xs) > 1 else ys[0]


CASES = [  # model slug, its spellings in the CSV, workload slug, (isl, osl), {hw: system}, target
    ("deepseek-r1", ("deepseek-ai/DeepSeek-R1", "nvidia/DeepSeek-R1-NVFP4"), "1k1k", (1024, 1024),
     {"b200": "b200_sxm", "h200": "h200_sxm"}, 50),
    ("gpt-oss-120b", ("openai/gpt-oss-120b",), "1k8k", (1024, 8192),
     {"b200": "b200_sxm", "h100": "h100_sxm", "h200": "h200_sxm"}, 150),
    ("llama-3.1-70b", ("meta-llama/Llama-3.1-70B",), "8k1k", (8192, 1024),
     {"b200": "b200_sxm", "h200": "h200_sxm"}, 30),
    ("minimax-m2.5", ("MiniMaxAI/MiniMax-M2.5",), "8k1k", (8192, 1024),
     {"b300": "b300_sxm", "b200": "b200_sxm"}, 40),
    # disaggregated deployments: GPUs of every prefill and decode worker
    # (DeepSeek-R1 8k1k on GB200 had only "agg tp12..72" rows, which are skipped)
    ("deepseek-v3", ("deepseek-ai/DeepSeek-V3",), "8k1k", (8192, 1024),
     {"gb200-nvl72": "gb200", "b200": "b200_sxm"}, 30),
    ("deepseek-v3", ("deepseek-ai/DeepSeek-V3",), "1k1k", (1024, 1024),
     {"gb300-nvl72": "gb300", "b300": "b300_sxm"}, 30),
]


@pytest.mark.parametrize("model, spellings, workload, lengths, systems, target", CASES)
def test_explorer_json_equals_an_independent_reading(seed_db, tmp_path, model, spellings,
                                                     workload, lengths, systems, target):
    rows = _independent(shared_fixture(ORIGINAL))
    rows = rows[rows.model_path.isin(spellings) & (rows.isl == lengths[0])
                & (rows.osl == lengths[1])]
    link = (f"/?model={model}&workload={workload}&" + "&".join(f"hw={h}" for h in systems)
            + f"&pct=mean&target={target}&source=measured&source=derived&source=published")
    out = tmp_path / "view.json"
    assert cli.main(["export", link, "--format", "json", "-o", str(out), "--db", str(seed_db)]) == 0
    view = json.loads(out.read_text())
    assert view["notices"] == []
    checked = 0
    for entry in view["hardware"]:
        expected = _value_at(rows[rows.system == systems[entry["hardware"]]], target)
        if expected is None:
            assert entry["at_target"] is None
        else:
            assert entry["at_target"] == pytest.approx(expected, rel=1e-9), entry["hardware"]
            checked += 1
    assert checked >= 1


def test_filters_narrow_the_runs_and_mtp_off_keeps_the_unstated(seed_db):
    with store.reading(seed_db) as con:
        def count(**kw) -> int:
            f = queries.RunFilters(**kw)
            return con.execute(f"SELECT count(*) FROM runs r WHERE {f.WHERE}", f.params()).fetchone()[0]
        everything = count()
        assert count(framework=("SGLang",)) < everything
        assert count(framework=("sglang",)) == count(framework=("SGLANG",)) > 0
        assert count(mode="agg") + count(mode="disagg") == everything
        assert count(mtp="on") + count(mtp="off") == everything
        assert count(gpus=(8,)) > count(gpus=(8,), precision=("fp4",)) > 0
        import datetime as dt
        dated = count(since=dt.date(2000, 1, 1))
        assert count(since=dt.date(2026, 4, 1)) + count(until=dt.date(2026, 3, 31)) == dated
