"""TensorRT-LLM `trtllm-bench ... --report_json FILE`: one JSON object per benchmark, with sections
`engine`, `world_info`, `request_info`, `performance`, `streaming_metrics` (only with
`--streaming`), `decoding_stats` (speculative decoding only) and `dataset`.

Latencies are `_ms` keys and `{p50, p90, p95, p99, minimum, maximum, average}` objects in ms.
`performance.output_throughput_per_user_tok_s` includes the first token's wait, so it is not
interactivity; TPOT comes only from `streaming_metrics.tpot_percentiles`. The configured
`--concurrency` is not in the report (`avg_num_concurrent_requests` is measured), so the point has
no concurrency and its note states the measured one. `world_size` is recorded in `meta`, not as the
deployment's GPU count, which the user gives with `--gpus`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from opx.ingest.base import (FormatError, Record, check_percentile_order, first_list_item_has,
                             integer, loads_lenient,
                             ms_to_s, number, positive_or_none)

NAME = "trtllm-bench"
DESCRIPTION = "TensorRT-LLM trtllm-bench report (`--report_json`)"

FRAMEWORK = "tensorrt-llm"          # the spelling the other importers use
_PERCENTILES = ("p50", "p90", "p99")
# Keys that only a report's `performance` section has; one is enough to recognise it.
_PERFORMANCE_KEYS = ("request_throughput_req_s", "system_output_throughput_tok_s",
                     "request_latency_percentiles_ms", "total_latency_ms")
# `--request_json` writes a list of per-request records with these fields.
_REQUEST_RECORD_KEYS = ("num_input_tokens", "start_timestamp", "end_timestamp")
# `get_statistics_dict` writes `engine` first, with `model` as its first key.
_REPORT_START = re.compile(r'\A\s*\{\s*"engine"\s*:\s*\{\s*"model"\s*:')
# Quantization values that mean "none".
_NO_QUANTIZATION = {"", "none", "no_quant"}


def sniff(path: Path, text: str) -> bool:
    if _is_request_records(text):
        return True                          # claimed so that parse can say what to import
    try:
        data = loads_lenient(text) if text.lstrip().startswith("{") else None
    except FormatError:
        # Cut short or damaged: the report's first section is always `engine`, so such a file
        # is claimed and the user hears what is wrong with it rather than "unknown format".
        return bool(_REPORT_START.match(text))
    if not isinstance(data, dict) or "performance" not in data:
        return False
    performance = data["performance"]
    # A damaged `performance` next to the report's `engine` section is still claimed, so that
    # parse can say what is wrong with it.
    return (isinstance(performance, dict) and any(key in performance for key in _PERFORMANCE_KEYS)
            ) or isinstance(data.get("engine"), dict)


def _is_request_records(text: str) -> bool:
    """`--request_json` output: a JSON list of per-request records."""
    return first_list_item_has(text, _REQUEST_RECORD_KEYS)


def parse(path: Path, text: str) -> list[Record]:
    if _is_request_records(text):
        raise FormatError("line 1", "per-request records (trtllm-bench --request_json): import "
                                    "the --report_json file of the same run instead")
    report = loads_lenient(text)
    if not isinstance(report, dict):
        raise FormatError("line 1", "expected a JSON object")
    notes: list[str] = []
    point = _point(report, notes)
    run = _run_facts(report)
    if notes:
        run["notes"] = "; ".join(notes)
    return [Record(run=run, point=point, measured=_measured_lengths(report))]


def _measured_lengths(report: dict[str, Any]) -> tuple[float | None, float | None]:
    """Mean lengths of the requests run: `request_info.avg_*_length` (floats), else the
    dataset's `avg_isl` / `avg_osl` (truncated to integers). The report holds no configured
    length: the dataset file (from prepare_dataset) fixed them."""
    request_info, dataset = _section(report, "request_info"), _section(report, "dataset")
    means = []
    for actual, of_dataset in (("avg_input_length", "avg_isl"), ("avg_output_length", "avg_osl")):
        mean = number(request_info.get(actual), f"request_info.{actual}")
        if mean is None:
            mean = number(dataset.get(of_dataset), f"dataset.{of_dataset}")
        means.append(mean)
    return means[0], means[1]


def _section(report: dict[str, Any], name: str) -> dict[str, Any]:
    """A top-level section, `{}` when absent (e.g. `streaming_metrics` without `--streaming`)."""
    section = report.get(name)
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise FormatError(name, f"expected an object, got {type(section).__name__}")
    return section


def _latencies(point: dict[str, Any], metric: str, section: dict[str, Any], section_name: str,
               percentiles_key: str, mean_key: str) -> None:
    """`{metric}_p50/p90/p99_s` from a percentile object in ms, and `{metric}_mean_s`."""
    where = f"{section_name}.{percentiles_key}"
    stats = section.get(percentiles_key)
    if stats is not None and not isinstance(stats, dict):
        raise FormatError(where, f"expected an object, got {type(stats).__name__}")
    stats = stats or {}
    values = {f"{metric}_{p}_s": positive_or_none(ms_to_s(stats.get(p), f"{where}.{p}"))
              for p in _PERCENTILES}
    check_percentile_order(values, where)
    mean = ms_to_s(section.get(mean_key), f"{section_name}.{mean_key}")
    if mean is None:
        mean = ms_to_s(stats.get("average"), f"{where}.average")
    values[f"{metric}_mean_s"] = positive_or_none(mean)
    point.update({k: v for k, v in values.items() if v is not None})


def _point(report: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    performance = _section(report, "performance")
    if not performance:
        raise FormatError("performance", "missing: not a complete trtllm-bench report")
    streaming = _section(report, "streaming_metrics")
    request_info = _section(report, "request_info")
    point: dict[str, Any] = {}

    _latencies(point, "e2e", performance, "performance", "request_latency_percentiles_ms",
               "avg_request_latency_ms")
    if streaming:
        # Older reports named the per-request TPOT statistics `itl_percentiles`.
        tpot_key = "tpot_percentiles" if "tpot_percentiles" in streaming else "itl_percentiles"
        _latencies(point, "tpot", streaming, "streaming_metrics", tpot_key, "avg_tpot_ms")
        _latencies(point, "ttft", streaming, "streaming_metrics", "ttft_percentiles",
                   "avg_ttft_ms")
    else:
        notes.append("run without --streaming: no TTFT or TPOT in the report")

    def perf(key: str) -> float | None:
        return number(performance.get(key), f"performance.{key}")

    output = perf("system_output_throughput_tok_s")
    total = perf("system_total_throughput_tok_s")
    requests_per_s = perf("request_throughput_req_s")
    mean_isl = number(request_info.get("avg_input_length"), "request_info.avg_input_length")
    point["throughput_output_tok_s"] = output
    if total is not None and output is not None:
        if total < output:
            raise FormatError("performance.system_total_throughput_tok_s",
                              f"{total:g} is below the output throughput {output:g}")
        point["throughput_total_tok_s"] = total
        point["throughput_input_tok_s"] = total - output
        notes.append("input throughput = total - output throughput")
    elif requests_per_s is not None and mean_isl is not None:
        # Both are over the same requests and total time as the output throughput.
        point["throughput_input_tok_s"] = requests_per_s * mean_isl
        notes.append("input throughput computed as request throughput x mean input length")
        if output is not None:
            point["throughput_total_tok_s"] = point["throughput_input_tok_s"] + output
            notes.append("total throughput = input + output throughput")
    point["requests_completed"] = integer(request_info.get("num_requests"),
                                          "request_info.num_requests")
    measured = number(request_info.get("avg_num_concurrent_requests"),
                      "request_info.avg_num_concurrent_requests")
    if measured is not None:
        point["note"] = (f"measured mean concurrency {measured:.4g} (the configured --concurrency "
                         "is not in the report)")
    return {k: v for k, v in point.items() if v is not None}


def _run_facts(report: dict[str, Any]) -> dict[str, Any]:
    engine = _section(report, "engine")
    world = _section(report, "world_info")
    run: dict[str, Any] = {"framework": FRAMEWORK}
    if isinstance(engine.get("model"), str) and engine["model"]:
        run["model"] = engine["model"]
    if engine.get("version"):
        run["framework_version"] = str(engine["version"])
    quantization = engine.get("quantization")
    if quantization is not None and str(quantization).lower() not in _NO_QUANTIZATION:
        run["precision"] = str(quantization)
    elif engine.get("dtype"):
        run["precision"] = str(engine["dtype"])
    for field, key in (("tp", "tp_size"), ("ep", "ep_size")):
        size = integer(world.get(key), f"world_info.{key}")
        if size:
            run[field] = size
    decoding_mode = _section(report, "decoding_stats").get("mode")
    if isinstance(decoding_mode, str) and decoding_mode:
        run["mtp"] = "mtp" in decoding_mode.lower()
    meta = {key: str(value) for key, value in (
        ("backend", engine.get("backend")), ("kv_cache_dtype", engine.get("kv_cache_dtype")),
        ("pp_size", world.get("pp_size")), ("world_size", world.get("world_size")),
        ("max_batch_size", world.get("max_batch_size")),
        ("max_num_tokens", world.get("max_num_tokens")),
        ("speculative_decoding", decoding_mode)) if value is not None}
    if meta:
        run["meta"] = meta
    return run
