"""vLLM `vllm bench serve --save-result` files: every shared real sample with values read from it,
and the quirks of each version (our own small fixtures)."""
from __future__ import annotations

from pathlib import Path

import pytest

from models import Point
from opx.ingest import core, sglang, vllm
from opx.ingest.base import FormatError
from tests.conftest import ROOT, SHARED_FIXTURES, shared_fixture

SHARED = SHARED_FIXTURES
OWN = ROOT / "tests" / "fixtures" / "vllm"
SWEEP = "vllm/sweep/SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"
INFERENCEX_RAW = "inferencex-harness/concurrency_64_req_rate_inf_gpus_16_ctx_8_gen_8.json"


shared = shared_fixture


def parse(path: Path):
    return vllm.parse(path, path.read_text())


def only(path: Path):
    records = parse(path)
    assert len(records) == 1
    return records[0]


# -- every shared sample --------------------------------------------------------------------------

# Values copied from each file: (model_id, date, completed, failed, max_concurrency,
# median_tpot_ms, p99_tpot_ms, p99_ttft_ms, total_token_throughput, output_throughput, isl, osl)
SHARED_SINGLE_RESULTS = {
    "vllm/benchmark_qwen3_32b_h200sxm_run_1_TP8_DP1_CTX1024_C100_P100_O128.json": (
        "Qwen/Qwen3-32B", "2026-01-28", 100, 0, 100, 15.646890473119388, 23.53503611774778,
        2182.4347146227956, 35267.57999316629, 3918.6199992406987, 1024, 128),
    "vllm/gpt-oss-120b-run1_TP2_DP4_CTX1024.json": (
        "/root/gfs/01be5b33/gpt-oss-120b-malaysian", "2026-01-21", 100, 0, 100,
        18.490369708504616, 18.684242709015503, 298.13124744920066, 43718.1919211264,
        4857.576880125155, 1024, 128),
    "vllm/gpt-oss-120b-run1_TP2_DP4_CTX1024_C100_P100_O128.json": (
        "/root/gfs/01be5b33/gpt-oss-120b-malaysian", "2026-01-21", 100, 0, 100,
        18.25530049262759, 19.149670739507847, 400.7419384852983, 42336.432332243945,
        4704.048036915993, 1024, 128),
    f"{SWEEP}/run=0.json": (
        "facebook/opt-125m", "2026-08-18", 8, 0, 2, 8.323490332986694, 9.394318119331729,
        762.4942294094944, 281.2430388914002, 93.74767963046673, 32, 16),
    f"{SWEEP}/run=1.json": (
        "facebook/opt-125m", "2026-08-18", 8, 0, 2, 7.929104699966653, 9.040313850321885,
        57.58295443694805, 598.1072140254685, 199.36907134182283, 32, 16),
    INFERENCEX_RAW: (
        "/models/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a/",
        "2026-04-28", 640, None, 64, 12.51935791408594, 12.92620933710034, 685.4502430907452,
        10005.210669241294, 5002.605334620647, 1024, 1024),
    "vllm/legacy_v0.6_lambdalabs/Meta-Llama-3.1-8B-FP8_tp1_len2048.json": (
        "neuralmagic/Meta-Llama-3.1-8B-FP8", "2024-09-07", 10, None, None, 5.198485823815636,
        9.263060682011433, 64.57043718444766, 1281.9486152410154 + 413.89429359863317,
        413.89429359863317, 137, 44),
}
SHARED_OTHER = {"vllm/bench_serve_all_requests_failed_v0.25.1.json", f"{SWEEP}/summary.json"}


def test_every_shared_vllm_sample_has_expected_values():
    """A sample added to shared/fixtures/vllm must get its own expectations here."""
    folder = SHARED / "vllm"
    if not folder.is_dir():
        pytest.skip(f"shared fixtures folder {folder} is absent")
    found = {str(p.relative_to(SHARED)) for p in folder.rglob("*") if p.is_file()}
    assert found == {k for k in SHARED_SINGLE_RESULTS if k.startswith("vllm/")} | SHARED_OTHER


@pytest.mark.parametrize("relative", list(SHARED_SINGLE_RESULTS))
def test_shared_sample_parses_with_the_values_it_holds(relative):
    (model, date, completed, failed, concurrency, median_tpot_ms, p99_tpot_ms, p99_ttft_ms,
     total, output, isl, osl) = SHARED_SINGLE_RESULTS[relative]
    record = only(shared(relative))
    run, point = record.run, record.point
    assert run["model"] == model                                  # raw spelling: core maps it
    assert run["framework"] == "vllm"
    assert run["date"] == date
    assert "isl" not in run and "osl" not in run        # vLLM does not write its configured lengths
    assert tuple(round(m) for m in record.measured) == (isl, osl)
    assert "gpus_total" not in run and "provenance" not in run   # never guessed
    assert point["requests_completed"] == completed
    assert point.get("requests_failed") == failed                 # absent before 2025
    assert point.get("concurrency") == concurrency
    assert "request_rate" not in point                            # all are "inf" runs
    assert 1 / point["tpot_p99_s"] == pytest.approx(1000 / p99_tpot_ms)   # P99 interactivity
    assert point["tpot_p50_s"] == pytest.approx(median_tpot_ms / 1000)    # median is p50
    assert point["ttft_p99_s"] == pytest.approx(p99_ttft_ms / 1000)
    assert point["throughput_total_tok_s"] == pytest.approx(total)
    assert point["throughput_output_tok_s"] == pytest.approx(output)
    assert point["throughput_input_tok_s"] == pytest.approx(total - output)
    Point(**point)                                                # the model accepts it


def test_legacy_2024_sample_reads_input_throughput_and_latency_ms():
    point = only(shared("vllm/legacy_v0.6_lambdalabs/Meta-Llama-3.1-8B-FP8_tp1_len2048.json")).point
    assert point["throughput_input_tok_s"] == pytest.approx(1281.9486152410154)
    assert point["e2e_p99_s"] == pytest.approx(1.0305146967872863)     # p99_latency_ms
    assert point["e2e_mean_s"] == pytest.approx(0.29035341650014743)
    assert "tpot_p90_s" not in point                                   # never guessed


def test_inferencex_raw_harness_output_keeps_p90_and_drops_p999():
    record = only(shared(INFERENCEX_RAW))
    point = record.point
    assert point["tpot_p90_s"] == pytest.approx(0.012759973599943258)
    assert point["ttft_p90_s"] == pytest.approx(0.6124625990400091)
    assert point["e2e_p90_s"] == pytest.approx(13.39661577034276)
    assert point["e2e_p99_s"] == pytest.approx(13.560334076725412)    # not p99.9 (13.561)
    assert point["tpot_mean_s"] == pytest.approx(0.012526103166546621)
    # The file names 16 GPUs only in its file name; the file itself does not state it.
    assert "gpus_total" not in record.run


def test_sweep_run_files_keep_swept_parameters_and_run_number():
    for number in (0, 1):
        record = only(shared(f"{SWEEP}/run={number}.json"))
        assert record.run["meta"] == {"max_num_seqs": "4"}
        assert record.point["note"] == f"sweep run {number}"


def test_sweep_summary_yields_the_same_points_as_its_run_files():
    summary = parse(shared(f"{SWEEP}/summary.json"))
    runs = [only(shared(f"{SWEEP}/run={n}.json")) for n in (0, 1)]
    assert [(r.run, r.point) for r in summary] == [(r.run, r.point) for r in runs]
    assert [r.where for r in summary] == ["result 1", "result 2"]


def test_shared_all_failed_sample_is_refused():
    with pytest.raises(FormatError) as exc:
        parse(shared("vllm/bench_serve_all_requests_failed_v0.25.1.json"))
    assert exc.value.where == "completed"
    assert exc.value.problem == "0 requests completed (all 8 failed): nothing to import"


# -- our own fixtures: one quirk each -------------------------------------------------------------

def test_append_result_file_gives_one_record_per_object():
    first, second = parse(OWN / "append_two_results.json")
    assert (first.where, second.where) == ("result 1", "result 2")
    assert (first.point["concurrency"], second.point["concurrency"]) == (64, 128)
    assert (first.point["requests_failed"], second.point["requests_failed"]) == (0, 2)
    assert second.point["requests_completed"] == 1278
    assert second.measured[0] == 1024                 # 1,308,672 tokens / 1,278 completed
    assert 1 / second.point["tpot_p99_s"] == pytest.approx(50.0)      # 1000 / 20 ms
    assert "request_rate" not in first.point          # "inf" is no rate
    assert first.run == second.run                    # one configuration -> one run


def test_request_goodput_key_with_trailing_colon_and_rate_based_run():
    record = only(OWN / "request_goodput_colon.json")
    point = record.point
    assert point["request_rate"] == 8.0
    assert "concurrency" not in point                 # max_concurrency is null
    assert "requests_failed" not in point             # no `failed` before 2025
    assert point["tpot_p90_s"] == pytest.approx(0.022)
    assert point["e2e_p90_s"] == pytest.approx(20.9)
    assert point["throughput_input_tok_s"] == pytest.approx(8192.0)
    assert record.run["date"] == "2025-01-15"


def test_metadata_keys_become_run_facts_and_the_rest_meta():
    run = only(OWN / "metadata.json").run
    assert run["hardware"] == "gb300"
    assert run["model"] == "deepseek-ai/DeepSeek-R1"  # --metadata model wins over model_id
    assert run["framework"] == "sglang"               # --metadata framework wins over "vllm"
    assert run["framework_version"] == "0.5.9"
    assert (run["precision"], run["workload"]) == ("fp4", "1k1k")
    assert (run["tp"], run["ep"]) == (4, 8)
    assert run["gpus_total"] == 8                     # tp 4 x dp 2, no `gpus` given
    assert "TP x DP" in run["notes"]
    assert run["meta"] == {"dp": "2", "image": "lmsysorg/sglang:v0.5.9"}
    assert run["label"] == "dsr1-fp4"


def test_metadata_prefill_and_decode_gpus_make_a_disaggregated_run():
    run = only(OWN / "metadata_disaggregated.json").run
    assert (run["gpus_prefill"], run["gpus_decode"], run["gpus_total"]) == (8, 8, 16)
    assert run["disaggregated"] is True
    assert "meta" not in run


def test_median_stands_in_for_p50_and_a_missing_p99_stays_missing():
    point = only(OWN / "median_only_rate_based.json").point
    assert point["tpot_p50_s"] == pytest.approx(0.006)
    assert point["tpot_p90_s"] == pytest.approx(0.0068)
    assert point["tpot_mean_s"] == pytest.approx(0.0062)
    assert "tpot_p99_s" not in point and "ttft_p99_s" not in point and "e2e_p50_s" not in point
    assert point["request_rate"] == 4.0
    assert point["note"] == "burstiness 0.5 (1 = Poisson arrivals)"


def test_explicit_p50_wins_over_median_and_p999_is_dropped():
    point = only(OWN / "explicit_p50.json").point
    assert point["tpot_p50_s"] == pytest.approx(0.0049)   # p50_tpot_ms, not median (5.1)
    assert point["ttft_p50_s"] == pytest.approx(0.037)
    assert point["tpot_p99_s"] == pytest.approx(0.006)    # p99, not p99.9 (6.5)


def test_legacy_2024_layout():
    record = only(OWN / "legacy_2024.json")
    point = record.point
    assert record.run["date"] == "2024-09-17"
    assert point["throughput_input_tok_s"] == 2500.0
    assert point["throughput_total_tok_s"] == 3140.0     # input + output: no total in 2024
    assert point["e2e_p99_s"] == pytest.approx(1.0)      # p99_latency_ms
    assert "concurrency" not in point and "request_rate" not in point
    assert "meta" not in record.run                      # best_of / per-request arrays ignored


def test_sweep_run_file_with_several_swept_parameters():
    record = only(OWN / "sweep_run.json")
    assert record.run["meta"] == {"max_num_seqs": "256", "enable_chunked_prefill": "true"}
    assert record.point["note"] == "sweep run 2"
    assert record.point["concurrency"] == 4


def test_sweep_summary_list():
    records = parse(OWN / "sweep_summary.json")
    assert [r.point["note"] for r in records] == ["sweep run 0", "sweep run 1"]
    assert records[1].point["throughput_output_tok_s"] == 150.0


# -- detection ------------------------------------------------------------------------------------

def test_sglang_keys_added_as_metadata_do_not_turn_a_vllm_file_into_sglang():
    text = (OWN / "explicit_p50.json").read_text().replace(
        '"num_prompts": 100,', '"num_prompts": 100, "random_input_len": "1024",')
    assert vllm.sniff(Path("x.json"), text)
    assert not sglang.sniff(Path("x.json"), text)


def test_core_imports_a_file_when_the_user_gives_hardware_and_gpus(catalog):
    result = core.parse_file(OWN / "append_two_results.json",
                             core.IngestOptions(hardware="h200", gpus=8), catalog)
    assert result.ok, result.error
    assert result.format == "vllm"
    (run,) = result.runs
    assert run.framework == "vllm" and run.provenance == "measured"
    assert [p.concurrency for p in run.points] == [64, 128]


def test_core_asks_for_the_gpu_count_the_file_does_not_state(catalog):
    result = core.parse_file(OWN / "append_two_results.json",
                             core.IngestOptions(hardware="h200"), catalog)
    assert not result.ok and "--gpus" in result.error
