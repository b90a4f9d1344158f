"""The contract every format module keeps, checked on every sample file (tests/unit/ingest/samples.py):

- each file is claimed by its own format's sniffer and by no other, so the order in which the
  sniffers are asked decides nothing;
- each good file imports, and importing it again changes nothing;
- each broken file is refused with `<file>: <field or line>: <what is wrong>`;
- a real file cut in half is refused, naming the line where it breaks;
- no sniffer raises, or claims text that is no result file;
- stored ids are stable: known files give the run ids and point keys they always gave.

What a format reads from its files (values, units, quirks) is checked in its own test file."""
from __future__ import annotations

from pathlib import Path

import pytest

from opx import store
from opx.store.importer import import_files
from opx.ingest.core import IngestOptions, detect, formats, parse_file
from tests.unit.ingest.samples import OWN, SHARED, owner_of, read, sample_files

SAMPLES = sample_files()


def _claims(path: Path, text: str) -> list[str]:
    return [module.NAME for module in formats() if module.sniff(path, text)]


@pytest.mark.parametrize("path, owner, _good", SAMPLES)
def test_each_sample_file_is_claimed_by_its_own_format_alone(path, owner, _good):
    text = read(path)
    assert _claims(path, text) == ([owner] if owner else [])
    if owner:
        assert detect(path, text).NAME == owner


def test_vllm_the_most_common_format_is_asked_first():
    assert formats()[0].NAME == "vllm"


# -- good files: imported, and a second import changes nothing -----------------------------------

# What the files of each format do not say (the flags a user gives), and files that differ.
H200 = {"hardware": "h200", "gpus": 8}
FLAGS = {"vllm": H200, "sglang": {**H200, "model": "deepseek-r1"},
         "genai-perf": {**H200, "model": "deepseek-r1"}, "aiperf": {**H200, "model": "deepseek-r1"},
         "llmperf": H200, "trtllm-bench": H200, "inferencex": {}, "aiconfigurator": {},
         "opx-csv": {}}
FLAGS_BY_FILE = {"vllm/metadata.json": {}, "vllm/metadata_disaggregated.json": {"hardware": "h200"},
                 "inferencex/agg_legacy_2025_h200.json": {"workload": "1k1k"},
                 "inferencex-harness/k3_b300_b200.json": {"model": "deepseek-r1", "gpus": 8,
                                                          "workload": "1k1k"},
                 "opx-csv/no-gpus.csv": {"gpus": 8}}


def _flags(path: Path, owner: str) -> IngestOptions:
    root = SHARED if path.is_relative_to(SHARED) else OWN
    return IngestOptions(**FLAGS_BY_FILE.get(path.relative_to(root).as_posix(), FLAGS[owner]))


@pytest.mark.parametrize("format_name", list(FLAGS))
def test_good_files_import_and_a_second_import_changes_nothing(format_name, tmp_path, catalog):
    files = [p.values[0] for p in SAMPLES if p.values[1] == format_name and p.values[2]]
    assert files
    db = tmp_path / "opx.duckdb"
    with store.writing(db):
        pass
    for path in files:
        (result,) = import_files([path], _flags(path, format_name), db, catalog)
        assert result.ok, result.error
        assert result.format == format_name and result.runs
    with store.reading(db) as con:
        before = store.count_runs(con), store.data_version(con)
    for path in files:
        (again,) = import_files([path], _flags(path, format_name), db, catalog)
        assert (again.error, again.runs_added, again.points_added) == (None, 0, 0), path
    with store.reading(db) as con:
        assert (store.count_runs(con), store.data_version(con)) == before


# -- broken files: refused, naming the file and the field or line --------------------------------

# (file under tests/fixtures, where, part of the problem), as `opx ingest --format <owner>` says
# it; a file its format's sniffer claims says the same without --format.
BAD = [
    ("vllm/bad/list_of_numbers.json", "result 1", "expected a vLLM result (a JSON object), got int"),
    ("vllm/bad/string.json", "line 1", "got str"),
    ("vllm/bad/empty.json", "file", "is empty"),
    ("vllm/bad/empty_list.json", "line 1", "empty list"),
    ("vllm/bad/truncated.json", "line 1", "not valid JSON"),
    ("vllm/bad/append_second_truncated.json", "line 2", "not valid JSON"),
    ("vllm/bad/negative_throughput.json", "output_throughput", "below 0"),
    ("vllm/bad/nan_throughput.json", "total_token_throughput", "NaN"),
    ("vllm/bad/total_below_output.json", "total_token_throughput", "below output_throughput"),
    ("vllm/bad/percentiles_out_of_order.json", "percentiles", "out of order"),
    ("vllm/bad/all_failed.json", "completed",
     "0 requests completed (all 4 failed): nothing to import"),
    ("vllm/bad/append_second_all_failed.json", "result 2: completed", "0 requests completed (all 4"),
    ("vllm/bad/not_a_result.json", "completed", "missing"),
    ("vllm/bad/metadata_count_not_a_number.json", "tp", "expected a number"),
    ("vllm/bad/metadata_gpus_disagree.json", "gpus", "prefill_gpus (8) + decode_gpus (8) = 16"),
    ("vllm/bad/bad_date.json", "date", "YYYYMMDD-HHMMSS"),
    ("vllm/sweep_warmup.json", "run_number", "warm-up run"),
    ("sglang/bad/empty.jsonl", "file", "is empty"),
    ("sglang/bad/string.jsonl", "line 1", "expected a bench_serving result (a JSON object), got str"),
    ("sglang/bad/line_not_object.jsonl", "line 2", "got list"),
    ("sglang/bad/truncated_line.jsonl", "line 2", "not valid JSON"),
    ("sglang/bad/nan_throughput.jsonl", "line 1: output_throughput", "NaN"),
    ("sglang/bad/negative_throughput.jsonl", "line 1: total_throughput", "below 0"),
    ("sglang/bad/percentiles_out_of_order.jsonl", "line 1: percentiles", "out of order"),
    ("sglang/bad/zero_completed.jsonl", "line 1: completed", "0 requests completed: nothing to import"),
    ("sglang/bad/no_completed.jsonl", "line 1: completed", "missing"),
    ("genai-perf/bad/truncated_genai_perf.json", "line 6", "not valid JSON"),
    ("genai-perf/bad/itl_percentiles_out_of_order_genai_perf.json", "inter_token_latency",
     "out of order"),
    ("genai-perf/bad/negative_latency_genai_perf.json", "request_latency.p50", "below 0"),
    ("genai-perf/bad/nan_throughput_genai_perf.json", "output_token_throughput.avg", "NaN"),
    ("genai-perf/bad/metric_not_an_object_genai_perf.json", "request_latency",
     "expected a metric object"),
    ("genai-perf/bad/latency_in_tokens_genai_perf.json", "time_to_first_token.unit",
     "not a unit of time"),
    ("genai-perf/bad/short_row_genai_perf.csv", "line 2", "cells"),
    ("genai-perf/bad/no_value_table_genai_perf.csv", "line 2", "Metric,Value"),
    ("aiperf/bad/ttft_out_of_order_aiperf.json", "records.ttft", "out of order"),
    ("aiperf/bad/negative_error_count_aiperf.json", "error_request_count.avg", "below 0"),
    ("aiperf/bad/truncated_profile_export_aiperf.json", "line 5", "not valid JSON"),
    ("aiperf/bad/truncated_profile_export_aiperf.csv", "line 3", "Metric,Value"),
    ("llmperf/bad/ttft_out_of_order_summary.json", "results_ttft_s_quantiles", "out of order"),
    ("llmperf/bad/nan_e2e_summary.json", "results_end_to_end_latency_s_quantiles_p50", "NaN"),
    ("llmperf/bad/negative_throughput_summary.json", "results_mean_output_throughput_token_per_s",
     "below 0"),
    ("llmperf/bad/truncated_summary.json", "line 7", "not valid JSON"),
    ("trtllm-bench/bad/tpot_out_of_order.json", "streaming_metrics.tpot_percentiles",
     "out of order"),
    ("trtllm-bench/bad/negative_throughput.json", "performance.system_output_throughput_tok_s",
     "below 0"),
    ("trtllm-bench/bad/performance_not_object.json", "performance", "expected an object"),
    ("trtllm-bench/bad/truncated.json", "line 7", "not valid JSON"),
    ("inferencex/bad/truncated.json", "line 22", "not valid JSON"),
    ("inferencex/bad/interactivity_disagrees.json", "median_intvty", "disagrees with median_tpot"),
    ("inferencex/bad/percentiles_out_of_order.json", "row", "out of order"),
    ("inferencex/bad/negative_throughput.json", "output_tput_per_gpu", "below 0"),
    ("inferencex/bad/nan_latency.json", "p99_ttft", "NaN"),
    ("inferencex/bad/no_concurrency.json", "conc", "missing"),
    ("inferencex/bad/array_with_a_string.json", "[1]", "expected an object"),
    ("inferencex/bad/zero_prefill_gpus.json", "num_prefill_gpu", "missing or 0"),
    ("inferencex/bad/per_gpu_figures_disagree.json", "row", "disagree with the GPU counts"),
    ("inferencex/bad/agentic_per_gpu_disagrees.json", "tput_per_gpu", "over 2 GPUs"),
    ("aiconfigurator/bad/truncated_pareto.csv", "line 3", "cut short"),
    ("aiconfigurator/bad/gpus_mismatch.csv", "line 2: num_total_gpus",
     "parallel columns give 16 GPUs"),
    ("aiconfigurator/bad/tokens_per_gpu_mismatch.csv", "line 2: tokens/s/gpu", "but tokens/s is"),
    ("aiconfigurator/bad/tokens_per_user_mismatch.csv", "line 2: tokens/s/user",
     "disagrees with 1000 / tpot"),
    ("aiconfigurator/bad/silicon_negative_ttft.csv", "line 2: silicon_ttft_ms", "below 0"),
    ("aiconfigurator/bad/silicon_nan_tpot.csv", "line 2: silicon_tpot_ms", "NaN"),
    ("aiconfigurator/bad/silicon_zero_tpot.csv", "line 2: silicon_tpot_ms", "missing or 0"),
    ("aiconfigurator/bad/silicon_bad_mode.csv", "line 2: mode", "expected agg or disagg"),
    ("aiconfigurator/bad/silicon_missing_column.csv", "header", "missing column(s) osl"),
]


def test_every_broken_fixture_has_its_expected_refusal():
    broken = {p.relative_to(OWN).as_posix() for p in OWN.rglob("*")
              if p.is_file() and "bad" in p.relative_to(OWN).parts}
    assert broken <= {relative for relative, _, _ in BAD}


@pytest.mark.parametrize("relative, where, problem", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_naming_the_file_and_the_field(relative, where, problem, catalog):
    path = OWN / relative
    forced = parse_file(path, IngestOptions(format=relative.split("/")[0]), catalog)
    assert forced.error.startswith(f"{path}: {where}: "), forced.error
    assert problem in forced.error
    if owner_of(relative):                      # claimed: detection leads to the same refusal
        assert parse_file(path, IngestOptions(), catalog).error == forced.error


# A real file of each format cut in half. (Not opx's own CSV: cut at a row's end, it is a valid
# shorter file.)
CUT = [OWN / "vllm" / "append_two_results.json", OWN / "sglang" / "random_range_sweep.jsonl",
       OWN / "genai-perf" / "flat_config_genai_perf.json",
       OWN / "aiperf" / "rate_mode" / "profile_export_aiperf.json",
       OWN / "llmperf" / "mistral-7b_100_50_summary.json",
       OWN / "trtllm-bench" / "report_streaming.json",
       OWN / "inferencex" / "agg_legacy_2025_h200.json",
       OWN / "aiconfigurator" / "agg_pareto_prefix_cp.csv",
       SHARED / "vllm" / "benchmark_qwen3_32b_h200sxm_run_1_TP8_DP1_CTX1024_C100_P100_O128.json",
       SHARED / "genai-perf" / "simple_medium_response_c10_genai_perf.json",
       SHARED / "genai-perf" / "simple_medium_response_c10_genai_perf.csv",
       SHARED / "aiperf" / "profile_export_aiperf.json",
       SHARED / "aiperf" / "v0.8.0_inferencex_run" / "profile_export_aiperf.csv",
       SHARED / "llmperf" / "summary" / "groq_70b.json",
       SHARED / "aiconfigurator" / "gb300_dsv3.1-nvfp4_1k1k" / "agg_pareto.csv"]


@pytest.mark.parametrize("source", CUT, ids=lambda p: p.name)
def test_a_real_file_cut_in_half_is_refused_naming_the_line(source, tmp_path, catalog):
    if not source.is_file():
        pytest.skip(f"{source} is absent (the shared samples live outside the repository)")
    text = read(source)
    cut = tmp_path / source.name
    cut.write_text(text[: len(text) // 2])
    result = parse_file(cut, IngestOptions(**H200, model="deepseek-r1"), catalog)
    assert result.error.startswith(f"{cut}: line "), result.error


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "[", "{", "null", "[]", "{}", "not json",
                                  "\x00\x01", "Infinity", '{"completed": 1}', "[" * 100_000,
                                  "a,b\n1,2\n"])
@pytest.mark.parametrize("name", ["x.json", "x.jsonl", "x.csv"])
def test_no_sniffer_raises_or_claims_junk(name, text):
    assert _claims(Path(name), text) == []


# -- stored ids ---------------------------------------------------------------------------------

# Run ids and point keys stored in users' databases and in published Parquet datasets, which
# are matched on them: (file under tests/fixtures, flags, [(run id, point key) by point]).
PINNED = [
    ("vllm/metadata.json", {}, [("3c1f8f398c6fd37b", "a818ec68fa30dc0f")]),
    ("sglang/full_2025.jsonl", H200, [("2ffd6757d803f22d", "03d31ad488873857")]),
    ("opx-csv/h200-sweep-part1.csv", {}, [("3bf0faa5ff8a2117", "73a094f57db00e39"),
                                          ("3bf0faa5ff8a2117", "fbf21cf730bb3f69")]),
]


@pytest.mark.parametrize("relative, flags, keys", PINNED, ids=[p[0] for p in PINNED])
def test_known_files_keep_their_run_ids_and_point_keys(relative, flags, keys, tmp_path, catalog):
    db = tmp_path / "opx.duckdb"
    with store.writing(db):
        pass
    (result,) = import_files([OWN / relative], IngestOptions(**flags), db, catalog)
    assert result.ok, result.error
    with store.reading(db) as con:
        assert con.execute("SELECT run_id, point_key FROM points ORDER BY run_id, seq"
                           ).fetchall() == keys
