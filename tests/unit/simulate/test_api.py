"""Public API: simulate() results, runs, errors, monotonicity properties, search time."""
import json
import time

import numpy as np
import pandas as pd
import pytest

from models import Run
from opx.simulate import ENGINE, ENGINE_VERSION, SimKnobs, simulate
from opx.simulate.api import FRAME_COLUMNS, POINT_EXTRA
from opx.simulate.layouts import parse_label


@pytest.fixture(scope="module")
def gb300(catalog):
    return simulate("gb300-nvl72", "deepseek-r1", "1k1k", None, SimKnobs(mtp_depth=1), catalog)


def test_result_shape(gb300):
    assert gb300.gpus == 72
    assert list(gb300.envelope.columns) == FRAME_COLUMNS
    pf = gb300.points_frame()
    assert list(pf.columns) == FRAME_COLUMNS + POINT_EXTRA
    assert len(gb300.curves) > 5
    assert (pf.gpus_total <= 72).all()
    # interactivity is 1 / TPOT; throughput total = input + output
    assert np.allclose(pf.interactivity_p50, 1 / pf.tpot_p50_s)
    assert np.allclose(pf.throughput_total_per_gpu,
                       pf.throughput_input_per_gpu + pf.throughput_output_per_gpu)
    assert np.allclose(pf.e2e_p50_s, pf.ttft_p50_s + (1024 - 1) * pf.tpot_p50_s)
    assert set(pf.binding) <= {"memory", "compute", "communication", "overhead", "prefill",
                               "kv_capacity"}
    assert {0, 1} <= set(pf.mtp)


def test_envelope_is_pareto(gb300):
    env = gb300.envelope.sort_values("interactivity_p50")
    assert env.throughput_total_per_gpu.is_monotonic_decreasing
    pf = gb300.points_frame()
    # no point beats the envelope on both axes
    for _, r in pf.sample(200, random_state=0).iterrows():
        better = env[(env.interactivity_p50 > r.interactivity_p50)
                     & (env.throughput_total_per_gpu > r.throughput_total_per_gpu)]
        if r.layout in set(env.layout) and len(better) == 0:
            continue
        assert not ((pf.interactivity_p50 > r.interactivity_p50 * 1.0000001)
                    & (pf.throughput_total_per_gpu > r.throughput_total_per_gpu * 1.0000001)).all()


def test_parameters_and_validation_carried(gb300):
    p = gb300.parameters
    assert p["engine_version"] == ENGINE_VERSION
    assert p["hardware"]["hbm_tb_s"] == 8.0
    assert p["efficiency"]["status"] == "calibrated"
    assert "gb300" in p["efficiency"]["origin"]
    assert gb300.validation["overall"]["tpot_mdape"] > 0
    # the spread is modelled and says so, with its held-out error; P99 is not claimed
    sp = p["spread"]
    assert sp["status"].startswith("modelled spread")
    assert sp["percentiles"]["tpot_p90"]["status"] == "modelled"
    assert sp["percentiles"]["tpot_p90"]["heldout_mdape_pct"] > 0
    assert sp["percentiles"]["tpot_p99"]["status"].startswith("not modelled")
    assert "held-out error" in p["percentiles"]


def test_p90_columns_follow_the_spread_model(gb300):
    from opx.simulate import spread
    pf = gb300.points_frame()
    assert (pf.tpot_p90_s >= pf.tpot_p50_s).all() and (pf.ttft_p90_s >= pf.ttft_p50_s).all()
    assert (pf.interactivity_p90 <= pf.interactivity_p50).all()
    assert np.allclose(pf.interactivity_p90, 1 / pf.tpot_p90_s)
    k = spread.modelled(spread.load())["tpot_p90"]
    # an aggregated layout is one instance per replica: C per instance = concurrency / replicas
    curve = next(c for c in gb300.curves if c.layout == "TP8")
    pts = curve.points
    c_inst = pts.concurrency / curve.replicas
    assert np.allclose(pts.tpot_p90_s, pts.tpot_p50_s * (1 + k * np.log(np.maximum(c_inst, 1))))
    # the stored envelope keeps the points on the P90 envelope too
    assert gb300.envelope_p90 is not None and not gb300.envelope_p90.empty


def test_to_runs(gb300):
    runs = gb300.to_runs()
    assert len(runs) == len(gb300.curves)
    run = runs[0]
    assert isinstance(run, Run)
    assert run.provenance == "simulated" and run.framework == ENGINE
    assert run.framework_version == ENGINE_VERSION
    assert run.source.startswith(f"opx-sim {ENGINE_VERSION} (calibration ")
    assert run.label == f"simulated {run.meta['layout']}"
    assert set(run.meta) == {"engine", "engine_version", "parameters", "validation", "layout",
                             "spread"}
    json.loads(run.meta["parameters"]), json.loads(run.meta["validation"])
    assert json.loads(run.meta["spread"])["percentiles"]["ttft_p90"]["status"] == "modelled"
    assert "modelled spread" in run.notes.lower()
    curve = gb300.curves[0]
    pt, row = run.points[0], curve.points.iloc[0]
    g = curve.deployment["gpus_total"]
    assert pt.throughput_total_tok_s == pytest.approx(row.throughput_total_per_gpu * g)
    assert pt.tpot_p90_s == pytest.approx(row.tpot_p90_s) and pt.tpot_p90_s >= pt.tpot_p50_s
    assert pt.ttft_p90_s == pytest.approx(row.ttft_p90_s)
    assert pt.tpot_p99_s is None and pt.ttft_p99_s is None and pt.e2e_p90_s is None  # not claimed
    env_runs = gb300.to_runs(envelope_only=True)
    both = pd.concat([gb300.envelope, gb300.envelope_p90]).drop_duplicates(["layout", "concurrency"])
    assert sum(len(r.points) for r in env_runs) == len(both)
    assert len({r.run_key() for r in runs}) == len(runs)


def test_explicit_layouts(catalog):
    r = simulate("gb200-nvl72", "deepseek-r1", "1k1k", 48, SimKnobs(layout="disagg 4xDEP4+1xDEP32",
                                                                   concurrencies=(64, 2048)), catalog)
    assert [c.layout for c in r.curves] == ["disagg 4xDEP4+1xDEP32"]
    dep = r.curves[0].deployment
    assert (dep["gpus_prefill"], dep["gpus_decode"], dep["gpus_total"]) == (16, 32, 48)
    assert list(r.curves[0].points.concurrency) == [64, 2048]
    r = simulate("b200", "deepseek-r1", "1k1k", None, SimKnobs(layout="TEP8", mtp_depth=2), catalog)
    assert [c.layout for c in r.curves] == ["TEP8 MTP2"]
    assert r.to_runs()[0].deployment.mtp is True


def test_labels_round_trip():
    for label in ("TP8", "TEP16", "DEP32", "TP8-PP2", "disagg 2xDEP4+1xDEP32"):
        assert parse_label(label)[0].label == label
    assert parse_label("DEP8 MTP3")[1] == 3


@pytest.mark.parametrize("kw, match", [
    ({"layout": "XP8"}, "unknown layout"),
    ({"layout": "TP1"}, "does not fit"),
    ({"layout": "DEP128"}, "needs 128 GPUs"),
    ({"kv_offload": "disk"}, "kv_offload"),
    ({"mtp_acceptance": 1.5}, "mtp_acceptance"),
])
def test_impossible_requests(catalog, kw, match):
    with pytest.raises(ValueError, match=match):
        simulate("h200", "deepseek-r1", "1k1k", None, SimKnobs(**kw), catalog)


def test_unknown_names_and_model_too_big(catalog):
    with pytest.raises(ValueError, match="unknown hardware"):
        simulate("tpu-v9", "deepseek-r1", "1k1k", None, SimKnobs(), catalog)
    with pytest.raises(ValueError, match="does not fit"):
        simulate("h100", "kimi-k2.5", "1k1k", 4, SimKnobs(), catalog)


def test_aliases_resolve(catalog):
    r = simulate("gb300", "dsr1", "1k1k", 8, SimKnobs(layout="DEP8", concurrencies=(8,)), catalog)
    assert (r.hardware, r.model) == ("gb300-nvl72", "deepseek-r1")


def test_more_bandwidth_never_slower(catalog):
    knobs = dict(concurrencies=(1, 8, 64, 512, 4096), mtp_depth=1)
    for layout in ("TP8", "DEP8", "disagg 2xDEP4+1xDEP16"):
        slow = simulate("gb200-nvl72", "deepseek-r1", "8k1k", 72,
                        SimKnobs(layout=layout, hbm_tb_s=6.0, **knobs), catalog).points_frame()
        fast = simulate("gb200-nvl72", "deepseek-r1", "8k1k", 72,
                        SimKnobs(layout=layout, hbm_tb_s=12.0, **knobs), catalog).points_frame()
        assert (fast.tpot_p50_s.to_numpy() <= slow.tpot_p50_s.to_numpy() * (1 + 1e-9)).all()
        # request latency and throughput improve too; TTFT alone may rise a little at a fixed
        # closed-loop concurrency (faster decode returns requests to the prefill queue sooner)
        assert (fast.e2e_p50_s.to_numpy() <= slow.e2e_p50_s.to_numpy() * (1 + 1e-9)).all()
        assert (fast.throughput_total_per_gpu.to_numpy()
                >= slow.throughput_total_per_gpu.to_numpy() * (1 - 1e-9)).all()


def test_more_compute_never_slower(catalog):
    kw = dict(layout="DEP16", concurrencies=(16, 1024, 8192))
    lo = simulate("vr-nvl72", "deepseek-v4.1-flash", "agentx", 16, SimKnobs(fp4_dense_pflops=35, **kw),
                  catalog).points_frame()
    hi = simulate("vr-nvl72", "deepseek-v4.1-flash", "agentx", 16, SimKnobs(fp4_dense_pflops=50, **kw),
                  catalog).points_frame()
    assert (hi.tpot_p50_s.to_numpy() <= lo.tpot_p50_s.to_numpy() * (1 + 1e-9)).all()


def test_more_concurrency_never_raises_interactivity(gb300):
    for curve in gb300.curves:
        x = curve.points.sort_values("concurrency").interactivity_p50.to_numpy()
        assert (np.diff(x) <= 1e-9 * x[:-1]).all(), curve.layout


def test_mtp_raises_interactivity_at_low_load(catalog):
    kw = dict(layout="TEP8", concurrencies=(1,))
    off = simulate("b200", "deepseek-r1", "1k1k", 8, SimKnobs(mtp_depth=0, **kw), catalog)
    on = simulate("b200", "deepseek-r1", "1k1k", 8, SimKnobs(mtp_depth=1, **kw), catalog)
    ratio = on.envelope.interactivity_p50.iloc[0] / off.envelope.interactivity_p50.iloc[0]
    assert 1.2 < ratio < 1.8          # tau = 1.8 tokens per step, at the price of a wider step


def test_framework_knob(catalog):
    kw = dict(layout="TEP8", concurrencies=(4, 64, 256))
    res = {fw: simulate("b200", "deepseek-r1", "1k1k", 8, SimKnobs(framework=fw, **kw), catalog)
           for fw in (None, "trtllm", "sglang", "vllm")}
    assert res[None].parameters["framework"] is None
    assert res["sglang"].parameters["framework"] == "sglang"
    assert res["sglang"].parameters["knobs"]["framework"] == "sglang"
    assert "'sglang' factors" in res["sglang"].parameters["efficiency"]["framework_factors"]
    assert "pooled" in res[None].parameters["efficiency"]["framework_factors"]
    assert res["vllm"].parameters["efficiency"]["framework_factors"].startswith("EXTRAPOLATED")
    ttft = {fw: r.points_frame().ttft_p50_s.to_numpy() for fw, r in res.items()}
    # the calibration finds SGLang's aggregated closed-loop TTFT burstier than TensorRT-LLM's
    assert ttft["sglang"][-1] > ttft["trtllm"][-1]
    assert np.allclose(ttft[None], ttft["vllm"])          # no vLLM rows: the pooled factors
    with pytest.raises(ValueError, match="framework"):
        simulate("b200", "deepseek-r1", "1k1k", 8, SimKnobs(framework="tgi", **kw), catalog)


def test_rubin_assumptions_labelled(catalog):
    r = simulate("vr-nvl72", "deepseek-v4.1-flash", "agentx", None,
                 SimKnobs(layout="DEP8", fp4_dense_pflops=50, concurrencies=(64,)), catalog)
    assert r.parameters["hardware"]["fp4_pflops"] == 50
    assert "fp4_dense_pflops (knob override)" in r.parameters["assumed"]
    assert r.parameters["efficiency"]["origin"].startswith("EXTRAPOLATED")
    assert r.validation["measured_family"] is False


def test_search_is_fast(catalog):
    simulate("gb300-nvl72", "deepseek-r1", "1k1k", None, SimKnobs(), catalog)   # warm up
    t = time.perf_counter()
    simulate("gb300-nvl72", "deepseek-r1", "1k1k", None, SimKnobs(mtp_depth=3), catalog)
    assert time.perf_counter() - t < 4.0     # about 1 s on two cores; slack for a busy CI


def test_the_envelope_table_names_its_units_and_converts_at_the_edge(gb300):
    """The Simulate page's envelope table: the registry's titles, TPOT and step times in ms,
    one row per envelope point, the same figures as the stored-units envelope."""
    from opx.curves import metrics
    for pct in ("p50", "p90"):
        env, table = gb300.envelope_at(pct), gb300.envelope_table(pct)
        assert len(table) == len(env) > 0
        total = metrics.y_metric("total").title
        assert {total, metrics.interactivity("p90").title, "TPOT P50 (ms)", "Layout",
                "Binding limit"} <= set(table.columns)
        assert not any(c.endswith("_s") or "_per_gpu" in c for c in table.columns)
        np.testing.assert_allclose(table["TPOT P50 (ms)"], env.tpot_p50_s * 1e3, atol=0.005)
        np.testing.assert_allclose(table[total], env.throughput_total_per_gpu, atol=0.5)
        assert table["Concurrency"].dtype == "int64"
        assert list(table["Layout"]) == list(env.layout)
