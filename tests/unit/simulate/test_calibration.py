"""Calibration data, the stored fit, and the leave-one-system-out validation on the fixture."""
import json
from pathlib import Path

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
    assert cal["rows"]["rows_used"] > 500
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
def test_leave_one_system_out_validation():
    """The CI run of the validation (fewer iterations than calibrate() to stay fast)."""
    df, overall = K.validate(SILICON, max_nfev=15)
    assert list(df.columns[:3]) == ["system", "hardware", "n"]
    assert len(df) == 6 and df.n.sum() == overall["n"]
    # regression bounds around the documented numbers (docs/simulator.md)
    assert overall["tpot_mdape"] < 20
    assert overall["throughput_mdape"] < 25
    assert overall["ttft_mdape"] < 70
    assert (df.tpot_mdape < 35).all()
