"""Calibration data, the stored fit, and the leave-one-system-out validation on the fixture."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from opx.simulate import calibration as K
from opx.simulate.silicon import _layout, load_rows
from tests.conftest import ROOT

SILICON = Path(ROOT).parent / "shared" / "fixtures" / "aiconfigurator" / "silicon_sample.csv"
needs_fixture = pytest.mark.skipif(not SILICON.is_file(),
                                   reason=f"{SILICON} absent (shared fixtures are not in the repo)")
STORED = ROOT / "data" / "simulator" / "calibration.json"


def test_stored_calibration_is_complete():
    cal = json.loads(STORED.read_text())
    for key in ("fit_date", "data_file", "data_sha256", "rows", "method", "factors", "validation",
                "regenerate"):
        assert key in cal, key
    assert set(cal["factors"]["families"]) == {"hopper", "blackwell", "blackwell-ultra"}
    for fam in cal["factors"]["families"].values():
        assert fam["fitted_on"]
    assert set(cal["factors"]["frameworks"]) == {"trtllm", "sglang"}
    for fw in cal["factors"]["frameworks"].values():
        assert fw["fitted_on"] and fw["rows"] > 100
        assert {"burst_agg", "burst_disagg"} <= set(fw)
    assert cal["rows"]["rows_used"] > 500
    assert cal["rows"]["mtp_suspect_rows"] > 0 and cal["rows"]["ttft_artefact_rows"] > 0
    assert 0.3 <= cal["calibration_only"]["mtp_accept"] <= 0.95
    overall = cal["validation"]["overall"]
    assert {"tpot_mdape", "ttft_mdape", "throughput_mdape"} <= set(overall)
    assert len(cal["validation"]["per_system"]) == 6


@needs_fixture
def test_stored_calibration_matches_the_fixture():
    cal = json.loads(STORED.read_text())
    from opx.simulate.silicon import sha256
    assert cal["data_sha256"] == sha256(SILICON)


def test_layout_relabelling_rules():
    assert _layout(16, 1, 4, 4) == (4, 1, 4, 1)      # "tp16 moe 4x4" is TEP4
    assert _layout(1, 64, 8, 8) == (1, 8, 8, 1)      # "adp64 moe 8x8" is DEP8
    assert _layout(8, 1, 8, 1) == (8, 1, 1, 8)       # TP8
    assert _layout(1, 8, 1, 8) == (1, 8, 8, 1)       # DEP8
    assert _layout(8, 1, 2, 2) is None               # inconsistent


def test_missing_data_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="silicon_sample.csv"):
        load_rows(tmp_path / "silicon_sample.csv")
    with pytest.raises(FileNotFoundError):
        K.validate(tmp_path / "nope.csv")


@needs_fixture
def test_silicon_rows():
    rows, stats = load_rows(SILICON)
    assert stats["deepseek_rows"] == 2238
    assert stats["rows_used"] == len(rows) > 500
    assert set(rows.system) == {"b200_sxm", "b300_sxm", "gb200", "gb300", "h100_sxm", "h200_sxm"}
    assert (rows.gpus >= rows.d_tp * rows.d_dp).all()


@needs_fixture
def test_mtp_flag_is_provenance_with_pair_evidence():
    rows, stats = load_rows(SILICON)
    flagged = rows[rows.mtp_suspect]
    assert (flagged.backend == "trtllm").all() and not flagged.from_dump.any()
    assert stats["mtp_suspect_rows"] == len(flagged) > 50
    # db-dump vs source-file-only twins: MTP-sized gap for TensorRT-LLM only
    assert stats["mtp_pair_evidence_trtllm_pairs"] > 30
    assert stats["mtp_pair_evidence_trtllm_median_dump_over_source_tpot"] > 1.4
    assert stats["mtp_pair_evidence_sglang_median_dump_over_source_tpot"] < 1.3


@needs_fixture
def test_ttft_artefact_rule(catalog):
    rows, _ = load_rows(SILICON)
    prob = K.Problem(rows, catalog)
    art = prob.artefact
    assert 0 < art.sum() < 0.05 * len(rows)
    # the closed-loop bound, recomputed here from the row fields
    g_pre = (rows.n_d * rows.d_tp * rows.d_dp * rows.d_pp).where(rows["agg"] > 0,
                                                               rows.n_p * rows.p_tp * rows.p_dp)
    bound = K.ARTEFACT_T0_S + rows.conc * rows.isl_label / (K.ARTEFACT_TOKENS_PER_GPU_S * g_pre)
    assert (rows.ttft_s[art] > bound[art]).all()
    # the rule never removes a row's TPOT: the fit uses every row for TPOT
    assert K.Problem(rows, catalog, K.FitOptions(artefact_rule=False)).artefact.sum() == 0


@needs_fixture
def test_leave_one_system_out_validation():
    """The CI run of the validation (fewer iterations than calibrate() to stay fast)."""
    df, overall = K.validate(SILICON, max_nfev=15)
    assert list(df.columns[:3]) == ["system", "hardware", "n"]
    assert len(df) == 6 and df.n.sum() == overall["n"]
    # regression bounds around the documented numbers (docs/simulator.md)
    assert overall["tpot_mdape"] < 15
    assert overall["throughput_mdape"] < 17
    assert overall["ttft_mdape"] < 48
    assert overall["ttft_mdape_all_rows"] < 50
    assert (df.tpot_mdape < 30).all()
    # 0.5.0 (TTFT fitted on the relative error): TTFT 34.5 % held out (issue #4's 35 %), TPOT 12.4 %;
    # three of six systems within 15 % TPOT (B200 11.7, GB200 11.2, H200 11.7 %); GB300 15.6 %
    # (0.4.1: 15.4), B300 23.9 % (24.1) and H100 21.9 % on 8 rows (0.4.1: 11.4; it follows the
    # scale-out all-reduce latency, docs/simulator.md "Targets") miss. 0.4.1 had four.
    assert overall["ttft_mdape"] < 36
    assert overall["systems_meeting_tpot_15"] >= 3
    # most of the TTFT error is each sweep's offset, and the configuration does not tell it
    src = overall["ttft_sources"]
    assert src["after_each_sweeps_offset_mdape"] < 0.6 * src["held_out_mdape"]
    assert src["sweep_offset_sd_log_after_configuration"] > 0.8 * src["sweep_offset_sd_log"]


def test_part_losses_are_scipys_robust_losses():
    """0.5.0 applies a loss per part (TPOT, TTFT, priors) by transforming the residuals: half the
    sum of squares of the transformed residual is scipy's robust loss, fs^2 rho((f/fs)^2) / 2."""
    f = np.array([-3.0, -0.4, -0.01, 0.0, 0.02, 0.5, 4.0])
    for loss, fs in (("soft_l1", 0.25), ("soft_l1", 1.0), ("arctan", 0.5), ("cauchy", 0.25),
                     ("linear", 1.0)):
        g = K._robust(f, loss, fs)
        assert np.allclose(g ** 2, fs ** 2 * K._RHO[loss]((f / fs) ** 2))
        assert (np.sign(g) == np.sign(f)).all()
        assert np.allclose(g[np.abs(f) < 0.03], f[np.abs(f) < 0.03], rtol=0.02)   # ~f near 0
    assert K.RESIDUAL == {"tpot": "log", "ttft": "rel"}


def test_ablation_variants_are_explicit_options():
    """Every ablation is a FitOptions passed down to the fit; the first is the engine itself, and
    building them changes no module state."""
    from opx.simulate import hardware as H
    from opx.simulate import model as M
    state = (dict(K.PARAMS), dict(K.RESIDUAL), dict(K.LOSSES), M.ENGINE_OPTIONS, dict(H.RUNTIME_MEMORY_BYTES))
    variants = K.ablation_variants()
    names = [n for n, _ in variants]
    assert len(set(names)) == len(names) == 19
    assert names[0] == "this model (0.5.0)" and variants[0][1] == K.FitOptions()
    assert all(isinstance(o, K.FitOptions) for _, o in variants)
    assert len({repr(o) for _, o in variants}) == len(variants)       # no two alike
    by_name = dict(variants)
    assert by_name["HBM read as catalog GB x 1e9 (0.3.0's KV accounting)"].runtime_memory is False
    assert by_name["batch-service prefill queue, no q_wait (0.4.0's TTFT)"].model.queue_form == "batch"
    assert "q_wait" not in by_name["batch-service prefill queue, no q_wait (0.4.0's TTFT)"].params
    assert by_name["M/D/1 queue, no iteration wait (0.2.0's TTFT)"].model.iter_wait == 0.0
    assert by_name["without the MTP flag (every row MTP0)"].mtp_mode == "none"
    assert state == (K.PARAMS, K.RESIDUAL, K.LOSSES, M.ENGINE_OPTIONS, H.RUNTIME_MEMORY_BYTES)


def test_ablations_pass_each_variant_down(monkeypatch):
    """ablations() validates each variant with its own options, one call each, in order."""
    import pandas as pd
    seen = []

    def fake_validate(silicon_csv, catalog, max_nfev, options):
        seen.append(options)
        df = pd.DataFrame([{"system": "b200_sxm", "tpot_mdape": 1.0, "ttft_mdape": 2.0}])
        keys = ("tpot_mdape", "ttft_mdape", "throughput_mdape", "ttft_mdape_all_rows",
                "throughput_mdape_all_rows", "tpot_mdape_all_mtp0")
        return df, {k: float(len(seen)) for k in keys}
    monkeypatch.setattr(K, "validate", fake_validate)
    table = K.ablations(max_nfev=1)
    assert seen == [o for _, o in K.ablation_variants()]
    assert list(table.variant) == [n for n, _ in K.ablation_variants()]
    assert list(table.tpot_mdape) == [float(i) for i in range(1, 20)]
    assert {"tpot_b200_sxm", "ttft_b200_sxm"} <= set(table.columns)


@needs_fixture
def test_an_ablation_option_reaches_the_model(catalog):
    """The options a Problem is built with are the ones its predictions use."""
    rows, _ = load_rows(SILICON)
    base = K.Problem(rows, catalog)
    x0 = base.bounds()[2]
    batch = K.Problem(rows, catalog, K.FitOptions(model=K.M.ModelOptions(queue_form="batch"),
                                                  params=K.BATCH_PARAMS))
    no_mem = K.Problem(rows, catalog, K.FitOptions(runtime_memory=False))
    ttft = base.predict(x0, breakdown=False)["ttft"]
    assert not np.allclose(batch.predict(batch.bounds()[2], breakdown=False)["ttft"], ttft)
    assert (no_mem.c.hbm <= base.c.hbm).all() and (no_mem.c.hbm < base.c.hbm).any()
    assert np.array_equal(K.Problem(rows, catalog).predict(x0, breakdown=False)["ttft"], ttft)


@needs_fixture
def test_ttft_sources_split_the_held_out_error_into_sweep_offsets_and_the_rest():
    """The decomposition docs/simulator.md ("Where the TTFT error comes from") states: removing
    each sweep's own offset leaves the error along concurrency; the offsets are read back from
    the ratios they came from, and a known offset planted on one sweep is found."""
    from opx.simulate import ttft_sources as T
    rows, _ = K.load_rows(SILICON)
    key = T._sweeps(rows)
    big = key.map(key.value_counts()) >= T.MIN_SWEEP
    rng = np.random.default_rng(3)
    # a ratio that is a pure per-sweep offset: nothing is left once it is removed
    off = key.map(pd.Series(rng.normal(0, 0.5, key.nunique()), index=key.unique()))
    s = T.ttft_sources(rows, np.exp(off.to_numpy()))
    assert s["after_each_sweeps_offset_mdape"] < 1e-9
    assert s["sweeps"] == key[big].nunique() and s["rows"] == int(big.sum())
    assert abs(s["sweep_offset_sd_log"] - off[big].groupby(key[big]).first().std(ddof=0)) < 1e-9
    # an offset that is a function of the recorded configuration is told from it, held out
    told = np.exp(0.8 * (rows.backend == "sglang") - 0.3 * np.log(rows.isl_label.astype(float) / 1024))
    t = T.ttft_sources(rows, told.to_numpy())
    assert t["sweep_offset_sd_log_after_configuration"] < 0.3 * t["sweep_offset_sd_log"]
    # a random offset per sweep is not
    assert s["sweep_offset_sd_log_after_configuration"] > 0.8 * s["sweep_offset_sd_log"]
    # NaN rows (TTFT artefacts) are left out, not counted
    ratio = np.exp(off.to_numpy()); ratio[:5] = np.nan
    assert T.ttft_sources(rows, ratio)["rows"] <= s["rows"]
    # the measurements' own smoothness along concurrency does not depend on any prediction
    assert s["measured_interpolation_ttft_mdape"] == t["measured_interpolation_ttft_mdape"] > 0
    assert s["repeat_groups"] > 0 and s["repeat_max_over_min_median"] >= 1
