"""GenAI-Perf importer."""
from __future__ import annotations

import json

import pytest

from opx.ingest import aiperf, genai_perf
from tests.unit.ingest.samples import OWN, SHARED, needs_shared, parse_one, read, refusal

C10_JSON = SHARED / "genai-perf" / "simple_medium_response_c10_genai_perf.json"
C1_JSON = SHARED / "genai-perf" / "simple_medium_response_c1_genai_perf.json"
C10_CSV = SHARED / "genai-perf" / "simple_medium_response_c10_genai_perf.csv"
RAW_EXPORT = SHARED / "genai-perf" / "simple_medium_response_c1.json"
OWN_DIR = OWN / "genai-perf"
STREAMING_CSV = OWN_DIR / "llama3-triton-vllm-concurrency8" / "streaming_genai_perf.csv"
FLAT_CONFIG = OWN_DIR / "flat_config_genai_perf.json"


@needs_shared
def test_real_json_c10_non_streaming():
    rec = parse_one(genai_perf, C10_JSON)
    p = rec.point
    assert p["concurrency"] == 10
    assert p["requests_completed"] == 26
    assert p["throughput_output_tok_s"] == pytest.approx(408.8289965516585)
    assert p["e2e_p50_s"] == pytest.approx(8.4574495335)
    assert p["e2e_p90_s"] == pytest.approx(18.477152847)
    assert p["e2e_p99_s"] == pytest.approx(19.11367754225)
    assert p["e2e_mean_s"] == pytest.approx(9.611462467961537)
    # Non-streaming: the file's time_to_first_token is the request latency, so no TTFT; no TPOT.
    assert not any(k.startswith(("ttft", "tpot")) for k in p)
    assert "non-streaming" in rec.run["notes"]
    # Input throughput derived from the output rate and the mean lengths (550 in, 447.1 out).
    assert p["throughput_input_tok_s"] == pytest.approx(408.8289965516585 * 550
                                                        / 447.11538461538464)
    assert p["throughput_total_tok_s"] == pytest.approx(p["throughput_input_tok_s"]
                                                        + p["throughput_output_tok_s"])
    assert "input throughput computed" in rec.run["notes"]
    assert rec.run["model"] == "auto"
    assert rec.run["isl"] == 550                       # --synthetic-input-tokens-mean 550
    assert "osl" not in rec.run                        # no --output-tokens-mean: the model decides
    assert rec.measured == pytest.approx((550, 447.11538461538464))
    # An OpenAI-compatible endpoint does not say what serves it (backend is a Triton default).
    assert "framework" not in rec.run


@needs_shared
def test_real_json_c1():
    rec = parse_one(genai_perf, C1_JSON)
    assert rec.point["concurrency"] == 1
    assert rec.point["requests_completed"] == 6
    assert rec.point["throughput_output_tok_s"] == pytest.approx(51.62535327554503)
    assert rec.point["e2e_p90_s"] == pytest.approx(19.2834260525)
    assert round(rec.measured[1]) == 807


@needs_shared
def test_real_csv_matches_json_to_csv_precision():
    rec = parse_one(genai_perf, C10_CSV)
    p = rec.point
    assert p["e2e_p99_s"] == pytest.approx(19.11368)          # "19,113.68" ms
    assert p["e2e_p50_s"] == pytest.approx(8.45745)
    assert p["throughput_output_tok_s"] == pytest.approx(408.83)
    assert p["requests_completed"] == 26
    # 408.83 x 550 / 447.12 is within 0.01% of the JSON's figure; 0.91 req/s x 550 would be 0.5%
    # off.
    json_input = parse_one(genai_perf, C10_JSON).point["throughput_input_tok_s"]
    assert p["throughput_input_tok_s"] == pytest.approx(json_input, rel=1e-4)
    assert "concurrency" not in p                 # not in the CSV, folder name is not GenAI-Perf's
    assert "rounded" in rec.run["notes"]


@needs_shared
def test_non_streaming_is_recognised_without_the_setting():
    data = json.loads(read(C10_JSON))
    del data["input_config"]
    rec = parse_one(genai_perf, C10_JSON, json.dumps(data))
    assert not any(k.startswith(("ttft", "tpot")) for k in rec.point)
    assert "non-streaming" in rec.run["notes"]


@needs_shared
def test_streaming_setting_keeps_ttft_when_the_run_streamed():
    data = json.loads(read(C10_JSON))
    data["input_config"]["endpoint"]["streaming"] = True
    rec = parse_one(genai_perf, C10_JSON, json.dumps(data))
    assert rec.point["ttft_p99_s"] == pytest.approx(19.11367754225)
    assert "tpot_p99_s" not in rec.point


@needs_shared
def test_raw_perf_analyzer_export_is_refused_with_the_summary_to_import():
    error = refusal(genai_perf, RAW_EXPORT)
    assert error.where == "experiments"
    assert "per-request" in error.problem
    assert "simple_medium_response_c1_genai_perf.json" in error.problem


@needs_shared
def test_csv_owner_by_column_order_when_the_name_says_nothing(tmp_path):
    renamed = tmp_path / "results.csv"
    renamed.write_text(read(C10_CSV))             # p99 first: GenAI-Perf's order
    assert genai_perf.sniff(renamed, read(renamed))
    assert not aiperf.sniff(renamed, read(renamed))


def test_own_streaming_csv_with_thousands_separators_and_telemetry():
    rec = parse_one(genai_perf, STREAMING_CSV)
    p = rec.point
    # inter_token_latency is TPOT: interactivity p99 = 1000 / 18.00 ms.
    assert 1 / p["tpot_p99_s"] == pytest.approx(1000 / 18.0)
    assert p["tpot_p50_s"] == pytest.approx(0.012)
    assert p["ttft_p50_s"] == pytest.approx(1.1)             # "1,100.00"
    assert p["ttft_p99_s"] == pytest.approx(2.9)             # "2,900.00"
    assert p["ttft_mean_s"] == pytest.approx(1.2345)         # "1,234.50"
    assert p["e2e_p90_s"] == pytest.approx(5.5)
    assert p["throughput_output_tok_s"] == pytest.approx(460.8)    # older unit label "per sec"
    assert p["throughput_input_tok_s"] == pytest.approx(460.8 * 2048 / 256)
    assert p["requests_completed"] == 216
    assert p["concurrency"] == 8                             # from ...-concurrency8/
    assert "artifact folder" in rec.run["notes"]
    assert "isl" not in rec.run                             # the CSV holds no configuration
    assert rec.measured == (2048, 256)


def test_own_flat_2024_config_in_request_rate_mode():
    rec = parse_one(genai_perf, FLAT_CONFIG)
    p = rec.point
    assert p["request_rate"] == 4.0
    assert "concurrency" not in p
    assert p["tpot_p90_s"] == pytest.approx(0.0195)
    assert p["tpot_mean_s"] == pytest.approx(0.0166)
    assert p["ttft_p99_s"] == pytest.approx(0.21)
    assert p["requests_completed"] == 237
    assert rec.run["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert rec.run["framework"] == "vllm"                     # Triton with the vLLM backend
    assert rec.run["meta"] == {"service_kind": "triton"}
