"""Latency, planner and over-time figures, checked by hand on small data."""
import math
import shutil

import pytest

from models import ViewState
from opx.store.importer import import_files
from opx.ingest.core import IngestOptions
from opx.answers.latency import latency
from opx.answers.planner import plan
from opx.answers.over_time import over_time
from tests.conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "opx-csv"


@pytest.fixture
def db(seed_db, tmp_path, catalog):
    path = tmp_path / "opx.duckdb"
    shutil.copy(seed_db, path)
    results = import_files([FIX / "b200-over-time.csv"], IngestOptions(), path, catalog)
    assert all(r.ok for r in results), results[0].error
    return path


def test_mooncake_runs_side_by_side(db, catalog):
    view = latency(db, ViewState(pct="p50", conc=4800), catalog)
    pairs = view.kv_pool
    assert len(pairs) == 2
    ttft = dict(zip(pairs.kv_pool.str.split().str[0], pairs.ttft_s))
    assert ttft == {"mooncake": pytest.approx(4.2), "none": pytest.approx(29.8)}
    assert "+68%" in set(pairs.requests_served)


def test_operating_point_and_its_distance_from_the_frontier(db, catalog):
    state = ViewState(model="deepseek-r1", workload="1k1k", hw=("b200",), pct="p50", conc=64,
                      target=100)
    view = latency(db, state, catalog)
    # by default only a run behind the figure at 100: one of the two dates, which measured the
    # same configuration and so form repeat sets (their figure is the sets' medians)
    assert len(view.operating) == 1 and view.operating.interactivity.iloc[0] in (40, 45)
    # one configuration measured on two dates: two runs, each with a point at concurrency 64
    both = tuple(view.runs.run_id)
    assert len(both) == 2
    op = latency(db, state.model_copy(update={"run": both}), catalog).operating \
        .sort_values("interactivity")
    assert len(op) == 2 and (op.concurrency == 64).all() and op.exact.all()
    january, march = op.iloc[0], op.iloc[1]
    # the envelope runs through the repeat sets' medians, (42.5, 3300) at c=64: March's (45,
    # 3600) lies above it, January's (40, 3000) below its range (no share claimed)
    assert march.share_of_frontier > 1
    assert january.share_of_frontier is None or january.share_of_frontier != january.share_of_frontier


def test_planner_by_hand(db, catalog):
    state = ViewState(model="deepseek-r1", workload="1k1k", hw=("gb200-nvl72", "gb300-nvl72", "b200"),
                      pct="p50", target=40, sessions=10_000)
    result = plan(db, state, catalog)
    rows = result.rows.set_index("hardware")
    b200 = rows.loc["B200 (HGX)"]
    # b200's two dates are repeat sets: its envelope starts at their median at c=64, 42.5
    # tok/s/user and 3,300 tok/s/GPU (8 GPUs): at least that at 40; 10,000 sessions at 42.5
    # tok/s each over 3,300 x 1,024/2,048 output tok/s per GPU
    assert b200.total_per_gpu == 3300 and b200.bound and b200.interactivity == 42.5
    assert (b200.total_per_gpu_lo, b200.total_per_gpu_hi, b200.runs) == (3000, 3600, 2)
    assert b200.concurrency == 64 and b200.gpus_per_deployment == 8
    assert b200.gpus == math.ceil(10_000 * 42.5 / (1650 * 8)) * 8 == 264
    assert b200.usd_per_hour == pytest.approx(264 * catalog.hardware["b200"].usd_per_gpu_hour.value)
    gb200 = rows.loc["GB200 NVL72"]
    assert gb200.racks == math.ceil(gb200.gpus / 72)
    assert gb200.mw == pytest.approx(gb200.gpus * 2100 / 1e6)
    assert "GB300 NVL72" in dict(result.excluded)
    ranked = list(result.rows.sort_values("usd_per_hour").hardware)
    assert list(result.rows.hardware) == ranked


def test_planner_ttft_limit_excludes_with_a_reason(db, catalog):
    state = ViewState(model="deepseek-r1", workload="1k1k", hw=("b200", "gb200-nvl72"), pct="p50",
                      target=40, ttft=0.3, sessions=100)
    result = plan(db, state, catalog)
    why = dict(result.excluded)
    # the median of the two dates' TTFT at c=64 (1.5 s and 1.2 s)
    assert "has TTFT P50 1.35 s, above the 0.3 s limit" in why["B200 (HGX)"]
    assert "TTFT" in why["GB200 NVL72"]


def test_value_over_time(db, catalog):
    state = ViewState(model="deepseek-r1", workload="1k1k", hw=("b200",), pct="p50", target=100)
    rows = over_time(db, state, catalog)
    assert list(rows.date.dt.strftime("%Y-%m-%d")) == ["2026-01-10", "2026-03-10"]
    assert rows.configuration.nunique() == 1
    assert rows.value.iloc[0] == pytest.approx(800)             # January: (100, 800) exactly
    # March: between (45, 3600) and (110, 900), monotone interpolation at 100
    assert 900 < rows.value.iloc[1] < 3600
