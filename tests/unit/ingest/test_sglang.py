"""SGLang `bench_serving` JSONL: every shared real sample with values read from it, the short
Dec-2024 and full 2025+ lines, and the 2026 spellings."""
from __future__ import annotations

from pathlib import Path

import pytest

from models import Point
from opx.ingest import core, sglang
from tests.conftest import ROOT, SHARED_FIXTURES, shared_fixture

SHARED = SHARED_FIXTURES
OWN = ROOT / "tests" / "fixtures" / "sglang"
QWEN = "sglang/tp8_dp1_Qwen3-8B_in1024_out128_p100_c100_38769a.DERIVED-stripped.jsonl"


shared = shared_fixture


def parse(path: Path):
    return sglang.parse(path, path.read_text())


# -- every shared sample --------------------------------------------------------------------------

def test_every_shared_sglang_sample_is_covered_here():
    folder = SHARED / "sglang"
    if not folder.is_dir():
        pytest.skip(f"shared fixtures folder {folder} is absent")
    assert {p.name for p in folder.iterdir()} == {
        "deepseek_dp_mla_output.jsonl", "llama_3_3_70b_offline_output.jsonl",
        "llama_3_3_70b_online_output.jsonl", Path(QWEN).name}


def test_full_2025_sample_qwen3():
    (record,) = parse(shared(QWEN))
    point, run = record.point, record.run
    assert record.where == "line 1"
    assert point["concurrency"] == 100                 # max_concurrency, not measured 80.6
    assert "request_rate" not in point                 # bare Infinity
    assert point["requests_completed"] == 100
    assert "requests_failed" not in point              # SGLang writes no failed count
    assert 1 / point["tpot_p99_s"] == pytest.approx(1000 / 195.41099979774992)
    assert point["tpot_p50_s"] == pytest.approx(0.011149914426108202)
    assert point["tpot_mean_s"] == pytest.approx(0.02376095063700313)
    assert point["ttft_p99_s"] == pytest.approx(0.9698566712159663)
    assert point["e2e_p90_s"] == pytest.approx(1.4385160727659243)
    assert "tpot_p90_s" not in point                   # SGLang has no TPOT p90: never guessed
    assert point["throughput_total_tok_s"] == pytest.approx(36459.28749797308)
    assert point["throughput_input_tok_s"] == pytest.approx(32529.567050504098)
    assert point["throughput_output_tok_s"] == pytest.approx(3929.720447468979)
    assert run["framework"] == "sglang"
    # The configured random lengths name the workload; --random-range-ratio 0.0 drew each
    # request's lengths from [1, len], so the measured means are about half of them.
    assert (run["isl"], run["osl"]) == (1024, 128)
    assert record.measured == pytest.approx((505.61, 61.08))    # 50561 / 100, 6108 / 100
    assert record.configured_as == "the configured random lengths"
    assert record.varies_with == "--random-range-ratio 0"
    assert "model" not in run                          # server_info was stripped to a stub
    assert "gpus_total" not in run and "provenance" not in run
    assert run["meta"] == {"dataset_name": "random", "random_input_len": "1024",
                           "random_output_len": "128", "random_range_ratio": "0.0"}
    Point(**point)


def test_short_dec2024_sample_deepseek_with_infinity():
    (record,) = parse(shared("sglang/deepseek_dp_mla_output.jsonl"))
    point = record.point
    assert "request_rate" not in point and "concurrency" not in point
    assert point["requests_completed"] == 10000
    assert point["throughput_output_tok_s"] == pytest.approx(12412.394674113431)
    # No input or total throughput in the short line: input = total_input_tokens / duration.
    assert point["throughput_input_tok_s"] == pytest.approx(10000 / 412.49091206211597)
    assert point["throughput_total_tok_s"] == pytest.approx(12412.394674113431
                                                            + 10000 / 412.49091206211597)
    assert point["ttft_p50_s"] == pytest.approx(10.014104524045251)
    assert point["e2e_mean_s"] == pytest.approx(381.23682297268615)
    assert point["e2e_p50_s"] == pytest.approx(374.5595875820145)
    assert not any(key.startswith("tpot") for key in point)   # no TPOT in Dec-2024 lines
    assert (record.run["isl"], record.run["osl"]) == (1, 512)     # random_input_len 1
    assert record.measured == (1, 512)
    assert record.varies_with == ""                     # --random-range-ratio 1.0: fixed lengths
    Point(**point)


def test_short_dec2024_offline_sample_one_record_per_line():
    records = parse(shared("sglang/llama_3_3_70b_offline_output.jsonl"))
    assert [r.where for r in records] == [f"line {n}" for n in range(1, 8)]
    assert [r.point["requests_completed"] for r in records] == [3000, 4000, 800, 1500, 1500,
                                                                6000, 2000]
    assert records[0].point["throughput_output_tok_s"] == pytest.approx(4520.698730654741)
    assert records[0].point["ttft_p50_s"] == pytest.approx(91.28220983641222)
    assert all("request_rate" not in r.point for r in records)
    assert records[6].run["meta"] == {"dataset_name": "sharegpt"}   # no random_* for sharegpt


def test_short_dec2024_online_sample_rates():
    records = parse(shared("sglang/llama_3_3_70b_online_output.jsonl"))
    assert [r.point["request_rate"] for r in records] == [1.0, 2.0, 4.0, 8.0, 16.0, 4.0, 8.0]
    assert [r.point["requests_completed"] for r in records] == [300, 600, 1200, 2400, 3200,
                                                                1200, 2400]
    assert records[4].point["throughput_output_tok_s"] == pytest.approx(4288.049348197696)
    assert records[4].point["e2e_p50_s"] == pytest.approx(159.46904255752452)
    assert all("concurrency" not in r.point for r in records)


# -- our own fixtures -----------------------------------------------------------------------------

def test_own_short_lines_with_infinity_and_a_rate():
    offline, online = parse(OWN / "short_dec2024.jsonl")
    assert "request_rate" not in offline.point
    assert online.point["request_rate"] == 4.0
    assert offline.point["throughput_input_tok_s"] == pytest.approx(1024.0)   # 102400 / 100 s
    assert offline.point["throughput_total_tok_s"] == pytest.approx(2048.0)
    assert (offline.run["isl"], offline.run["osl"]) == (1024, 1024)
    assert offline.run == online.run                    # same configuration -> one run


def test_own_full_line_reads_server_info_and_tag():
    (record,) = parse(OWN / "full_2025.jsonl")
    run, point = record.run, record.point
    assert run["model"] == "deepseek-ai/DeepSeek-R1"    # server_info.model_path
    assert run["framework"] == "sglang"                 # backend sglang-oai
    assert run["framework_version"] == "0.5.9"
    assert (run["tp"], run["ep"], run["dp_attention"]) == (8, 8, True)
    assert "gpus_total" not in run                      # not derived from tp/dp sizes
    assert run["label"] == "h200-tp8"
    assert point["concurrency"] == 64
    assert point["e2e_p90_s"] == pytest.approx(5.3)
    assert point["throughput_total_tok_s"] == 26214.4


def test_own_2026_line_with_total_input_and_no_total_throughput():
    (record,) = parse(OWN / "refactor_2026.jsonl")
    assert record.measured == (300, 200)                # total_input / total_output
    assert "isl" not in record.run                      # sharegpt: no configured length
    assert record.point["throughput_total_tok_s"] == pytest.approx(1000.0)   # 600 + 400
    assert record.point["request_rate"] == 2.0
    assert record.run["meta"] == {"dataset_name": "sharegpt"}


def test_backend_naming_another_server_sets_its_framework():
    (record,) = parse(OWN / "vllm_backend.jsonl")
    assert record.run["framework"] == "vllm"
    assert "model" not in record.run                    # server_info is null


@pytest.mark.parametrize("backend, framework", [
    ("sglang-oai-chat", "sglang"), ("vllm-chat", "vllm"), ("lmdeploy-chat", "lmdeploy"),
    ("trt", "tensorrt-llm"), ("truss", None), ("gserver", None)])
def test_backend_families(backend, framework):
    text = (OWN / "vllm_backend.jsonl").read_text().replace('"backend": "vllm"',
                                                           f'"backend": "{backend}"')
    (record,) = sglang.parse(Path("x.jsonl"), text)
    assert record.run.get("framework") == framework     # a server of unstated make: not guessed


# -- detection ------------------------------------------------------------------------------------

def test_core_imports_a_file_when_the_user_gives_hardware_and_gpus(catalog):
    result = core.parse_file(OWN / "full_2025.jsonl",
                             core.IngestOptions(hardware="h200", gpus=8), catalog)
    assert result.ok, result.error
    assert result.format == "sglang"
    (run,) = result.runs
    assert run.framework == "sglang" and run.framework_version == "0.5.9"
    assert run.deployment.tp == 8 and run.deployment.dp_attention is True


# -- random lengths: a sweep is one run in the workload of its configured lengths -----------------
#
# random_range_sweep.jsonl: four lines of one `--dataset-name random --random-input-len 1024
# --random-output-len 1024 --random-range-ratio 0.5` configuration at max_concurrency 1, 4, 16 and
# 64, so each line's measured mean lengths differ (761/774, 773/764, 766/770, 770/767).

SWEEP = OWN / "random_range_sweep.jsonl"
SWEEP_MEASURED = [(761, 774), (773, 764), (766, 770), (770, 767)]


def test_random_length_sweep_is_one_run_in_the_configured_workload(catalog):
    result = core.parse_file(SWEEP, core.IngestOptions(hardware="h100", gpus=1), catalog)
    assert result.ok, result.error
    (run,) = result.runs
    assert (run.workload, run.isl, run.osl) == ("1k1k", 1024, 1024)
    assert [p.concurrency for p in run.points] == [1, 4, 16, 64]
    # Each point keeps its own measured means.
    assert [p.note for p in run.points] == [f"measured mean ISL {i}, OSL {o}"
                                            for i, o in SWEEP_MEASURED]
    assert [n for n in result.notices if n.startswith("workload")] == [
        "workload `1k1k` from ISL/OSL 1024/1024 (the configured random lengths); measured means "
        "ISL 761-773, OSL 764-774 vary with --random-range-ratio 0.5"]
    assert "--random-range-ratio 0.5" in run.notes and "1024/1024" in run.notes
    assert run.meta["random_range_ratio"] == "0.5"       # another ratio is another run


def test_random_length_sweep_names_its_workload_by_the_lengths_when_not_in_the_catalog(catalog):
    text = SWEEP.read_text().replace('"random_output_len": 1024', '"random_output_len": 300')
    path = Path("sweep_1024_300.jsonl")
    (run,) = core.build_runs(str(path), sglang.parse(path, text),
                             core.IngestOptions(hardware="h100", gpus=1), catalog, "src", [])
    assert (run.workload, run.isl, run.osl) == ("1k-300", 1024, 300)
    assert len(run.points) == 4


def test_workload_flag_overrides_the_configured_lengths(catalog):
    result = core.parse_file(SWEEP, core.IngestOptions(hardware="h100", gpus=1,
                                                       workload="chat-random"), catalog)
    (run,) = result.runs
    assert run.workload == "chat-random" and len(run.points) == 4
    assert (run.isl, run.osl) == (1024, 1024)            # still the configured lengths
    assert any(n.startswith("workload `chat-random` as given (--workload); ISL/OSL 1024/1024")
               for n in result.notices)
    result = core.parse_file(SWEEP, core.IngestOptions(hardware="h100", gpus=1, workload="2k1k"),
                             catalog)
    (run,) = result.runs
    assert run.workload == "2k1k" and len(run.points) == 4


def test_random_length_sweep_imports_as_one_run_and_reimport_changes_nothing(tmp_path, catalog):
    from opx import store
    from opx.store.importer import import_files
    db = tmp_path / "opx.duckdb"
    options = core.IngestOptions(hardware="h100", gpus=1)
    (first,) = import_files([SWEEP], options, db, catalog)
    assert (first.runs_added, first.points_added) == (1, 4)
    (again,) = import_files([SWEEP], options, db, catalog)
    assert (again.runs_added, again.points_added) == (0, 0)
    with store.reading(db) as con:
        assert store.count_runs(con) == (1, 4)
        assert store.distinct_values(con, "workload") == ["1k1k"]


def test_a_sweep_split_over_files_of_one_line_each_joins_one_run(tmp_path, catalog):
    from opx import store
    from opx.store.importer import import_files
    paths = []
    for n, line in enumerate(SWEEP.read_text().splitlines()):
        paths.append(tmp_path / f"c{n}.jsonl")
        paths[-1].write_text(line + "\n")
    db = tmp_path / "opx.duckdb"
    import_files(paths, core.IngestOptions(hardware="h100", gpus=1), db, catalog)
    with store.reading(db) as con:
        assert store.count_runs(con) == (1, 4)


def test_real_online_sample_random_and_sharegpt_sweeps_are_two_runs(catalog):
    """The Dec-2024 sample: five `random` lines (1024/1024, --random-range-ratio 0.0, measured
    means 509/534, 515/515, ...) at request rates 1 to 16, and two `sharegpt` lines."""
    path = shared("sglang/llama_3_3_70b_online_output.jsonl")
    result = core.parse_file(path, core.IngestOptions(hardware="h200", gpus=8,
                                                      model="llama-3.3-70b"), catalog)
    random_run, sharegpt_run = result.runs
    assert (random_run.workload, random_run.isl, random_run.osl) == ("1k1k", 1024, 1024)
    assert [p.request_rate for p in random_run.points] == [1, 2, 4, 8, 16]
    assert random_run.points[0].note == "measured mean ISL 509, OSL 534"
    # ShareGPT lengths are the dataset's own: means within 3% of each other join one run.
    assert (sharegpt_run.workload, sharegpt_run.isl, sharegpt_run.osl) == ("225-191", 225,
                                                                           191)
    assert [p.request_rate for p in sharegpt_run.points] == [4, 8]
    assert any("--random-range-ratio 0" in n for n in result.notices)
