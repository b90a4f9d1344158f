"""InferenceX rows: every real sample parses with its own numbers, each quirk of our own fixtures,
and look-alikes of other tools left alone."""
import json
from pathlib import Path

import pytest

from opx.ingest.base import FormatError
from opx.ingest.core import IngestOptions, parse_file
from opx.ingest.inferencex import hardware_name, parse, sniff
from tests.unit.ingest import samples
from tests.unit.ingest.samples import SHARED, needs_shared

HARNESS = SHARED / "inferencex-harness"
DASHBOARD = SHARED / "dashboards" / "inferencex"
OWN = samples.OWN / "inferencex"
# The raw benchmark_serving output in the harness folder is vLLM's format, not ours.
RAW_VLLM = "concurrency_64_req_rate_inf_gpus_16_ctx_8_gen_8.json"
KIMI = ("agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_"
        "MI355-gbt350-odcdh5-wbb3.json")
GLM = ("glm5.1_tp2_conc16_offloadhicache_fp4_sglang_tp2-ep1-dpafalse_disagg-false_spec-none_"
       "conc16_mi355x-amds_08.json")
DISAGG = "agg_dsr1_8k1k_fp4_dynamo-trt_disagg-true_spec-mtp_conc2048_gb200-nv_3.json"

def read(path: Path) -> tuple[object, list]:
    """The file as JSON, and what the importer makes of it."""
    text = path.read_text()
    return json.loads(text), parse(path, text)


# -- every real sample ---------------------------------------------------------------------------

@needs_shared
def test_every_shared_inferencex_sample_gives_measured_points_of_named_hardware():
    files = sorted(p for folder in (HARNESS, DASHBOARD) for p in folder.glob("*.json")
                   if p.name != RAW_VLLM)
    assert len(files) == 7
    for path in files:
        records = parse(path, path.read_text())
        assert records, path.name
        for rec in records:
            assert rec.run["hardware"] and rec.point["concurrency"] > 0
            assert rec.run["provenance"] == "measured"


@pytest.mark.parametrize("text", [
    # vLLM result with `--metadata hw=... conc=...`: its `_ms` keys give it away.
    '{"hw": "h200", "conc": 8, "tput_per_gpu": 100, "mean_ttft_ms": 5.0, "median_tpot_ms": 9.0}',
    # GenAI-Perf / AIPerf nest their statistics under the metric's full name.
    '{"hardware": "h200", "conc": 8, "metrics": {}, "time_to_first_token": {"avg": 5.0}}',
    # opx's own CSV.
    "hardware,model,workload,gpus_total,concurrency,throughput_total_per_gpu\n"
    "h200,x,1k1k,8,4,900\n",
    "[]",
])
def test_look_alikes_are_not_claimed(tmp_path, text):
    assert not sniff(tmp_path / "x.json", text)


# -- processed fixed-sequence row ----------------------------------------------------------------------

@needs_shared
def test_processed_row_keeps_percentiles_means_and_system_totals():
    row, [rec] = read(HARNESS / KIMI)
    run, point = rec.run, rec.point
    assert run["hardware"] == "mi355x" and run["model"] == "kimik2.5"
    assert run["meta"]["model_id"] == "moonshotai/Kimi-K2.5"
    assert (run["isl"], run["osl"], run["tp"], run["ep"]) == (1024, 1024, 8, 1)
    assert run["gpus_total"] == 8
    assert run["mtp"] is True and run["dp_attention"] is False and run["disaggregated"] is False
    assert run["framework"] == "vllm" and run["precision"] == "int4"
    assert run["meta"]["image"] == "vllm/vllm-openai-rocm:v0.21.0"
    assert point["concurrency"] == 4
    # p50 is the median, the mean stays a mean, std is dropped.
    assert point["tpot_p50_s"] == row["median_tpot"] == pytest.approx(0.0173939)
    assert point["tpot_mean_s"] == row["mean_tpot"]
    assert point["ttft_p99_s"] == row["p99_ttft"] and point["e2e_p90_s"] == row["p90_e2el"]
    # Interactivity at P99 is 1000 / P99 TPOT (ms), as the file's own p99_intvty says.
    interactivity_p99 = 1000 / (point["tpot_p99_s"] * 1000)
    assert interactivity_p99 == pytest.approx(row["p99_intvty"]) == pytest.approx(54.171, abs=1e-3)
    # Single node: InferenceX divided every figure by all 8 GPUs, so ours / 8 gives the file's.
    assert point["throughput_total_tok_s"] / run["gpus_total"] == pytest.approx(row["tput_per_gpu"])
    assert point["throughput_output_tok_s"] / 8 == pytest.approx(row["output_tput_per_gpu"])
    assert point["throughput_input_tok_s"] / 8 == pytest.approx(row["input_tput_per_gpu"])
    assert point["throughput_total_tok_s"] == pytest.approx(445.0136, rel=1e-6)
    assert run["notes"] == ("InferenceX per-GPU figures converted: total, output and input "
                            "x 8 GPUs (tp x pp x pcp)")


@needs_shared
def test_supplemental_rows_are_one_sweep_with_rounded_interactivity_cross_checked():
    rows, records = read(DASHBOARD / "supplemental-bmk.json")
    assert len(records) == 8
    assert len({json.dumps(r.run, sort_keys=True) for r in records}) == 1
    run = records[0].run
    assert (run["hardware"], run["model"], run["framework"], run["date"]) == \
        ("gaudi3", "zai-org/GLM-4.7", "vllm-gaudi", "2026-03-14")
    last, row = records[-1].point, rows[-1]["metrics"]
    assert last["concurrency"] == 128
    assert last["ttft_p99_s"] == 29.53704 and last["ttft_p50_s"] == 0.69096
    assert 1 / last["tpot_p99_s"] == pytest.approx(row["p99_intvty"], rel=0.01)   # 2.63, rounded
    assert last["throughput_total_tok_s"] / 8 == pytest.approx(231.08)
    assert last["throughput_output_tok_s"] / 8 == pytest.approx(95.1)
    assert "tpot_p90_s" not in last and "e2e_p50_s" not in last   # not in the file: missing


# -- AgentX ----------------------------------------------------------------------------------------------

@needs_shared
def test_flat_agentx_rows_use_the_file_totals_and_keep_means_apart():
    rows, records = read(HARNESS / "agg_bmk.json")
    assert len(records) == 2
    first, row = records[0], rows[0]
    assert first.run["workload"] == "agentx" and "isl" not in first.run
    assert first.run["hardware"] == "mi300x" and first.run["model"] == "Qwen/Qwen3.5-397B-A17B-FP8"
    assert "framework" not in first.run and "precision" not in first.run     # empty strings
    assert first.point["throughput_total_tok_s"] == row["total_tput_tps"]
    per_gpu = first.point["throughput_total_tok_s"] / first.run["gpus_total"]
    assert per_gpu == pytest.approx(row["tput_per_gpu"])
    assert first.point["tpot_p90_s"] == row["p90_tpot"]
    assert first.point["tpot_mean_s"] == row["mean_tpot"]
    # AgentX has no median: P50 stays missing, never taken from the mean.
    assert "tpot_p50_s" not in first.point and "ttft_p50_s" not in first.point
    assert first.point["requests_completed"] == 439
    assert "theoretical prefix-cache hit rate 0.947" in first.point["note"]
    # Offloading differs, so the two rows are two runs.
    assert [r.run["meta"]["offloading"] for r in records] == ["none", "hicache"]


@needs_shared
def test_nested_v3_agentx_row():
    row, [rec] = read(DASHBOARD / "attempt1.json")
    run, point = rec.run, rec.point
    assert run["hardware"] == "h100" and run["meta"]["runner"] == "cluster:h100-dgxc"
    assert run["model"] == "dsv41flash" and run["workload"] == "agentx" and run["mtp"] is True
    assert run["gpus_total"] == 8 and "num_gpus" in run["notes"]
    latency = row["request_metrics"]["latency"]
    assert point["tpot_p50_s"] == latency["tpot"]["p50"] == 0.00883
    assert point["tpot_p90_s"] == 0.01615 and point["ttft_p50_s"] == 1.11157
    assert point["e2e_mean_s"] == latency["e2el"]["mean"]
    assert "tpot_p99_s" not in point                      # v3 stops at p95
    assert point["throughput_total_tok_s"] == 3242.21439
    assert point["throughput_total_tok_s"] / 8 == pytest.approx(
        row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"], rel=1e-5)
    # 44 warm-up requests were dropped on purpose: not failures.
    assert (point["requests_completed"], point["requests_failed"]) == (112, 0)
    assert "server GPU cache hit rate 0.362" in point["note"]


@needs_shared
def test_single_agentx_row_and_collected_one():
    row, [rec] = read(DASHBOARD / GLM)
    assert rec.point["ttft_mean_s"] == pytest.approx(49.478, abs=1e-3)   # 49,477.97 ms in AIPerf
    per_gpu = rec.point["throughput_total_tok_s"] / rec.run["gpus_total"]
    assert per_gpu == pytest.approx(row["tput_per_gpu"])
    assert rec.run["gpus_total"] == 2 and rec.run["meta"]["model_id"] == "amd/GLM-5.1-MXFP4"
    rows, [one] = read(DASHBOARD / "agg_bmk.json")
    assert one.run["gpus_total"] == 1
    total = one.point["throughput_total_tok_s"]
    assert total == rows[0]["tput_per_gpu"] == rows[0]["total_tput_tps"]


# -- rows without a GPU count ------------------------------------------------------------------------------

@needs_shared
def test_api_rows_without_gpu_counts_hand_the_per_gpu_figure_to_the_core(catalog):
    rows, records = read(HARNESS / "k3_b300_b200.json")
    assert len(records) == 12
    first = records[0]
    per_gpu = first.point["throughput_total_per_gpu"]
    assert per_gpu == rows[0]["metrics"]["tput_per_gpu"] == 1140.13793
    assert not any(key.endswith("_tok_s") for key in first.point)
    assert first.point["tpot_mean_s"] == 0.01035 and "tpot_p50_s" not in first.point
    assert "gpus_total" not in first.run and "--gpus" in first.run["notes"]
    assert {r.run["meta"]["offload_mode"] for r in records} == {"on", "off"}

    refused = parse_file(HARNESS / "k3_b300_b200.json",
                         IngestOptions(model="kimi-k2.5", workload="agentx"), catalog)
    assert not refused.ok and "--gpus" in refused.error
    result = parse_file(HARNESS / "k3_b300_b200.json",
                        IngestOptions(gpus=8, model="kimi-k2.5", workload="agentx"), catalog)
    assert result.ok, result.error
    b300 = next(r for r in result.runs if r.hardware == "b300")
    assert b300.points[0].throughput_total_tok_s == pytest.approx(1140.13793 * 8)


# -- our own fixtures: quirks -----------------------------------------------------------------------------

def test_disaggregated_row_converts_each_figure_by_the_gpus_inferencex_divided_by():
    row, [rec] = read(OWN / DISAGG)
    run, point = rec.run, rec.point
    assert (run["gpus_prefill"], run["gpus_decode"], run["gpus_total"]) == (8, 32, 40)
    assert point["throughput_output_tok_s"] == row["output_tput_per_gpu"] * 32 == 104900
    assert point["throughput_input_tok_s"] == row["input_tput_per_gpu"] * 8 == 839200
    assert point["throughput_total_tok_s"] == row["tput_per_gpu"] * 40 == 944100
    # Per GPU over ALL GPUs (our definition) is lower than InferenceX's per-decode-GPU figure.
    output_per_gpu = point["throughput_output_tok_s"] / run["gpus_total"]
    assert output_per_gpu == 2622.5 < row["output_tput_per_gpu"]
    assert point["throughput_total_tok_s"] / run["gpus_total"] == row["tput_per_gpu"]
    assert run["notes"] == ("InferenceX per-GPU figures converted: output x decode GPUs (32), "
                            "input x prefill GPUs (8), total x all GPUs (40)")
    # Deployment facts are the decode pool's; both pools are described.
    assert (run["tp"], run["ep"], run["dp_attention"], run["disaggregated"]) == (32, 32, True, True)
    meta = run["meta"]
    assert meta["prefill"] == "2 x TP4 EP4 DPA, 8 GPUs"
    assert meta["decode"] == "1 x TP32 EP32 DPA, 32 GPUs"
    assert run["hardware"] == "gb200" and meta["runner"] == "gb200-nv_3"
    assert meta["image"] == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.1.0"   # `#` decoded
    assert meta["router"] == "dynamo-kv-router 0.9.0" and meta["kv_p2p_transfer"] == "nixl"
    assert (run["model"], meta["model_id"]) == ("dsr1", "nvidia/DeepSeek-R1-0528-FP4-V2")
    assert (run["isl"], run["osl"]) == (8192, 1024)


def test_disaggregated_row_through_the_core(catalog):
    result = parse_file(OWN / DISAGG, IngestOptions(), catalog)
    assert result.ok, result.error
    [run] = result.runs
    assert (run.hardware, run.model, run.workload) == ("gb200-nvl72", "deepseek-r1", "8k1k")
    assert run.deployment.describe() == "disagg 8P+32D TP32 EP32 DPA MTP 40 GPUs"


def test_legacy_row_gets_input_as_total_minus_output_and_mtp_from_its_old_key():
    _, [rec] = read(OWN / "agg_legacy_2025_h200.json")
    assert rec.point["throughput_total_tok_s"] == 9600
    assert rec.point["throughput_output_tok_s"] == rec.point["throughput_input_tok_s"] == 4800
    assert rec.run["mtp"] is True and rec.run["hardware"] == "h200"
    assert "isl" not in rec.run and "workload" not in rec.run     # the core asks for --workload


def test_interactivity_alone_gives_the_same_statistic_of_tpot():
    _, records = read(OWN / "api_rows_interactivity_only.json")
    assert [r.point["tpot_p50_s"] for r in records] == [pytest.approx(1 / 125),
                                                         pytest.approx(1 / 95)]
    assert records[0].point["tpot_p99_s"] == pytest.approx(1 / 110)
    run = records[0].run
    assert run["hardware"] == "b200" and run["meta"]["runner"] == "b200-trt"
    assert run["mtp"] is False and run["meta"]["spec_decoding"] == "eagle"
    assert run["gpus_total"] == 4 and records[1].point["throughput_total_tok_s"] == 1800 * 4
    assert records[0].run == records[1].run


@pytest.mark.parametrize("runner, gpu", [
    ("b200-nb_0", "b200"), ("mi355x-amds_08", "mi355x"), ("cluster:h100-dgxc", "h100"),
    ("b200-trt", "b200"), ("gb200_dynamo", "gb200"), ("h200_3", "h200"), ("GB300", "gb300"),
    ("mi355x", "mi355x"),
])
def test_runner_names_become_gpu_names(runner, gpu):
    assert hardware_name(runner) == gpu


def test_a_bad_row_in_an_array_is_named_by_its_index(tmp_path):
    row = json.loads((OWN / "agg_legacy_2025_h200.json").read_text())
    text = json.dumps([row, {**row, "p99_tpot": "fast"}])
    with pytest.raises(FormatError) as err:
        parse(tmp_path / "agg_bmk.json", text)
    assert err.value.where == "[1].p99_tpot"
