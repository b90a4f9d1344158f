"""Calibration data, the stored fit, and the leave-one-system-out validation on the fixture."""
import json
from pathlib import Path

import numpy as np
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
    assert K.Problem(rows, catalog, artefact_rule=False).artefact.sum() == 0


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
