"""trtllm-bench `--report_json` importer. No real report is public, so the fixtures are written
from the writer's source (`ReportUtility.get_statistics_dict`, TensorRT-LLM)."""
from __future__ import annotations

import json

import pytest

from opx.ingest import trtllm
from tests.unit.ingest.samples import OWN, parse_one, read, refusal

OWN_DIR = OWN / "trtllm-bench"
STREAMING = OWN_DIR / "report_streaming.json"
NO_STREAMING = OWN_DIR / "report_no_streaming.json"


def test_streaming_report():
    rec = parse_one(trtllm, STREAMING)
    p = rec.point
    assert (p["tpot_p50_s"], p["tpot_p90_s"], p["tpot_p99_s"]) == pytest.approx(
        (0.0248, 0.0275, 0.0301))
    assert 1 / p["tpot_p90_s"] == pytest.approx(1000 / 27.5)
    # avg_tpot_ms, not output_throughput_per_user_tok_s (which includes the TTFT wait).
    assert p["tpot_mean_s"] == pytest.approx(0.025)
    assert (p["ttft_p50_s"], p["ttft_p99_s"], p["ttft_mean_s"]) == pytest.approx(
        (0.38, 1.1, 0.42))
    assert (p["e2e_p90_s"], p["e2e_mean_s"]) == pytest.approx((28.4, 25.995))
    assert p["throughput_output_tok_s"] == pytest.approx(2509.3)
    assert p["throughput_total_tok_s"] == pytest.approx(5018.6)
    assert p["throughput_input_tok_s"] == pytest.approx(5018.6 - 2509.3)
    assert p["requests_completed"] == 512
    # The configured concurrency is not in the report; the measured one is only noted.
    assert "concurrency" not in p and "63.7" in p["note"]
    run = rec.run
    assert run["model"] == "deepseek-ai/DeepSeek-R1"
    assert (run["framework"], run["framework_version"]) == ("tensorrt-llm", "1.0.0")
    assert run["precision"] == "FP8_BLOCK_SCALES"
    assert (run["tp"], run["ep"], run["mtp"]) == (8, 8, True)
    assert "isl" not in run                                 # the report configures no length
    assert rec.measured == (1024, 1024)
    assert run["meta"]["world_size"] == "8"          # kept, but not as the deployment's GPUs


def test_report_without_streaming_has_no_ttft_or_tpot():
    rec = parse_one(trtllm, NO_STREAMING)
    p = rec.point
    assert not any(k.startswith(("ttft", "tpot")) for k in p)
    assert "without --streaming" in rec.run["notes"]
    assert (p["e2e_p50_s"], p["e2e_p99_s"]) == pytest.approx((27.9, 43.9))
    assert "e2e_p90_s" not in p                      # older reports have no p90
    # No system_total_throughput_tok_s in older reports: input from request rate x mean ISL.
    assert p["throughput_input_tok_s"] == pytest.approx(22.2222 * 128)
    assert p["throughput_total_tok_s"] == pytest.approx(22.2222 * 128 + 2844.44)
    assert "request throughput x mean input length" in rec.run["notes"]
    assert rec.run["precision"] == "float16"         # no quantization: the dtype
    assert "mtp" not in rec.run


def test_older_itl_percentiles_name_is_read_as_tpot():
    data = json.loads(read(STREAMING))
    streaming = data["streaming_metrics"]
    streaming["itl_percentiles"] = streaming.pop("tpot_percentiles")
    del streaming["avg_tpot_ms"]
    p = parse_one(trtllm, STREAMING, json.dumps(data)).point
    assert p["tpot_p99_s"] == pytest.approx(0.0301)
    assert p["tpot_mean_s"] == pytest.approx(0.025)


def test_per_request_records_are_refused_with_the_file_to_import():
    error = refusal(trtllm, OWN_DIR / "request_records.json")
    assert error.where == "line 1"
    assert "per-request" in error.problem and "--report_json" in error.problem
