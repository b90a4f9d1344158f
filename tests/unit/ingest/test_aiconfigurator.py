"""AIConfigurator outputs: simulated Pareto / top-n CSVs and silicon_sample.csv (measured TTFT/TPOT,
throughput by Little's law); each quirk of our own fixtures."""
import csv
import json
import time
from pathlib import Path

import pytest

from opx.ingest.aiconfigurator import parse
from opx.ingest.core import IngestOptions, parse_file
from tests.unit.ingest import samples
from tests.unit.ingest.samples import SHARED, needs_shared

AIC = SHARED / "aiconfigurator"
RUN_DIR = AIC / "gb300_dsv3.1-nvfp4_1k1k"
OWN = samples.OWN / "aiconfigurator"


def read(path: Path) -> tuple[list[dict], list]:
    """The CSV's rows, and what the importer makes of the file."""
    text = path.read_text()
    return list(csv.DictReader(text.splitlines())), parse(path, text)


def runs(records) -> dict[str, list]:
    """Records grouped the way the core groups them: by identical run facts."""
    out: dict[str, list] = {}
    for rec in records:
        out.setdefault(json.dumps(rec.run, sort_keys=True), []).append(rec)
    return out


# -- simulated Pareto and top-n ---------------------------------------------------------------------

@needs_shared
def test_agg_pareto_stores_system_totals_and_one_predicted_value_as_mean_and_p50():
    rows, records = read(RUN_DIR / "agg_pareto.csv")
    assert len(records) == 74 and len(runs(records)) == 6
    first, row = records[0], rows[0]
    run, point = first.run, first.point
    # Raw names: the parser keeps them; the core maps them onto the catalog.
    assert (run["hardware"], run["model"]) == ("gb300", "nvidia/DeepSeek-V3.1-NVFP4")
    assert (run["framework"], run["framework_version"]) == ("trtllm", "1.3.0rc20")
    assert run["precision"] == "nvfp4"
    assert (run["isl"], run["osl"], run["provenance"]) == (1024, 1024, "simulated")
    assert run["meta"]["engine"] == "aiconfigurator" and "engine_version" not in run["meta"]
    assert (run["gpus_total"], run["tp"], run["ep"], run["dp_attention"]) == (2, 1, 2, True)
    assert run["meta"]["parallel"] == "tp1 pp1 dp2 moe_tp1 moe_ep2"
    assert point["concurrency"] == 1024
    # One simulated value: the mean and P50; the tail is not modelled.
    assert point["tpot_mean_s"] == point["tpot_p50_s"] == 0.074417
    assert point["ttft_p50_s"] == 1.342272 and point["e2e_p50_s"] == 77.470731
    assert not any(key.endswith(("_p90_s", "_p99_s")) for key in point)
    assert 1 / point["tpot_p50_s"] == pytest.approx(float(row["tokens/s/user"]), rel=1e-4)
    # tokens/s/gpu divides by ALL GPUs: our total / gpus_total gives the file's figure back.
    assert point["throughput_output_tok_s"] == 13606.987
    per_gpu = point["throughput_output_tok_s"] / run["gpus_total"]
    assert per_gpu == pytest.approx(float(row["tokens/s/gpu"]))
    assert point["throughput_input_tok_s"] == pytest.approx(13.301 * 1024)
    assert point["throughput_total_tok_s"] == pytest.approx(13606.987 + 13.301 * 1024)


@needs_shared
def test_disagg_pareto_counts_prefill_and_decode_workers():
    rows, records = read(RUN_DIR / "disagg_pareto.csv")
    assert len(records) == 26
    first, row = records[0], rows[0]
    run = first.run
    # 13 prefill workers x (tp1 pp1 dp2) + 10 decode workers x (tp1 pp1 dp4) = 26 + 40 = 66.
    assert (run["gpus_prefill"], run["gpus_decode"], run["gpus_total"]) == (26, 40, 66)
    assert run["gpus_total"] == int(row["num_total_gpus"]) and run["disaggregated"] is True
    assert run["meta"]["prefill"] == "13 x tp1 pp1 dp2 moe_tp1 moe_ep2"
    assert run["meta"]["decode"] == "10 x tp1 pp1 dp4 moe_tp2 moe_ep2"
    assert (run["tp"], run["ep"]) == (1, 2)            # the decode worker's
    assert first.point["throughput_output_tok_s"] / 66 == pytest.approx(4619.047, abs=1e-3)
    for rec, r in zip(records, rows):
        assert rec.point["throughput_output_tok_s"] / rec.run["gpus_total"] == \
            pytest.approx(float(r["tokens/s/gpu"]), abs=0.01)


@needs_shared
def test_best_config_topn_rows_are_the_same_points_as_the_pareto_ones():
    _, top = read(RUN_DIR / "disagg_best_config_topn.csv")
    _, pareto = read(RUN_DIR / "disagg_pareto.csv")
    assert len(top) == 5
    assert top[0].run == pareto[0].run and top[0].point == pareto[0].point


@needs_shared
def test_simulated_run_through_the_core(catalog):
    result = parse_file(RUN_DIR / "agg_pareto.csv", IngestOptions(), catalog)
    assert result.ok, result.error
    run = result.runs[0]
    assert (run.hardware, run.workload, run.provenance) == ("gb300-nvl72", "1k1k", "simulated")
    # NVIDIA's NVFP4 checkpoint is the catalog's DeepSeek-V3.1 (an alias), at its own precision.
    assert (run.model, run.precision) == ("deepseek-v3.1", "nvfp4")
    assert not any("not in the catalog" in n for n in result.notices)


# -- silicon_sample.csv -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def silicon() -> list:
    if not SHARED.is_dir():
        pytest.skip(f"shared sample files not found at {SHARED}")
    path = AIC / "silicon_sample.csv"
    return parse(path, path.read_text())


@needs_shared
def test_silicon_sample_parses_whole_and_fast():
    path = AIC / "silicon_sample.csv"
    text = path.read_text()
    start = time.perf_counter()
    records = parse(path, text)
    assert time.perf_counter() - start < 2.0
    # 5,221 rows, of which 1,328 disaggregated rows lack worker counts, 19 lack a concurrency
    # and 55 are GB200 "agg tp12..tp72" rows (the calibration's rule too)
    assert len(records) == 5221 - 1328 - 19 - 55
    assert all(r.run["provenance"] == "derived" for r in records)
    assert "1,402 of the file's 5,221 rows were skipped" in records[0].run["notes"]
    assert "55 aggregated rows with TP >= 12 and MoE-TP = TP" in records[0].run["notes"]
    assert not any(r.run.get("disaggregated") is False and r.run.get("tp", 0) >= 12
                   and r.run["hardware"] == "gb200" for r in records)


@needs_shared
def test_the_importer_and_the_calibration_drop_the_same_mislabelled_rows(silicon):
    """GB200's "agg tp12..tp72" rows: one rule (mislabelled_agg) for what is imported and what
    the simulator is calibrated on, so a figure on screen and the fit behind a projection read
    the same measurements."""
    from opx.ingest.aiconfigurator import MISLABELLED_AGG
    from opx.simulate.silicon import load_rows
    _, dropped = load_rows(AIC / "silicon_sample.csv", model_paths=None)
    note = silicon[0].run["notes"]
    skipped = int(note.split(MISLABELLED_AGG)[0].rsplit(" ", 2)[-2].replace(",", ""))
    assert skipped == dropped["dropped_agg_mislabelled_tp"] == 55


def test_silicon_row_throughput_by_littles_law_computed_by_hand(silicon):
    rec = next(r for r in silicon
               if "minimaxm2_5_b300_vllm_fp8_agg_8192x1024_c128_cfg733" in r.point["note"])
    # The row: concurrency 128, ISL 8192, OSL 1024, TTFT 972.3109823355117 ms,
    # TPOT 33.442908754168066 ms.
    request_time = 0.9723109823355117 + (1024 - 1) * 0.033442908754168066      # 35.1844 s
    assert request_time == pytest.approx(35.1844, abs=1e-4)
    assert rec.point["throughput_output_tok_s"] == pytest.approx(128 * 1024 / request_time)
    assert rec.point["throughput_input_tok_s"] == pytest.approx(128 * 8192 / request_time)
    assert rec.point["throughput_total_tok_s"] == pytest.approx(128 * (1024 + 8192) / request_time)
    per_gpu = rec.point["throughput_output_tok_s"] / rec.run["gpus_total"]
    assert per_gpu == pytest.approx(931.32, abs=0.01)
    # Measured means stay means: the file does not say which statistic; Little's law wants means.
    assert rec.point["tpot_mean_s"] == pytest.approx(0.033442908754168066)
    assert not any(key.endswith(("_p50_s", "_p90_s", "_p99_s")) for key in rec.point)
    assert "request time = TTFT + (1024 - 1) x TPOT = 35.1844 s" in rec.point["note"]
    run = rec.run
    assert (run["hardware"], run["model"], run["framework"], run["framework_version"]) == \
        ("b300_sxm", "MiniMaxAI/MiniMax-M2.5", "vllm", "0.19.0")
    assert (run["gpus_total"], run["tp"], run["isl"], run["osl"]) == (4, 4, 8192, 1024)
    assert run["meta"]["silicon_source"] == \
        "db-dump/2026-04-27; config_id=733; vllm/vllm-openai:v0.19.0-cu130"
    # Every point of this configuration joins the one run.
    same = [r for r in silicon if r.run == run]
    assert sorted(r.point["concurrency"] for r in same) == [4, 8, 16, 32, 64, 128, 256, 512]


def test_silicon_disaggregated_row_counts_workers(silicon):
    rec = next(r for r in silicon
               if "kimik2_5_gb200_trtllm_fp4_disagg_1024x1024_c4_cfg759" in r.point["note"])
    # 1 prefill worker x (tp1 dp4) + 4 decode workers x tp8.
    assert (rec.run["gpus_prefill"], rec.run["gpus_decode"], rec.run["gpus_total"]) == (4, 32, 36)
    assert rec.run["meta"]["decode"] == "4 x tp8 pp1 dp1 moe_tp1 moe_ep8"


# -- our own fixtures: quirks -----------------------------------------------------------------------------

def test_silicon_quirks():
    _, records = read(OWN / "silicon_quirks.csv")
    grouped = runs(records)
    assert len(records) == 5 and len(grouped) == 4
    own = [r for r in records if r.run["meta"]["silicon_source"] == "source_file=own-sweep.csv"]
    # Two concurrencies of one configuration, one run dated by its latest measurement.
    assert [r.point["concurrency"] for r in own] == [4, 16]
    assert own[0].run == own[1].run and own[0].run["date"] == "2026-03-05"
    # attention_dp_size 0 and moe sizes 0 mean "does not apply": a dense TP2 worker on 2 GPUs.
    assert own[0].run["gpus_total"] == 2 and "ep" not in own[0].run
    assert own[0].point["throughput_output_tok_s"] == pytest.approx(4 * 1024 / (0.05 + 1023 * 0.01))
    # The same configuration from another source is another run.
    other = [r for r in records if r.run["meta"]["silicon_source"] == "source_file=other-sweep.csv"]
    assert len(other) == 1 and other[0].run["date"] == "2026-03-02"
    doubled = next(r for r in records if r.run["model"] == "MiniMaxAI/MiniMax-M2.5")
    assert doubled.run["gpus_total"] == 16 and "counted twice" in doubled.run["notes"]
    disagg = next(r for r in records if r.run["disaggregated"])
    assert (disagg.run["gpus_prefill"], disagg.run["gpus_decode"]) == (12, 4)
    notes = records[0].run["notes"]
    assert "2 of the file's 7 rows were skipped" in notes
    assert "without worker counts" in notes and "without silicon_concurrency" in notes


def test_pareto_prefix_and_context_parallel():
    rows, records = read(OWN / "agg_pareto_prefix_cp.csv")
    assert records[0].run["prefix_hit_rate"] == 0.5
    assert records[0].run == records[1].run and len(runs(records)) == 2
    cp = records[2]
    assert cp.run["gpus_total"] == 4
    assert cp.run["meta"]["parallel"] == "tp2 pp1 dp1 cp2 moe_tp2 moe_ep1"
    per_gpu = cp.point["throughput_output_tok_s"] / 4
    assert per_gpu == pytest.approx(float(rows[2]["tokens/s/gpu"]), abs=1e-3)


def test_disagg_with_different_prefill_hardware_names_the_decode_hardware():
    _, [rec] = read(OWN / "disagg_pareto_mixed_hardware.csv")
    assert rec.run["hardware"] == "b200_sxm" and rec.run["meta"]["prefill_hardware"] == "h200_sxm"
    assert rec.run["label"] == ("AIC 2 x tp1 pp1 dp4 moe_tp1 moe_ep4 "
                                "+ 1 x tp1 pp1 dp8 moe_tp1 moe_ep8")
    assert rec.point["throughput_output_tok_s"] == pytest.approx(19.787 * 1024)
