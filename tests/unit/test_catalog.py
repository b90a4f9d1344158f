import shutil

import pytest

from opx.catalog import load_catalog
from opx.errors import OpxError

DESIGN_HARDWARE = ["vr-nvl72", "gb300-nvl72", "gb200-nvl72", "b300", "b200", "h200", "h100", "mi355x"]
DESIGN_MODELS = ["deepseek-v4.1-flash", "deepseek-v4-flash", "deepseek-v4-pro", "deepseek-r1",
                 "deepseek-v3", "deepseek-v3.2", "gpt-oss-120b", "llama-3.3-70b", "kimi-k2.5"]
DESIGN_WORKLOADS = ["agentx", "1k1k", "1k8k", "8k1k", "2k1k", "2k2k"]


def test_catalog_has_every_stable_slug(catalog):
    assert set(DESIGN_HARDWARE) <= set(catalog.hardware)
    assert set(DESIGN_MODELS) <= set(catalog.models)
    assert set(DESIGN_WORKLOADS) <= set(catalog.workloads)


def test_every_hardware_value_has_a_source_and_rubin_fp4_is_marked_assumed(catalog):
    for hw in catalog.hardware.values():
        for name in ("fp8_dense_pflops", "hbm_tb_s", "power_w_all_in", "usd_per_gpu_hour"):
            assert getattr(hw, name).source
    assert catalog.hardware["vr-nvl72"].fp4_dense_pflops.assumed
    assert catalog.hardware["vr-nvl72"].nvlink_domain.value == 72
    assert catalog.workloads["agentx"].isl > 80_000


def test_importer_spellings_resolve(catalog):
    assert catalog.resolve_hardware("GB300") == "gb300-nvl72"
    assert catalog.resolve_model("deepseek-ai/DeepSeek-V4-Pro") == "deepseek-v4-pro"
    assert catalog.resolve_hardware("warp-drive") is None


def test_a_bad_catalog_entry_names_file_and_field(tmp_path):
    from opx.config import CATALOG_DIR
    for f in CATALOG_DIR.glob("*.toml"):
        shutil.copy(f, tmp_path / f.name)
    text = (tmp_path / "hardware.toml").read_text().replace("system_gpus = 72", "system_gpus = 0", 1)
    (tmp_path / "hardware.toml").write_text(text)
    with pytest.raises(OpxError) as err:
        load_catalog(tmp_path)
    assert err.value.file.endswith("hardware.toml")
    assert "system_gpus" in err.value.field
