"""ray-project LLMPerf summaries: `<model>_<in>_<out>_summary.json` from `token_benchmark_ray.py`.

A flat object; times in seconds; request throughput per *minute*; some numbers written as strings
("550") because numpy integers went through `json.dump(default=str)`.

LLMPerf's `inter_token_latency_s` is `e2e_latency / output_tokens` per request, so it *includes*
the time to first token: it is not TPOT and no percentile of it is imported. The file holds no TPOT
percentile either, so `tpot_p*` stay empty; the one honest figure is a mean,
`(mean e2e - mean TTFT) / (mean output tokens - 1)`, exact when every request produced the same
number of tokens and an estimate otherwise, and the note says which.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from opx.ingest.base import (FormatError, Record, check_percentile_order, first_list_item_has,
                             integer, loads_lenient, number, positive_or_none)

NAME = "llmperf"
DESCRIPTION = "ray-project LLMPerf summary (`*_summary.json`, token_benchmark_ray.py)"

# Run settings and bookkeeping LLMPerf itself writes; any other non-`results_` key came from
# `--metadata k=v` (or `--additional-sampling-params`, flattened) and is kept in `meta`.
_OWN_KEYS = {"version", "name", "model", "mean_input_tokens", "stddev_input_tokens",
             "mean_output_tokens", "stddev_output_tokens", "num_concurrent_requests", "timestamp",
             "framework"}
_LATENCIES = {"ttft": "ttft_s", "e2e": "end_to_end_latency_s"}
_PERCENTILES = ("p50", "p90", "p99")
# The per-request file: a list of these objects.
_INDIVIDUAL_KEYS = ("ttft_s", "end_to_end_latency_s", "inter_token_latency_s")


def sniff(path: Path, text: str) -> bool:
    if _is_individual_responses(text):
        return True                          # claimed so that parse can say what to import
    if not text.lstrip().startswith("{") or '"results_' not in text:
        return False
    try:
        data = loads_lenient(text)
    except FormatError:
        # Cut short or damaged but named as LLMPerf names its summaries: claimed, so that the
        # user hears what is wrong with it rather than "unknown format".
        return path.name.lower().endswith("_summary.json")
    return isinstance(data, dict) and any(k.startswith("results_") for k in data) and (
        "num_concurrent_requests" in data or "results_num_completed_requests" in data)


def _is_individual_responses(text: str) -> bool:
    """`*_individual_responses.json`: a JSON list of per-request objects."""
    return first_list_item_has(text, _INDIVIDUAL_KEYS)


def parse(path: Path, text: str) -> list[Record]:
    if _is_individual_responses(text):
        summary = (path.name.replace("_individual_responses.json", "_summary.json")
                   if path.name.endswith("_individual_responses.json") else "*_summary.json")
        raise FormatError("line 1", "per-request records (LLMPerf individual responses): import "
                                    f"the summary file {summary} of the same run instead")
    data = loads_lenient(text)
    if not isinstance(data, dict):
        raise FormatError("line 1", "expected a JSON object")

    def value(key: str) -> float | None:
        return number(data.get(key), key)

    notes: list[str] = []
    point: dict[str, Any] = {}
    for metric, stem in _LATENCIES.items():
        for p in _PERCENTILES:
            point[f"{metric}_{p}_s"] = positive_or_none(value(f"results_{stem}_quantiles_{p}"))
        check_percentile_order({k: v for k, v in point.items() if k.startswith(metric)},
                               f"results_{stem}_quantiles")
        point[f"{metric}_mean_s"] = positive_or_none(value(f"results_{stem}_mean"))
    point["tpot_mean_s"] = _tpot_mean(data, point.get("ttft_mean_s"), point.get("e2e_mean_s"),
                                      notes)

    output = value("results_mean_output_throughput_token_per_s")   # system-wide, despite "mean"
    per_min = value("results_num_completed_requests_per_min")
    mean_isl = value("results_number_input_tokens_mean")
    point["throughput_output_tok_s"] = output
    if per_min is not None and mean_isl is not None:
        # Both count the completed requests over the same run time as the output rate.
        point["throughput_input_tok_s"] = per_min / 60 * mean_isl
        notes.append("input throughput computed as completed requests per minute / 60 x mean "
                     "input tokens")
        if output is not None:
            point["throughput_total_tok_s"] = point["throughput_input_tok_s"] + output
            notes.append("total throughput = input + output throughput")
    point["concurrency"] = value("num_concurrent_requests") or None
    point["requests_completed"] = integer(data.get("results_num_completed_requests"),
                                          "results_num_completed_requests")
    point["requests_failed"] = integer(data.get("results_number_errors"),
                                       "results_number_errors")
    point = {k: v for k, v in point.items() if v is not None}
    if not any(k.startswith(("ttft", "e2e", "throughput")) for k in point):
        raise FormatError("file", "no results_* latency or throughput: the summary is empty or "
                                  "cut short")
    run = _run_facts(data, notes)
    configured, varies_with = _configured_lengths(data)
    run.update(configured)
    measured = (value("results_number_input_tokens_mean"),
                value("results_number_output_tokens_mean"))
    return [Record(run=run, point=point, measured=measured,
                   configured_as="the configured --mean-input-tokens / --mean-output-tokens"
                   if configured else "",
                   varies_with=varies_with)]


def _configured_lengths(data: dict[str, Any]) -> tuple[dict[str, int], str]:
    """`--mean-input-tokens` / `--mean-output-tokens`, which LLMPerf writes in every summary (and
    in its name, `<model>_550_150_summary`); their stddevs spread the requests' lengths."""
    facts: dict[str, int] = {}
    spread = []
    for fact, key, stddev_key in (("isl", "mean_input_tokens", "stddev_input_tokens"),
                                  ("osl", "mean_output_tokens", "stddev_output_tokens")):
        mean = number(data.get(key), key)
        if mean is not None and round(mean) > 0:
            facts[fact] = round(mean)
            stddev = number(data.get(stddev_key), stddev_key)
            if stddev:
                spread.append(f"--{stddev_key.replace('_', '-')} {stddev:g}")
    return facts, ", ".join(spread)


def _tpot_mean(data: dict[str, Any], ttft_mean: float | None, e2e_mean: float | None,
               notes: list[str]) -> float | None:
    osl_mean = number(data.get("results_number_output_tokens_mean"),
                      "results_number_output_tokens_mean")
    if ttft_mean is None or e2e_mean is None or osl_mean is None or osl_mean <= 1:
        return None
    if e2e_mean <= ttft_mean:
        raise FormatError("results_end_to_end_latency_s_mean",
                          f"mean end-to-end latency ({e2e_mean:g} s) is not above mean TTFT "
                          f"({ttft_mean:g} s)")
    osl_min = number(data.get("results_number_output_tokens_min"),
                     "results_number_output_tokens_min")
    osl_max = number(data.get("results_number_output_tokens_max"),
                     "results_number_output_tokens_max")
    if osl_min is not None and osl_min == osl_max:
        notes.append(f"TPOT mean = (mean e2e - mean TTFT) / {osl_mean - 1:g}, exact because every "
                     f"request produced {osl_min:g} tokens; no TPOT percentile is in the file")
    else:
        notes.append("TPOT mean estimated as (mean e2e - mean TTFT) / (mean output tokens - 1): "
                     "output lengths vary, so this is not the mean of per-request TPOT; no TPOT "
                     "percentile is in the file")
    return (e2e_mean - ttft_mean) / (osl_mean - 1)


def _run_facts(data: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    if isinstance(data.get("model"), str) and data["model"]:
        run["model"] = data["model"]
    # `framework` is not an LLMPerf setting but a `--metadata` key the LLMPerf leaderboard used
    # for the serving backend (`groq`, `anyscale`); the file names it, so it is passed on.
    if isinstance(data.get("framework"), str) and data["framework"]:
        run["framework"] = data["framework"]
    timestamp = number(data.get("timestamp"), "timestamp")
    if timestamp is not None:
        try:
            run["date"] = dt.datetime.fromtimestamp(timestamp, dt.timezone.utc).date()
        except (OverflowError, OSError, ValueError):
            raise FormatError("timestamp", f"{timestamp:g} is not a Unix time in seconds") from None
    meta = {key: str(value) for key, value in data.items()
            if key not in _OWN_KEYS and not key.startswith("results_")
            and value is not None and not isinstance(value, (dict, list))}
    if meta:
        run["meta"] = meta
    if notes:
        run["notes"] = "; ".join(notes)
    return run
