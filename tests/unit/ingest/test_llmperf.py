"""LLMPerf importer: seconds, requests per minute, string numbers, no TPOT percentiles."""
from __future__ import annotations

import datetime as dt

import pytest

from opx.ingest import llmperf
from tests.unit.ingest.samples import OWN, SHARED, needs_shared, parse_one, refusal

GROQ = SHARED / "llmperf" / "summary" / "groq_70b.json"
ANYSCALE = SHARED / "llmperf" / "summary" / "anyscale_70b.json"
INDIVIDUAL = SHARED / "llmperf" / "individual" / "groq_70b.json"
OWN_DIR = OWN / "llmperf"
OWN_SUMMARY = OWN_DIR / "mistral-7b_100_50_summary.json"


@needs_shared
def test_groq_summary():
    rec = parse_one(llmperf, GROQ)
    p = rec.point
    assert p["ttft_p99_s"] == pytest.approx(0.3500269545800982)
    assert p["ttft_p50_s"] == pytest.approx(0.2218883791938424)
    assert p["ttft_mean_s"] == pytest.approx(0.22786034579078357)
    assert p["e2e_p90_s"] == pytest.approx(0.9329087149351835)
    assert p["throughput_output_tok_s"] == pytest.approx(441.84737788500206)
    # requests per minute -> per second, times the mean input length.
    assert p["throughput_input_tok_s"] == pytest.approx(176.73895115400083 / 60 * 550)
    assert p["throughput_total_tok_s"] == pytest.approx(176.73895115400083 / 60 * 550
                                                        + 441.84737788500206)
    assert p["concurrency"] == 5
    assert (p["requests_completed"], p["requests_failed"]) == (150, 0)
    assert rec.run["model"] == "llama2-70b-4096"
    assert rec.run["framework"] == "groq"
    assert (rec.run["isl"], rec.run["osl"]) == (550, 150)      # --mean-input/output-tokens
    assert rec.measured == (550, 150)
    assert rec.run["date"] == dt.date(2024, 1, 10)


@needs_shared
def test_inter_token_latency_includes_ttft_so_no_tpot_percentile():
    p = parse_one(llmperf, GROQ).point
    assert not {"tpot_p50_s", "tpot_p90_s", "tpot_p99_s"} & set(p)
    itl_p99_s = 0.006565943489596247                 # results_inter_token_latency_s_quantiles_p99
    assert itl_p99_s not in [pytest.approx(v) for v in p.values()]


@needs_shared
def test_tpot_mean_is_exact_when_every_request_has_the_same_length():
    rec = parse_one(llmperf, GROQ)
    assert rec.point["tpot_mean_s"] == pytest.approx((0.8151081097126007 - 0.22786034579078357)
                                                     / 149)
    assert "exact" in rec.run["notes"]


@needs_shared
def test_tpot_mean_is_an_estimate_when_lengths_vary():
    rec = parse_one(llmperf, ANYSCALE)
    assert rec.point["tpot_mean_s"] == pytest.approx(
        (2.3546667737533324 - 0.24890269464666667) / (146.94666666666666 - 1))
    assert "estimated" in rec.run["notes"]
    assert rec.point["ttft_p50_s"] == pytest.approx(0.21282956000001718)
    assert rec.run["osl"] == 150                       # configured; requests stopped early
    assert rec.measured[1] == pytest.approx(146.94666666666666)
    assert rec.run["meta"] == {"model_size": "70b",
                               "api": "https://console.endpoints.anyscale.com/m/v1"}


@needs_shared
def test_individual_responses_are_refused_with_the_summary_to_import():
    error = refusal(llmperf, INDIVIDUAL)
    assert error.where == "line 1" and "per-request" in error.problem
    assert "_summary.json" in error.problem


def test_own_summary_with_errors_metadata_and_string_throughput():
    rec = parse_one(llmperf, OWN_SUMMARY)
    p = rec.point
    assert p["throughput_output_tok_s"] == pytest.approx(352.8)      # written as "352.8"
    assert p["throughput_input_tok_s"] == pytest.approx(432.0 / 60 * 101.2)
    assert (p["requests_completed"], p["requests_failed"]) == (98, 2)
    assert p["concurrency"] == 8
    assert p["e2e_p99_s"] == pytest.approx(1.55)
    assert p["tpot_mean_s"] == pytest.approx((1.08 - 0.12) / 48)
    assert rec.run["meta"] == {"additional_sampling_params_temperature": "0.0", "gpu": "h100"}
    assert "framework" not in rec.run
    assert (rec.run["isl"], rec.run["osl"]) == (100, 50)      # configured (the name's _100_50)
    assert rec.measured == pytest.approx((101.2, 49.0))
    assert rec.varies_with == "--stddev-input-tokens 10, --stddev-output-tokens 5"


def test_own_individual_responses_name_their_summary():
    error = refusal(llmperf, OWN_DIR / "mistral-7b_100_50_individual_responses.json")
    assert "mistral-7b_100_50_summary.json" in error.problem
