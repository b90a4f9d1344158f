"""AIPerf importer: old nested and current flat JSON layouts, the CSV, the per-request JSONL."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from opx.ingest import aiperf, genai_perf
from opx.ingest.base import FormatError
from tests.unit.ingest.samples import OWN, SHARED, needs_shared, parse_one, read, refusal

OLD_JSON = SHARED / "aiperf" / "profile_export_aiperf.json"
OLD_CSV = SHARED / "aiperf" / "profile_export_aiperf.csv"
OLD_JSONL = SHARED / "aiperf" / "profile_export.jsonl"
V080 = SHARED / "aiperf" / "v0.8.0_inferencex_run"
OWN_DIR = OWN / "aiperf"


@needs_shared
def test_old_nested_layout():
    rec = parse_one(aiperf, OLD_JSON)
    p = rec.point
    # inter_token_latency is TPOT: interactivity p99 = 1000 / 33.73 ms.
    assert p["tpot_p99_s"] == pytest.approx(0.03373224787406911)
    assert 1 / p["tpot_p99_s"] == pytest.approx(29.645, abs=1e-3)
    assert p["tpot_p50_s"] == pytest.approx(0.027615130366666666)
    # The old layout's `ttft` tag is TTFT.
    assert p["ttft_p90_s"] == pytest.approx(3.796931168)
    assert p["e2e_p99_s"] == pytest.approx(9.29760993376)
    assert p["throughput_output_tok_s"] == pytest.approx(2320.7222350404572)
    assert p["concurrency"] == 100
    assert (p["requests_completed"], p["requests_failed"]) == (89, 11)
    assert p["throughput_input_tok_s"] == pytest.approx(48950.0 / 9.317788951)
    assert p["throughput_total_tok_s"] == pytest.approx(48950.0 / 9.317788951
                                                        + 2320.7222350404572)
    assert "total input tokens / benchmark duration" in rec.run["notes"]
    assert rec.run["model"] == "openai/gpt-oss-20b"
    assert rec.run["date"] == dt.date(2025, 10, 3)
    assert rec.run["osl"] == 250                       # --osl 250
    assert "isl" not in rec.run                        # --isl not given (550 by default)
    assert rec.measured == pytest.approx((550, 242.96629213483146))
    assert "framework" not in rec.run


@needs_shared
def test_inter_chunk_latency_is_not_tpot():
    p = parse_one(aiperf, OLD_JSON).point
    inter_chunk_p99_s = 0.14053429476
    assert inter_chunk_p99_s not in [pytest.approx(v) for v in p.values()]


@needs_shared
def test_old_csv():
    rec = parse_one(aiperf, OLD_CSV)
    p = rec.point
    assert p["tpot_p99_s"] == pytest.approx(0.03373)
    assert p["ttft_p50_s"] == pytest.approx(2.36932)
    assert (p["requests_completed"], p["requests_failed"]) == (89, 11)
    assert p["throughput_output_tok_s"] == pytest.approx(2320.72)
    assert p["throughput_input_tok_s"] == pytest.approx(48950.0 / 9.32)
    assert "concurrency" not in p and "model" not in rec.run      # the CSV has no config
    assert "rounded" in rec.run["notes"]


@needs_shared
def test_v080_flat_layout():
    rec = parse_one(aiperf, V080 / "profile_export_aiperf.json")
    p = rec.point
    assert p["tpot_p99_s"] == pytest.approx(0.7718420753849975)
    assert 1 / p["tpot_p90_s"] == pytest.approx(1000 / 54.09254645296106)
    assert p["ttft_p90_s"] == pytest.approx(92.3591071548)
    assert p["e2e_p50_s"] == pytest.approx(80.533702698)
    assert p["throughput_total_tok_s"] == pytest.approx(12659.92930896755)
    assert p["throughput_input_tok_s"] == pytest.approx(12549.14711530576)
    assert p["throughput_output_tok_s"] == pytest.approx(110.7821936617907)
    assert p["concurrency"] == 16
    assert p["requests_completed"] == 57
    assert p["requests_failed"] == 0                   # empty error_summary
    assert rec.run["model"] == "amd/GLM-5.1-MXFP4"
    assert "isl" not in rec.run and "osl" not in rec.run     # a public dataset's own lengths
    assert rec.measured == pytest.approx((89934.50877192983, 793.9298245614035))
    assert rec.run["prefix_hit_rate"] == pytest.approx(0.9175923706012414)
    assert rec.run["meta"]["scenario"] == "inferencex-agentx-mvp"
    assert rec.run["date"] == dt.date(2026, 6, 3)
    assert "invalid submission (context_overflow_rate_exceeded)" in rec.run["notes"]
    assert "theoretical" in rec.run["notes"]


@needs_shared
def test_v080_csv():
    rec = parse_one(aiperf, V080 / "profile_export_aiperf.csv")
    p = rec.point
    assert p["tpot_p99_s"] == pytest.approx(0.77184)
    assert p["throughput_total_tok_s"] == pytest.approx(12659.93)
    assert p["throughput_input_tok_s"] == pytest.approx(12549.15)
    assert p["requests_completed"] == 57
    assert "requests_failed" not in p                  # no error row, no error summary
    assert rec.run["prefix_hit_rate"] == pytest.approx(0.9176)


@needs_shared
@pytest.mark.parametrize("path", [OLD_JSONL, V080 / "profile_export.jsonl"], ids=["old", "0.8.0"])
def test_per_request_jsonl_is_refused_with_the_summary_to_import(path):
    error = refusal(aiperf, path)
    assert error.where == "line 1"
    assert "per-request" in error.problem and "profile_export_aiperf.json" in error.problem


@needs_shared
def test_flat_layout_renamed_like_genai_perf_is_still_aiperf(tmp_path):
    renamed = tmp_path / "run_genai_perf.json"
    renamed.write_text(read(V080 / "profile_export_aiperf.json"))
    assert aiperf.sniff(renamed, read(renamed))
    assert not genai_perf.sniff(renamed, read(renamed))


@needs_shared
def test_csv_owner_by_column_order_when_the_name_says_nothing(tmp_path):
    renamed = tmp_path / "results.csv"
    renamed.write_text(read(OLD_CSV))                  # p1 first: AIPerf's order
    assert aiperf.sniff(renamed, read(renamed))
    assert not genai_perf.sniff(renamed, read(renamed))


@needs_shared
def test_non_streaming_run_keeps_no_ttft_or_tpot():
    data = json.loads(read(OLD_JSON))
    data["input_config"]["endpoint"]["streaming"] = False
    rec = parse_one(aiperf, OLD_JSON, json.dumps(data))
    assert not any(k.startswith(("ttft", "tpot")) for k in rec.point)
    assert rec.point["e2e_p99_s"] == pytest.approx(9.29760993376)


@needs_shared
def test_cancelled_run_is_noted():
    data = json.loads(read(OLD_JSON))
    data["was_cancelled"] = True
    assert "cancelled" in parse_one(aiperf, OLD_JSON, json.dumps(data)).run["notes"]


def test_own_request_rate_run_with_errors():
    rec = parse_one(aiperf, OWN_DIR / "rate_mode" / "profile_export_aiperf.json")
    p = rec.point
    assert p["request_rate"] == 12.5 and "concurrency" not in p
    assert p["tpot_p99_s"] == pytest.approx(0.016)        # not inter_chunk_latency's 140 ms
    assert (p["requests_completed"], p["requests_failed"]) == (497, 3)
    assert p["throughput_input_tok_s"] == pytest.approx(3111.0 * 2000 / 255)
    assert rec.run["model"] == "Qwen/Qwen3-8B"
    assert "2 models" in rec.run["notes"]
    assert rec.run["date"] == dt.date(2025, 11, 20)


def test_own_csv_in_the_other_column_order_with_telemetry():
    rec = parse_one(aiperf, OWN_DIR / "csv_high_to_low" / "profile_export_aiperf.csv")
    p = rec.point
    assert p["tpot_p99_s"] == pytest.approx(0.016)
    assert p["tpot_p50_s"] == pytest.approx(0.012)
    assert p["ttft_p90_s"] == pytest.approx(0.32)
    assert p["e2e_p90_s"] == pytest.approx(3.9)
    assert (p["requests_completed"], p["requests_failed"]) == (497, 3)
    assert p["throughput_input_tok_s"] == pytest.approx(994000 / 40.74)


def test_error_summary_of_the_wrong_shape_is_refused():
    path = OWN_DIR / "rate_mode" / "profile_export_aiperf.json"
    data = json.loads(read(path))
    del data["error_request_count"]
    data["error_summary"] = {"count": 3}
    with pytest.raises(FormatError) as info:
        aiperf.parse(path, json.dumps(data))
    assert info.value.where == "error_summary"
